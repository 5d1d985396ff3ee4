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
        int rc = fm_memo_get_q(memo, in, m->costs, (uint32_t)m->feature[k], &x, out);
        if (rc != FM_OK) {
            return rc;
        }
        p = (int64_t)m->weight_q[k] * (int64_t)fm_float_to_fixed(fm_float_bits(x), m->in_shift);
        /* divide by 2^in_shift, truncating toward zero, without relying on
         * the implementation-defined right shift of negative numbers */
        if (p < 0) {
            p = -(int64_t)((uint64_t)(-p) >> m->in_shift);
        } else {
            p = (int64_t)((uint64_t)p >> m->in_shift);
        }
        a = fm_sat32((int64_t)a + p);
    }
    *acc = a;
    return FM_OK;
}

int fm_linear_predict(const fm_linear *m, const fm_reader *in, fm_memo *memo, fm_result *out)
{
    float acc;
    int rc;
    if (m == NULL || memo == NULL || out == NULL) {
        return FM_E_ARG;
    }
    fm_memo_start(memo, out);
    acc = m->bias;
    rc = fm_linear_score(m, in, memo, &acc, out);
    if (rc != FM_OK) {
        return rc;
    }
    out->score = acc;
    out->label = (acc > m->decision_threshold) ? 1 : 0;
    return FM_OK;
}

int fm_linear_q15_predict(const fm_linear_q15 *m, const fm_reader *in, fm_memo *memo, fm_result *out)
{
    int32_t acc;
    int rc;
    if (m == NULL || memo == NULL || out == NULL) {
        return FM_E_ARG;
    }
    fm_memo_start(memo, out);
    acc = m->bias_q;
    rc = fm_linear_q15_score(m, in, memo, &acc, out);
    if (rc != FM_OK) {
        return rc;
    }
    out->score_q = acc;
    out->label = (acc > m->decision_threshold_q) ? 1 : 0;
    return FM_OK;
}

static int linear_row(const void *m, const float *x, uint32_t i, void *memo, fm_result *out)
{
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const fm_linear *)m)->n_features);
    (void)i;
    return fm_linear_predict((const fm_linear *)m, &r, (fm_memo *)memo, out);
}

int fm_linear_predict_batch(const fm_linear *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                            fm_result *out, uint32_t *n_done)
{
    const int ok = m != NULL && memo != NULL && cols == m->n_features;
    return fm_batch_rows(ok, linear_row, m, X, rows, cols, memo, out, n_done);
}

static int linear_q15_row(const void *m, const float *x, uint32_t i, void *memo, fm_result *out)
{
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const fm_linear_q15 *)m)->n_features);
    (void)i;
    return fm_linear_q15_predict((const fm_linear_q15 *)m, &r, (fm_memo *)memo, out);
}

int fm_linear_q15_predict_batch(const fm_linear_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                                fm_memo *memo, fm_result *out, uint32_t *n_done)
{
    const int ok = m != NULL && memo != NULL && cols == m->n_features;
    return fm_batch_rows(ok, linear_q15_row, m, X, rows, cols, memo, out, n_done);
}

size_t fm_linear_scratch_size(const fm_linear *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, 0u, 0);
}

size_t fm_linear_q15_scratch_size(const fm_linear_q15 *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, 0u, 0);
}

int fm_linear_scratch_init(const fm_linear *m, void *buf, size_t size, fm_memo *memo)
{
    return m == NULL ? FM_E_ARG : fm_scratch_split(buf, size, m->n_features, 0u, 0, memo, NULL);
}

int fm_linear_q15_scratch_init(const fm_linear_q15 *m, void *buf, size_t size, fm_memo *memo)
{
    return m == NULL ? FM_E_ARG : fm_scratch_split(buf, size, m->n_features, 0u, 0, memo, NULL);
}
