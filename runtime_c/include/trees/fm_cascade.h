/*
 * frugalml runtime: cascades of tree-ensemble stages with early exits
 * (kinds "cascade" and "miser"), float32 and fixed point, lazy reads.
 *
 * A cascade is one flat tree ensemble (fm_trees / fm_trees_q15) cut into
 * n_stages slices: stage s holds trees stage_end[s-1] .. stage_end[s]-1
 * (stage_end[-1] = 0), stage_end is non-decreasing and its last entry is
 * n_trees. Scores accumulate across stages (a stage adds to the partial
 * score of the earlier ones) and every stage shares one feature memo, so
 * a feature read by stage 0 is free for stage 2.
 *
 * After stage s < n_stages - 1 the input exits when the partial score is
 * confident enough:
 *   FM_EXIT_SCORE  (n_outputs == 1): score > exit_upper[s] or
 *                                    score < exit_lower[s];
 *   FM_EXIT_MARGIN (n_outputs >= 2): best - second best score >
 *                                    exit_upper[s] (float32 subtraction;
 *                                    q15: saturating int32 subtraction).
 * The last stage always ends the prediction. The label is the usual tree
 * decision on the partial score at exit (fm_trees_finish); out->stage is
 * the exit stage, so the trees evaluated are stage_end[out->stage].
 * +inf / INT32_MAX upper and -inf / INT32_MIN lower thresholds never exit.
 * A "miser" model is a cascade of one stage.
 *
 * q15: the same with fm_trees_q15 and int32 thresholds in score units of
 * 2^-shift.
 */
#ifndef FM_CASCADE_H
#define FM_CASCADE_H

#include "frugalml.h"
#include "fm_linear.h"
#include "fm_trees.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FM_EXIT_SCORE 0u
#define FM_EXIT_MARGIN 1u

/* Stack scratch bounds of the eager fm_cascade*_predict_vec (no malloc):
 * n_features <= FM_VEC_MAX_FEATURES and n_outputs <=
 * FM_VEC_MAX_OUTPUTS. The marked walk of the trees (fm_trees.h,
 * "Eager walks") takes 1 byte per FM_VEC_MAX_FEATURES (3 in q15); the
 * memo walk it falls back to (float32 costs that are not order-exact, or more
 * features) 5 bytes per FM_VEC_MAX_FEATURES (7 in q15). Override with
 * -D for larger models; the lazy and batch calls take caller scratch. */

typedef struct {
    fm_trees trees;
    uint32_t n_stages;
    const uint32_t *stage_end;  /* [n_stages] exclusive end tree of each stage */
    const float *exit_upper;    /* [n_stages] */
    const float *exit_lower;    /* [n_stages] (ignored by FM_EXIT_MARGIN) */
    uint32_t exit_rule;         /* FM_EXIT_SCORE or FM_EXIT_MARGIN */
} fm_cascade;

typedef struct {
    fm_trees_q15 trees;
    uint32_t n_stages;
    const uint32_t *stage_end;
    const int32_t *exit_upper_q;
    const int32_t *exit_lower_q;
    uint32_t exit_rule;
} fm_cascade_q15;

/* Load-time checks (FM_OK or FM_E_MODEL): the tree tables pass
 * fm_trees_check, n_stages >= 1, stage_end non-decreasing with last ==
 * n_trees, no NaN threshold, the rule fits n_outputs. */
int fm_cascade_check(const fm_cascade *m);
int fm_cascade_q15_check(const fm_cascade_q15 *m);

/* Caller scratch of fm_cascade*_predict and *_predict_batch in one buffer
 * (layout in fm_memo.h): n_outputs scores and a memo of n_features, with
 * the key cache in q15 (the eager batch walks need it). scratch_size is 0
 * for NULL; scratch_init fills *memo and *scores (FM_E_ARG when buf is too
 * small or misaligned). */
size_t fm_cascade_scratch_size(const fm_cascade *m);
size_t fm_cascade_q15_scratch_size(const fm_cascade_q15 *m);
int fm_cascade_scratch_init(const fm_cascade *m, void *buf, size_t size, fm_memo *memo, float **scores);
int fm_cascade_q15_scratch_init(const fm_cascade_q15 *m, void *buf, size_t size, fm_memo *memo,
                                int32_t **scores);

/* One lazy prediction; memo of capacity >= n_features, scores of
 * n_outputs entries (caller scratch). */
int fm_cascade_predict(const fm_cascade *m, const fm_reader *in, fm_memo *memo, float *scores, fm_result *out);
int fm_cascade_q15_predict(const fm_cascade_q15 *m, const fm_reader *in, fm_memo *memo, int32_t *scores,
                           fm_result *out);

/* Eager batch over row-major X[rows][cols], cols == n_features; stops at
 * the first failing row (*n_done = rows completed, may be NULL). */
int fm_cascade_predict_batch(const fm_cascade *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                             float *scores, fm_result *out, uint32_t *n_done);
int fm_cascade_q15_predict_batch(const fm_cascade_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                                 fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done);

/* Eager prediction from x[n] (n == n_features) with stack scratch (see the
 * bounds above; FM_E_ARG when the model exceeds them). FM_PREDICT_VEC. */
int fm_cascade_predict_vec(const fm_cascade *m, const float *x, uint32_t n, fm_result *out);
int fm_cascade_q15_predict_vec(const fm_cascade_q15 *m, const float *x, uint32_t n, fm_result *out);

#ifdef __cplusplus
}
#endif

#endif /* FM_CASCADE_H */
