/* libFuzzer harness: cascades of tree stages with early exits (fm_cascade.h), float32 and q15. */
#include "fuzz_build.h"
#include "fm_cascade.h"

#define CASCADE_MAX_STAGES 4u

static int eager_f32(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_cascade_predict_vec((const fm_cascade *)m, x, n, out);
}

static int lazy_f32(const void *m, const fm_reader *r, fm_result *out)
{
    float values[FZ_MAX_FEATURES], scores[FZ_MAX_OUTPUTS];
    uint8_t seen[FZ_MAX_FEATURES];
    fm_memo memo;
    fm_memo_init(&memo, values, seen, FZ_MAX_FEATURES);
    return fm_cascade_predict((const fm_cascade *)m, r, &memo, scores, out);
}

static int batch_f32(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    const fm_cascade *m = (const fm_cascade *)c;
    fz_scratch buf;
    fm_memo memo;
    float *scores = NULL;
    const size_t size = fm_cascade_scratch_size(m);
    fz_scratch_fits(size, size > 0u ? fm_cascade_scratch_init(m, &buf, size - 4u, &memo, &scores) : FM_E_ARG);
    fz_require(fm_cascade_scratch_init(m, &buf, size, &memo, &scores) == FM_OK);
    return fm_cascade_predict_batch(m, X, rows, cols, &memo, scores, out, n_done);
}

static int eager_q15(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_cascade_q15_predict_vec((const fm_cascade_q15 *)m, x, n, out);
}

static int lazy_q15(const void *m, const fm_reader *r, fm_result *out)
{
    float values[FZ_MAX_FEATURES];
    int32_t scores[FZ_MAX_OUTPUTS];
    uint8_t seen[FZ_MAX_FEATURES];
    fm_memo memo;
    fm_memo_init(&memo, values, seen, FZ_MAX_FEATURES);
    return fm_cascade_q15_predict((const fm_cascade_q15 *)m, r, &memo, scores, out);
}

static int batch_q15(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    const fm_cascade_q15 *m = (const fm_cascade_q15 *)c;
    fz_scratch buf;
    fm_memo memo;
    int32_t *scores = NULL;
    const size_t size = fm_cascade_q15_scratch_size(m);
    fz_scratch_fits(size, size > 0u ? fm_cascade_q15_scratch_init(m, &buf, size - 4u, &memo, &scores) : FM_E_ARG);
    fz_require(fm_cascade_q15_scratch_init(m, &buf, size, &memo, &scores) == FM_OK);
    return fm_cascade_q15_predict_batch(m, X, rows, cols, &memo, scores, out, n_done);
}

static const size_t cascade_ptrs[] = {FZ_TREES_PTRS(fm_cascade, trees.), offsetof(fm_cascade, stage_end),
                                      offsetof(fm_cascade, exit_upper), offsetof(fm_cascade, exit_lower)};
static const size_t cascade_q15_ptrs[] = {FZ_TREES_Q15_PTRS(fm_cascade_q15, trees.), offsetof(fm_cascade_q15, stage_end),
                                          offsetof(fm_cascade_q15, exit_upper_q),
                                          offsetof(fm_cascade_q15, exit_lower_q)};

static int check_f32(const void *m)
{
    return fm_cascade_check((const fm_cascade *)m);
}

static int check_q15(const void *m)
{
    return fm_cascade_q15_check((const fm_cascade_q15 *)m);
}

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
