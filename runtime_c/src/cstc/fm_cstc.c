/* frugalml runtime: cost-sensitive trees of classifiers (see fm_cstc.h). */
#include "fm_cstc.h"
#include "fm_batch.h"

#define FM_CSTC_MAX_SHIFT 30u

/* ---- load-time checks ------------------------------------------------ */

static int finite_f32(float v)
{
    return !fm_bits_nonfinite(fm_float_bits(v));
}

/* Scorers of the term arrays: the n_nodes node scorers, then (K >= 3) the class scorers; 0 when n_classes
 * or n_class_scorers is invalid. */
static uint32_t n_scorers_of(uint32_t n_nodes, uint32_t n_classes, uint32_t n_class_scorers)
{
    if (n_classes == 0u || n_classes == 2u) {
        return n_nodes;
    }
    if (n_classes < 3u || n_classes > FM_VEC_MAX_OUTPUTS || n_class_scorers < n_classes ||
        n_class_scorers > 0xFFFFFFFEu - n_nodes) {
        return 0u;
    }
    return n_nodes + n_class_scorers;
}

/* term_start, features, children, class scorers: everything both numeric types share. */
static int structure_ok(uint32_t n_features, uint32_t n_nodes, uint32_t n_scorers, const uint32_t *term_start,
                        const int32_t *feature, const int32_t *upper, const int32_t *lower, uint32_t n_classes,
                        const uint32_t *class_first)
{
    uint32_t k;
    uint32_t j;
    uint32_t nnz;
    if (n_nodes == 0u || n_scorers < n_nodes || term_start == NULL || upper == NULL || lower == NULL ||
        term_start[0] != 0u) {
        return 0;
    }
    for (k = 0; k < n_scorers; ++k) {
        if (term_start[k + 1u] < term_start[k]) {
            return 0;
        }
    }
    nnz = term_start[n_scorers];
    if (nnz > 0u && feature == NULL) {
        return 0;
    }
    for (k = 0; k < nnz; ++k) {
        if (feature[k] < 0 || (uint32_t)feature[k] >= n_features) {
            return 0;
        }
    }
    for (k = 0; k < n_nodes; ++k) {
        if (upper[k] == -1 && lower[k] == -1) {
            /* a K-class leaf: its K class scorers after the node scorers */
            if (n_scorers > n_nodes && (class_first == NULL || class_first[k] < n_nodes ||
                                        class_first[k] > n_scorers - n_classes)) {
                return 0;
            }
            continue;
        }
        if (upper[k] < 0 || lower[k] < 0 || upper[k] == lower[k] || (uint32_t)upper[k] <= k ||
            (uint32_t)lower[k] <= k || (uint32_t)upper[k] >= n_nodes || (uint32_t)lower[k] >= n_nodes) {
            return 0;
        }
    }
    /* every node but the root has exactly one parent */
    for (j = 1; j < n_nodes; ++j) {
        uint32_t parents = 0u;
        for (k = 0; k < j; ++k) {
            parents += (upper[k] == (int32_t)j) ? 1u : 0u;
            parents += (lower[k] == (int32_t)j) ? 1u : 0u;
        }
        if (parents != 1u) {
            return 0;
        }
    }
    return 1;
}

/* The checks' start, float32 and q15: FM_E_ARG for no model, else ns = m's scorer count. */
#define CSTC_CHECK_START(m, ns)                                                                               \
    do {                                                                                                      \
        if ((m) == NULL) {                                                                                    \
            return FM_E_ARG;                                                                                  \
        }                                                                                                     \
        (ns) = n_scorers_of((m)->n_nodes, (m)->n_classes, (m)->n_class_scorers);                              \
    } while (0)

/* m's node and class structure (both types have the same fields for it). */
#define CSTC_STRUCTURE_OK(m, ns)                                                                              \
    structure_ok((m)->n_features, (m)->n_nodes, ns, (m)->term_start, (m)->feature, (m)->upper, (m)->lower,    \
                 (m)->n_classes, (m)->class_first)

int fm_cstc_check(const fm_cstc *m)
{
    uint32_t k;
    uint32_t nnz;
    uint32_t ns;
    CSTC_CHECK_START(m, ns);
    if (!CSTC_STRUCTURE_OK(m, ns) || m->bias == NULL || m->threshold == NULL) {
        return FM_E_MODEL;
    }
    nnz = m->term_start[ns];
    if (nnz > 0u && m->weight == NULL) {
        return FM_E_MODEL;
    }
    for (k = 0; k < nnz; ++k) {
        if (!finite_f32(m->weight[k])) {
            return FM_E_MODEL;
        }
    }
    for (k = 0; k < ns; ++k) {
        if (!finite_f32(m->bias[k]) || (k < m->n_nodes && !finite_f32(m->threshold[k]))) {
            return FM_E_MODEL;
        }
    }
    return fm_costs_ok(m->costs, m->n_features) ? FM_OK : FM_E_MODEL;
}

int fm_cstc_q15_check(const fm_cstc_q15 *m)
{
    uint32_t k;
    uint32_t ns;
    CSTC_CHECK_START(m, ns);
    if (!CSTC_STRUCTURE_OK(m, ns) ||
        m->bias_q == NULL || m->threshold_q == NULL || m->w_shift == NULL || m->in_shift > FM_CSTC_MAX_SHIFT ||
        (m->term_start[ns] > 0u && m->weight_q == NULL)) {
        return FM_E_MODEL;
    }
    for (k = 0; k < m->n_nodes; ++k) {
        if (m->w_shift[k] > FM_CSTC_MAX_SHIFT) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

/* Scorer s's terms of model m (its weights field W) in the linear scorer struct `node`. */
#define CSTC_TERMS(node, m, s, W)                                                                             \
    do {                                                                                                      \
        const uint32_t a_ = (m)->term_start[s];                                                               \
        (node).n_features = (m)->n_features;                                                                  \
        (node).nnz = (m)->term_start[(s) + 1u] - a_;                                                          \
        (node).feature = (node).nnz > 0u ? (m)->feature + a_ : NULL;                                          \
        (node).W = (node).nnz > 0u ? (m)->W + a_ : NULL;                                                      \
    } while (0)

/* ---- float32 ---------------------------------------------------------- */

/* Scorer s (a node's or a class's) added to *acc, as fm_linear_score. */
static int score_f32(const fm_cstc *m, uint32_t s, const fm_reader *in, fm_memo *memo, float *acc, fm_result *out)
{
    fm_linear node;
    CSTC_TERMS(node, m, s, weight);
    node.bias = *acc;
    node.decision_threshold = 0.0f;
    node.costs = m->costs;
    return fm_linear_score(&node, in, memo, acc, out);
}

/* ---- fixed point ------------------------------------------------------ */

/* Scorer s with node k's weight shift added to *acc, as fm_linear_q15_score. */
static int score_q15(const fm_cstc_q15 *m, uint32_t s, uint32_t k, const fm_reader *in, fm_memo *memo, int32_t *acc,
                     fm_result *out)
{
    fm_linear_q15 node;
    CSTC_TERMS(node, m, s, weight_q);
    node.bias_q = *acc;
    node.decision_threshold_q = 0;
    node.in_shift = m->in_shift;
    node.w_shift = m->w_shift[k];
    node.costs = m->costs;
    node.term_shift = NULL; /* CSTC nodes: one shift per node (w_shift[k]) */
    return fm_linear_q15_score(&node, in, memo, acc, out);
}

/* ---- the walk, float32 and q15 (fm_cstc_impl.h) ----------------------- */

#define C_MODEL fm_cstc
#define C_ACC float
#define C_FN(n) fm_cstc_##n
#define C_BIAS(m) ((m)->bias)
#define C_THR(m) ((m)->threshold)
#define C_SCORE(m, s, k, in, memo, acc, out) score_f32((m), (s), (in), (memo), (acc), (out))
#define C_SET_SCORE(out, acc) ((out)->score = (acc))
#include "fm_cstc_impl.h"
#undef C_MODEL
#undef C_ACC
#undef C_FN
#undef C_BIAS
#undef C_THR
#undef C_SCORE
#undef C_SET_SCORE

#define C_MODEL fm_cstc_q15
#define C_ACC int32_t
#define C_FN(n) fm_cstc_q15_##n
#define C_BIAS(m) ((m)->bias_q)
#define C_THR(m) ((m)->threshold_q)
#define C_SCORE(m, s, k, in, memo, acc, out) score_q15((m), (s), (k), (in), (memo), (acc), (out))
#define C_SET_SCORE(out, acc) ((out)->score_q = (acc))
#include "fm_cstc_impl.h"
