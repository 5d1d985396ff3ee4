/* libFuzzer harness: the skyline budget index (fm_skyline.h): check, then lookups. */
#include <math.h>

#include "fuzz_skyline.h"

static const size_t skyline_ptrs[] = {FZ_SKYLINE_PTRS(fm_skyline, )};

static int check(const void *s)
{
    return fm_skyline_check((const fm_skyline *)s);
}

/* null-each's prediction: lookups at sizes 0 and x[0] (when there is one) under an infinite budget */
static int lookup(const void *s, const float *x, uint32_t n, fm_result *out)
{
    uint32_t model;
    double cost;
    int rc = fm_skyline_select((const fm_skyline *)s, (double)INFINITY, 0.0, &model, &cost);
    memset(out, 0, sizeof *out);
    if (rc == FM_OK && n > 0 && isfinite(x[0])) {
        rc = fm_skyline_select((const fm_skyline *)s, (double)INFINITY, (double)x[0], &model, &cost);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_skyline_arrays a;
    fm_skyline s;
    const fz_nulls nulls = FZ_NULLS(&s, skyline_ptrs, check, lookup);
    float sizes[4];
    unsigned k;
    if (!fz_skyline(&in, &a, &s, fz_dim(&in, FZ_MAX_FEATURES)) || fm_skyline_check(&s) != FM_OK) {
        return 0;
    }
    FZ_COUNT(fz_accepted);
    for (k = 0; k < 4u; ++k) {
        double size_n = fz_double(&in), budget = fz_double(&in), cost = -1.0;
        uint32_t model = 0;
        int rc = fm_skyline_select(&s, budget, size_n, &model, &cost);
        sizes[k] = size_n >= -1e30 && size_n <= 1e30 ? (float)size_n : 0.0f; /* in float range */
        if (isnan(budget) || !isfinite(size_n)) {
            fz_require(rc == FM_E_ARG);
        } else if (rc == FM_OK) {
            FZ_COUNT(fz_predicted);
            fz_require(model < s.n_models && cost <= budget);
            fz_require(cost == fm_skyline_model_cost(&s, model, size_n));
        } else {
            fz_require(rc == FM_E_BUDGET && model == UINT32_MAX && cost == 0.0);
        }
    }
    fz_null_each(&nulls, sizes, 4u, 1u);
    return 0;
}
