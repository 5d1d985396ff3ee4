/* Feature library, q15: int16 samples (-1..1), integer arithmetic throughout; each value is an
 * integer q times 2^-15 (formats and rounding in pyruntime/features/q15.py). Windows are at most
 * FM_FEAT_MAX_LEN samples, which bounds every sum below (|x - mean| < 2^16, so sums of products
 * stay below 2^44 and their q15 quotients below 2^60). */
#include "fm_feat_internal.h"

#define Q15_ONE 32768

static const int16_t *chan_x(const fm_feat_ctx *ctx, uint32_t c)
{
    return (const int16_t *)ctx->x + (size_t)c * ctx->len;
}

static int pass_q15(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const int16_t *x = chan_x(ctx, c);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    int32_t sum = 0, lo = x[0], hi = x[0];
    int64_t sumsq = 0;
    uint32_t t;
    (void)kind;
    for (t = 0; t < ctx->len; ++t) {
        int32_t v = x[t];
        sum += v;
        sumsq += (int64_t)(v * v);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    ch->qsum = sum;
    ch->qsumsq = sumsq;
    ch->qmin = lo;
    ch->qmax = hi;
    ch->qmean = (int32_t)fm_feat_round_div(sum, (int64_t)ctx->len);
    return FM_OK;
}

static int centered_q15(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const int16_t *x = chan_x(ctx, c);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    int32_t mean = ch->qmean;
    int64_t ss = 0;
    uint32_t t, crossings = 0;
    int below = x[0] - mean < 0;
    (void)kind;
    for (t = 0; t < ctx->len; ++t) {
        int32_t d = x[t] - mean;
        int b = d < 0;
        ss += (int64_t)d * d;
        crossings += (uint32_t)(b != below);
        below = b;
    }
    ch->qss = ss;
    ch->crossings = crossings;
    return FM_OK;
}

/* Radix-2 FFT of n points (bit-reversed input, |values| <= 2^14), halving after every stage so values
 * stay within 2^14 + 1; products use q15 twiddles (cos 0 = 32767) and round to nearest. */
static void fft_q15(fm_feat_word *re, fm_feat_word *im, uint32_t n)
{
    uint32_t size, j, a;
    for (size = 2u; size <= n; size <<= 1) {
        uint32_t half = size / 2u, step = FM_FEAT_MAX_FFT / size;
        for (j = 0; j < half; ++j) {
            int32_t co, si;
            fm_feat_twiddle_q15(j * step, &co, &si);
            for (a = j; a < n; a += size) {
                uint32_t b = a + half;
                int32_t tr = fm_feat_asr(co * re[b].i + si * im[b].i + (1 << 14), 15);
                int32_t ti = fm_feat_asr(co * im[b].i - si * re[b].i + (1 << 14), 15);
                int32_t ar = re[a].i, ai = im[a].i;
                re[a].i = fm_feat_asr(ar + tr, 1);
                im[a].i = fm_feat_asr(ai + ti, 1);
                re[b].i = fm_feat_asr(ar - tr, 1);
                im[b].i = fm_feat_asr(ai - ti, 1);
            }
        }
    }
}

/* Block t of a decimated signal: round(sum of x[t 2^s .. t 2^s + 2^s - 1] / 2^s), halves up. */
static int32_t block_mean(const int16_t *x, uint32_t t, uint32_t shift)
{
    const int16_t *b = x + ((size_t)t << shift);
    int32_t s = 0;
    uint32_t j;
    for (j = 0; j < (1u << shift); ++j) {
        s += b[j];
    }
    return fm_feat_asr(s + (int32_t)(1u << (shift - 1u)), shift);
}

/* As spectrum_f32: the real signal packed as a complex one of half the length, its FFT (which halves after each
 * of its stages: Z / h), then the split X[k] = E + W O, halved once more so that the bins are X / n as an n-point
 * fft_q15 gives them (|values| <= 2^14 + 1); the input is (x - mean) / 4, x the window (shift 0) or its rounded
 * block means. pyruntime/features/fft.py power_q15 in the same order. */
static int spectrum_q15(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const uint32_t shift = fm_feat_kind_shift(kind);
    const int16_t *x = chan_x(ctx, c);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    const int32_t mean = ch->qmean; /* a local: the stores below could alias it */
    uint32_t n = ctx->nffts[shift], m = ctx->len >> shift, h = n / 2u, step = FM_FEAT_MAX_FFT / n;
    fm_feat_word *re = fm_feat_work(ctx), *im = re + n, *p = fm_feat_power_at(ctx, shift, c);
    uint32_t k, t, r;
    int64_t energy = 0;
    for (k = 0; k < h; ++k) {
        re[k].i = 0;
        im[k].i = 0;
    }
    if (shift == 0u) {
        for (t = 0, r = 0; t < m; t += 2u, r = fm_feat_bitrev_next(r, h)) {
            re[r].i = fm_feat_asr(x[t] - mean, 2);
            if (t + 1u < m) {
                im[r].i = fm_feat_asr(x[t + 1u] - mean, 2);
            }
        }
    } else {
        for (t = 0, r = 0; t < m; t += 2u, r = fm_feat_bitrev_next(r, h)) {
            re[r].i = fm_feat_asr(block_mean(x, t, shift) - mean, 2);
            if (t + 1u < m) {
                im[r].i = fm_feat_asr(block_mean(x, t + 1u, shift) - mean, 2);
            }
        }
    }
    fft_q15(re, im, h);
    for (k = 0; k <= h; ++k) {
        uint32_t i1 = k == h ? 0u : k, i2 = k == 0u ? 0u : h - k;
        int32_t ar = re[i1].i, ai = im[i1].i, br = re[i2].i, bi = im[i2].i;
        int32_t er = fm_feat_asr(ar + br, 1), ei = fm_feat_asr(ai - bi, 1);
        int32_t o_r = fm_feat_asr(ai + bi, 1), oi = fm_feat_asr(br - ar, 1);
        int32_t co, si, xr, xi;
        fm_feat_twiddle_q15(k * step, &co, &si);
        xr = fm_feat_asr(er + fm_feat_asr(co * o_r + si * oi + (1 << 14), 15), 1);
        xi = fm_feat_asr(ei + fm_feat_asr(co * oi - si * o_r + (1 << 14), 15), 1);
        p[k].i = xr * xr + xi * xi;
        if (k > 0u) {
            energy += p[k].i;
        }
    }
    ch->qenergy[shift] = energy;
    return FM_OK;
}

static int magnitude_q15(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const int16_t *x = chan_x(ctx, c), *y = chan_x(ctx, c + 1u), *z = chan_x(ctx, c + 2u);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    int64_t sum = 0;
    int32_t hi = 0;
    uint32_t t;
    (void)kind;
    for (t = 0; t < ctx->len; ++t) {
        /* x^2 + y^2 + z^2 <= 3 * 2^30 < 2^32: 32-bit square root, rounded to nearest */
        uint32_t s = (uint32_t)(x[t] * x[t]) + (uint32_t)(y[t] * y[t]) + (uint32_t)(z[t] * z[t]);
        uint32_t r = fm_feat_isqrt32(s);
        int32_t m = (int32_t)(s - r * r > r ? r + 1u : r);
        sum += m;
        hi = m > hi ? m : hi;
    }
    ch->qmsum = sum;
    ch->qmmax = hi;
    return FM_OK;
}

/* One entry per fm_group_kind: the four spectrum kinds share spectrum_q15 (the kind gives its shift). */
static const fm_feat_group_fn RUN_Q15[FM_GROUP_N_KINDS] = {pass_q15,     centered_q15, spectrum_q15, magnitude_q15,
                                                            spectrum_q15, spectrum_q15, spectrum_q15};

int fm_feat_q15_begin(fm_feat_ctx *ctx, const int16_t *x, uint32_t n_channels, uint32_t len, void *scratch,
                      size_t scratch_size)
{
    return fm_feat_start(ctx, x, n_channels, len, scratch, scratch_size, 1u);
}

static int64_t lagged_q15(const fm_feat_ctx *ctx, uint32_t c1, uint32_t c2, uint32_t lag)
{
    const int16_t *x1 = chan_x(ctx, c1), *x2 = chan_x(ctx, c2);
    int32_t m1 = fm_feat_chans(ctx)[c1].qmean, m2 = fm_feat_chans(ctx)[c2].qmean;
    int64_t num = 0;
    uint32_t t;
    for (t = 0; t + lag < ctx->len; ++t) {
        num += (int64_t)(x1[t] - m1) * (x2[t + lag] - m2);
    }
    return num;
}

/* Frequencies in cycles per sample of the window, as spectral_f32: bin k at shift s is k / (nfft 2^s). */
static int64_t spectral_q15(const fm_feat_ctx *ctx, const fm_feat_spec *spec)
{
    uint32_t shift = fm_feat_shift(spec), nfft = ctx->nffts[shift], half = nfft / 2u, k, best = 1u;
    uint32_t lg = shift;
    const fm_feat_word *p = fm_feat_power_at(ctx, shift, spec->channel);
    int64_t acc = 0, energy = fm_feat_chans(ctx)[spec->channel].qenergy[shift];
    while ((1u << (lg - shift)) < nfft) {
        ++lg;
    }
    if (spec->id == FM_FEAT_DOMINANT_FREQ) {
        for (k = 2u; k <= half; ++k) {
            best = p[k].i > p[best].i ? k : best;
        }
        return (int64_t)best << (15u - lg);
    }
    if (spec->id == FM_FEAT_CENTROID) {
        for (k = 1u; k <= half; ++k) {
            acc += (int64_t)k * p[k].i;
        }
        return energy > 0 ? fm_feat_round_div(acc << (15u - lg), energy) : 0;
    }
    for (k = 1u + spec->param * half / spec->param2; k < 1u + (spec->param + 1u) * half / spec->param2; ++k) {
        acc += p[k].i;
    }
    return energy > 0 ? fm_feat_round_div(acc * Q15_ONE, energy) : 0;
}

int fm_feat_q15_value(fm_feat_ctx *ctx, const fm_feat_spec *spec, float *value)
{
    const fm_feat_chan *ch;
    int64_t q, den, n;
    int rc;
    if (value == NULL) {
        return FM_E_ARG;
    }
    rc = fm_feat_prepare(ctx, spec, RUN_Q15, 1u);
    if (rc != FM_OK) {
        return rc;
    }
    ch = &fm_feat_chans(ctx)[spec->channel];
    n = (int64_t)ctx->len;
    switch (spec->id) {
    case FM_FEAT_MEAN:
        q = ch->qmean;
        break;
    case FM_FEAT_STD:
        q = fm_feat_isqrt_round((uint64_t)fm_feat_round_div(ch->qss, n));
        break;
    case FM_FEAT_MIN:
        q = ch->qmin;
        break;
    case FM_FEAT_MAX:
        q = ch->qmax;
        break;
    case FM_FEAT_RMS:
        q = fm_feat_isqrt_round((uint64_t)fm_feat_round_div(ch->qsumsq, n));
        break;
    case FM_FEAT_PTP:
        q = (int64_t)ch->qmax - ch->qmin;
        break;
    case FM_FEAT_CROSSING_RATE:
        q = fm_feat_round_div((int64_t)ch->crossings * Q15_ONE, n - 1);
        break;
    case FM_FEAT_AUTOCORR:
        q = ch->qss > 0 ? fm_feat_round_div(lagged_q15(ctx, spec->channel, spec->channel, spec->param) * Q15_ONE,
                                            ch->qss)
                        : 0;
        break;
    case FM_FEAT_MAG_MEAN:
        q = fm_feat_round_div(ch->qmsum, n);
        break;
    case FM_FEAT_MAG_MAX:
        q = ch->qmmax;
        break;
    case FM_FEAT_CORRELATION:
        den = (int64_t)fm_feat_isqrt64((uint64_t)ch->qss) *
              (int64_t)fm_feat_isqrt64((uint64_t)fm_feat_chans(ctx)[spec->channel2].qss);
        q = den > 0 ? fm_feat_round_div(lagged_q15(ctx, spec->channel, spec->channel2, 0u) * Q15_ONE, den) : 0;
        q = q > Q15_ONE ? Q15_ONE : (q < -Q15_ONE ? -Q15_ONE : q);
        break;
    default: /* spectral (fm_feat_prepare rejected unknown ids) */
        q = spectral_q15(ctx, spec);
        break;
    }
    *value = (float)(int32_t)q * (1.0f / 32768.0f);
    return FM_OK;
}
