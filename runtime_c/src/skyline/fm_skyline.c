#include "fm_skyline.h"

/* NaN and infinity tests without libm: x != x, and |x| above DBL_MAX. */
static int fm_is_nan(double x)
{
    return x != x;
}

static int fm_is_finite(double x)
{
    return !fm_is_nan(x) && x <= 1.7976931348623157e308 && x >= -1.7976931348623157e308;
}

double fm_skyline_model_cost(const fm_skyline *s, uint32_t m, double size)
{
    const double *c = s->model_coef + 3u * (size_t)m;
    return c[0] + c[1] * size + c[2] * size * size;
}

int fm_skyline_check(const fm_skyline *s)
{
    uint32_t m, r, k;
    if (s == NULL || s->model_coef == NULL || s->feat_ptr == NULL || s->breaks == NULL ||
        s->sky_ptr == NULL) {
        return FM_E_ARG;
    }
    if (s->n_ranges == 0 || s->feat_ptr[0] != 0 || s->sky_ptr[0] != 0) {
        return FM_E_MODEL;
    }
    if ((s->feat_ptr[s->n_models] > 0 && s->feat_idx == NULL) ||
        (s->sky_ptr[s->n_ranges] > 0 && s->sky_model == NULL)) {
        return FM_E_ARG;
    }
    for (m = 0; m < 3u * s->n_models; ++m) {
        double c = s->model_coef[m];
        if (!fm_is_finite(c) || c < 0.0) {
            return FM_E_MODEL;
        }
    }
    /* every pointer first (non-decreasing, so none passes the last one, which bounds the array
     * length), then the entries between them: no read past feat_idx / sky_model */
    for (m = 0; m < s->n_models; ++m) {
        if (s->feat_ptr[m + 1] < s->feat_ptr[m]) {
            return FM_E_MODEL;
        }
    }
    for (r = 0; r < s->n_ranges; ++r) {
        if (s->sky_ptr[r + 1] < s->sky_ptr[r]) {
            return FM_E_MODEL;
        }
    }
    for (m = 0; m < s->n_models; ++m) {
        for (k = s->feat_ptr[m]; k < s->feat_ptr[m + 1]; ++k) {
            if (s->feat_idx[k] >= s->n_features) {
                return FM_E_MODEL;
            }
            if (k > s->feat_ptr[m] && s->feat_idx[k] <= s->feat_idx[k - 1]) {
                return FM_E_MODEL;
            }
        }
    }
    for (r = 0; r < s->n_ranges; ++r) {
        if (!fm_is_finite(s->breaks[r]) || (r > 0 && !(s->breaks[r] > s->breaks[r - 1]))) {
            return FM_E_MODEL;
        }
        if (s->sky_ptr[r + 1] < s->sky_ptr[r]) {
            return FM_E_MODEL;
        }
        for (k = s->sky_ptr[r]; k < s->sky_ptr[r + 1]; ++k) {
            if (s->sky_model[k] >= s->n_models) {
                return FM_E_MODEL;
            }
        }
    }
    return FM_OK;
}

int fm_skyline_select(const fm_skyline *s, double budget, double size, uint32_t *model, double *cost)
{
    uint32_t lo, hi, mid, start;
    if (s == NULL || model == NULL || cost == NULL || fm_is_nan(budget) || !fm_is_finite(size)) {
        return FM_E_ARG;
    }
    *model = UINT32_MAX;
    *cost = 0.0;
    /* range: last r with breaks[r] <= size, 0 below the first break */
    lo = 0;
    hi = s->n_ranges;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2u;
        if (s->breaks[mid] <= size) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    start = (lo == 0) ? 0u : lo - 1u;
    hi = s->sky_ptr[start + 1u] - s->sky_ptr[start];
    start = s->sky_ptr[start];
    lo = 0;
    /* skyline: last entry whose cost at size is <= budget */
    while (lo < hi) {
        mid = lo + (hi - lo) / 2u;
        if (fm_skyline_model_cost(s, s->sky_model[start + mid], size) <= budget) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return FM_E_BUDGET;
    }
    *model = s->sky_model[start + lo - 1u];
    *cost = fm_skyline_model_cost(s, *model, size);
    return FM_OK;
}

size_t fm_skyline_scratch_size(const fm_skyline *s)
{
    (void)s;
    return 0u;
}
