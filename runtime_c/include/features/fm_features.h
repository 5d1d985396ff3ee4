/*
 * frugalml feature library: features of a raw sensor window computed on the
 * device, float32 (fm_feat_*) and q15 (fm_feat_q15_*), no malloc, no global
 * mutable state, no libm (square roots are computed with integers).
 *
 * A window is channel-major: sample t of channel c is x[c * len + t]
 * (float32, or int16 q15 in -1..1). A feature is an fm_feat_spec (id,
 * channel(s), parameters). Features that share an intermediate form a group
 * (fm_feat_group): a channel's pass (sum, sum of squares, min, max; checks the
 * samples), its centred pass (needs the mean), its spectrum (one FFT), the
 * magnitude of three channels. A context (fm_feat_ctx) holds the window and
 * the caller's scratch; every group runs at most once per context, and the
 * context reports which groups a value call ran (new_groups), so a caller
 * charges a group's cost once per prediction.
 *
 * The numpy reference that follows this arithmetic step by step (float32
 * operation order, q15 rounding) is pyruntime/features/; the C and the
 * reference agree bit for bit on every target (tests/test_features_*.py).
 *
 * Usage:
 *     uint64_t scratch[...];  // fm_feat_scratch_size(n_channels, len) bytes
 *     fm_feat_ctx ctx;
 *     rc = fm_feat_begin(&ctx, x, n_channels, len, scratch, sizeof scratch);
 *     rc = fm_feat_value(&ctx, &spec, &value);   // lazily, any order
 */
#ifndef FM_FEATURES_H
#define FM_FEATURES_H

#include "frugalml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest window (samples per channel) and the largest FFT (spectral
 * features of a window of len samples use nfft = the power of two >= len,
 * so they need len <= FM_FEAT_MAX_FFT). */
#define FM_FEAT_MAX_LEN 4096u
#define FM_FEAT_MAX_FFT 1024u
#define FM_FEAT_MAX_CHANNELS 64u
/* Decimations of the spectral features: block means of 2^s samples, s < FM_FEAT_SHIFTS (decimate 0, 2, 4, 8). */
#define FM_FEAT_SHIFTS 4u

/* Feature ids. Parameters (fm_feat_spec): channel for every feature;
 * AUTOCORR: param = lag (>= 1); BAND_ENERGY: param = band, param2 = bands;
 * MAG_*: channel, channel + 1, channel + 2; CORRELATION: channel, channel2.
 * The spectral features (BAND_ENERGY, DOMINANT_FREQ, CENTROID) take
 * decimate = 0 (the window itself) or D = 2, 4, 8: the spectrum of the
 * window's block means of D samples (the last len mod D samples dropped),
 * which sees frequencies below 1 / (2 D) cycles per sample at the window's
 * resolution for about 1 / D of the FFT's work; frequencies stay in cycles
 * per sample of the window. */
typedef enum {
    FM_FEAT_MEAN = 0,          /* sum / len */
    FM_FEAT_STD = 1,           /* sqrt(sum (x - mean)^2 / len) */
    FM_FEAT_MIN = 2,
    FM_FEAT_MAX = 3,
    FM_FEAT_RMS = 4,           /* sqrt(sum x^2 / len) */
    FM_FEAT_PTP = 5,           /* max - min */
    FM_FEAT_CROSSING_RATE = 6, /* sign changes of x - mean / (len - 1) */
    FM_FEAT_AUTOCORR = 7,      /* sum_t d[t] d[t + lag] / sum d^2, d = x - mean */
    FM_FEAT_BAND_ENERGY = 8,   /* share of the spectrum's energy (bins 1..nfft/2) in band `param` of `param2` */
    FM_FEAT_DOMINANT_FREQ = 9, /* first bin k >= 1 of largest power, k / nfft (cycles per sample) */
    FM_FEAT_CENTROID = 10,     /* sum k P[k] / sum P[k] / nfft over bins 1..nfft/2 */
    FM_FEAT_MAG_MEAN = 11,     /* mean over t of sqrt(x^2 + y^2 + z^2) */
    FM_FEAT_MAG_MAX = 12,      /* max over t of the same */
    FM_FEAT_CORRELATION = 13,  /* sum d1 d2 / sqrt(sum d1^2 * sum d2^2) (q15: / (sqrt ss1 * sqrt ss2)) */
    FM_FEAT_N_IDS = 14
} fm_feat_id;

/* Groups: the intermediates shared by features. */
typedef enum {
    FM_GROUP_PASS = 0,      /* per channel: sum, sum of squares, min, max; sample check */
    FM_GROUP_CENTERED = 1,  /* per channel: sum (x - mean)^2, mean crossings */
    FM_GROUP_SPECTRUM = 2,  /* per channel: power spectrum of x - mean (one FFT) */
    FM_GROUP_MAGNITUDE = 3, /* per first channel of three: sum and max of the magnitude */
    FM_GROUP_SPECTRUM_D2 = 4, /* per channel: power spectrum of the block means of 2 samples, less the mean */
    FM_GROUP_SPECTRUM_D4 = 5, /* ... of 4 samples */
    FM_GROUP_SPECTRUM_D8 = 6, /* ... of 8 samples */
    FM_GROUP_N_KINDS = 7
} fm_group_kind;

typedef struct {
    uint8_t kind;    /* fm_group_kind */
    uint16_t channel;
} fm_feat_group;

/* The groups a feature uses, at most FM_FEAT_MAX_GROUPS, in the order they run. */
#define FM_FEAT_MAX_GROUPS 4u

typedef struct {
    uint16_t id;      /* fm_feat_id */
    uint16_t channel;
    uint16_t channel2; /* CORRELATION's second channel */
    uint16_t param;    /* AUTOCORR lag, BAND_ENERGY band */
    uint16_t param2;   /* BAND_ENERGY number of bands */
    uint16_t decimate; /* spectral features: 0 (the window) or 2, 4, 8 (block means of that many samples) */
} fm_feat_spec;

/* One window's state. Fields are read-only for callers except new_groups. */
typedef struct {
    const void *x;        /* float32 or int16 samples, channel-major */
    uint32_t n_channels;
    uint32_t len;
    uint32_t nffts[FM_FEAT_SHIFTS];      /* FFT points of the block means of 1, 2, 4, 8 samples: the power of two
                                          * >= len >> s (nffts[0]: of the window), 0 when over FM_FEAT_MAX_FFT */
    uint32_t offsets[FM_FEAT_SHIFTS + 1]; /* scratch words from the spectra's start to each one's, then the work */
    uint32_t q15;         /* 1: started by fm_feat_q15_begin (int16 samples) */
    void *scratch;
    uint32_t new_groups;  /* groups run by the last value call */
    uint32_t n_groups;    /* groups run since fm_feat_begin */
} fm_feat_ctx;

/* Bytes of caller scratch for a window of n_channels x len (0 when over the
 * bounds); the scratch must be aligned for uint64_t. The same size serves the
 * float32 and the q15 calls. */
size_t fm_feat_scratch_size(uint32_t n_channels, uint32_t len);

/* Smallest window length a feature accepts (0 for an unknown id). */
uint32_t fm_feat_min_len(const fm_feat_spec *spec);

/* Fills groups[0 .. n-1] with the groups the feature uses, returns n
 * (0 for an unknown id). */
uint32_t fm_feat_groups(const fm_feat_spec *spec, fm_feat_group groups[FM_FEAT_MAX_GROUPS]);

/* Checks a feature against a channel count: FM_OK, FM_E_FEATURE (unknown id
 * or parameter) or FM_E_CHANNEL (a channel >= n_channels). */
int fm_feat_check(const fm_feat_spec *spec, uint32_t n_channels);

/* Starts a window: FM_E_ARG for NULL, len 0 or over FM_FEAT_MAX_LEN,
 * n_channels 0 or over FM_FEAT_MAX_CHANNELS, a scratch not aligned for
 * uint64_t, or a scratch smaller than
 * fm_feat_scratch_size (checked here, with the one layout of the scratch:
 * callers need not size it first). O(n_channels): clears the groups' done
 * marks. On failure the context is left unusable (its value calls return
 * FM_E_ARG). */
int fm_feat_begin(fm_feat_ctx *ctx, const float *x, uint32_t n_channels, uint32_t len, void *scratch,
                  size_t scratch_size);
int fm_feat_q15_begin(fm_feat_ctx *ctx, const int16_t *x, uint32_t n_channels, uint32_t len, void *scratch,
                      size_t scratch_size);

/* One feature's value. Status: FM_OK; FM_E_FEATURE, FM_E_CHANNEL (see
 * fm_feat_check); FM_E_WINDOW (len below fm_feat_min_len, or over
 * FM_FEAT_MAX_FFT for a spectral feature); FM_E_SAMPLE (a sample of a channel
 * it reads is NaN or infinite, float32 only); FM_E_VALUE (the result
 * overflowed to an infinity or NaN, float32 only). q15 values are exact
 * integers times 2^-15 (see pyruntime/features/q15.py for each format).
 * ctx->new_groups: the number of groups this call ran (0 when every group
 * it uses ran before in this window); ctx->n_groups: the total since begin. */
int fm_feat_value(fm_feat_ctx *ctx, const fm_feat_spec *spec, float *value);
int fm_feat_q15_value(fm_feat_ctx *ctx, const fm_feat_spec *spec, float *value);

/* Correctly rounded float32 square root of x >= 0 with integer arithmetic
 * (no libm, the same bits on every target); NaN for x < 0 or NaN. */
float fm_feat_sqrtf(float x);

/* floor(sqrt(v)) of a 64-bit and of a 32-bit unsigned integer. */
uint32_t fm_feat_isqrt64(uint64_t v);
uint32_t fm_feat_isqrt32(uint32_t v);

#ifdef __cplusplus
}
#endif

#endif /* FM_FEATURES_H */
