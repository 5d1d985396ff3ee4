/* frugalml pipeline: lazy columns of a raw window (fm_window.h). */
#include "fm_window.h"

int fm_plan_check(const fm_plan *plan)
{
    uint32_t j, need = 1u;
    if (plan == NULL || plan->features == NULL || plan->n_features == 0u) {
        return FM_E_ARG;
    }
    for (j = 0; j < plan->n_features; ++j) {
        int rc = fm_feat_check(&plan->features[j], plan->n_channels);
        uint32_t m;
        if (rc != FM_OK) {
            return rc;
        }
        m = fm_feat_min_len(&plan->features[j]);
        need = m > need ? m : need;
    }
    return plan->min_len == need ? FM_OK : FM_E_ARG;
}

size_t fm_window_scratch_size(const fm_plan *plan, uint32_t len)
{
    return plan == NULL ? 0u : fm_feat_scratch_size(plan->n_channels, len);
}

static int start(fm_window *w, const fm_plan *plan, const void *x, uint32_t n_channels, uint32_t len,
                 void *scratch, size_t scratch_size, int q15)
{
    int rc;
    if (w == NULL || plan == NULL || x == NULL) {
        return FM_E_ARG;
    }
    if (n_channels != plan->n_channels) {
        return FM_E_CHANNEL;
    }
    if (len < plan->min_len) {
        return FM_E_WINDOW;
    }
    rc = q15 ? fm_feat_q15_begin(&w->feat, (const int16_t *)x, n_channels, len, scratch, scratch_size)
             : fm_feat_begin(&w->feat, (const float *)x, n_channels, len, scratch, scratch_size);
    w->plan = plan;
    w->status = FM_OK;
    w->failed = 0u;
    w->n_computed = 0u;
    return rc;
}

int fm_window_begin(fm_window *w, const fm_plan *plan, const float *x, uint32_t n_channels, uint32_t len,
                    void *scratch, size_t scratch_size)
{
    return start(w, plan, x, n_channels, len, scratch, scratch_size, 0);
}

int fm_window_q15_begin(fm_window *w, const fm_plan *plan, const int16_t *x, uint32_t n_channels, uint32_t len,
                        void *scratch, size_t scratch_size)
{
    return start(w, plan, x, n_channels, len, scratch, scratch_size, 1);
}

int fm_window_read(void *ctx, uint32_t index, float *value)
{
    fm_window *w = (fm_window *)ctx;
    const fm_feat_spec *spec;
    int rc;
    if (w == NULL || value == NULL || index >= w->plan->n_features) {
        return FM_E_ARG;
    }
    spec = &w->plan->features[index];
    rc = w->feat.q15 ? fm_feat_q15_value(&w->feat, spec, value) : fm_feat_value(&w->feat, spec, value);
    if (rc != FM_OK) {
        if (w->status == FM_OK) {
            w->status = rc;
            w->failed = index;
        }
        return rc;
    }
    w->n_computed += 1u;
    return FM_OK;
}

int fm_window_status(const fm_window *w, int model_status)
{
    if (model_status == FM_E_READ && w != NULL && w->status != FM_OK) {
        return w->status;
    }
    return model_status;
}

int fm_window_eager(fm_window *w, float *values)
{
    uint32_t j;
    if (w == NULL || values == NULL) {
        return FM_E_ARG;
    }
    for (j = 0; j < w->plan->n_features; ++j) {
        int rc = fm_window_read(w, j, &values[j]);
        if (rc != FM_OK) {
            return rc;
        }
    }
    return FM_OK;
}
