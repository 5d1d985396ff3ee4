/*
 * frugalml runtime: tree ensembles (boosted trees or forests) in compact
 * tables, float32 and fixed point, with lazy or eager feature reads.
 *
 * Layout: every tree is a full binary tree (each internal node has two
 * children; trees are padded when built, see below). Tree t owns the
 * internal node slots node_end[t-1] .. node_end[t]-1 (node_end[-1] = 0),
 * I_t of them, and the leaves node_end[t-1] + t .. node_end[t] + t (I_t + 1
 * of them). Inside a tree, local index i < I_t is an internal node and
 * i >= I_t the leaf i - I_t. The walk starts at i = 0 (the root; a tree
 * with I_t == 0 is a single leaf) and moves to
 *     left(i) + (x[feature[i]] > threshold[i])
 * where the right child is always left + 1:
 *   - child == NULL (implicit layout): every tree is complete, I_t = 2^d - 1,
 *     left(i) = 2i + 1 (heap order): no child table at all;
 *   - child != NULL: left(i) = child[i], a local index > i.
 * Tables are derived from the model IR (pyruntime/trees/ensemble.py,
 * compact_tables): a leaf that has to become an internal node (a shallow
 * leaf of a padded complete tree, or a leaf whose sibling is internal) is a
 * dummy node that repeats its parent's feature (already read on that path:
 * no new read) and has two copies of the leaf below it.
 * Tree t adds its leaf to output tree_output[t].
 *
 * Scoring (float32): scores[o] = base_score[o]; then for t in tree order:
 * scores[tree_output[t]] = scores[tree_output[t]] + leaf_t. Binary and
 * regression models (n_outputs == 1): label 1 iff scores[0] >
 * decision_threshold, res->score = scores[0]. n_outputs > 1: label = the
 * first index of the largest score, res->score = that score.
 *
 * Fixed point (q15): thresholds are biased 16-bit keys U = T16 + 32768
 * (uint16) and the walk goes right iff fm_ukey16(bits of x) > U, i.e.
 * fm_key16(x) > T16 (integer ops only; the IR's int32 key is
 * T16 * 65536 + 65535, so the decision equals fm_key_bits(x) > key). The
 * bias makes the decision one unsigned compare (on Arm a cmp whose carry
 * is shifted into the heap index). Leaf
 * values are int16 in units of 2^-shift; scores are int32, start at base_q
 * and saturate at INT32_MIN/INT32_MAX after every addition. Label as above
 * with decision_threshold_q; res->score_q holds the label's score (res->score
 * stays 0) and res->cost_q the summed uint16 cost units (res->cost stays 0).
 *
 * Table bytes: q15 4 per internal node (+4 with a child table) + 2 per leaf
 * + 6 per tree; float32 6 (+4) per internal node + 4 per leaf + 6 per tree
 * (with shared_splits, internal nodes counted once per run; with the split
 * dictionary 2 per internal node + 6 per distinct split instead of 6).
 *
 * `depth` (0 or d): every tree complete of depth d in the implicit layout
 * (node_end[t] = (t + 1) * (2^d - 1)); the compiler pads shallower trees to
 * one depth when that costs at most 1/8 more bytes, and the eager walk then
 * runs a depth-specialized loop (d <= 4) with no per-node bound test.
 * `exact_costs` (float32): see "Eager walks" below.
 *
 * `run` (0 or 1: none; R = n_outputs >= 2): the trees come in runs of R
 * consecutive trees with equal splits, one per output in order (trees
 * kR .. kR+R-1 have the same internal node count, features, thresholds and
 * children, and tree kR+j adds to output j; n_trees is a multiple of R), as a
 * K-class model on shared trees writes them (--class-trees shared: one run
 * per iteration). Every walk then walks the first tree of a run and adds the
 * leaf at the same place of each of its R trees to output j: the scores,
 * reads and costs of R walks for the price of one; a slice that starts or ends
 * inside a run walks the run once and adds the leaves of its trees in the
 * slice. fm_trees_check verifies the runs.
 * `shared_splits` (0 or 1, only with run = R >= 2): 1 stores each run's
 * splits once: feature, threshold and child hold the first tree of each run
 * only, n_nodes / R entries, run k's at the sum of the internal node counts
 * of the first trees of runs 0 .. k-1 (its other trees' node slots in
 * node_end count as before: the leaves keep their places). 0: every tree
 * holds its own copy (tables written before shared_splits existed; positional
 * initializers without the field stay valid). A K-class model on shared
 * trees then spends 6 (q15 4) bytes per split instead of K times that.
 *
 * Split dictionary (float32 only: `split` != NULL): feature and threshold
 * are NULL and each internal node stores one uint16 code in `split` (the
 * entries feature/threshold would have, by the same count rules, shared_splits
 * and runs included) indexing n_splits distinct (feature, threshold) pairs:
 * node i splits on split_feature[split[i]] at split_threshold[split[i]]
 * (the same float32 compare x > threshold: bit-exact with the per-node
 * arrays). A histogram booster's thresholds repeat (at most 255 bins a
 * feature), so 2 bytes a node + 6 a distinct pair replace 6 a node. NULL/0
 * (the fields after shared_splits left out of a positional initializer):
 * the per-node arrays.
 *
 * Reads. Lazy (fm_trees_accumulate): through the memo (fm_memo.h), at most
 * once per prediction, only features the walk branches on, with n_read/cost
 * accounting in first-read order. Whole eager predictions (*_predict_vec,
 * *_predict_batch, the cascades' eager predictions) take the marked walk of
 * "Eager walks" below when fm_trees*_eager_ok, else (float32 costs that are
 * not order-exact, more than FM_VEC_MAX_FEATURES features) the memo
 * walk with the vector's values. *_accumulate_vec (slices sharing a memo
 * with other models, e.g. gated parts) always takes the memo walk: the
 * values come straight from the vector and the memo stamps each feature on
 * its first use (n_read, cost and the finiteness check exact and identical
 * to the lazy path; no callback, no copy).
 * A prediction may be split into slices of trees that share memo, scores and
 * res (cascades, early exits):
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
    uint32_t n_outputs;          /* 1 for binary / regression */
    uint32_t n_trees;
    uint32_t n_nodes;            /* internal node slots of all trees; leaves: n_nodes + n_trees */
    const uint32_t *node_end;    /* [n_trees] cumulative end of each tree's internal nodes */
    const uint16_t *feature;     /* [n_nodes] */
    const float *threshold;      /* [n_nodes] go right iff x > threshold */
    const uint32_t *child;       /* [n_nodes] local left child, or NULL (implicit layout) */
    const float *leaf;           /* [n_nodes + n_trees] leaf values (learning rate folded in) */
    const uint16_t *tree_output; /* [n_trees] output each tree adds to */
    const float *base_score;     /* [n_outputs] */
    const float *costs;          /* [n_features] or NULL (cost 1 each) */
    float decision_threshold;    /* n_outputs == 1: label 1 iff score > this */
    uint32_t depth;              /* 0, or every tree is complete of this depth (1..20) in the implicit layout */
    uint32_t exact_costs;        /* 1: the costs are order-exact (see "Eager walks"), else 0 */
    uint32_t run;                /* 0 or 1, or n_outputs: runs of trees with equal splits (see above) */
    uint32_t shared_splits;      /* 1: each run's splits stored once (run >= 2; see above), else 0 */
    const uint16_t *split;       /* split codes in place of feature/threshold (see "Split dictionary"), or NULL */
    const uint16_t *split_feature; /* [n_splits] the dictionary's features, or NULL */
    const float *split_threshold;  /* [n_splits] the dictionary's thresholds, or NULL */
    uint32_t n_splits;           /* distinct (feature, threshold) pairs, <= 65536; 0 without the dictionary */
} fm_trees;

typedef struct {
    uint32_t n_features;
    uint32_t n_outputs;
    uint32_t n_trees;
    uint32_t n_nodes;
    const uint32_t *node_end;    /* [n_trees] */
    const uint16_t *feature;     /* [n_nodes] */
    const uint16_t *threshold_q; /* [n_nodes] biased 16-bit keys: go right iff fm_ukey16(x) > threshold_q */
    const uint32_t *child;       /* [n_nodes] or NULL */
    const int16_t *leaf_q;       /* [n_nodes + n_trees] leaf value * 2^shift, rounded */
    const uint16_t *tree_output; /* [n_trees] */
    const int32_t *base_q;       /* [n_outputs] */
    const uint16_t *costs;       /* [n_features] integer cost units or NULL (1 each) */
    int32_t decision_threshold_q;
    uint32_t shift;              /* score = score_q * 2^-shift; 0..30 */
    uint32_t depth;              /* 0, or every tree is complete of this depth (1..20) in the implicit layout */
    uint32_t run;                /* 0 or 1, or n_outputs: runs of trees with equal splits (see fm_trees) */
    uint32_t shared_splits;      /* 1: each run's splits stored once (see fm_trees), else 0 */
} fm_trees_q15;

/* Load-time checks, FM_OK or FM_E_MODEL: non-NULL arrays, n_outputs >= 1,
 * node_end non-decreasing with last == n_nodes, every feature <
 * n_features, implicit trees complete (I_t + 1 a power of two), explicit
 * children forward (i < left), inside the tree and never splitting a pair
 * between internal nodes and leaves (left != I_t - 1), tree_output <
 * n_outputs, finite thresholds/leaves/base scores, finite costs >= 0
 * (float32), shift <= 30 (q15), run 0, 1 or n_outputs >= 2 dividing n_trees
 * with equal splits in each run (equal node counts with shared_splits), tree j
 * of a run on output j, shared_splits 0, or 1 with run >= 2. float32 split
 * dictionary: feature and threshold NULL iff split non-NULL, split codes <
 * n_splits <= 65536, split_feature < n_features, split_threshold finite, runs'
 * copies with equal codes; without it split_feature, split_threshold NULL and
 * n_splits 0. */
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

/* Eager: the same as fm_trees_accumulate with feature values x[j] (x has
 * n_features entries). q15: memo->keys must be set (fm_memo_set_keys). */
int fm_trees_accumulate_vec(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const float *x,
                            fm_memo *memo, float *scores, fm_result *res);
int fm_trees_q15_accumulate_vec(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree, const float *x,
                                fm_memo *memo, int32_t *scores, fm_result *res);

/* One full prediction: memo start, begin, every tree, finish.
 * scores: caller scratch of n_outputs entries. */
int fm_trees_predict(const fm_trees *m, const fm_reader *r, fm_memo *memo, float *scores, fm_result *res);
int fm_trees_q15_predict(const fm_trees_q15 *m, const fm_reader *r, fm_memo *memo, int32_t *scores,
                         fm_result *res);

/* Eager batch over a row-major X[rows][cols] (cols must equal n_features):
 * out[i] for every row; stops at the first failing row and returns its
 * error, with *n_done (may be NULL) set to the rows completed. q15: eager
 * when memo->keys is set, else through the vector reader (same results). */
int fm_trees_predict_batch(const fm_trees *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                           float *scores, fm_result *out, uint32_t *n_done);
int fm_trees_q15_predict_batch(const fm_trees_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                               fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done);

/* Caller scratch of fm_trees*_predict and *_predict_batch in one buffer (fm_memo.h): the memo of
 * n_features (with the key cache in q15: the eager walk) and n_outputs scores. scratch_size is 0 for
 * NULL; scratch_init fills *memo and *scores. */
size_t fm_trees_scratch_size(const fm_trees *m);
size_t fm_trees_q15_scratch_size(const fm_trees_q15 *m);
int fm_trees_scratch_init(const fm_trees *m, void *buf, size_t size, fm_memo *memo, float **scores);
int fm_trees_q15_scratch_init(const fm_trees_q15 *m, void *buf, size_t size, fm_memo *memo, int32_t **scores);

/* Eager prediction from x[n] (n == n_features) with stack scratch:
 * n_features <= FM_VEC_MAX_FEATURES, n_outputs <=
 * FM_VEC_MAX_OUTPUTS (FM_E_ARG beyond). FM_PREDICT_VEC. */
int fm_trees_predict_vec(const fm_trees *m, const float *x, uint32_t n, fm_result *out);
int fm_trees_q15_predict_vec(const fm_trees_q15 *m, const float *x, uint32_t n, fm_result *out);

/* ---- Eager walks: whole predictions from a vector at hand ----------------
 * The building blocks of *_predict_vec, *_predict_batch and the cascades'
 * eager predictions: no memo, no callback and no "already read?" test per
 * node. The walk marks every feature it branches on in a per-prediction
 * byte set and reads x (float32) or the 16-bit keys of x (q15, converted
 * once per prediction) directly; a non-finite value simply branches. The
 * finish step then fails with FM_E_VALUE when a marked feature is not
 * finite, and sets n_read and cost from the marked set, summed in feature
 * index order. That equals the first-read order of the lazy path when the
 * costs are order-exact: every cost is k_j * 2^e for one power of two 2^e
 * with integers k_j >= 0 and sum_j k_j < 2^24 (then every partial sum is
 * exact in float32). fm_trees.exact_costs says so (NULL costs always are;
 * fm_trees_check verifies the flag); q15 cost units are integers summed
 * with saturation, which is order-free. fm_trees_eager_ok(m) is 0 for
 * tables whose costs are not order-exact or with more than
 * FM_VEC_MAX_FEATURES features: use the memo path then.
 *
 *   fm_trees_eager e;
 *   fm_trees_eager_start(&m, x, &e, scores, &res);       zero res, marks; base scores
 *   fm_trees_eager_walk(&m, 0, 10, x, &e, scores);       trees 0..9
 *   ... decide whether to continue (scores only) ...
 *   fm_trees_eager_walk(&m, 10, m.n_trees, x, &e, scores);
 *   fm_trees_eager_finish(&m, x, &e, scores, &res);      check, n_read, cost, label
 *
 * Tables with `depth` != 0 (every tree complete of that depth) get a
 * depth-specialized walk. The q15 walk adds leaves without saturation when
 * no sum can leave int32 (|score| + trees * 32768 <= INT32_MAX), else with.
 */
typedef struct {
    uint32_t mark[(FM_VEC_MAX_FEATURES + 3u) / 4u]; /* one byte per feature: 1 = branched on */
} fm_trees_eager;

typedef struct {
    uint32_t mark[(FM_VEC_MAX_FEATURES + 3u) / 4u];
    uint16_t keys[FM_VEC_MAX_FEATURES]; /* fm_ukey16(x[j]), minus 1 (mod 2^16) with Thumb-2 / Arm state (fm_trees.c) */
    uint32_t nonfinite;                      /* some x[j] is NaN or infinite */
} fm_trees_q15_eager;

int fm_trees_eager_ok(const fm_trees *m);
int fm_trees_q15_eager_ok(const fm_trees_q15 *m);
/* FM_E_ARG when NULL or !*_eager_ok. */
int fm_trees_eager_start(const fm_trees *m, const float *x, fm_trees_eager *e, float *scores, fm_result *res);
int fm_trees_q15_eager_start(const fm_trees_q15 *m, const float *x, fm_trees_q15_eager *e, int32_t *scores,
                             fm_result *res);
/* Add trees first_tree .. end_tree-1 (0 <= first <= end <= n_trees). */
int fm_trees_eager_walk(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const float *x, fm_trees_eager *e,
                        float *scores);
int fm_trees_q15_eager_walk(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree, fm_trees_q15_eager *e,
                            int32_t *scores);
/* FM_E_VALUE when a marked feature is not finite; else n_read, cost (cost_q), label and score. */
int fm_trees_eager_finish(const fm_trees *m, const float *x, const fm_trees_eager *e, const float *scores,
                          fm_result *res);
int fm_trees_q15_eager_finish(const fm_trees_q15 *m, const float *x, const fm_trees_q15_eager *e,
                              const int32_t *scores, fm_result *res);
/* start, every tree, finish in one call (the same results; FM_E_ARG when NULL or !*_eager_ok). */
int fm_trees_q15_eager_predict(const fm_trees_q15 *m, const float *x, fm_trees_q15_eager *e, int32_t *scores,
                               fm_result *res);

#ifdef __cplusplus
}
#endif

#endif /* FM_TREES_H */
