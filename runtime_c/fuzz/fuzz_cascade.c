/* libFuzzer harness: cascades of tree stages with early exits (fm_cascade.h), float32 and q15. */
#include "fuzz_build.h"
#include "fm_cascade.h"

#define CASCADE_MAX_STAGES 4u

FZ_SCRATCH_ADAPTERS(f32, fm_cascade, fm_cascade, float, fz_no_check)
FZ_SCRATCH_ADAPTERS(q15, fm_cascade_q15, fm_cascade_q15, int32_t, fz_no_check)
FZ_CHECK_ADAPTER(f32, fm_cascade, fm_cascade)
FZ_CHECK_ADAPTER(q15, fm_cascade_q15, fm_cascade_q15)

static const size_t cascade_ptrs[] = {FZ_TREES_PTRS(fm_cascade, trees.), offsetof(fm_cascade, stage_end),
                                      offsetof(fm_cascade, exit_upper), offsetof(fm_cascade, exit_lower)};
static const size_t cascade_q15_ptrs[] = {FZ_TREES_Q15_PTRS(fm_cascade_q15, trees.), offsetof(fm_cascade_q15, stage_end),
                                          offsetof(fm_cascade_q15, exit_upper_q),
                                          offsetof(fm_cascade_q15, exit_lower_q)};

/* Builds cascade m (struct T: its trees by BUILD, costs read by FC into costs_, the exits by FX into up_ / lo_
 * for the fields UPPER / LOWER) and runs the accepted model through fz_run (suffix SFX: f32 or q15). */
#define CASCADE_RUN(T, SFX, PTRS, BUILD, costs_, FC, FX, up_, lo_, UPPER, LOWER)                                \
    do {                                                                                                      \
        T m;                                                                                                  \
        const fz_nulls nulls = FZ_NULLS(&m, PTRS, check_##SFX, eager_##SFX);                                  \
        memset(&m, 0, sizeof m);                                                                              \
        BUILD(&in, &a, &m.trees, nf, FZ_OPTIONAL(&in, FC, costs_, nf));                                       \
        FX(&in, up_, ns);                                                                                     \
        FX(&in, lo_, ns);                                                                                     \
        m.n_stages = ns;                                                                                      \
        m.stage_end = stage_end;                                                                              \
        m.UPPER = up_;                                                                                        \
        m.LOWER = lo_;                                                                                        \
        m.exit_rule = rule;                                                                                   \
        if (check_##SFX(&m) == FM_OK) {                                                                       \
            fz_run(&in, &m, nf, eager_##SFX, lazy_##SFX, batch_##SFX, FZ_TREE_NULLS(&nulls), 0,               \
                   m.trees.n_outputs > 1u ? (int32_t)m.trees.n_outputs - 1 : 1);                              \
        }                                                                                                     \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_trees_arrays a;
    float costs[FZ_MAX_FEATURES], upper[CASCADE_MAX_STAGES], lower[CASCADE_MAX_STAGES];
    int32_t upper_q[CASCADE_MAX_STAGES], lower_q[CASCADE_MAX_STAGES];
    uint32_t stage_end[CASCADE_MAX_STAGES];
    uint16_t costs_q[FZ_MAX_FEATURES];
    int q = fz_byte(&in) & 1u;
    uint32_t nf = fz_dim(&in, FZ_MAX_FEATURES), ns = fz_dim(&in, CASCADE_MAX_STAGES);
    uint32_t rule = fz_byte(&in) % 3u; /* 2 is not a rule: check must refuse it */
    fz_u32s(&in, stage_end, ns);
    if (!q) {
        CASCADE_RUN(fm_cascade, f32, cascade_ptrs, fz_trees, costs, fz_floats, fz_floats, upper, lower, exit_upper,
                    exit_lower);
    } else {
        CASCADE_RUN(fm_cascade_q15, q15, cascade_q15_ptrs, fz_trees_q15, costs_q, fz_u16s, fz_i32s, upper_q, lower_q,
                    exit_upper_q, exit_lower_q);
    }
    return 0;
}
