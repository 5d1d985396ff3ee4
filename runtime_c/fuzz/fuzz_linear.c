/* libFuzzer harness: sparse linear scorer (fm_linear.h), float32 and q15. */
#include "fuzz_build.h"

static int eager_f32(const void *c, const float *x, uint32_t n, fm_result *out)
{
    const fz_ctx *k = (const fz_ctx *)c;
    return fm_linear_predict_batch((const fm_linear *)k->m, x, 1u, n, k->memo, out, NULL);
}

static int eager_q15(const void *c, const float *x, uint32_t n, fm_result *out)
{
    const fz_ctx *k = (const fz_ctx *)c;
    return fm_linear_q15_predict_batch((const fm_linear_q15 *)k->m, x, 1u, n, k->memo, out, NULL);
}

FZ_MEMO_ADAPTERS(f32, fm_linear, fm_linear)
FZ_MEMO_ADAPTERS(q15, fm_linear_q15, fm_linear_q15)

static const size_t linear_ptrs[] = {FZ_LINEAR_PTRS(fm_linear, )};
static const size_t linear_q15_ptrs[] = {FZ_LINEAR_Q15_PTRS(fm_linear_q15, )};

FZ_CHECK_ADAPTER(f32, fm_linear, fm_linear)
FZ_CHECK_ADAPTER(q15, fm_linear_q15, fm_linear_q15)

static int raw_f32(const void *m, const float *x, uint32_t n, fm_result *out)
{
    const fz_ctx k = {m, NULL};
    return batch_f32(&k, x, 1u, n, out, NULL);
}

static int raw_q15(const void *m, const float *x, uint32_t n, fm_result *out)
{
    const fz_ctx k = {m, NULL};
    return batch_q15(&k, x, 1u, n, out, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_linear_arrays a;
    float costs[FZ_MAX_FEATURES], values[FZ_MAX_FEATURES + 1];
    uint16_t costs_q[FZ_MAX_FEATURES];
    uint8_t seen[FZ_MAX_FEATURES + 1];
    fm_memo memo;
    int q = fz_byte(&in) & 1u;
    uint32_t nf = fz_dim(&in, FZ_MAX_FEATURES);
    fm_memo_init(&memo, values, seen, nf);
    if (!q) {
        fm_linear m;
        fz_ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, linear_ptrs, check_f32, raw_f32);
        fz_linear(&in, &a, &m, nf, FZ_OPTIONAL(&in, fz_floats, costs, nf));
        if (fm_linear_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_f32, lazy_f32, batch_f32, &nulls, 0, 1);
        }
    } else {
        fm_linear_q15 m;
        fz_ctx k = {&m, &memo};
        const fz_nulls nulls = FZ_NULLS(&m, linear_q15_ptrs, check_q15, raw_q15);
        fz_linear_q15(&in, &a, &m, nf, FZ_OPTIONAL(&in, fz_u16s, costs_q, nf));
        if (fm_linear_q15_check(&m) == FM_OK) {
            fz_run(&in, &k, nf, eager_q15, lazy_q15, batch_q15, &nulls, 0, 1);
        }
    }
    return 0;
}
