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

FZ_CHECK_ADAPTER(f32, fm_nb, fm_nb)
FZ_CHECK_ADAPTER(q15, fm_nb_q15, fm_nb_q15)
FZ_PLAIN_ADAPTERS(f32, fm_nb, fm_nb)
FZ_PLAIN_ADAPTERS(q15, fm_nb_q15, fm_nb_q15)

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
