/* libFuzzer harness: budget-indexed models (fm_skymodel.h) over NB or linear bases: check, then
 * predictions under fuzzed budgets and sizes, eager and lazy. */
#include <math.h>

#include "fuzz_build.h"
#include "fuzz_skyline.h"
#include "fm_skymodel.h"

typedef struct {
    const fm_skymodel *m;
    double budget, size;
} ctx;

static int eager(const void *c, const float *x, uint32_t n, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    return fm_skymodel_predict_vec_at(k->m, x, n, k->budget, k->size, out, NULL);
}

static int lazy(const void *c, const fm_reader *r, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    float values[FZ_MAX_FEATURES];
    uint8_t seen[FZ_MAX_FEATURES];
    fm_memo memo;
    fm_memo_init(&memo, values, seen, FZ_MAX_FEATURES);
    return fm_skymodel_predict(k->m, r, &memo, k->budget, k->size, out, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_skyline_arrays sa;
    fz_nb_arrays nba[FZ_SKY_MAX_MODELS];
    fz_linear_arrays la[FZ_SKY_MAX_MODELS];
    fm_nb nb[FZ_SKY_MAX_MODELS];
    fm_linear lin[FZ_SKY_MAX_MODELS];
    float costs[FZ_MAX_FEATURES];
    fm_skymodel m;
    ctx k;
    uint32_t i, nf = fz_dim(&in, FZ_MAX_FEATURES);
    memset(&m, 0, sizeof m);
    if (!fz_skyline(&in, &sa, &m.index, nf)) {
        return 0;
    }
    m.base = fz_byte(&in) % 3u; /* 2 is not a base: check must refuse it */
    for (i = 0; i < m.index.n_models; ++i) {
        if (m.base == FM_SKY_NB) {
            fz_nb(&in, &nba[i], &nb[i], nf);
        } else {
            fz_linear(&in, &la[i], &lin[i], nf, i == 0 ? FZ_OPTIONAL(&in, fz_floats, costs, nf) : lin[0].costs);
        }
    }
    m.nb = m.base == FM_SKY_NB ? nb : NULL;
    m.linear = m.base == FM_SKY_LINEAR ? lin : NULL;
    m.default_budget = fz_double(&in);
    m.default_size = fz_double(&in);
    if (fm_skymodel_check(&m) != FM_OK) {
        return 0;
    }
    k.m = &m;
    k.budget = fz_double(&in);
    k.size = fz_double(&in);
    if (isnan(k.budget) || !isfinite(k.size) || k.size < 0.0) {
        k.budget = m.default_budget;
        k.size = m.default_size;
    }
    fz_run(&in, &k, nf, eager, lazy, FM_LABEL_DEFER, 1);
    return 0;
}
