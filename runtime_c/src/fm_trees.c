/* frugalml runtime: tree ensembles in compact tables (see fm_trees.h). */
#include "fm_trees.h"

#if defined(__GNUC__)
#define FM_WALK static inline __attribute__((always_inline))
#else
#define FM_WALK static inline
#endif

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
static int structure_valid(uint32_t n_features, uint32_t n_outputs, uint32_t n_trees, uint32_t n_nodes,
                           const uint32_t *node_end, const uint16_t *feature, const uint32_t *child,
                           const uint16_t *tree_output)
{
    uint32_t t;
    uint32_t start = 0u;
    if (n_outputs == 0u || n_nodes > 0x7fffffffu || n_trees > 0x7fffffffu - n_nodes) {
        return 0;
    }
    if (n_nodes > 0u && feature == NULL) {
        return 0;
    }
    if (n_trees > 0u && (node_end == NULL || tree_output == NULL)) {
        return 0;
    }
    for (t = 0; t < n_trees; ++t) {
        uint32_t stop = node_end[t];
        uint32_t n_inner;
        uint32_t i;
        if (stop < start || stop > n_nodes || tree_output[t] >= n_outputs) {
            return 0;
        }
        n_inner = stop - start;
        if (child == NULL && ((n_inner + 1u) & n_inner) != 0u) {
            return 0; /* implicit trees are complete: I_t + 1 is a power of two */
        }
        for (i = 0; i < n_inner; ++i) {
            if (feature[start + i] >= n_features) {
                return 0;
            }
            if (child != NULL) {
                uint32_t c = child[start + i];
                /* forward (no cycles), inside the tree, a pair never straddles nodes and leaves */
                if (c <= i || c >= 2u * n_inner || c == n_inner - 1u) {
                    return 0;
                }
            }
        }
        start = stop;
    }
    return start == n_nodes;
}

int fm_trees_check(const fm_trees *m)
{
    uint32_t n_leaves;
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!structure_valid(m->n_features, m->n_outputs, m->n_trees, m->n_nodes, m->node_end, m->feature,
                         m->child, m->tree_output)) {
        return FM_E_MODEL;
    }
    n_leaves = m->n_nodes + m->n_trees;
    if ((m->n_nodes > 0u && m->threshold == NULL) || (n_leaves > 0u && m->leaf == NULL) ||
        m->base_score == NULL) {
        return FM_E_MODEL;
    }
    if (!finite_f32(m->threshold, m->n_nodes) || !finite_f32(m->leaf, n_leaves) ||
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
    if (!structure_valid(m->n_features, m->n_outputs, m->n_trees, m->n_nodes, m->node_end, m->feature,
                         m->child, m->tree_output)) {
        return FM_E_MODEL;
    }
    if ((m->n_nodes > 0u && m->threshold_q == NULL) || (m->n_nodes + m->n_trees > 0u && m->leaf_q == NULL) ||
        m->base_q == NULL || m->shift > 30u) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---- first use of a feature on the eager path --------------------------- */

/* Stamp feature f as read with float32 accounting; FM_E_VALUE when x[f] is
 * not finite (the lazy path's fm_memo_get with a vector reader, minus the
 * callback). */
FM_WALK int touch_f32(fm_memo *memo, const float *costs, const float *x, uint32_t f, fm_result *res)
{
    float v = x[f];
    if (fm_bits_nonfinite(fm_float_bits(v))) {
        return FM_E_VALUE;
    }
    memo->values[f] = v;
    memo->seen[f] = memo->epoch;
    if (memo->keys != NULL) {
        memo->keys[f] = (int16_t)fm_key16(fm_float_bits(v));
    }
    res->n_read += 1u;
    res->cost = res->cost + (costs != NULL ? costs[f] : 1.0f);
    return FM_OK;
}

FM_WALK int touch_q(fm_memo *memo, const uint16_t *costs, const float *x, uint32_t f, fm_result *res)
{
    float v = x[f];
    uint32_t c;
    if (fm_bits_nonfinite(fm_float_bits(v))) {
        return FM_E_VALUE;
    }
    memo->values[f] = v;
    memo->seen[f] = memo->epoch;
    memo->keys[f] = (int16_t)fm_key16(fm_float_bits(v));
    c = costs != NULL ? (uint32_t)costs[f] : 1u;
    res->n_read += 1u;
    res->cost_q = (res->cost_q > 0xffffffffu - c) ? 0xffffffffu : res->cost_q + c;
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

/* The walk, specialised by the compiler for each (implicit, eager) pair:
 * eager reads x directly, lazy goes through the memo and the reader. */
FM_WALK int walk_f32(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const float *x,
                     const fm_reader *r, fm_memo *memo, float *scores, fm_result *res, int implicit, int eager)
{
    const uint16_t *feature = m->feature;
    const float *threshold = m->threshold;
    const uint32_t *child = m->child;
    const float *values = eager ? x : memo->values;
    const uint8_t *seen = memo->seen;
    const uint8_t epoch = memo->epoch;
    uint32_t start = (first_tree == 0u) ? 0u : m->node_end[first_tree - 1u];
    uint32_t t;
    for (t = first_tree; t < end_tree; ++t) {
        const uint32_t stop = m->node_end[t];
        const uint32_t n_inner = stop - start;
        const uint16_t *fe = feature + start;
        const float *th = threshold + start;
        const uint32_t *ch = implicit ? NULL : child + start;
        uint32_t i = 0u;
        uint32_t o;
        for (;;) {
            /* the hot loop: stops at a leaf or at a feature this prediction has not used yet */
            while (i < n_inner) {
                const uint32_t f = fe[i];
                if (seen[f] != epoch) {
                    break;
                }
                i = (implicit ? 2u * i + 1u : ch[i]) + (values[f] > th[i] ? 1u : 0u);
            }
            if (i >= n_inner) {
                break;
            }
            {
                int rc;
                if (eager) {
                    rc = touch_f32(memo, m->costs, x, fe[i], res);
                } else {
                    float v;
                    rc = fm_memo_get(memo, r, m->costs, fe[i], &v, res);
                }
                if (rc != FM_OK) {
                    return rc;
                }
            }
        }
        o = m->tree_output[t];
        scores[o] = scores[o] + m->leaf[start + t + (i - n_inner)];
        start = stop;
    }
    return FM_OK;
}

static int args_ok(const void *m, const void *scores, const void *res, const fm_memo *memo, uint32_t first_tree,
                   uint32_t end_tree, uint32_t n_trees, uint32_t n_features)
{
    return m != NULL && memo != NULL && scores != NULL && res != NULL && first_tree <= end_tree &&
           end_tree <= n_trees && memo->n >= n_features;
}

int fm_trees_accumulate(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const fm_reader *r,
                        fm_memo *memo, float *scores, fm_result *res)
{
    if (m == NULL || r == NULL ||
        !args_ok(m, scores, res, memo, first_tree, end_tree, m->n_trees, m->n_features)) {
        return FM_E_ARG;
    }
    if (m->child == NULL) {
        return walk_f32(m, first_tree, end_tree, NULL, r, memo, scores, res, 1, 0);
    }
    return walk_f32(m, first_tree, end_tree, NULL, r, memo, scores, res, 0, 0);
}

int fm_trees_accumulate_vec(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const float *x,
                            fm_memo *memo, float *scores, fm_result *res)
{
    if (m == NULL || x == NULL ||
        !args_ok(m, scores, res, memo, first_tree, end_tree, m->n_trees, m->n_features)) {
        return FM_E_ARG;
    }
    if (m->child == NULL) {
        return walk_f32(m, first_tree, end_tree, x, NULL, memo, scores, res, 1, 1);
    }
    return walk_f32(m, first_tree, end_tree, x, NULL, memo, scores, res, 0, 1);
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

static int predict_eager_f32(const fm_trees *m, const float *x, fm_memo *memo, float *scores, fm_result *res)
{
    int rc;
    fm_memo_start(memo, res);
    rc = fm_trees_begin(m, scores);
    if (rc == FM_OK) {
        rc = fm_trees_accumulate_vec(m, 0u, m->n_trees, x, memo, scores, res);
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
        rc = predict_eager_f32(m, X + (size_t)i * cols, memo, scores, &out[i]);
        if (rc != FM_OK) {
            break;
        }
    }
    if (n_done != NULL) {
        *n_done = i;
    }
    return rc;
}

int fm_trees_predict_vec(const fm_trees *m, const float *x, uint32_t n, fm_result *out)
{
    float values[FM_TREES_VEC_MAX_FEATURES];
    uint8_t seen[FM_TREES_VEC_MAX_FEATURES];
    float scores[FM_TREES_VEC_MAX_OUTPUTS];
    fm_memo memo;
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_TREES_VEC_MAX_FEATURES ||
        m->n_outputs > FM_TREES_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    fm_memo_init(&memo, values, seen, n);
    return predict_eager_f32(m, x, &memo, scores, out);
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

FM_WALK int walk_q(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree, const float *x,
                   const fm_reader *r, fm_memo *memo, int32_t *scores, fm_result *res, int implicit, int eager)
{
    const uint16_t *feature = m->feature;
    const int16_t *threshold = m->threshold_q;
    const uint32_t *child = m->child;
    const int16_t *keys = memo->keys;
    const float *values = memo->values;
    const uint8_t *seen = memo->seen;
    const uint8_t epoch = memo->epoch;
    uint32_t start = (first_tree == 0u) ? 0u : m->node_end[first_tree - 1u];
    uint32_t t;
    for (t = first_tree; t < end_tree; ++t) {
        const uint32_t stop = m->node_end[t];
        const uint32_t n_inner = stop - start;
        const uint16_t *fe = feature + start;
        const int16_t *th = threshold + start;
        const uint32_t *ch = implicit ? NULL : child + start;
        uint32_t i = 0u;
        uint32_t o;
        for (;;) {
            while (i < n_inner) {
                const uint32_t f = fe[i];
                int32_t k;
                if (seen[f] != epoch) {
                    break;
                }
                k = eager ? (int32_t)keys[f] : fm_key16(fm_float_bits(values[f]));
                i = (implicit ? 2u * i + 1u : ch[i]) + (k > (int32_t)th[i] ? 1u : 0u);
            }
            if (i >= n_inner) {
                break;
            }
            {
                int rc;
                if (eager) {
                    rc = touch_q(memo, m->costs, x, fe[i], res);
                } else {
                    float v;
                    rc = fm_memo_get_q(memo, r, m->costs, fe[i], &v, res);
                }
                if (rc != FM_OK) {
                    return rc;
                }
            }
        }
        o = m->tree_output[t];
        scores[o] = add_sat32(scores[o], (int32_t)m->leaf_q[start + t + (i - n_inner)]);
        start = stop;
    }
    return FM_OK;
}

int fm_trees_q15_accumulate(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree,
                            const fm_reader *r, fm_memo *memo, int32_t *scores, fm_result *res)
{
    if (m == NULL || r == NULL ||
        !args_ok(m, scores, res, memo, first_tree, end_tree, m->n_trees, m->n_features)) {
        return FM_E_ARG;
    }
    if (m->child == NULL) {
        return walk_q(m, first_tree, end_tree, NULL, r, memo, scores, res, 1, 0);
    }
    return walk_q(m, first_tree, end_tree, NULL, r, memo, scores, res, 0, 0);
}

int fm_trees_q15_accumulate_vec(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree, const float *x,
                                fm_memo *memo, int32_t *scores, fm_result *res)
{
    if (m == NULL || x == NULL ||
        !args_ok(m, scores, res, memo, first_tree, end_tree, m->n_trees, m->n_features) || memo->keys == NULL) {
        return FM_E_ARG;
    }
    if (m->child == NULL) {
        return walk_q(m, first_tree, end_tree, x, NULL, memo, scores, res, 1, 1);
    }
    return walk_q(m, first_tree, end_tree, x, NULL, memo, scores, res, 0, 1);
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

static int predict_eager_q(const fm_trees_q15 *m, const float *x, fm_memo *memo, int32_t *scores, fm_result *res)
{
    int rc;
    fm_memo_start(memo, res);
    rc = fm_trees_q15_begin(m, scores);
    if (rc == FM_OK) {
        rc = fm_trees_q15_accumulate_vec(m, 0u, m->n_trees, x, memo, scores, res);
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
        const float *x = X + (size_t)i * cols;
        if (memo->keys != NULL) {
            rc = predict_eager_q(m, x, memo, scores, &out[i]);
        } else {
            fm_vector v;
            fm_reader r;
            v.x = x;
            v.n = cols;
            r.read = fm_vector_read;
            r.ctx = &v;
            rc = fm_trees_q15_predict(m, &r, memo, scores, &out[i]);
        }
        if (rc != FM_OK) {
            break;
        }
    }
    if (n_done != NULL) {
        *n_done = i;
    }
    return rc;
}

int fm_trees_q15_predict_vec(const fm_trees_q15 *m, const float *x, uint32_t n, fm_result *out)
{
    float values[FM_TREES_VEC_MAX_FEATURES];
    uint8_t seen[FM_TREES_VEC_MAX_FEATURES];
    int16_t keys[FM_TREES_VEC_MAX_FEATURES];
    int32_t scores[FM_TREES_VEC_MAX_OUTPUTS];
    fm_memo memo;
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_TREES_VEC_MAX_FEATURES ||
        m->n_outputs > FM_TREES_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    fm_memo_init(&memo, values, seen, n);
    fm_memo_set_keys(&memo, keys);
    return predict_eager_q(m, x, &memo, scores, out);
}
