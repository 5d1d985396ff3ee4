/* libFuzzer harness: the skyline budget index (fm_skyline.h): check, then lookups. */
#include <math.h>

#include "fuzz_skyline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_skyline_arrays a;
    fm_skyline s;
    unsigned k;
    if (!fz_skyline(&in, &a, &s, fz_dim(&in, FZ_MAX_FEATURES)) || fm_skyline_check(&s) != FM_OK) {
        return 0;
    }
    FZ_COUNT(fz_accepted);
    for (k = 0; k < 4u; ++k) {
        double size_n = fz_double(&in), budget = fz_double(&in), cost = -1.0;
        uint32_t model = 0;
        int rc = fm_skyline_select(&s, budget, size_n, &model, &cost);
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
    return 0;
}
