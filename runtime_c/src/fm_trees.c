/* frugalml runtime: flat tree ensembles (see fm_trees.h). */
#include "fm_trees.h"

/* ---- load-time checks ------------------------------------------------ */

static int finite_f32(const float *a, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; ++i) {
        if (fm_bits_nonfinite(fm_float_bits(a[i]))) {
            return 0;
        }
    }
    return 1;
}

static int costs_valid(const float *costs, uint32_t n)
{
    uint32_t j;
    if (costs == NULL) {
        return 1;
    }
    for (j = 0; j < n; ++j) {
        uint32_t b = fm_float_bits(costs[j]);
        if (fm_bits_nonfinite(b) || ((b & 0x80000000u) && (b & 0x7fffffffu) != 0u)) {
            return 0;
        }
    }
    return 1;
}

/* Structure shared by the float32 and q15 tables. */
static int structure_valid(uint32_t n_features, uint32_t n_outputs, uint32_t n_nodes, uint32_t n_trees,
                           const int32_t *feature, const int32_t *left, const int32_t *right,
                           const int32_t *roots, const int32_t *tree_output)
{
    uint32_t i;
    if (n_outputs == 0u || (n_trees > 0u && n_nodes == 0u) || n_nodes > 0x7fffffffu) {
        return 0;
    }
    if (n_nodes > 0u && (feature == NULL || left == NULL || right == NULL)) {
        return 0;
    }
    if (n_trees > 0u && (roots == NULL || tree_output == NULL)) {
        return 0;
    }
    for (i = 0; i < n_nodes; ++i) {
        int32_t f = feature[i];
        if (f == -1) {
            continue;
        }
        if (f < 0 || (uint32_t)f >= n_features) {
            return 0;
        }
        /* children point forward and stay in the table: no cycles */
        if (left[i] <= (int32_t)i || (uint32_t)left[i] >= n_nodes || right[i] <= (int32_t)i ||
            (uint32_t)right[i] >= n_nodes) {
            return 0;
        }
    }
    for (i = 0; i < n_trees; ++i) {
        if (roots[i] < 0 || (uint32_t)roots[i] >= n_nodes) {
            return 0;
        }
        if (tree_output[i] < 0 || (uint32_t)tree_output[i] >= n_outputs) {
            return 0;
        }
    }
    return 1;
}

int fm_trees_check(const fm_trees *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!structure_valid(m->n_features, m->n_outputs, m->n_nodes, m->n_trees, m->feature, m->left, m->right,
                         m->roots, m->tree_output)) {
        return FM_E_MODEL;
    }
    if ((m->n_nodes > 0u && (m->threshold == NULL || m->value == NULL)) || m->base_score == NULL) {
        return FM_E_MODEL;
    }
    if (!finite_f32(m->threshold, m->n_nodes) || !finite_f32(m->value, m->n_nodes) ||
        !finite_f32(m->base_score, m->n_outputs) || !finite_f32(&m->decision_threshold, 1u) ||
        !costs_valid(m->costs, m->n_features)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

int fm_trees_q15_check(const fm_trees_q15 *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!structure_valid(m->n_features, m->n_outputs, m->n_nodes, m->n_trees, m->feature, m->left, m->right,
                         m->roots, m->tree_output)) {
        return FM_E_MODEL;
    }
    if ((m->n_nodes > 0u && (m->threshold_key == NULL || m->value_q == NULL)) || m->base_q == NULL ||
        m->shift > 30u) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---- float32 ---------------------------------------------------------- */

int fm_trees_begin(const fm_trees *m, float *scores)
{
    uint32_t o;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    for (o = 0; o < m->n_outputs; ++o) {
        scores[o] = m->base_score[o];
    }
    return FM_OK;
}

int fm_trees_accumulate(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const fm_reader *r,
                        fm_memo *memo, float *scores, fm_result *res)
{
    const int32_t *feature;
    const float *threshold;
    const int32_t *left;
    const int32_t *right;
    const float *mvalues;
    const uint8_t *seen;
    uint8_t epoch;
    uint32_t t;
    if (m == NULL || r == NULL || memo == NULL || scores == NULL || res == NULL || first_tree > end_tree ||
        end_tree > m->n_trees || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    feature = m->feature;
    threshold = m->threshold;
    left = m->left;
    right = m->right;
    mvalues = memo->values;
    seen = memo->seen;
    epoch = memo->epoch;
    for (t = first_tree; t < end_tree; ++t) {
        int32_t node = m->roots[t];
        int32_t f;
        int32_t o;
        /* the walk: about a dozen instructions per node on x86-64 -O2 (memo hit) */
        while ((f = feature[node]) >= 0) {
            float x;
            if (seen[f] != epoch) {
                int rc = fm_memo_get(memo, r, m->costs, (uint32_t)f, &x, res);
                if (rc != FM_OK) {
                    return rc;
                }
            }
            x = mvalues[f];
            node = (x <= threshold[node]) ? left[node] : right[node];
        }
        o = m->tree_output[t];
        scores[o] = scores[o] + m->value[node];
    }
    return FM_OK;
}

int fm_trees_finish(const fm_trees *m, const float *scores, fm_result *res)
{
    uint32_t o;
    uint32_t best = 0u;
    if (m == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    if (m->n_outputs == 1u) {
        res->score = scores[0];
        res->label = (scores[0] > m->decision_threshold) ? 1 : 0;
        return FM_OK;
    }
    for (o = 1; o < m->n_outputs; ++o) {
        if (scores[o] > scores[best]) {
            best = o;
        }
    }
    res->score = scores[best];
    res->label = (int32_t)best;
    return FM_OK;
}

int fm_trees_predict(const fm_trees *m, const fm_reader *r, fm_memo *memo, float *scores, fm_result *res)
{
    int rc;
    if (m == NULL || memo == NULL || res == NULL) {
        return FM_E_ARG;
    }
    fm_memo_start(memo, res);
    rc = fm_trees_begin(m, scores);
    if (rc == FM_OK) {
        rc = fm_trees_accumulate(m, 0u, m->n_trees, r, memo, scores, res);
    }
    if (rc == FM_OK) {
        rc = fm_trees_finish(m, scores, res);
    }
    return rc;
}

int fm_trees_predict_batch(const fm_trees *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                           float *scores, fm_result *out, uint32_t *n_done)
{
    uint32_t i;
    int rc = FM_OK;
    if (n_done != NULL) {
        *n_done = 0u;
    }
    if (m == NULL || memo == NULL || scores == NULL || (rows > 0u && (X == NULL || out == NULL)) ||
        cols != m->n_features) {
        return FM_E_ARG;
    }
    for (i = 0; i < rows; ++i) {
        fm_vector v;
        fm_reader r;
        v.x = X + (size_t)i * cols;
        v.n = cols;
        r.read = fm_vector_read;
        r.ctx = &v;
        rc = fm_trees_predict(m, &r, memo, scores, &out[i]);
        if (rc != FM_OK) {
            break;
        }
    }
    if (n_done != NULL) {
        *n_done = i;
    }
    return rc;
}

/* ---- fixed point ------------------------------------------------------ */

static int32_t add_sat32(int32_t a, int32_t b)
{
    if (b > 0 && a > INT32_MAX - b) {
        return INT32_MAX;
    }
    if (b < 0 && a < INT32_MIN - b) {
        return INT32_MIN;
    }
    return a + b;
}

int fm_trees_q15_begin(const fm_trees_q15 *m, int32_t *scores)
{
    uint32_t o;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    for (o = 0; o < m->n_outputs; ++o) {
        scores[o] = m->base_q[o];
    }
    return FM_OK;
}

int fm_trees_q15_accumulate(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree,
                            const fm_reader *r, fm_memo *memo, int32_t *scores, fm_result *res)
{
    const int32_t *feature;
    const int32_t *key;
    const int32_t *left;
    const int32_t *right;
    const float *mvalues;
    const uint8_t *seen;
    uint8_t epoch;
    uint32_t t;
    if (m == NULL || r == NULL || memo == NULL || scores == NULL || res == NULL || first_tree > end_tree ||
        end_tree > m->n_trees || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    feature = m->feature;
    key = m->threshold_key;
    left = m->left;
    right = m->right;
    mvalues = memo->values;
    seen = memo->seen;
    epoch = memo->epoch;
    for (t = first_tree; t < end_tree; ++t) {
        int32_t node = m->roots[t];
        int32_t f;
        int32_t o;
        while ((f = feature[node]) >= 0) {
            float x;
            if (seen[f] != epoch) {
                int rc = fm_memo_get_q(memo, r, m->costs, (uint32_t)f, &x, res);
                if (rc != FM_OK) {
                    return rc;
                }
            }
            x = mvalues[f];
            node = (fm_key_bits(fm_float_bits(x)) <= key[node]) ? left[node] : right[node];
        }
        o = m->tree_output[t];
        scores[o] = add_sat32(scores[o], (int32_t)m->value_q[node]);
    }
    return FM_OK;
}

int fm_trees_q15_finish(const fm_trees_q15 *m, const int32_t *scores, fm_result *res)
{
    uint32_t o;
    uint32_t best = 0u;
    if (m == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    if (m->n_outputs == 1u) {
        res->score_q = scores[0];
        res->label = (scores[0] > m->decision_threshold_q) ? 1 : 0;
        return FM_OK;
    }
    for (o = 1; o < m->n_outputs; ++o) {
        if (scores[o] > scores[best]) {
            best = o;
        }
    }
    res->score_q = scores[best];
    res->label = (int32_t)best;
    return FM_OK;
}

int fm_trees_q15_predict(const fm_trees_q15 *m, const fm_reader *r, fm_memo *memo, int32_t *scores,
                         fm_result *res)
{
    int rc;
    if (m == NULL || memo == NULL || res == NULL) {
        return FM_E_ARG;
    }
    fm_memo_start(memo, res);
    rc = fm_trees_q15_begin(m, scores);
    if (rc == FM_OK) {
        rc = fm_trees_q15_accumulate(m, 0u, m->n_trees, r, memo, scores, res);
    }
    if (rc == FM_OK) {
        rc = fm_trees_q15_finish(m, scores, res);
    }
    return rc;
}

int fm_trees_q15_predict_batch(const fm_trees_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                               fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done)
{
    uint32_t i;
    int rc = FM_OK;
    if (n_done != NULL) {
        *n_done = 0u;
    }
    if (m == NULL || memo == NULL || scores == NULL || (rows > 0u && (X == NULL || out == NULL)) ||
        cols != m->n_features) {
        return FM_E_ARG;
    }
    for (i = 0; i < rows; ++i) {
        fm_vector v;
        fm_reader r;
        v.x = X + (size_t)i * cols;
        v.n = cols;
        r.read = fm_vector_read;
        r.ctx = &v;
        rc = fm_trees_q15_predict(m, &r, memo, scores, &out[i]);
        if (rc != FM_OK) {
            break;
        }
    }
    if (n_done != NULL) {
        *n_done = i;
    }
    return rc;
}
