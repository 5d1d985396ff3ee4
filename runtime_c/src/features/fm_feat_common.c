/* Feature library: what the float32 and q15 calls share (catalog facts, checks, scratch, square roots). */
#include "fm_feat_internal.h"
#include "fm_port.h"

static uint32_t nfft_of(uint32_t len)
{
    uint32_t n = 1u;
    if (len > FM_FEAT_MAX_FFT) {
        return 0u;
    }
#ifdef FM_CLZ32
    if (len > 2u) { /* the power of two >= len in two instructions where the core counts leading zeros */
        return 1u << (32u - FM_CLZ32(len - 1u));
    }
#endif
    while (n < len) {
        n <<= 1;
    }
    return n < 2u ? 2u : n;
}

/* nfft of the spectrum at a shift: the power of two >= len >> shift (at least 2), or 0 when that is over
 * FM_FEAT_MAX_FFT or the window holds no block. */
static uint32_t nfft_at(uint32_t len, uint32_t shift)
{
    return (len >> shift) == 0u ? 0u : nfft_of(len >> shift);
}

/* The scratch layout of a window (fm_feat_internal.h): each shift's nfft, the word offsets of each shift's spectra
 * and of the work area after them; returns the bytes it needs (0 over the bounds). */
static size_t layout(uint32_t n_channels, uint32_t len, uint32_t nffts[FM_FEAT_SHIFTS],
                     uint32_t offsets[FM_FEAT_SHIFTS + 1u])
{
    uint32_t s, words = 0u, most = 0u;
    if (n_channels == 0u || n_channels > FM_FEAT_MAX_CHANNELS || len == 0u || len > FM_FEAT_MAX_LEN) {
        return 0u;
    }
    for (s = 0; s < FM_FEAT_SHIFTS; ++s) {
        nffts[s] = nfft_at(len, s);
        offsets[s] = words;
        words += n_channels * (nffts[s] / 2u + 1u);
        most = nffts[s] > most ? nffts[s] : most;
    }
    offsets[FM_FEAT_SHIFTS] = words;
    return n_channels * sizeof(fm_feat_chan) + ((size_t)words + 2u * (size_t)most) * sizeof(fm_feat_word);
}

size_t fm_feat_scratch_size(uint32_t n_channels, uint32_t len)
{
    uint32_t nffts[FM_FEAT_SHIFTS], offsets[FM_FEAT_SHIFTS + 1u];
    return layout(n_channels, len, nffts, offsets);
}

static int is_spectral(uint32_t id)
{
    return id == FM_FEAT_BAND_ENERGY || id == FM_FEAT_DOMINANT_FREQ || id == FM_FEAT_CENTROID;
}

uint32_t fm_feat_min_len(const fm_feat_spec *spec)
{
    uint32_t p = 2u;
    switch (spec->id) {
    case FM_FEAT_MEAN:
    case FM_FEAT_MIN:
    case FM_FEAT_MAX:
    case FM_FEAT_RMS:
    case FM_FEAT_PTP:
    case FM_FEAT_MAG_MEAN:
    case FM_FEAT_MAG_MAX:
        return 1u;
    case FM_FEAT_STD:
    case FM_FEAT_CROSSING_RATE:
    case FM_FEAT_CORRELATION:
        return 2u;
    case FM_FEAT_DOMINANT_FREQ:
    case FM_FEAT_CENTROID:
        return 2u << fm_feat_shift(spec); /* two blocks */
    case FM_FEAT_AUTOCORR:
        return (uint32_t)spec->param + 2u;
    case FM_FEAT_BAND_ENERGY:
        /* nfft / 2 >= bands: nfft >= p, the power of two >= 2 bands, so len >> shift > p / 2 */
        while (p < 2u * (uint32_t)spec->param2) {
            p <<= 1;
        }
        return (p / 2u + 1u) << fm_feat_shift(spec);
    default:
        return 0u;
    }
}

/* Group i of a feature's plan: its kind and channel. */
#define FEAT_GROUP(i, k, ch) (groups[i].kind = (k), groups[i].channel = (uint16_t)(ch))

uint32_t fm_feat_groups(const fm_feat_spec *spec, fm_feat_group groups[FM_FEAT_MAX_GROUPS])
{
    uint16_t c = spec->channel;
    FEAT_GROUP(0, FM_GROUP_PASS, c);
    switch (spec->id) {
    case FM_FEAT_MEAN:
    case FM_FEAT_MIN:
    case FM_FEAT_MAX:
    case FM_FEAT_RMS:
    case FM_FEAT_PTP:
        return 1u;
    case FM_FEAT_STD:
    case FM_FEAT_CROSSING_RATE:
    case FM_FEAT_AUTOCORR:
        FEAT_GROUP(1, FM_GROUP_CENTERED, c);
        return 2u;
    case FM_FEAT_BAND_ENERGY:
    case FM_FEAT_DOMINANT_FREQ:
    case FM_FEAT_CENTROID:
        FEAT_GROUP(1, fm_feat_spectrum_kind(fm_feat_shift(spec)), c);
        return 2u;
    case FM_FEAT_MAG_MEAN:
    case FM_FEAT_MAG_MAX:
        FEAT_GROUP(1, FM_GROUP_PASS, c + 1u);
        FEAT_GROUP(2, FM_GROUP_PASS, c + 2u);
        FEAT_GROUP(3, FM_GROUP_MAGNITUDE, c);
        return 4u;
    case FM_FEAT_CORRELATION:
        FEAT_GROUP(1, FM_GROUP_CENTERED, c);
        FEAT_GROUP(2, FM_GROUP_PASS, spec->channel2);
        FEAT_GROUP(3, FM_GROUP_CENTERED, spec->channel2);
        return 4u;
    default:
        return 0u;
    }
}

int fm_feat_check(const fm_feat_spec *spec, uint32_t n_channels)
{
    uint32_t last;
    if (spec == NULL || spec->id >= FM_FEAT_N_IDS) {
        return FM_E_FEATURE;
    }
    last = spec->channel;
    if (spec->id == FM_FEAT_AUTOCORR && spec->param == 0u) {
        return FM_E_FEATURE;
    }
    if (spec->decimate != 0u && (!is_spectral(spec->id) || fm_feat_shift(spec) == 0u)) {
        return FM_E_FEATURE; /* decimate is 0, or 2, 4, 8 on a spectral feature */
    }
    if (spec->id == FM_FEAT_BAND_ENERGY &&
        (spec->param2 == 0u || spec->param >= spec->param2 || spec->param2 > FM_FEAT_MAX_FFT / 2u)) {
        return FM_E_FEATURE;
    }
    if (spec->id == FM_FEAT_MAG_MEAN || spec->id == FM_FEAT_MAG_MAX) {
        last += 2u;
    }
    if (spec->id == FM_FEAT_CORRELATION) {
        if (spec->channel2 == spec->channel) {
            return FM_E_FEATURE;
        }
        if (spec->channel2 > last) {
            last = spec->channel2;
        }
    }
    return last >= n_channels ? FM_E_CHANNEL : FM_OK;
}

int fm_feat_prepare(fm_feat_ctx *ctx, const fm_feat_spec *spec, const fm_feat_group_fn run[FM_GROUP_N_KINDS],
                    uint32_t q15)
{
    fm_feat_group groups[FM_FEAT_MAX_GROUPS];
    const fm_feat_group *g, *end;
    fm_feat_chan *chans;
    int rc;
    if (ctx == NULL || ctx->scratch == NULL || ctx->q15 != q15) {
        return FM_E_ARG;
    }
    ctx->new_groups = 0u;
    rc = fm_feat_check(spec, ctx->n_channels);
    if (rc != FM_OK) {
        return rc;
    }
    if (ctx->len < fm_feat_min_len(spec) || (is_spectral(spec->id) && ctx->nffts[fm_feat_shift(spec)] == 0u)) {
        return FM_E_WINDOW;
    }
    end = groups + fm_feat_groups(spec, groups);
    chans = fm_feat_chans(ctx);
    for (g = groups; g != end; ++g) {
        fm_feat_chan *ch = &chans[g->channel];
        if (((ch->done >> g->kind) & 1u) == 0u) {
            rc = run[g->kind](ctx, g->channel, g->kind);
            if (rc != FM_OK) {
                return rc;
            }
            ch->done |= 1u << g->kind;
            ++ctx->new_groups;
            ++ctx->n_groups;
        }
    }
    return FM_OK;
}

int fm_feat_start(fm_feat_ctx *ctx, const void *x, uint32_t n_channels, uint32_t len, void *scratch,
                  size_t scratch_size, uint32_t q15)
{
    uint32_t c;
    size_t need;
    if (ctx == NULL) {
        return FM_E_ARG;
    }
    need = layout(n_channels, len, ctx->nffts, ctx->offsets); /* the one layout of this window */
    /* the scratch holds uint64_t words: a misaligned buffer would be undefined behaviour, not a slow read */
    if (x == NULL || scratch == NULL || need == 0u || scratch_size < need || ((uintptr_t)scratch & 7u) != 0u) {
        ctx->scratch = NULL; /* its value calls return FM_E_ARG */
        return FM_E_ARG;
    }
    ctx->x = x;
    ctx->n_channels = n_channels;
    ctx->len = len;
    ctx->q15 = q15;
    ctx->scratch = scratch;
    ctx->new_groups = 0u;
    ctx->n_groups = 0u;
    for (c = 0; c < n_channels; ++c) {
        fm_feat_chans(ctx)[c].done = 0u;
    }
    return FM_OK;
}

/* The bit-by-bit integer square root (floor) of v, of unsigned type T: fm_feat_isqrt64 and fm_feat_isqrt32 (the
 * 32-bit one keeps 64-bit arithmetic, library calls on Cortex-M0/M3, out of the q15 kernels). */
#define FM_FEAT_ISQRT(name, T)                                                                                \
    uint32_t name(T v)                                                                                        \
    {                                                                                                         \
        T r = 0, bit = (T)1 << (sizeof(T) * 8u - 2u);                                                         \
        while (bit > v) {                                                                                     \
            bit >>= 2;                                                                                        \
        }                                                                                                     \
        while (bit != 0u) {                                                                                   \
            if (v >= r + bit) {                                                                               \
                v -= r + bit;                                                                                 \
                r = (r >> 1) + bit;                                                                           \
            } else {                                                                                          \
                r >>= 1;                                                                                      \
            }                                                                                                 \
            bit >>= 2;                                                                                        \
        }                                                                                                     \
        return (uint32_t)r;                                                                                   \
    }

FM_FEAT_ISQRT(fm_feat_isqrt64, uint64_t)

/* Where the core counts leading zeros and divides in one instruction each (FM_CLZ32, fm_port.h), the 32-bit root
 * by Newton's iteration from above: x0 = 2^ceil(bits / 2) >= sqrt(v), x <- (x + v / x) / 2 falls monotonically to
 * floor(sqrt(v)) (about five steps, where the bit-by-bit loop takes sixteen); the same answer. */
#ifdef FM_CLZ32
uint32_t fm_feat_isqrt32(uint32_t v)
{
    uint32_t x, y;
    if (v == 0u) {
        return 0u;
    }
    x = 1u << ((33u - FM_CLZ32(v)) / 2u);
    for (;;) {
        y = (x + v / x) >> 1;
        if (y >= x) {
            return x;
        }
        x = y;
    }
}
#else
FM_FEAT_ISQRT(fm_feat_isqrt32, uint32_t)
#endif

/* Correctly rounded float square root. Where the target has an FPU square root (FM_SQRTF, fm_port.h: Arm VFP
 * single precision, AArch64, x86-64 SSE) normal positive inputs take it: IEEE 754 square root is correctly
 * rounded, so the bits are those of the digit-by-digit routine below, in about a tenth of its instructions; the
 * special cases and subnormals stay in C, so flush-to-zero or default-NaN modes cannot change an answer. */
float fm_feat_sqrtf(float x)
{
    uint32_t bits = fm_float_bits(x), man, rem, q = 0, s = 0, bit;
    int32_t e;
    float out;
    if ((bits & 0x7fffffffu) == 0u || bits == 0x7f800000u) {
        return x; /* +-0, +inf */
    }
    if ((bits & 0x80000000u) != 0u || fm_bits_nonfinite(bits)) {
        bits = 0x7fc00000u; /* negative or NaN */
        memcpy(&out, &bits, sizeof out);
        return out;
    }
#ifdef FM_SQRTF
    if ((bits >> 23) != 0u) {
        return FM_SQRTF(x);
    }
#endif
    man = bits & 0x7fffffu;
    if ((bits >> 23) == 0u) { /* subnormal: normalize */
        e = -126;
        while ((man & 0x800000u) == 0u) {
            man <<= 1;
            --e;
        }
    } else {
        man |= 0x800000u;
        e = (int32_t)(bits >> 23) - 127;
    }
    /* x = man * 2^(e - 23) with 2^23 <= man < 2^24; make e even (man < 2^25) */
    if ((e & 1) != 0) {
        man <<= 1;
        --e;
    }
    /* Digit by digit in 32 bits: q collects sqrt(man / 2^23) * 2^24 (25 bits, one past the float's
     * precision), rem the remainder, doubled every step so that it stays below 2^27. */
    rem = man << 1;
    for (bit = 0x1000000u; bit != 0u; bit >>= 1) {
        uint32_t t = s + bit;
        if (t <= rem) {
            s = t + bit;
            rem -= t;
            q += bit;
        }
        rem <<= 1;
    }
    if (rem != 0u) { /* inexact: the last bit of q says whether past the half (never exactly a half) */
        q += q & 1u;
    }
    bits = (q >> 1) + 0x3f000000u + ((uint32_t)(e / 2) << 23);
    memcpy(&out, &bits, sizeof out);
    return out;
}
