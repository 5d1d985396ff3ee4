/*
 * libFuzzer harness: the feature library (features/fm_features.h) on raw windows, float32 and q15.
 *
 * Input (fuzz_common.h encoding): numeric byte (bit 0: q15), channels 1..FZ_FEAT_CHANNELS, length
 * 1..FZ_FEAT_LEN (two bytes), the number of features 1..FZ_FEAT_SPECS and each spec as five bytes
 * (id may be unknown, channels may be out of range, parameters any; the fifth byte gives the bands and
 * the decimation, 0, 2, 4, 8 or the invalid 3), then the samples (float32: one
 * mode byte, raw bits so NaN/inf/huge values occur, or small k/8 values; q15: raw int16).
 *
 * Checks: every call returns one of its documented statuses; a value of an OK call is finite; each
 * feature has the same status and bits when computed alone in a fresh context as in the shared
 * context (groups computed once and reused change nothing); a second call of the same feature runs
 * no group; new_groups never exceeds FM_FEAT_MAX_GROUPS and n_groups adds them up.
 */
#include "fuzz_common.h"

#include "fm_features.h"

#define FZ_FEAT_CHANNELS 7u
#define FZ_FEAT_LEN 300u
#define FZ_FEAT_SPECS 6u
/* scratch of the largest window (fm_feat_scratch_size, with room for the channel records): per channel the
 * spectra of 300 samples and of their block means of 2, 4, 8 (257 + 129 + 65 + 33 words), then the FFT work */
#define FZ_FEAT_WORDS ((FZ_FEAT_CHANNELS * 160u + (FZ_FEAT_CHANNELS * 484u + 1024u) * 4u) / 8u)
/* the decimation of a spec by its fifth byte / 40 (0..6) */
static const uint16_t DECIMATE[7] = {0u, 2u, 4u, 8u, 3u, 0u, 0u};

static int documented(int rc)
{
    return rc == FM_OK || rc == FM_E_WINDOW || rc == FM_E_SAMPLE || rc == FM_E_CHANNEL || rc == FM_E_FEATURE ||
           rc == FM_E_VALUE;
}

static int value_of(fm_feat_ctx *ctx, int q15, const fm_feat_spec *spec, float *v)
{
    return q15 ? fm_feat_q15_value(ctx, spec, v) : fm_feat_value(ctx, spec, v);
}

static int begin(fm_feat_ctx *ctx, int q15, const void *x, uint32_t n_ch, uint32_t len, uint64_t *scratch,
                 size_t size)
{
    return q15 ? fm_feat_q15_begin(ctx, (const int16_t *)x, n_ch, len, scratch, size)
               : fm_feat_begin(ctx, (const float *)x, n_ch, len, scratch, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t shared[FZ_FEAT_WORDS], fresh[FZ_FEAT_WORDS];
    float xf[FZ_FEAT_CHANNELS * FZ_FEAT_LEN];
    int16_t xq[FZ_FEAT_CHANNELS * FZ_FEAT_LEN];
    fm_feat_spec specs[FZ_FEAT_SPECS];
    fz_in in = {data, size};
    fm_feat_ctx ctx, one;
    int q15 = fz_byte(&in) & 1u, any_ok = 0;
    uint32_t n_ch = 1u + fz_dim(&in, FZ_FEAT_CHANNELS - 1u);
    uint32_t len = 1u + ((uint32_t)fz_byte(&in) | (uint32_t)fz_byte(&in) << 8) % FZ_FEAT_LEN;
    uint32_t n_specs = 1u + fz_dim(&in, FZ_FEAT_SPECS - 1u), i, total = 0, b;
    size_t need = fm_feat_scratch_size(n_ch, len);
    const void *x = q15 ? (const void *)xq : (const void *)xf;
    fz_require(need > 0u && need <= sizeof shared);
    for (i = 0; i < n_specs; ++i) {
        specs[i].id = (uint16_t)(fz_byte(&in) % 16u);
        specs[i].channel = (uint16_t)(fz_byte(&in) % 9u);
        specs[i].channel2 = (uint16_t)(fz_byte(&in) % 9u);
        specs[i].param = fz_byte(&in);
        b = fz_byte(&in); /* bands and decimation from one byte: the corpus keeps its layout */
        specs[i].param2 = (uint16_t)(b % 40u);
        specs[i].decimate = DECIMATE[b / 40u];
    }
    if (q15) {
        fz_i16s(&in, xq, n_ch * len);
    } else {
        fz_floats(&in, xf, n_ch * len);
    }
    fz_require(begin(&ctx, q15, x, n_ch, len, shared, sizeof shared) == FM_OK);
    for (i = 0; i < n_specs; ++i) {
        float v = 0.0f, w = 0.0f, again = 0.0f;
        int rc = value_of(&ctx, q15, &specs[i], &v), rc1, rc2;
        fz_require(documented(rc) && ctx.new_groups <= FM_FEAT_MAX_GROUPS);
        total += ctx.new_groups;
        fz_require(ctx.n_groups == total);
        fz_require(begin(&one, q15, x, n_ch, len, fresh, sizeof fresh) == FM_OK);
        rc1 = value_of(&one, q15, &specs[i], &w);
        fz_require(rc1 == rc);
        if (rc == FM_OK) {
            fz_require(!fm_bits_nonfinite(fm_float_bits(v)) && fm_float_bits(v) == fm_float_bits(w));
            rc2 = value_of(&ctx, q15, &specs[i], &again);
            fz_require(rc2 == FM_OK && ctx.new_groups == 0u && fm_float_bits(again) == fm_float_bits(v));
            any_ok = 1;
        }
    }
    if (any_ok) {
        FZ_COUNT(fz_accepted);
        FZ_COUNT(fz_predicted);
    }
    return 0;
}
