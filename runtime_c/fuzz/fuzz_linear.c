/* libFuzzer harness: sparse linear scorer (fm_linear.h), float32 and q15. */
#include "fuzz_build.h"

/* eager_SFX: one row through PFX_predict_batch on the caller's memo; raw_SFX: the same without a memo on the
 * bare model (the null-each test's eager call; batch_SFX is FZ_MEMO_ADAPTERS'). */
#define LINEAR_ROW_ADAPTERS(SFX, PFX, T)                                                 \
    static int eager_##SFX(const void *c, const float *x, uint32_t n, fm_result *out)    \
    {                                                                                    \
        const fz_ctx *k = (const fz_ctx *)c;                                             \
        return PFX##_predict_batch((const T *)k->m, x, 1u, n, k->memo, out, NULL);       \
    }                                                                                    \
    static int raw_##SFX(const void *m, const float *x, uint32_t n, fm_result *out)      \
    {                                                                                    \
        const fz_ctx k = {m, NULL};                                                      \
        return batch_##SFX(&k, x, 1u, n, out, NULL);                                     \
    }

FZ_MEMO_ADAPTERS(f32, fm_linear, fm_linear)
FZ_MEMO_ADAPTERS(q15, fm_linear_q15, fm_linear_q15)

static const size_t linear_ptrs[] = {FZ_LINEAR_PTRS(fm_linear, )};
static const size_t linear_q15_ptrs[] = {FZ_LINEAR_Q15_PTRS(fm_linear_q15, )};

FZ_CHECK_ADAPTER(f32, fm_linear, fm_linear)
FZ_CHECK_ADAPTER(q15, fm_linear_q15, fm_linear_q15)

LINEAR_ROW_ADAPTERS(f32, fm_linear, fm_linear)
LINEAR_ROW_ADAPTERS(q15, fm_linear_q15, fm_linear_q15)

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
        FZ_CTX_RUN(fm_linear, f32, linear_ptrs, fz_linear, fz_floats, costs, fz_self, fz_one_label);
    } else {
        FZ_CTX_RUN(fm_linear_q15, q15, linear_q15_ptrs, fz_linear_q15, fz_u16s, costs_q, fz_self, fz_one_label);
    }
    return 0;
}
