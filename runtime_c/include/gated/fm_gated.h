/*
 * frugalml runtime: gated low-cost / high-cost prediction (kind "gated":
 * ADAPT-LIN, ADAPT-GBRT and the L1 baseline), float32 and fixed point,
 * lazy feature reads.
 *
 * A gated model has three parts, each a sparse linear scorer (fm_linear.h),
 * K linear scorers (FM_PART_LINEAR_K: one per class) or a flat tree
 * ensemble (fm_trees.h): a gate g, a low-cost model f1 and a high-cost
 * model f0. f0 may also be FM_PART_REMOTE (it lives off-device). The gate
 * is one linear scorer or a one-output ensemble (the cheap model's
 * confidence, a binary decision) whatever the number of classes.
 *
 *   1. g is evaluated; its label is 1 iff its score > its threshold.
 *   2. The input is "hard" iff that label is 1 and gate_above ==
 *      FM_GATE_ABOVE_F0, or the label is 0 and gate_above == FM_GATE_ABOVE_F1.
 *   3. Easy: f1 answers (out->stage = 0). Hard: f0 answers (out->stage = 1),
 *      or, when f0 is remote, out->label = FM_LABEL_DEFER with the gate's
 *      score in out->score (score_q) and out->stage = 1.
 *
 * All parts share one feature memo: a feature read by g and f1 is read and
 * paid for once. n_read/cost count the distinct features read on the device
 * (for a deferred input: the gate's). Labels are the answering part's: a
 * linear part says 1 iff score > threshold; a K-linear part scores class
 * 0, 1, .., K-1 in turn (each exactly as fm_linear_score from its own bias)
 * and says the class of the largest score (the first on ties), out->score
 * that score; trees as fm_trees_finish.
 *
 * Margin gate (gate.type == FM_PART_MARGIN, K classes): the gate is f1's
 * own confidence instead of a part of its own. f1 must be FM_PART_LINEAR_K
 * and gate_above FM_GATE_ABOVE_F1; of the gate only its threshold is used
 * (gate.linear.decision_threshold, q15 decision_threshold_q; every other
 * member of gate.linear and gate.trees is ignored and may be zero / NULL).
 *
 *   1. f1 is scored first, as a K-linear part above: label = the class of
 *      the first largest score `best`, out->score (score_q) = best.
 *   2. margin = best - second, second the largest score of the other
 *      classes (a tie at the top: margin 0). float32: the float32
 *      subtraction best - second (as np.float32(best) - np.float32(second));
 *      q15: (int64_t)best - (int64_t)second of the int32 accumulators.
 *   3. Easy iff margin > the threshold (float32 compare; q15 in int64): a
 *      margin equal to the threshold (or NaN) is hard.
 *   4. Easy: f1's answer stands (out->stage = 0; f1 is not evaluated
 *      again). Hard: out->stage = 1 and f0 answers through the same memo
 *      (f1's reads paid once), or, when f0 is remote, out->label =
 *      FM_LABEL_DEFER with the margin in out->score (q15: out->score_q =
 *      the margin saturated to INT32_MAX); n_read/cost then count f1's
 *      reads.
 *
 * q15: the same with fm_linear_q15 / fm_trees_q15 parts; every part must use
 * the same integer cost units.
 */
#ifndef FM_GATED_H
#define FM_GATED_H

#include "frugalml.h"
#include "fm_linear.h"
#include "fm_trees.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FM_PART_LINEAR 0u
#define FM_PART_TREES 1u
#define FM_PART_REMOTE 2u
#define FM_PART_LINEAR_K 3u /* f1 or f0: n_classes linear scorers, argmax */
#define FM_PART_MARGIN 4u   /* gate only: f1's own confidence; f1 must be FM_PART_LINEAR_K */

#define FM_GATE_ABOVE_F0 0u /* gate score > threshold sends the input to f0 */
#define FM_GATE_ABOVE_F1 1u /* gate score > threshold lets f1 answer */

/* One part: `type` says which members are used; the others are ignored. */
typedef struct {
    uint32_t type;  /* FM_PART_LINEAR, _TREES, _LINEAR_K (not the gate), _REMOTE (f0 only) or _MARGIN (gate only) */
    fm_linear linear;
    fm_trees trees;
    uint32_t n_classes;       /* FM_PART_LINEAR_K: 2 .. FM_VEC_MAX_OUTPUTS scorers */
    const fm_linear *classes; /* FM_PART_LINEAR_K: [n_classes], the scorer of each class */
} fm_gated_part;

typedef struct {
    uint32_t type;
    fm_linear_q15 linear;
    fm_trees_q15 trees;
    uint32_t n_classes;
    const fm_linear_q15 *classes; /* every scorer with the same in_shift and w_shift */
} fm_gated_part_q15;

typedef struct {
    uint32_t n_features;
    uint32_t gate_above;  /* FM_GATE_ABOVE_F0 or FM_GATE_ABOVE_F1 */
    fm_gated_part gate;
    fm_gated_part f1;
    fm_gated_part f0;
} fm_gated;

typedef struct {
    uint32_t n_features;
    uint32_t gate_above;
    fm_gated_part_q15 gate;
    fm_gated_part_q15 f1;
    fm_gated_part_q15 f0;
} fm_gated_q15;

/* Load-time checks (FM_OK or FM_E_MODEL): each used part passes its own
 * check and has n_features == the model's, the gate is linear or trees with
 * one output or a margin gate, f1 is linear, K-linear or trees, f0 also
 * remote, a valid gate_above; a K-linear part has 2 .. FM_VEC_MAX_OUTPUTS
 * scorers (q15: of one in_shift and w_shift); a margin gate has a K-linear
 * f1, gate_above == FM_GATE_ABOVE_F1 and (float32) a finite threshold (q15:
 * any). */
int fm_gated_check(const fm_gated *m);
int fm_gated_q15_check(const fm_gated_q15 *m);

/* Outputs a tree part needs in scores (>= 1; a margin gate needs 1). */
uint32_t fm_gated_max_outputs(const fm_gated *m);
uint32_t fm_gated_q15_max_outputs(const fm_gated_q15 *m);

/* Caller scratch of fm_gated*_predict and *_predict_batch in one buffer
 * (layout in fm_memo.h): fm_gated*_max_outputs scores and a memo of
 * n_features, with the key cache in q15 (eager tree parts). scratch_size
 * is 0 for NULL; scratch_init fills *memo and *scores (FM_E_ARG when buf
 * is too small or misaligned). */
size_t fm_gated_scratch_size(const fm_gated *m);
size_t fm_gated_q15_scratch_size(const fm_gated_q15 *m);
int fm_gated_scratch_init(const fm_gated *m, void *buf, size_t size, fm_memo *memo, float **scores);
int fm_gated_q15_scratch_init(const fm_gated_q15 *m, void *buf, size_t size, fm_memo *memo, int32_t **scores);

/* One lazy prediction; memo of capacity >= n_features, scores of
 * fm_gated*_max_outputs entries (caller scratch). */
int fm_gated_predict(const fm_gated *m, const fm_reader *in, fm_memo *memo, float *scores, fm_result *out);
int fm_gated_q15_predict(const fm_gated_q15 *m, const fm_reader *in, fm_memo *memo, int32_t *scores,
                         fm_result *out);

/* Eager batch over row-major X[rows][cols], cols == n_features; stops at
 * the first failing row (*n_done = rows completed, may be NULL). */
int fm_gated_predict_batch(const fm_gated *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                           float *scores, fm_result *out, uint32_t *n_done);
int fm_gated_q15_predict_batch(const fm_gated_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                               fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done);

/* Eager prediction from x[n] with stack scratch (FM_E_ARG beyond the
 * bounds above). FM_PREDICT_VEC. */
int fm_gated_predict_vec(const fm_gated *m, const float *x, uint32_t n, fm_result *out);
int fm_gated_q15_predict_vec(const fm_gated_q15 *m, const float *x, uint32_t n, fm_result *out);

#ifdef __cplusplus
}
#endif

#endif /* FM_GATED_H */
