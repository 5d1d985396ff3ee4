/*
 * frugalml runtime: flat tree ensembles (boosted trees or forests), float32
 * and fixed point, with lazy feature reads.
 *
 * Layout: one node table shared by every tree. Node i is a leaf when
 * feature[i] == -1 (its value[i] is added to the score); otherwise the walk
 * goes to left[i] when x[feature[i]] <= threshold[i] and to right[i]
 * otherwise. Children are absolute node indices that point forward
 * (child > i), so every walk ends; left/right of leaves are ignored.
 * Tree t starts at roots[t] and adds its leaf to output tree_output[t].
 *
 * Scoring (float32): scores[o] = base_score[o]; then for t in tree order:
 * scores[tree_output[t]] = scores[tree_output[t]] + leaf_t. Binary and
 * regression models (n_outputs == 1): label 1 iff scores[0] >
 * decision_threshold, res->score = scores[0]. n_outputs > 1: label = the
 * first index of the largest score, res->score = that score.
 *
 * Fixed point (q15): the same node structure; threshold_key[i] =
 * fm_key_bits(bits of the float32 threshold) and the walk compares
 * fm_key_bits(bits of x) <= threshold_key[i] (integer ops only; for finite
 * values the same decision as the float compare). Leaf values are int16 in
 * units of 2^-shift; scores are int32, start at base_q and saturate at
 * INT32_MIN/INT32_MAX after every addition. Label as above with
 * decision_threshold_q; res->score_q holds the label's score (res->score
 * stays 0) and res->cost_q the summed uint16 cost units (res->cost stays 0).
 *
 * Features are read through the memo (fm_linear.h): at most once per
 * prediction, only features the walk branches on, with n_read/cost
 * accounting in first-read order. A prediction may be split into slices of
 * trees that share memo, scores and res (cascades, early exits):
 *
 *   fm_memo_start(&memo, &res);
 *   fm_trees_begin(&m, scores);
 *   fm_trees_accumulate(&m, 0, 10, &r, &memo, scores, &res);   trees 0..9
 *   ... decide whether to continue ...
 *   fm_trees_accumulate(&m, 10, m.n_trees, &r, &memo, scores, &res);
 *   fm_trees_finish(&m, scores, &res);
 *
 * Call fm_trees_check once on tables loaded at run time: the hot path
 * trusts the tables and only checks its arguments.
 */
#ifndef FM_TREES_H
#define FM_TREES_H

#include "frugalml.h"
#include "fm_linear.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t n_features;
    uint32_t n_outputs;       /* 1 for binary / regression */
    uint32_t n_nodes;
    uint32_t n_trees;
    const int32_t *feature;   /* [n_nodes] split feature, -1 = leaf */
    const float *threshold;   /* [n_nodes] go left iff x <= threshold */
    const int32_t *left;      /* [n_nodes] */
    const int32_t *right;     /* [n_nodes] */
    const float *value;       /* [n_nodes] leaf values (learning rate folded in) */
    const int32_t *roots;     /* [n_trees] */
    const int32_t *tree_output; /* [n_trees] output each tree adds to */
    const float *base_score;  /* [n_outputs] */
    const float *costs;       /* [n_features] or NULL (cost 1 each) */
    float decision_threshold; /* n_outputs == 1: label 1 iff score > this */
} fm_trees;

typedef struct {
    uint32_t n_features;
    uint32_t n_outputs;
    uint32_t n_nodes;
    uint32_t n_trees;
    const int32_t *feature;       /* [n_nodes] */
    const int32_t *threshold_key; /* [n_nodes] fm_key_bits of the float32 threshold */
    const int32_t *left;          /* [n_nodes] */
    const int32_t *right;         /* [n_nodes] */
    const int16_t *value_q;       /* [n_nodes] leaf value * 2^shift, rounded */
    const int32_t *roots;         /* [n_trees] */
    const int32_t *tree_output;   /* [n_trees] */
    const int32_t *base_q;        /* [n_outputs] */
    const uint16_t *costs;        /* [n_features] integer cost units or NULL (1 each) */
    int32_t decision_threshold_q;
    uint32_t shift;               /* score = score_q * 2^-shift; 0..30 */
} fm_trees_q15;

/* Load-time checks, FM_OK or FM_E_MODEL: non-NULL arrays, n_outputs >= 1,
 * n_nodes >= 1 when there are trees, every internal node's feature <
 * n_features (leaves exactly -1) and children in (i, n_nodes), roots in
 * range, tree_output < n_outputs, finite thresholds/values/base scores,
 * finite costs >= 0 (float32), shift <= 30 (q15). */
int fm_trees_check(const fm_trees *m);
int fm_trees_q15_check(const fm_trees_q15 *m);

/* scores[o] = base score, for o < n_outputs. */
int fm_trees_begin(const fm_trees *m, float *scores);
int fm_trees_q15_begin(const fm_trees_q15 *m, int32_t *scores);

/* Add trees first_tree .. end_tree-1 (0 <= first <= end <= n_trees). */
int fm_trees_accumulate(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const fm_reader *r,
                        fm_memo *memo, float *scores, fm_result *res);
int fm_trees_q15_accumulate(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree,
                            const fm_reader *r, fm_memo *memo, int32_t *scores, fm_result *res);

/* Set res->label and res->score (res->score_q) from the scores. */
int fm_trees_finish(const fm_trees *m, const float *scores, fm_result *res);
int fm_trees_q15_finish(const fm_trees_q15 *m, const int32_t *scores, fm_result *res);

/* One full prediction: memo start, begin, every tree, finish.
 * scores: caller scratch of n_outputs entries. */
int fm_trees_predict(const fm_trees *m, const fm_reader *r, fm_memo *memo, float *scores, fm_result *res);
int fm_trees_q15_predict(const fm_trees_q15 *m, const fm_reader *r, fm_memo *memo, int32_t *scores,
                         fm_result *res);

/* Eager batch over a row-major X[rows][cols] (cols must equal n_features):
 * out[i] for every row; stops at the first failing row and returns its
 * error, with *n_done (may be NULL) set to the rows completed. */
int fm_trees_predict_batch(const fm_trees *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                           float *scores, fm_result *out, uint32_t *n_done);
int fm_trees_q15_predict_batch(const fm_trees_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                               fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done);

#ifdef __cplusplus
}
#endif

#endif /* FM_TREES_H */
