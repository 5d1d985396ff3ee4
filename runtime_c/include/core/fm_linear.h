/*
 * frugalml runtime: sparse linear scorers, float32 and fixed point
 * (the feature memo they read through is in fm_memo.h).
 *
 * Linear scorer (float32)
 * -----------------------
 *   acc = bias; for k in 0..nnz-1: acc = acc + (weight[k] * x[feature[k]])
 * each product rounded to float32, in stored order (compile with
 * -ffp-contract=off: no FMA). Binary label: 1 iff acc > decision_threshold.
 * Duplicate feature indices are allowed (the memo reads them once).
 *
 * Linear scorer (fixed point, integer-only)
 * -----------------------------------------
 *   x_q  = fm_float_to_fixed(bits(x), in_shift): trunc(x * 2^in_shift)
 *          computed from the IEEE-754 bits with integer ops only, then
 *          saturated to [-INT32_MAX, INT32_MAX];
 *   p    = (int64)weight_q[k] * x_q, then divided by 2^sh truncating
 *          toward zero (sign-magnitude shift), i.e. in units of 2^-w_shift,
 *          where sh = in_shift, or term_shift[k] when the table has one: a
 *          term whose weight is far below the largest keeps its 16 bits as
 *          weight * 2^(w_shift + e) with sh = in_shift + e (features of very
 *          different scales: a weight of 0.0015 beside 6.6 would otherwise
 *          keep 3 bits);
 *   acc  = bias_q; acc = sat32(acc + p) after every term (saturating int32);
 *   label = acc > decision_threshold_q; out->score_q = acc.
 * Real-valued score = acc * 2^-w_shift. Shifts are in 0..30.
 */
#ifndef FM_LINEAR_H
#define FM_LINEAR_H

#include "frugalml.h"
#include "fm_memo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t n_features;
    uint32_t nnz;
    const int32_t *feature;   /* [nnz] feature index of each weight */
    const float *weight;      /* [nnz] */
    float bias;
    float decision_threshold; /* label 1 iff score > decision_threshold */
    const float *costs;       /* [n_features] or NULL (cost 1 each) */
} fm_linear;

typedef struct {
    uint32_t n_features;
    uint32_t nnz;
    const int32_t *feature;       /* [nnz] */
    const int16_t *weight_q;      /* [nnz] weight * 2^w_shift, rounded */
    int32_t bias_q;               /* bias * 2^w_shift */
    int32_t decision_threshold_q; /* label 1 iff acc > decision_threshold_q */
    uint32_t in_shift;            /* input scale: x_q = trunc(x * 2^in_shift) */
    uint32_t w_shift;             /* score = acc * 2^-w_shift */
    const uint16_t *costs;        /* [n_features] integer cost units or NULL (1 each) */
    const uint8_t *term_shift;    /* [nnz] product shift of each term, in_shift .. FM_MAX_TERM_SHIFT, or NULL
                                   * (every term in_shift) */
} fm_linear_q15;

/* Largest term_shift: a product |weight_q * x_q| < 2^46 shifted in 64 bits. */
#define FM_MAX_TERM_SHIFT 60u

/* Load-time checks (FM_OK or FM_E_MODEL): non-NULL arrays, every feature
 * index < n_features, finite weights/bias/threshold, finite costs >= 0
 * (float32), shifts in 0..30 and term shifts in in_shift..FM_MAX_TERM_SHIFT (q15). */
int fm_linear_check(const fm_linear *m);
int fm_linear_q15_check(const fm_linear_q15 *m);

/* Caller scratch of fm_linear*_predict and *_predict_batch in one buffer
 * (layout in fm_memo.h): a memo of n_features, no scores, no key cache.
 * scratch_size is 0 for NULL; scratch_init fills *memo. */
size_t fm_linear_scratch_size(const fm_linear *m);
size_t fm_linear_q15_scratch_size(const fm_linear_q15 *m);
int fm_linear_scratch_init(const fm_linear *m, void *buf, size_t size, fm_memo *memo);
int fm_linear_q15_scratch_init(const fm_linear_q15 *m, void *buf, size_t size, fm_memo *memo);

/* Add the model's terms to a running score *acc (initialise it with the
 * bias, or use fm_linear_predict). Shares memo and res with other models;
 * does not start a prediction and does not set the label. */
int fm_linear_score(const fm_linear *m, const fm_reader *in, fm_memo *memo, float *acc, fm_result *out);
int fm_linear_q15_score(const fm_linear_q15 *m, const fm_reader *in, fm_memo *memo, int32_t *acc,
                        fm_result *out);

/* K-class argmax over n_classes scorers (class c's scorer is classes[c]),
 * in class order sharing the memo: each score starts at its bias, the label
 * is the class of the largest score (the first on ties) and out->score /
 * out->score_q that score. Like *_score it adds reads to a running
 * prediction (call fm_memo_start first). q15: the scorers must share
 * in_shift and w_shift for the scores to compare (the caller's check). */
int fm_linear_argmax(const fm_linear *classes, uint32_t n_classes, const fm_reader *in, fm_memo *memo,
                     fm_result *out);
int fm_linear_q15_argmax(const fm_linear_q15 *classes, uint32_t n_classes, const fm_reader *in, fm_memo *memo,
                         fm_result *out);

/* One full prediction: start the memo, score, label. */
int fm_linear_predict(const fm_linear *m, const fm_reader *in, fm_memo *memo, fm_result *out);
int fm_linear_q15_predict(const fm_linear_q15 *m, const fm_reader *in, fm_memo *memo, fm_result *out);

/* Eager batch over a row-major X[rows][cols] (cols must equal n_features):
 * out[i] for every row; stops at the first failing row and returns its
 * error, with *n_done (may be NULL) set to the rows completed. */
int fm_linear_predict_batch(const fm_linear *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                            fm_result *out, uint32_t *n_done);
int fm_linear_q15_predict_batch(const fm_linear_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                                fm_memo *memo, fm_result *out, uint32_t *n_done);

#ifdef __cplusplus
}
#endif

#endif /* FM_LINEAR_H */
