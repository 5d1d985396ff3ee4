/* libFuzzer harness: tree ensembles (fm_trees.h), float32 and q15. */
#include "fuzz_build.h"

typedef struct {
    const void *m;
    fm_memo *memo;
} ctx;

static int raw_f32(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_trees_predict_vec((const fm_trees *)m, x, n, out);
}

static int eager_f32(const void *c, const float *x, uint32_t n, fm_result *out)
{
    return raw_f32(((const ctx *)c)->m, x, n, out);
}

static int batch_f32(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    /* the batch form through the caller scratch of fm_trees_scratch_size / _scratch_init */
    const fm_trees *m = (const fm_trees *)((const ctx *)c)->m;
    fz_scratch buf;
    fm_memo memo;
    float *scores = NULL;
    const size_t size = fm_trees_scratch_size(m);
    fz_scratch_fits(size, size > 0u ? fm_trees_scratch_init(m, &buf, size - 4u, &memo, &scores) : FM_E_ARG);
    fz_require(fm_trees_scratch_init(m, &buf, size, &memo, &scores) == FM_OK);
    return fm_trees_predict_batch(m, X, rows, cols, &memo, scores, out, n_done);
}

static int lazy_f32(const void *c, const fm_reader *r, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    float scores[FZ_MAX_OUTPUTS];
    return fm_trees_predict((const fm_trees *)k->m, r, k->memo, scores, out);
}

static int raw_q15(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_trees_q15_predict_vec((const fm_trees_q15 *)m, x, n, out);
}

static int eager_q15(const void *c, const float *x, uint32_t n, fm_result *out)
{
    return raw_q15(((const ctx *)c)->m, x, n, out);
}

static int batch_q15(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    const fm_trees_q15 *m = (const fm_trees_q15 *)((const ctx *)c)->m;
    fz_scratch buf;
    fm_memo memo;
    int32_t *scores = NULL;
    const size_t size = fm_trees_q15_scratch_size(m);
    fz_scratch_fits(size, size > 0u ? fm_trees_q15_scratch_init(m, &buf, size - 4u, &memo, &scores) : FM_E_ARG);
    fz_require(fm_trees_q15_scratch_init(m, &buf, size, &memo, &scores) == FM_OK);
    return fm_trees_q15_predict_batch(m, X, rows, cols, &memo, scores, out, n_done);
}

static int lazy_q15(const void *c, const fm_reader *r, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    int32_t scores[FZ_MAX_OUTPUTS];
    return fm_trees_q15_predict((const fm_trees_q15 *)k->m, r, k->memo, scores, out);
}

static const size_t trees_ptrs[] = {FZ_TREES_PTRS(fm_trees, )};
static const size_t trees_q15_ptrs[] = {FZ_TREES_Q15_PTRS(fm_trees_q15, )};

static int check_f32(const void *m)
{
    return fm_trees_check((const fm_trees *)m);
}

static int check_q15(const void *m)
{
    return fm_trees_q15_check((const fm_trees_q15 *)m);
}

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
        ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, trees_ptrs, check_f32, raw_f32);
        fz_trees(&in, &a, &m, nf, FZ_OPTIONAL(&in, fz_floats, costs, nf));
        if (fm_trees_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_f32, lazy_f32, batch_f32, FZ_TREE_NULLS(&nulls), 0, m.n_outputs > 1u ? (int32_t)m.n_outputs - 1 : 1);
        }
    } else {
        fm_trees_q15 m;
        ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, trees_q15_ptrs, check_q15, raw_q15);
        fz_trees_q15(&in, &a, &m, nf, FZ_OPTIONAL(&in, fz_u16s, costs_q, nf));
        if (fm_trees_q15_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_q15, lazy_q15, batch_q15, FZ_TREE_NULLS(&nulls), 0, m.n_outputs > 1u ? (int32_t)m.n_outputs - 1 : 1);
        }
    }
    return 0;
}
