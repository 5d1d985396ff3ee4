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
        fm_cascade m;
        const fz_nulls nulls = FZ_NULLS(&m, cascade_ptrs, check_f32, eager_f32);
        memset(&m, 0, sizeof m);
        fz_trees(&in, &a, &m.trees, nf, FZ_OPTIONAL(&in, fz_floats, costs, nf));
        fz_floats(&in, upper, ns);
        fz_floats(&in, lower, ns);
        m.n_stages = ns;
        m.stage_end = stage_end;
        m.exit_upper = upper;
        m.exit_lower = lower;
        m.exit_rule = rule;
        if (fm_cascade_check(&m) == FM_OK) {
            fz_run(&in, &m, nf, eager_f32, lazy_f32, batch_f32, FZ_TREE_NULLS(&nulls), 0, m.trees.n_outputs > 1u ? (int32_t)m.trees.n_outputs - 1 : 1);
        }
    } else {
        fm_cascade_q15 m;
        const fz_nulls nulls = FZ_NULLS(&m, cascade_q15_ptrs, check_q15, eager_q15);
        memset(&m, 0, sizeof m);
        fz_trees_q15(&in, &a, &m.trees, nf, FZ_OPTIONAL(&in, fz_u16s, costs_q, nf));
        fz_i32s(&in, upper_q, ns);
        fz_i32s(&in, lower_q, ns);
        m.n_stages = ns;
        m.stage_end = stage_end;
        m.exit_upper_q = upper_q;
        m.exit_lower_q = lower_q;
        m.exit_rule = rule;
        if (fm_cascade_q15_check(&m) == FM_OK) {
            fz_run(&in, &m, nf, eager_q15, lazy_q15, batch_q15, FZ_TREE_NULLS(&nulls), 0, m.trees.n_outputs > 1u ? (int32_t)m.trees.n_outputs - 1 : 1);
        }
    }
    return 0;
}
