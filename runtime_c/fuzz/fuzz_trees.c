/* libFuzzer harness: tree ensembles (fm_trees.h), float32 and q15. */
#include "fuzz_build.h"

FZ_CTX_SCRATCH_ADAPTERS(f32, fm_trees, fm_trees, float)
FZ_CTX_SCRATCH_ADAPTERS(q15, fm_trees_q15, fm_trees_q15, int32_t)
FZ_CHECK_ADAPTER(f32, fm_trees, fm_trees)
FZ_CHECK_ADAPTER(q15, fm_trees_q15, fm_trees_q15)

static const size_t trees_ptrs[] = {FZ_TREES_PTRS(fm_trees, )};
static const size_t trees_q15_ptrs[] = {FZ_TREES_Q15_PTRS(fm_trees_q15, )};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_trees_arrays a;
    float costs[FZ_MAX_FEATURES], values[FZ_MAX_FEATURES + 1];
    uint16_t costs_q[FZ_MAX_FEATURES];
    uint8_t seen[FZ_MAX_FEATURES + 1];
    int16_t keys[FZ_MAX_FEATURES + 1];
    fm_memo memo;
    int q = fz_byte(&in) & 1u;
    uint32_t nf = fz_dim(&in, FZ_MAX_FEATURES);
    fm_memo_init(&memo, values, seen, nf);
    fm_memo_set_keys(&memo, keys); /* the eager q15 walk compares cached 16-bit keys */
    if (!q) {
        fm_trees m;
        fz_ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, trees_ptrs, check_f32, raw_f32);
        fz_trees(&in, &a, &m, nf, FZ_OPTIONAL(&in, fz_floats, costs, nf));
        if (fm_trees_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_f32, lazy_f32, batch_f32, FZ_TREE_NULLS(&nulls), 0, m.n_outputs > 1u ? (int32_t)m.n_outputs - 1 : 1);
        }
    } else {
        fm_trees_q15 m;
        fz_ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, trees_q15_ptrs, check_q15, raw_q15);
        fz_trees_q15(&in, &a, &m, nf, FZ_OPTIONAL(&in, fz_u16s, costs_q, nf));
        if (fm_trees_q15_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_q15, lazy_q15, batch_q15, FZ_TREE_NULLS(&nulls), 0, m.n_outputs > 1u ? (int32_t)m.n_outputs - 1 : 1);
        }
    }
    return 0;
}
