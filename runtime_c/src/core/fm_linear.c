/* frugalml runtime: sparse linear scorers (see fm_linear.h). */
#include "fm_linear.h"
#include "fm_batch.h"
#include "fm_fixed.h"

#define FM_MAX_SHIFT 30u

static int features_ok(const int32_t *feature, uint32_t nnz, uint32_t n_features)
{
    uint32_t k;
    if (nnz > 0u && feature == NULL) {
        return 0;
    }
    for (k = 0; k < nnz; ++k) {
        if (feature[k] < 0 || (uint32_t)feature[k] >= n_features) {
            return 0;
        }
    }
    return 1;
}

int fm_linear_check(const fm_linear *m)
{
    uint32_t k;
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!features_ok(m->feature, m->nnz, m->n_features) || (m->nnz > 0u && m->weight == NULL)) {
        return FM_E_MODEL;
    }
    for (k = 0; k < m->nnz; ++k) {
        if (fm_bits_nonfinite(fm_float_bits(m->weight[k]))) {
            return FM_E_MODEL;
        }
    }
    if (fm_bits_nonfinite(fm_float_bits(m->bias)) ||
        fm_bits_nonfinite(fm_float_bits(m->decision_threshold)) || !fm_costs_ok(m->costs, m->n_features)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

int fm_linear_q15_check(const fm_linear_q15 *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!features_ok(m->feature, m->nnz, m->n_features) || (m->nnz > 0u && m->weight_q == NULL) ||
        m->in_shift > FM_MAX_SHIFT || m->w_shift > FM_MAX_SHIFT) {
        return FM_E_MODEL;
    }
    if (m->term_shift != NULL) {
        uint32_t k;
        for (k = 0; k < m->nnz; ++k) {
            if (m->term_shift[k] < m->in_shift || m->term_shift[k] > FM_MAX_TERM_SHIFT) {
                return FM_E_MODEL;
            }
        }
    }
    return FM_OK;
}

int fm_linear_score(const fm_linear *m, const fm_reader *in, fm_memo *memo, float *acc, fm_result *out)
{
    uint32_t k;
    float a;
    if (m == NULL || in == NULL || memo == NULL || acc == NULL || out == NULL || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    a = *acc;
    for (k = 0; k < m->nnz; ++k) {
        float x;
        float p;
        int rc = fm_memo_get(memo, in, m->costs, (uint32_t)m->feature[k], &x, out);
        if (rc != FM_OK) {
            return rc;
        }
        p = m->weight[k] * x;
        a = a + p;
    }
    *acc = a;
    return FM_OK;
}


int fm_linear_q15_score(const fm_linear_q15 *m, const fm_reader *in, fm_memo *memo, int32_t *acc,
                        fm_result *out)
{
    uint32_t k;
    int32_t a;
    if (m == NULL || in == NULL || memo == NULL || acc == NULL || out == NULL || memo->n < m->n_features ||
        m->in_shift > FM_MAX_SHIFT) {
        return FM_E_ARG;
    }
    a = *acc;
    for (k = 0; k < m->nnz; ++k) {
        float x;
        int64_t p;
        uint32_t sh;
        int rc = fm_memo_get_q(memo, in, m->costs, (uint32_t)m->feature[k], &x, out);
        if (rc != FM_OK) {
            return rc;
        }
        /* term shifts beyond 60 are refused by the check; the mask keeps an unchecked table's shift defined */
        sh = (m->term_shift != NULL ? m->term_shift[k] : m->in_shift) & 63u;
        p = (int64_t)m->weight_q[k] * (int64_t)fm_float_to_fixed(fm_float_bits(x), m->in_shift);
        /* divide by 2^sh, truncating toward zero, without relying on
         * the implementation-defined right shift of negative numbers */
        if (p < 0) {
            p = -(int64_t)((uint64_t)(-p) >> sh);
        } else {
            p = (int64_t)((uint64_t)p >> sh);
        }
        a = fm_sat32((int64_t)a + p);
    }
    *acc = a;
    return FM_OK;
}

#define L_T fm_linear
#define L_ROW linear_row
#define L_ACC float
#define L_BIAS bias
#define L_SCORE score
#define L_THR decision_threshold
#include "fm_linear_impl.h"

#define L_T fm_linear_q15
#define L_ROW linear_q15_row
#define L_ACC int32_t
#define L_BIAS bias_q
#define L_SCORE score_q
#define L_THR decision_threshold_q
#include "fm_linear_impl.h"
