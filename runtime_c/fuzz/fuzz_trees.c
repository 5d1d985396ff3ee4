/* libFuzzer harness: tree ensembles (fm_trees.h), float32 and q15. */
#include "fuzz_build.h"

FZ_CTX_SCRATCH_ADAPTERS(f32, fm_trees, fm_trees, float)
FZ_CTX_SCRATCH_ADAPTERS(q15, fm_trees_q15, fm_trees_q15, int32_t)
FZ_CHECK_ADAPTER(f32, fm_trees, fm_trees)
FZ_CHECK_ADAPTER(q15, fm_trees_q15, fm_trees_q15)

static const size_t trees_ptrs[] = {FZ_TREES_PTRS(fm_trees, )};
static const size_t trees_q15_ptrs[] = {FZ_TREES_Q15_PTRS(fm_trees_q15, )};

#define TREES_MAX_LABEL(m) ((m).n_outputs > 1u ? (int32_t)(m).n_outputs - 1 : 1)

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
        FZ_CTX_RUN(fm_trees, f32, trees_ptrs, fz_trees, fz_floats, costs, FZ_TREE_NULLS, TREES_MAX_LABEL);
    } else {
        FZ_CTX_RUN(fm_trees_q15, q15, trees_q15_ptrs, fz_trees_q15, fz_u16s, costs_q, FZ_TREE_NULLS, TREES_MAX_LABEL);
    }
    return 0;
}
