/* Feature library, float32: every sum runs in sample (or bin) order from 0.0f, as in
 * pyruntime/features/f32.py. */
#include "fm_feat_internal.h"

static const float *chan_x(const fm_feat_ctx *ctx, uint32_t c)
{
    return (const float *)ctx->x + (size_t)c * ctx->len;
}

static int pass_f32(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const float *x = chan_x(ctx, c);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    float sum = 0.0f, sumsq = 0.0f, lo = x[0], hi = x[0];
    uint32_t t;
    (void)kind;
    for (t = 0; t < ctx->len; ++t) {
        float v = x[t];
        if (fm_bits_nonfinite(fm_float_bits(v))) {
            return FM_E_SAMPLE;
        }
        sum += v;
        sumsq += v * v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    ch->sum = sum;
    ch->sumsq = sumsq;
    ch->min = lo;
    ch->max = hi;
    /* a constant window's mean is its value: sum / len can be an ulp off it, and the centred signal would be
     * that ulp, not 0 (an autocorrelation of (n - lag) / n, a box's spectrum) */
    ch->mean = lo == hi ? lo : sum / (float)ctx->len;
    return FM_OK;
}

static int centered_f32(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const float *x = chan_x(ctx, c);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    float ss = 0.0f, mean = ch->mean;
    uint32_t t, crossings = 0;
    int below = x[0] - mean < 0.0f;
    (void)kind;
    for (t = 0; t < ctx->len; ++t) {
        float d = x[t] - mean;
        int b = d < 0.0f;
        ss += d * d;
        crossings += (uint32_t)(b != below);
        below = b;
    }
    ch->ss = ss;
    ch->crossings = crossings;
    return FM_OK;
}

/* In-place radix-2 FFT of n points (input in bit-reversed order), W = exp(-2 pi i k / n). */
static void fft_f32(fm_feat_word *re, fm_feat_word *im, uint32_t n)
{
    uint32_t size, j, a;
    for (size = 2u; size <= n; size <<= 1) {
        uint32_t half = size / 2u, step = FM_FEAT_MAX_FFT / size;
        for (j = 0; j < half; ++j) {
            float co, si;
            fm_feat_twiddle_f32(j * step, &co, &si);
            for (a = j; a < n; a += size) {
                uint32_t b = a + half;
                float ar = re[a].f, ai = im[a].f, br = re[b].f, bi = im[b].f; /* loaded once: re, im may alias */
                float tr = co * br + si * bi;
                float ti = co * bi - si * br;
                re[b].f = ar - tr;
                im[b].f = ai - ti;
                re[a].f = ar + tr;
                im[a].f = ai + ti;
            }
        }
    }
}

/* Block t of a decimated signal less the channel's mean: the mean of x[t 2^s .. t 2^s + 2^s - 1], summed in
 * order (the division by 2^s is exact). */
static float block_centred(const float *x, uint32_t t, uint32_t shift, float mean)
{
    const float *b = x + ((size_t)t << shift);
    float s = b[0];
    uint32_t j;
    for (j = 1u; j < (1u << shift); ++j) {
        s += b[j];
    }
    return s / (float)(1u << shift) - mean;
}

/* The power spectrum of a real signal of m samples by one complex FFT of half the length: z[j] = d[2j] + i d[2j+1]
 * (d the centred signal zero-padded to n), Z = FFT_h(z), h = n / 2; then for k = 0..h, with A = Z[k mod h],
 * B = Z[(h - k) mod h] and W = exp(-2 pi i k / n) = c - i s: E = (A + conj B) / 2, O = (A - conj B) / (2i),
 * X[k] = E + W O (half the butterflies of an n-point FFT of the real signal; pyruntime/features/fft.py power_f32
 * in the same order). The signal is the window (shift 0) or its block means of 2^shift samples. */
static int spectrum_f32(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const uint32_t shift = fm_feat_kind_shift(kind);
    const float *x = chan_x(ctx, c);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    const float mean = ch->mean; /* a local: the stores below could alias it */
    uint32_t n = ctx->nffts[shift], m = ctx->len >> shift, h = n / 2u, step = FM_FEAT_MAX_FFT / n;
    fm_feat_word *re = fm_feat_work(ctx), *im = re + n, *p = fm_feat_power_at(ctx, shift, c);
    uint32_t k, t, r;
    float energy = 0.0f;
    for (k = 0; k < h; ++k) {
        re[k].f = 0.0f;
        im[k].f = 0.0f;
    }
    if (shift == 0u) { /* the window itself: no block sums in the loop */
        for (t = 0, r = 0; t < m; t += 2u, r = fm_feat_bitrev_next(r, h)) {
            re[r].f = x[t] - mean;
            if (t + 1u < m) {
                im[r].f = x[t + 1u] - mean;
            }
        }
    } else {
        for (t = 0, r = 0; t < m; t += 2u, r = fm_feat_bitrev_next(r, h)) {
            re[r].f = block_centred(x, t, shift, mean);
            if (t + 1u < m) {
                im[r].f = block_centred(x, t + 1u, shift, mean);
            }
        }
    }
    fft_f32(re, im, h);
    for (k = 0; k <= h; ++k) {
        uint32_t i1 = k == h ? 0u : k, i2 = k == 0u ? 0u : h - k;
        float ar = re[i1].f, ai = im[i1].f, br = re[i2].f, bi = im[i2].f;
        float er = 0.5f * (ar + br), ei = 0.5f * (ai - bi), o_r = 0.5f * (ai + bi), oi = 0.5f * (br - ar);
        float co, si, xr, xi;
        fm_feat_twiddle_f32(k * step, &co, &si);
        xr = er + (co * o_r + si * oi);
        xi = ei + (co * oi - si * o_r);
        p[k].f = xr * xr + xi * xi;
        if (k > 0u) {
            energy += p[k].f;
        }
    }
    ch->energy[shift] = energy;
    return FM_OK;
}

static int magnitude_f32(fm_feat_ctx *ctx, uint32_t c, uint32_t kind)
{
    const float *x = chan_x(ctx, c), *y = chan_x(ctx, c + 1u), *z = chan_x(ctx, c + 2u);
    fm_feat_chan *ch = &fm_feat_chans(ctx)[c];
    float sum = 0.0f, hi = 0.0f;
    uint32_t t;
    (void)kind;
    for (t = 0; t < ctx->len; ++t) {
        float m = fm_feat_sqrtf(x[t] * x[t] + y[t] * y[t] + z[t] * z[t]);
        sum += m;
        hi = m > hi ? m : hi;
    }
    ch->msum = sum;
    ch->mmax = hi;
    return FM_OK;
}

/* One entry per fm_group_kind: the four spectrum kinds share spectrum_f32 (the kind gives its shift). */
static const fm_feat_group_fn RUN_F32[FM_GROUP_N_KINDS] = {pass_f32,     centered_f32, spectrum_f32, magnitude_f32,
                                                            spectrum_f32, spectrum_f32, spectrum_f32};

int fm_feat_begin(fm_feat_ctx *ctx, const float *x, uint32_t n_channels, uint32_t len, void *scratch,
                  size_t scratch_size)
{
    return fm_feat_start(ctx, x, n_channels, len, scratch, scratch_size, 0u);
}

static float lagged_f32(const fm_feat_ctx *ctx, uint32_t c1, uint32_t c2, uint32_t lag)
{
    const float *x1 = chan_x(ctx, c1), *x2 = chan_x(ctx, c2);
    float m1 = fm_feat_chans(ctx)[c1].mean, m2 = fm_feat_chans(ctx)[c2].mean, num = 0.0f;
    uint32_t t;
    for (t = 0; t + lag < ctx->len; ++t) {
        num += (x1[t] - m1) * (x2[t + lag] - m2);
    }
    return num;
}

/* Frequencies are in cycles per sample of the window: bin k of a spectrum at shift s is k / (nfft 2^s). */
static float spectral_f32(const fm_feat_ctx *ctx, const fm_feat_spec *spec)
{
    uint32_t shift = fm_feat_shift(spec), nfft = ctx->nffts[shift], half = nfft / 2u, k, best = 1u;
    const fm_feat_word *p = fm_feat_power_at(ctx, shift, spec->channel);
    float acc = 0.0f, energy = fm_feat_chans(ctx)[spec->channel].energy[shift], scale = (float)(nfft << shift);
    if (spec->id == FM_FEAT_DOMINANT_FREQ) {
        for (k = 2u; k <= half; ++k) {
            best = p[k].f > p[best].f ? k : best;
        }
        return (float)best / scale;
    }
    if (spec->id == FM_FEAT_CENTROID) {
        for (k = 1u; k <= half; ++k) {
            acc += (float)k * p[k].f;
        }
        return energy > 0.0f ? acc / energy / scale : 0.0f;
    }
    for (k = 1u + spec->param * half / spec->param2; k < 1u + (spec->param + 1u) * half / spec->param2; ++k) {
        acc += p[k].f;
    }
    return energy > 0.0f ? acc / energy : 0.0f;
}

/* An intermediate that overflowed float32 (a channel's mean or sum of squares, a spectrum's energy): a feature
 * derived from it is FM_E_VALUE, not the 0 of a "den > 0" guard or the bin an infinite spectrum happens to give. */
static int overflowed(float v)
{
    return fm_bits_nonfinite(fm_float_bits(v));
}

int fm_feat_value(fm_feat_ctx *ctx, const fm_feat_spec *spec, float *value)
{
    const fm_feat_chan *ch;
    float v, n, s2;
    int rc;
    if (value == NULL) {
        return FM_E_ARG;
    }
    rc = fm_feat_prepare(ctx, spec, RUN_F32, 0u);
    if (rc != FM_OK) {
        return rc;
    }
    ch = &fm_feat_chans(ctx)[spec->channel];
    n = (float)ctx->len;
    switch (spec->id) {
    case FM_FEAT_MEAN:
        v = ch->mean;
        break;
    case FM_FEAT_STD:
        v = fm_feat_sqrtf(ch->ss / n);
        break;
    case FM_FEAT_MIN:
        v = ch->min;
        break;
    case FM_FEAT_MAX:
        v = ch->max;
        break;
    case FM_FEAT_RMS:
        v = fm_feat_sqrtf(ch->sumsq / n);
        break;
    case FM_FEAT_PTP:
        v = ch->max - ch->min;
        break;
    case FM_FEAT_CROSSING_RATE:
        if (overflowed(ch->mean)) {
            return FM_E_VALUE;
        }
        v = (float)ch->crossings / (float)(ctx->len - 1u);
        break;
    case FM_FEAT_AUTOCORR:
        if (overflowed(ch->ss)) {
            return FM_E_VALUE;
        }
        v = lagged_f32(ctx, spec->channel, spec->channel, spec->param);
        v = ch->ss > 0.0f ? v / ch->ss : 0.0f;
        break;
    case FM_FEAT_MAG_MEAN:
        v = ch->msum / n;
        break;
    case FM_FEAT_MAG_MAX:
        v = ch->mmax;
        break;
    case FM_FEAT_CORRELATION:
        if (overflowed(ch->ss) || overflowed(fm_feat_chans(ctx)[spec->channel2].ss)) {
            return FM_E_VALUE;
        }
        s2 = fm_feat_sqrtf(ch->ss) * fm_feat_sqrtf(fm_feat_chans(ctx)[spec->channel2].ss);
        v = lagged_f32(ctx, spec->channel, spec->channel2, 0u);
        v = s2 > 0.0f ? v / s2 : 0.0f;
        break;
    default: /* spectral (fm_feat_prepare rejected unknown ids) */
        if (overflowed(ch->energy[fm_feat_shift(spec)])) {
            return FM_E_VALUE;
        }
        v = spectral_f32(ctx, spec);
        break;
    }
    if (fm_bits_nonfinite(fm_float_bits(v))) {
        return FM_E_VALUE;
    }
    *value = v;
    return FM_OK;
}
