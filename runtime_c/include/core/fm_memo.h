/*
 * frugalml runtime: the feature memo shared by every family that reads
 * features lazily, and the float-to-fixed conversion of the q15 builds.
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
 */
#ifndef FM_MEMO_H
#define FM_MEMO_H

#include "frugalml.h"
#include "fm_fixed.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float *values;  /* [n] cached feature values */
    uint8_t *seen;  /* [n] epoch stamp of the read, 0 = never */
    uint32_t n;     /* capacity: must be >= the model's n_features */
    uint8_t epoch;  /* current prediction's stamp (1..255) */
    int16_t *keys;  /* [n] or NULL: fm_key16 of every cached value (q15 eager tree walks) */
} fm_memo;

void fm_memo_init(fm_memo *memo, float *values, uint8_t *seen, uint32_t n);
/* Load-time check of float32 feature costs: NULL, or n values each finite and >= 0 (-0.0 counts as 0). */
int fm_costs_ok(const float *costs, uint32_t n);
/* Optional key cache of n int16 (fm_memo_init leaves it NULL): every read
 * then also stores keys[index] = fm_key16(value); the eager q15 tree walks
 * (fm_trees_q15_accumulate_vec) need it. */
void fm_memo_set_keys(fm_memo *memo, int16_t *keys);
/* Start a prediction: forget every read, zero *res (res may be NULL). */
void fm_memo_start(fm_memo *memo, fm_result *res);

/* Every field of the fm_result *res zero (what fm_memo_start does to res; the runtime's eager walks too). */
#define FM_RESULT_ZERO(res)                                                                                   \
    do {                                                                                                      \
        (res)->label = 0;                                                                                     \
        (res)->score = 0.0f;                                                                                  \
        (res)->score_q = 0;                                                                                   \
        (res)->n_read = 0u;                                                                                   \
        (res)->cost = 0.0f;                                                                                   \
        (res)->stage = 0u;                                                                                    \
        (res)->cost_q = 0u;                                                                                   \
    } while (0)

/* Keep the finite value v of feature `index` as read by this prediction (and its key when the memo keeps
 * keys): the first use of every memo walk, lazy (fm_memo_fetch) or eager (fm_trees.c). */
#define FM_MEMO_STORE(memo, index, v)                                                                         \
    do {                                                                                                      \
        (memo)->values[index] = (v);                                                                          \
        (memo)->seen[index] = (memo)->epoch;                                                                  \
        if ((memo)->keys != NULL) {                                                                           \
            (memo)->keys[index] = (int16_t)fm_key16(fm_float_bits(v));                                        \
        }                                                                                                     \
    } while (0)

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
    FM_MEMO_STORE(memo, index, v);
    *value = v;
    return FM_OK;
}

/* FM_MEMO_GET(name, cost_t, ACCOUNT): the value of feature `index`, read through r on first use, ACCOUNT (a
 * statement over res, costs and index) counting that first read. The two accountings follow. */
#define FM_MEMO_GET(name, cost_t, ACCOUNT)                                                                   \
    static inline int name(fm_memo *memo, const fm_reader *r, const cost_t *costs, uint32_t index, float *value, \
                           fm_result *res)                                                                   \
    {                                                                                                         \
        int rc;                                                                                               \
        if (index < memo->n && memo->seen[index] == memo->epoch) {                                            \
            *value = memo->values[index];                                                                     \
            return FM_OK;                                                                                     \
        }                                                                                                     \
        rc = fm_memo_fetch(memo, r, index, value);                                                            \
        if (rc == FM_OK) {                                                                                    \
            ACCOUNT                                                                                           \
        }                                                                                                     \
        return rc;                                                                                            \
    }

/* fm_memo_get: float32 accounting (n_read, cost). */
FM_MEMO_GET(fm_memo_get, float,
            res->n_read += 1u;
            res->cost = res->cost + (costs != NULL ? costs[index] : 1.0f);)

/* fm_memo_get_q: integer accounting (n_read, cost_q saturating). */
FM_MEMO_GET(fm_memo_get_q, uint16_t,
            uint32_t c = costs != NULL ? (uint32_t)costs[index] : 1u;
            res->n_read += 1u;
            res->cost_q = fm_cost_add_sat(res->cost_q, c);)

/* Caller scratch in one buffer
 * -----------------------------
 * Every reader-based or batch predict of a family takes its working memory
 * from the caller: a memo (values, seen, optionally keys) and, for the
 * families that score several outputs, a scores array. The family's
 * fm_<family>[_q15]_scratch_size(m) gives the bytes of one buffer that
 * holds all of it, and fm_<family>[_q15]_scratch_init(m, buf, size, ...)
 * splits it. The layout (F = n_features, S = score entries), in this
 * order without gaps (each part is aligned for its type when buf is):
 *
 *   scores  S * 4 bytes   float (float32) or int32_t (q15) scores
 *   values  F * 4 bytes   float: the memo's cached feature values
 *   keys    F * 2 bytes   int16_t fm_key16 cache (q15 tree families only)
 *   seen    F bytes       uint8_t epoch stamps
 *   padding to a multiple of 4
 *
 * buf must be 4-byte aligned (e.g. a uint32_t or float array; it may be
 * NULL when the size is 0). The buffer serves one prediction at a time
 * (one per thread); the runtime keeps nothing anywhere else. */

/* Bytes of the layout above; SIZE_MAX when it does not fit in a size_t. */
size_t fm_scratch_size(uint32_t n_features, uint32_t n_scores, int with_keys);

/* Split buf (size bytes, 4-aligned) into memo (fm_memo_init'ed, with keys
 * when with_keys) and *scores (may be NULL when n_scores == 0): FM_OK, or
 * FM_E_ARG when memo is NULL, buf is NULL (with a non-zero need) or
 * misaligned, or size < fm_scratch_size. */
int fm_scratch_split(void *buf, size_t size, uint32_t n_features, uint32_t n_scores, int with_keys,
                     fm_memo *memo, void **scores);

/* trunc(x * 2^shift) from the float's bits, saturated to +-INT32_MAX.
 * shift in 0..30; the bits must be finite. Integer operations only. */
int32_t fm_float_to_fixed(uint32_t bits, uint32_t shift);

#ifdef __cplusplus
}
#endif

#endif /* FM_MEMO_H */
