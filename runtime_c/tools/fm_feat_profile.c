/*
 * Instruction profile of the feature library (`frugalml profile-costs --on TARGET`, written by
 * compiler/features/profile.py): for each step of the generated header, starts the step's window,
 * computes its prime features unmeasured (the groups they need), then calls the measured feature
 * between two calls of fm_profile_mark. The counter of the target (callgrind --dump-before on the
 * host, the QEMU plugin's mark=ADDR on Cortex-M and the Pi) records the instructions between marks.
 * Step 0 measures nothing (the marks' own overhead, subtracted from every step); a step whose measured
 * spec is 0xfffe computes the plan's FP_N_PLAN features (specs 0 .. FP_N_PLAN-1) in one context, the
 * eager extraction the cost model is checked against; a step whose measured spec is 0xfffd measures the
 * window's start itself, as the generated NAME_predict_window starts it (fm_window_begin over the plan on the
 * caller's scratch, no sizing first: its checks and fm_feat_begin, which lays the scratch out once and checks its
 * size), what every prediction pays once.
 *
 * Header (FM_MODEL_HEADER): FP_N_WINDOWS, FP_N_CHANNELS, FP_MAX_SAMPLES, FP_SCRATCH_WORDS, FP_Q15,
 * FP_N_STEPS, fp_windows[w] = {len, offset}, fp_f32_bits[] / fp_q15[] samples, fp_specs[],
 * fp_steps[s] = {window, measured spec (0xffff: none), first prime, number of primes}, fp_primes[].
 * Exit code 1 when a measured call fails (the profile would be wrong), 0 otherwise.
 */
#include <stdint.h>
#include <string.h>

#include "fm_features.h"
#include "fm_window.h"

#include FM_MODEL_HEADER

#if defined(__GNUC__)
#define FP_NOINLINE __attribute__((noinline))
#else
#define FP_NOINLINE
#endif

/* The marker: its first instruction is what the counters watch. */
FP_NOINLINE void fm_profile_mark(void);
FP_NOINLINE void fm_profile_mark(void)
{
#if defined(__GNUC__)
    __asm__ volatile("" ::: "memory");
#endif
}

static int value(fm_feat_ctx *ctx, uint32_t spec, float *v)
{
    return FP_Q15 ? fm_feat_q15_value(ctx, &fp_specs[spec], v) : fm_feat_value(ctx, &fp_specs[spec], v);
}

/* The plan's features as an fm_plan (min_len 1: the windows are long enough for every step) */
static const fm_plan fp_plan = {fp_specs, FP_N_PLAN, FP_N_CHANNELS, 1u};

static int start_window(const void *x, uint32_t len, void *scratch, size_t size)
{
    fm_window w;
    fm_profile_mark();
    if (FP_Q15) {
        return fm_window_q15_begin(&w, &fp_plan, (const int16_t *)x, FP_N_CHANNELS, len, scratch, size);
    }
    return fm_window_begin(&w, &fp_plan, (const float *)x, FP_N_CHANNELS, len, scratch, size);
}

int main(void)
{
    uint64_t scratch[FP_SCRATCH_WORDS];
    union {
        float f[FP_MAX_SAMPLES];
        int16_t q[FP_MAX_SAMPLES];
    } buf;
    uint32_t s, i;
    int failed = 0;
    for (s = 0; s < FP_N_STEPS; ++s) {
        const uint32_t w = fp_steps[s][0], len = fp_windows[w][0], off = fp_windows[w][1];
        fm_feat_ctx ctx;
        float v;
        int rc;
        const int start = fp_steps[s][1] == 0xfffdu;
        if (FP_Q15) {
            memcpy(buf.q, (const int16_t *)fp_q15 + off, (size_t)FP_N_CHANNELS * len * sizeof buf.q[0]);
        } else {
            memcpy(buf.f, (const uint32_t *)fp_f32_bits + off, (size_t)FP_N_CHANNELS * len * sizeof buf.f[0]);
        }
        if (start) {
            rc = start_window(FP_Q15 ? (const void *)buf.q : (const void *)buf.f, len, scratch, sizeof scratch);
            fm_profile_mark();
            failed |= rc != FM_OK;
            continue;
        }
        rc = FP_Q15 ? fm_feat_q15_begin(&ctx, buf.q, FP_N_CHANNELS, len, scratch, sizeof scratch)
                    : fm_feat_begin(&ctx, buf.f, FP_N_CHANNELS, len, scratch, sizeof scratch);
        for (i = 0; i < fp_steps[s][3]; ++i) {
            rc |= value(&ctx, fp_primes[fp_steps[s][2] + i], &v);
        }
        fm_profile_mark();
        if (fp_steps[s][1] == 0xfffeu) {
            for (i = 0; i < FP_N_PLAN; ++i) {
                rc |= value(&ctx, i, &v);
            }
        } else if (fp_steps[s][1] != 0xffffu) {
            rc |= value(&ctx, fp_steps[s][1], &v);
        }
        fm_profile_mark();
        failed |= rc != FM_OK;
    }
    return failed;
}
