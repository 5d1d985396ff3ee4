/* libFuzzer harness: naive Bayes tables (fm_nb.h), float32 and q15. */
#include "fuzz_build.h"

static const size_t nb_ptrs[] = {offsetof(fm_nb, order),   offsetof(fm_nb, edges),   offsetof(fm_nb, d),
                                 offsetof(fm_nb, stop_at), offsetof(fm_nb, stop_hi), offsetof(fm_nb, stop_lo),
                                 offsetof(fm_nb, costs),   offsetof(fm_nb, pos),     offsetof(fm_nb, cum_cost)};
static const size_t nb_q15_ptrs[] = {offsetof(fm_nb_q15, order),    offsetof(fm_nb_q15, edge_keys),
                                     offsetof(fm_nb_q15, d),        offsetof(fm_nb_q15, stop_at),
                                     offsetof(fm_nb_q15, stop_hi),  offsetof(fm_nb_q15, stop_lo),
                                     offsetof(fm_nb_q15, costs),    offsetof(fm_nb_q15, pos),
                                     offsetof(fm_nb_q15, cum_cost)};

static int check_f32(const void *m)
{
    return fm_nb_check((const fm_nb *)m);
}

static int check_q15(const void *m)
{
    return fm_nb_q15_check((const fm_nb_q15 *)m);
}

static int eager_f32(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_nb_predict_vec((const fm_nb *)m, x, n, out);
}

static int lazy_f32(const void *m, const fm_reader *r, fm_result *out)
{
    return fm_nb_predict((const fm_nb *)m, r, out);
}

static int batch_f32(const void *m, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    return fm_nb_predict_batch((const fm_nb *)m, X, rows, cols, out, n_done);
}

static int eager_q15(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_nb_q15_predict_vec((const fm_nb_q15 *)m, x, n, out);
}

static int lazy_q15(const void *m, const fm_reader *r, fm_result *out)
{
    return fm_nb_q15_predict((const fm_nb_q15 *)m, r, out);
}

static int batch_q15(const void *m, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    return fm_nb_q15_predict_batch((const fm_nb_q15 *)m, X, rows, cols, out, n_done);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_nb_arrays a;
    int q = fz_byte(&in) & 1u;
    uint32_t nf = fz_dim(&in, FZ_MAX_FEATURES);
    if (!q) {
        fm_nb m;
        const fz_nulls nulls = FZ_NULLS(&m, nb_ptrs, check_f32, eager_f32);
        fz_nb(&in, &a, &m, nf);
        if (fm_nb_check(&m) == FM_OK) {
            fz_run(&in, &m, nf, eager_f32, lazy_f32, batch_f32, &nulls, 0, 1);
        }
    } else {
        fm_nb_q15 m;
        const fz_nulls nulls = FZ_NULLS(&m, nb_q15_ptrs, check_q15, eager_q15);
        fz_nb_q15(&in, &a, &m, nf);
        if (fm_nb_q15_check(&m) == FM_OK) {
            fz_run(&in, &m, nf, eager_q15, lazy_q15, batch_q15, &nulls, 0, 1);
        }
    }
    return 0;
}
