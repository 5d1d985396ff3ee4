/*
 * Instructions of the whole pipeline (`frugalml bench MODEL --data DATA --on TARGET`, compiler/bench.py): for
 * each raw window embedded in the generated header (FM_WINDOWS), four calls, each between two calls of
 * fm_profile_mark (counted as in runtime_c/tools/fm_feat_profile.c):
 *   1. FM_PREDICT_WINDOW lazily (features computed as the model reads them),
 *   2. FM_PREDICT_WINDOW eagerly (every planned feature first, then the same model),
 *   3. fm_window_eager alone (the eager extraction),
 *   4. the model alone (FM_MODEL_READ) on those values (a vector reader).
 * One step first with nothing between its marks (the marks' overhead). The header (FM_MODEL_HEADER) is the
 * model header of export-c --embed with raw windows (FM_WINDOWS, FM_WINDOW_SCRATCH_WORDS).
 * Exit code 1 when a call fails, 2 when the scratch is too small.
 */
#include <stdint.h>

#include FM_MODEL_HEADER

#if defined(__GNUC__)
#define FB_NOINLINE __attribute__((noinline))
#else
#define FB_NOINLINE
#endif

FB_NOINLINE void fm_profile_mark(void);
FB_NOINLINE void fm_profile_mark(void)
{
#if defined(__GNUC__)
    __asm__ volatile("" ::: "memory");
#endif
}

int main(void)
{
    uint64_t scratch[FM_WINDOW_SCRATCH_WORDS];
    float values[FM_PLAN_FEATURES];
    uint32_t i;
    int rc = FM_OK;
    const size_t f = fm_window_scratch_size(&FM_PLAN, FM_WINDOW_LEN);
    const size_t fw = (f + 7u) / 8u;
    if (FM_WINDOW_SCRATCH_SIZE(FM_WINDOW_LEN) > sizeof scratch || f == 0u) {
        return 2;
    }
    fm_profile_mark();
    fm_profile_mark();
    for (i = 0; i < FM_N_WINDOWS; ++i) {
        fm_result r;
        fm_window w;
        fm_vector v;
        fm_reader rd;
        fm_profile_mark();
        rc |= FM_PREDICT_WINDOW(FM_WINDOWS[i], FM_PLAN_CHANNELS, FM_WINDOW_LEN, scratch, sizeof scratch, 0, &r);
        fm_profile_mark();
        fm_profile_mark();
        rc |= FM_PREDICT_WINDOW(FM_WINDOWS[i], FM_PLAN_CHANNELS, FM_WINDOW_LEN, scratch, sizeof scratch, 1, &r);
        fm_profile_mark();
        rc |= fm_window_begin(&w, &FM_PLAN, FM_WINDOWS[i], FM_PLAN_CHANNELS, FM_WINDOW_LEN, scratch, f);
        fm_profile_mark();
        rc |= fm_window_eager(&w, values);
        fm_profile_mark();
        rd = fm_vector_reader(&v, values, FM_PLAN_FEATURES);
        fm_profile_mark();
        rc |= FM_MODEL_READ(&rd, scratch + fw, sizeof scratch - fw * 8u, &r);
        fm_profile_mark();
    }
    return rc != FM_OK;
}
