/*
 * frugalml runtime: cost-sensitive trees of classifiers (kind "cstc",
 * Xu et al., JMLR 2014), float32 and fixed point, lazy reads.
 *
 * A binary tree of n_nodes sparse linear classifiers over the raw
 * features. Node k's terms are feature/weight[term_start[k] ..
 * term_start[k+1]-1]; its score is computed exactly as an fm_linear
 * scorer (fm_linear_score: acc = bias[k], then acc = acc + w * x in stored
 * order) or, in q15, as fm_linear_q15_score with the node's own w_shift[k]
 * and the model's in_shift.
 *
 * The walk starts at node 0. An internal node (upper[k] >= 0) goes to
 * upper[k] when acc > threshold[k], else to lower[k]. A leaf (upper[k] ==
 * lower[k] == -1) ends the prediction: label = acc > threshold[k],
 * out->score (q15: out->score_q) = acc, out->stage = k.
 *
 * K classes (n_classes = K >= 3; 0 or 2 is the binary form above): the
 * internal nodes route as above (one binary split each) and every leaf
 * holds K class scorers, scorers class_first[k] .. class_first[k] + K - 1
 * of the same term arrays (term_start and bias hold n_nodes +
 * n_class_scorers entries: the nodes' own scorers first, then the class
 * scorers; a K-class leaf's own scorer is not evaluated). The leaf scores
 * class 0, 1, .., K-1 in turn (each exactly as fm_linear_score from its
 * own bias; q15 with the leaf's w_shift[k]) and answers the class of the
 * largest score (the first on ties): out->label = that class index,
 * out->score (score_q) = that score, out->stage = k. No per-class stack
 * or scratch: any K up to FM_VEC_MAX_OUTPUTS works in every call.
 *
 * Only the nodes on the input's path are scored, so only their features
 * are read, each at most once (one fm_memo per prediction); n_read and
 * cost count those features alone (see fm_linear.h for the accounting).
 *
 * Load-time checks make every walk finite and every index safe: children
 * have larger indices than their parent, every node but the root has
 * exactly one parent, term_start is non-decreasing from 0 and every
 * feature index is < n_features.
 */
#ifndef FM_CSTC_H
#define FM_CSTC_H

#include "frugalml.h"
#include "fm_linear.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stack scratch bound of the eager fm_cstc*_predict_vec (no malloc):
 * n_features <= FM_VEC_MAX_FEATURES (5 bytes of stack each).
 * Override with -D; the lazy and batch calls take caller scratch. */
#ifndef FM_VEC_MAX_FEATURES
#define FM_VEC_MAX_FEATURES 512u
#endif

typedef struct {
    uint32_t n_features;
    uint32_t n_nodes;
    const uint32_t *term_start; /* [n_scorers + 1], n_scorers = n_nodes (+ n_class_scorers if K >= 3) */
    const int32_t *feature;     /* [term_start[n_scorers]] */
    const float *weight;        /* [term_start[n_scorers]] */
    const float *bias;          /* [n_scorers] */
    const float *threshold;     /* [n_nodes] routing / decision threshold */
    const int32_t *upper;       /* [n_nodes] child when acc > threshold; -1 = leaf */
    const int32_t *lower;       /* [n_nodes] child otherwise; -1 = leaf */
    const float *costs;         /* [n_features] or NULL (cost 1 each) */
    /* K classes (last, so a binary initializer may leave them out): */
    uint32_t n_classes;          /* 0 or 2: binary leaves; 3 .. FM_VEC_MAX_OUTPUTS: K-class leaves */
    uint32_t n_class_scorers;    /* class scorers after the n_nodes node scorers */
    const uint32_t *class_first; /* [n_nodes] a leaf's first class scorer (>= n_nodes) */
} fm_cstc;

typedef struct {
    uint32_t n_features;
    uint32_t n_nodes;
    const uint32_t *term_start; /* [n_scorers + 1] */
    const int32_t *feature;     /* [term_start[n_scorers]] */
    const int16_t *weight_q;    /* [term_start[n_scorers]] weight * 2^w_shift[node] */
    const int32_t *bias_q;      /* [n_scorers] bias * 2^w_shift[node] */
    const int32_t *threshold_q; /* [n_nodes] threshold * 2^w_shift[node] */
    const uint8_t *w_shift;     /* [n_nodes] each 0..30 */
    const int32_t *upper;       /* [n_nodes] */
    const int32_t *lower;       /* [n_nodes] */
    uint32_t in_shift;          /* x_q = trunc(x * 2^in_shift), 0..30 */
    const uint16_t *costs;      /* [n_features] integer cost units or NULL */
    uint32_t n_classes;          /* as fm_cstc; bias_q has n_nodes + n_class_scorers entries */
    uint32_t n_class_scorers;
    const uint32_t *class_first; /* [n_nodes]; a leaf's class scorers use its w_shift[k] */
} fm_cstc_q15;

/* Load-time checks (FM_OK, FM_E_ARG for NULL, FM_E_MODEL): the structure
 * above; n_classes 0, 2 or 3 .. FM_VEC_MAX_OUTPUTS and, for K >= 3, a
 * class_first of every leaf with its K scorers inside n_nodes ..
 * n_nodes + n_class_scorers - 1; finite weights/biases/thresholds and costs >= 0 (float32),
 * shifts in 0..30 (q15). O(n_nodes^2) for the one-parent check. */
int fm_cstc_check(const fm_cstc *m);
int fm_cstc_q15_check(const fm_cstc_q15 *m);

/* Caller scratch of fm_cstc*_predict and *_predict_batch in one buffer
 * (layout in fm_memo.h): a memo of n_features, no scores, no key cache.
 * scratch_size is 0 for NULL; scratch_init fills *memo (FM_E_ARG when
 * buf is too small or misaligned). */
size_t fm_cstc_scratch_size(const fm_cstc *m);
size_t fm_cstc_q15_scratch_size(const fm_cstc_q15 *m);
int fm_cstc_scratch_init(const fm_cstc *m, void *buf, size_t size, fm_memo *memo);
int fm_cstc_q15_scratch_init(const fm_cstc_q15 *m, void *buf, size_t size, fm_memo *memo);

/* One lazy prediction; memo of capacity >= n_features (caller scratch). */
int fm_cstc_predict(const fm_cstc *m, const fm_reader *in, fm_memo *memo, fm_result *out);
int fm_cstc_q15_predict(const fm_cstc_q15 *m, const fm_reader *in, fm_memo *memo, fm_result *out);

/* Eager batch over row-major X[rows][cols], cols == n_features; stops at
 * the first failing row (*n_done = rows completed, may be NULL). */
int fm_cstc_predict_batch(const fm_cstc *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                          fm_result *out, uint32_t *n_done);
int fm_cstc_q15_predict_batch(const fm_cstc_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                              fm_memo *memo, fm_result *out, uint32_t *n_done);

/* Eager prediction from x[n] (n == n_features) with stack scratch (see
 * FM_VEC_MAX_FEATURES; FM_E_ARG beyond it). FM_PREDICT_VEC. */
int fm_cstc_predict_vec(const fm_cstc *m, const float *x, uint32_t n, fm_result *out);
int fm_cstc_q15_predict_vec(const fm_cstc_q15 *m, const float *x, uint32_t n, fm_result *out);

#ifdef __cplusplus
}
#endif

#endif /* FM_CSTC_H */
