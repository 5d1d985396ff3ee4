/*
 * frugalml runtime: the feature memo (shared by every lazy family) and
 * sparse linear scorers, float32 and fixed point.
 *
 * Feature memo
 * ------------
 * A prediction reads each feature at most once, even when several models
 * (a gate and a low-cost model, the stages of a cascade, the slices of an
 * ensemble) look at it. The caller owns the scratch: `values` and `seen`
 * arrays of length >= the model's n_features (no malloc, no globals).
 *
 *   fm_memo memo;  float v[F];  uint8_t s[F];
 *   fm_memo_init(&memo, v, s, F);           once
 *   fm_memo_start(&memo, &res);             per prediction: forget reads,
 *                                           zero res (n_read, cost, ...)
 *   ... fm_linear_score / fm_trees_accumulate ... share memo and res ...
 *
 * fm_memo_start is O(1) amortized: `seen` holds an epoch stamp and is
 * cleared only once every 255 predictions.
 *
 * Accounting: the first read of feature j adds 1 to res->n_read and, for
 * float32 models, adds costs[j] to res->cost in float32 (res->cost =
 * res->cost + costs[j]) in first-read order; fixed-point models have
 * uint16 integer costs and add them to res->cost_q (saturating uint32),
 * leaving res->cost at 0. costs == NULL means every feature costs 1. A
 * value that is NaN or infinite fails the prediction with FM_E_VALUE; a
 * failing callback with FM_E_READ.
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
 *   p    = (int64)weight_q[k] * x_q, then divided by 2^in_shift truncating
 *          toward zero (sign-magnitude shift), i.e. in units of 2^-w_shift;
 *   acc  = bias_q; acc = sat32(acc + p) after every term (saturating int32);
 *   label = acc > decision_threshold_q; res->score_q = acc.
 * Real-valued score = acc * 2^-w_shift. Shifts are in 0..30.
 */
#ifndef FM_LINEAR_H
#define FM_LINEAR_H

#include "frugalml.h"

typedef struct {
    float *values;  /* [n] cached feature values */
    uint8_t *seen;  /* [n] epoch stamp of the read, 0 = never */
    uint32_t n;     /* capacity: must be >= the model's n_features */
    uint8_t epoch;  /* current prediction's stamp (1..255) */
} fm_memo;

void fm_memo_init(fm_memo *memo, float *values, uint8_t *seen, uint32_t n);
/* Start a prediction: forget every read, zero *res (res may be NULL). */
void fm_memo_start(fm_memo *memo, fm_result *res);

/* First read of feature `index` (no accounting): FM_OK, FM_E_READ,
 * FM_E_VALUE or FM_E_ARG (index >= memo->n). */
static inline int fm_memo_fetch(fm_memo *memo, const fm_reader *r, uint32_t index, float *value)
{
    float v;
    if (index >= memo->n) {
        return FM_E_ARG;
    }
    if (r->read(r->ctx, index, &v) != 0) {
        return FM_E_READ;
    }
    if (fm_bits_nonfinite(fm_float_bits(v))) {
        return FM_E_VALUE;
    }
    memo->values[index] = v;
    memo->seen[index] = memo->epoch;
    *value = v;
    return FM_OK;
}

/* Value of feature `index`, read through r on first use with float32
 * accounting (n_read, cost). */
static inline int fm_memo_get(fm_memo *memo, const fm_reader *r, const float *costs,
                              uint32_t index, float *value, fm_result *res)
{
    int rc;
    if (index < memo->n && memo->seen[index] == memo->epoch) {
        *value = memo->values[index];
        return FM_OK;
    }
    rc = fm_memo_fetch(memo, r, index, value);
    if (rc == FM_OK) {
        res->n_read += 1u;
        res->cost = res->cost + (costs != NULL ? costs[index] : 1.0f);
    }
    return rc;
}

/* The same with integer accounting (n_read, cost_q saturating). */
static inline int fm_memo_get_q(fm_memo *memo, const fm_reader *r, const uint16_t *costs,
                                uint32_t index, float *value, fm_result *res)
{
    int rc;
    if (index < memo->n && memo->seen[index] == memo->epoch) {
        *value = memo->values[index];
        return FM_OK;
    }
    rc = fm_memo_fetch(memo, r, index, value);
    if (rc == FM_OK) {
        uint32_t c = costs != NULL ? (uint32_t)costs[index] : 1u;
        res->n_read += 1u;
        res->cost_q = (res->cost_q > 0xffffffffu - c) ? 0xffffffffu : res->cost_q + c;
    }
    return rc;
}

/* trunc(x * 2^shift) from the float's bits, saturated to +-INT32_MAX.
 * shift in 0..30; the bits must be finite. Integer operations only. */
int32_t fm_float_to_fixed(uint32_t bits, uint32_t shift);

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
} fm_linear_q15;

/* Load-time checks (FM_OK or FM_E_MODEL): non-NULL arrays, every feature
 * index < n_features, finite weights/bias/threshold, finite costs >= 0
 * (float32), shifts in 0..30 (q15). */
int fm_linear_check(const fm_linear *m);
int fm_linear_q15_check(const fm_linear_q15 *m);

/* Add the model's terms to a running score *acc (initialise it with the
 * bias, or use fm_linear_predict). Shares memo and res with other models;
 * does not start a prediction and does not set the label. */
int fm_linear_score(const fm_linear *m, const fm_reader *r, fm_memo *memo, float *acc, fm_result *res);
int fm_linear_q15_score(const fm_linear_q15 *m, const fm_reader *r, fm_memo *memo, int32_t *acc,
                        fm_result *res);

/* One full prediction: start the memo, score, label. */
int fm_linear_predict(const fm_linear *m, const fm_reader *r, fm_memo *memo, fm_result *res);
int fm_linear_q15_predict(const fm_linear_q15 *m, const fm_reader *r, fm_memo *memo, fm_result *res);

/* Eager batch over a row-major X[rows][cols] (cols must equal n_features):
 * out[i] for every row; stops at the first failing row and returns its
 * error, with *n_done (may be NULL) set to the rows completed. */
int fm_linear_predict_batch(const fm_linear *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                            fm_result *out, uint32_t *n_done);
int fm_linear_q15_predict_batch(const fm_linear_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                                fm_memo *memo, fm_result *out, uint32_t *n_done);

#endif /* FM_LINEAR_H */
