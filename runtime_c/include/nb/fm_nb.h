/*
 * Naive Bayes with a reading order, static (top-k) or with early-stopping
 * stop points (Verachtert, Blockeel, Davis, IJCAI 2016).
 *
 * Fixed-stride tables: every position i has n_edges ascending edges
 * (edges[i*n_edges ...], padded with +inf) and n_edges + 2 table entries
 * (d[i*(n_edges+2) ...]): entry 0 is for an exact zero, entry 1 + c for a
 * value with c edges below it. A feature without its own zero bin stores in
 * entry 0 the entry its zero falls into, so the rule is the same everywhere.
 *
 * Per input: score = d0; for i = 0 .. n_used-1: x = feature order[i];
 * score += d[i*(n_edges+2) + (x == 0 ? 0 : 1 + #{edges < x})]; after
 * stop_at[s] features: answer 1 if score > stop_hi[s], 0 if < stop_lo[s].
 * At the end: label 1 iff score > threshold.
 *
 * The q15 build compares fm_key_bits() of the raw float bits with int32
 * edge keys and sums int16 entries in a saturating int32 accumulator:
 * integer operations only.
 *
 * Eager calls on the two-edge layout (mean-std bins) run one loop whose end
 * test is the next stop point (a stop point costs its two compares), test
 * finiteness once per prediction (float32: the sum of the values read, with a
 * rescan when only the sum overflowed; q15: an OR-ed flag) and, in q15, add
 * without saturation when |d0| + 32768 * n_used <= INT32_MAX. Results equal
 * the lazy path and the numpy reference bit for bit.
 *
 * Record layout (pos != NULL, what the header writer and the binding emit for
 * two-edge models): one fm_nb_pos / fm_nb_q15_pos per reading position holds
 * the feature index, both edges and the four entries, so the walk advances
 * one pointer and ends on a pointer compare; order, edges / edge_keys and d
 * are then unused (may be NULL) and n_edges must be 2. A position with fewer
 * than two edges repeats its last edge (0 when it has none) and its last
 * interval's entry, so the edges stay finite: a NaN or infinite value then
 * always lands in the first or the last interval, and the record walks test
 * finiteness only there (no per-feature check sum or flag). q15 record keys are fm_nb_key() (2 Thumb-2 ops), and
 * a q15 record model must not be able to saturate (|d0| + 32768 * n_used <=
 * INT32_MAX; fm_nb_q15_check). cum_cost[p] (optional, [n_used + 1]) is the
 * cost of the first p positions, summed in reading order (float32 prefix
 * sums equal the sequential sum bit for bit); a record model gives its costs
 * only there (costs must be NULL; no cum_cost: cost 1 per feature); the
 * fixed-stride layout uses costs (cum_cost must be NULL).
 *
 * q15 step layout (hot != NULL, pos, order, edge_keys and d NULL; what the
 * header writer and the binding emit for q15 two-edge models that cannot
 * saturate, issue 21 item 6): n_used + 1 steps of 24 bytes, step p for
 * position p, step n_used the end. A step holds the feature, above[c] =
 * key(edge[c]) + 1 for an edge key > 0, else 1, the four entries as int16
 * pairs (d12 = d[2] << 16 | d[1], d30 = d[3] << 16 | d[0]) and key: edge 0's
 * key when edge 0 < 0, else INT32_MAX. For a value whose bits b are those of
 * a positive finite float (1 <= b < 0x7f800000), b >= above[c] <=> value >
 * edge[c], so the walk compares raw bits (no key) and an exact +0 (b == 0)
 * lands below above[0]; a negative value is above edge 0 only when key says
 * so and never above edge 1 (edge 1 >= 0 here). A step "leaves" (above[1] ==
 * 0; above[0] then holds edge 0's key, key edge 1's) at a position that a
 * stop point precedes, at the end, and where both edges are < 0: the walk
 * then runs the stop test (or ends) and reads that position with the keys.
 * A leaving step, or a negative, infinite or NaN value, is the only exit of
 * the fast loop (one unsigned compare on the last-interval path). Stop
 * points add no step bytes. Thumb-2 (FM_NB_HOT_RUN): 8 instructions for a
 * middle interval (ldm of the step, the value, two compares and branches, an
 * add of the shifted upper half, the loop branch), 9 for the last, 10 for the
 * first and for +0.
 *
 * API: fm_nb_<verb> (float32) and fm_nb_q15_<verb>.
 */
#ifndef FM_NB_H
#define FM_NB_H

#include "frugalml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One reading position of the two-edge layout (see above). */
typedef struct {
    uint32_t feature;             /* index into the input vector */
    float edge[2];                /* ascending, finite */
    float d[4];                   /* exact zero, <= edge[0], (edge[0], edge[1]], > edge[1] */
} fm_nb_pos;

typedef struct {
    uint32_t feature;
    int32_t edge[2];              /* fm_nb_key() of the float32 edges */
    int16_t d[4];                 /* round(d * 2^shift), same slots as fm_nb_pos */
} fm_nb_q15_pos;

typedef struct {
    uint32_t feature;
    uint32_t above[2];            /* b >= above[c] <=> value > edge[c] (positive finite bits b); above[1] 0: leave */
    uint32_t d12;                 /* d[2] << 16 | d[1] (int16 halves) */
    uint32_t d30;                 /* d[3] << 16 | d[0] */
    int32_t key;                  /* leaving: edge 1's key; else edge 0's key if edge 0 < 0, else INT32_MAX */
} fm_nb_q15_hot;

/* Order-preserving map of a float32's bits to int32 used by the q15 records:
 * for finite a, b other than zeros, a < b <=> key(a) < key(b); +0 maps to 0,
 * -0 to -1 (zeros take their own slot before any compare). NaN and infinities
 * map beyond every finite key: >= 0x7f800000 or < -0x7f800000. */
static inline int32_t fm_nb_key(uint32_t bits)
{
    return (int32_t)(bits ^ (((uint32_t)0 - (bits >> 31)) >> 1));
}

typedef struct {
    uint32_t n_features;          /* length of an input vector */
    uint32_t n_used;              /* features in the reading order (budget k) */
    uint32_t n_edges;             /* edges per position (stride of edges) */
    const uint32_t *order;        /* [n_used] feature index per position */
    const float *edges;           /* [n_used * n_edges] ascending, +inf padded */
    const float *d;               /* [n_used * (n_edges + 2)] l(x|1) - l(x|0) */
    float d0;                     /* l(1) - l(0) */
    float threshold;              /* label 1 iff final score > threshold */
    uint32_t n_stops;
    const uint32_t *stop_at;      /* [n_stops] strictly increasing, 1 .. n_used-1 */
    const float *stop_hi;         /* [n_stops] answer 1 if score > stop_hi */
    const float *stop_lo;         /* [n_stops] answer 0 if score < stop_lo */
    const float *costs;           /* [n_features] or NULL (cost 1 each) */
    const fm_nb_pos *pos;         /* [n_used] record layout, or NULL (order, edges, d) */
    const float *cum_cost;        /* [n_used + 1] prefix costs in reading order, or NULL (costs) */
} fm_nb;

typedef struct {
    uint32_t n_features;
    uint32_t n_used;
    uint32_t n_edges;
    const uint32_t *order;
    const int32_t *edge_keys;     /* fm_key_bits() of the float32 edges */
    const int16_t *d;             /* round(d * 2^shift) */
    int32_t d0;
    int32_t threshold;
    uint32_t n_stops;
    const uint32_t *stop_at;
    const int32_t *stop_hi;
    const int32_t *stop_lo;
    const uint16_t *costs;        /* [n_features] integer cost units or NULL (1 each) */
    const fm_nb_q15_pos *pos;     /* [n_used] record layout, or NULL (order, edge_keys, d) */
    const uint32_t *cum_cost;     /* [n_used + 1] prefix costs in reading order, or NULL (costs) */
    const fm_nb_q15_hot *hot;     /* [n_used + 1] step layout (pos NULL), or NULL */
} fm_nb_q15;

/* Lazy prediction: features come from the reader. */
int fm_nb_predict(const fm_nb *m, const fm_reader *in, fm_result *out);
int fm_nb_q15_predict(const fm_nb_q15 *m, const fm_reader *in, fm_result *out);

/* Eager prediction over a float vector of length n (must equal n_features). */
int fm_nb_predict_vec(const fm_nb *m, const float *in, uint32_t n, fm_result *out);
int fm_nb_q15_predict_vec(const fm_nb_q15 *m, const float *in, uint32_t n, fm_result *out);

/* Batch over a row-major matrix; stops at the first failing row and returns
 * its error, with *n_done set to the rows completed. */
int fm_nb_predict_batch(const fm_nb *m, const float *in, uint32_t rows, uint32_t cols,
                            fm_result *out, uint32_t *n_done);
int fm_nb_q15_predict_batch(const fm_nb_q15 *m, const float *in, uint32_t rows, uint32_t cols,
                            fm_result *out, uint32_t *n_done);

/* Caller scratch: none (0 bytes; NB keeps its running sum in registers). The query every family has
 * (fm_memo.h). */
size_t fm_nb_scratch_size(const fm_nb *m);
size_t fm_nb_q15_scratch_size(const fm_nb_q15 *m);

/* Check tables loaded at run time: FM_OK or FM_E_MODEL (the fixed-stride
 * tables non-NULL when n_used > 0, edges too when n_edges is 0; every feature index
 * in range and read once, edges sorted and not NaN (finite in records), stops
 * increasing inside the order, entries finite, cum_cost starting at 0 and
 * non-decreasing; a q15 record model cannot saturate). */
int fm_nb_check(const fm_nb *m);
int fm_nb_q15_check(const fm_nb_q15 *m);

/*
 * K-class naive Bayes (n_classes >= 2 labels, issue 19): the same reading
 * order, fixed-stride bins and slots as fm_nb, but every slot holds
 * n_classes entries, the class log-likelihoods l(x|c) (class index fastest:
 * d[((n_edges + 2) * i + slot) * n_classes + c]), and d0[c] = l(c).
 *
 * Per input: s[c] = d0[c]; for i = 0 .. n_used-1: s[c] += entry of position
 * i's slot for class c, summed in reading order. After stop_at[t] features:
 * with the leader L (the first class of largest s) and the runner-up's score
 * R (the largest s of the other classes), answer L if s[L] - R >
 * stop_margin[t] (float32 subtraction; q15: exact). At the end: answer L.
 * The result's score (score_q) is s[L]; stage is t + 1 for a stop point, 0
 * at the end. n_classes <= FM_VEC_MAX_OUTPUTS (the class scores live on the
 * stack).
 *
 * q15 (packed lanes, FM_NBK_Q15_PACKED): every entry and prior is an int16
 * lane, the compiler's centred, scaled log-likelihoods (minus their mean over
 * the classes: rankings, margins and stops unchanged). A row of K lanes is
 * W = (K + 1) / 2 32-bit words w = hi * 65536 + lo (mod 2^32; class 2j in lo,
 * 2j + 1 in hi; an odd K's last hi lane is ignored): d[((n_edges + 2) * i +
 * slot) * W + j], d0[j]. The walk adds whole words (uint32, mod 2^32), which
 * sums both lanes exactly while no class's partial sum leaves int16; the
 * check refuses a model where one could (for some class c, |d0 lane c| plus
 * the sum over positions of the largest |lane c| of the position's slots
 * > 32767). A lane is decoded as lo = the low half sign-extended, hi = the
 * high half of w - lo sign-extended; s[c] are those int32 values.
 */
#define FM_NBK_Q15_PACKED 1

typedef struct {
    uint32_t n_features;
    uint32_t n_used;
    uint32_t n_classes;           /* 2 .. FM_VEC_MAX_OUTPUTS */
    uint32_t n_edges;
    const uint32_t *order;        /* [n_used] */
    const float *edges;           /* [n_used * n_edges] ascending, +inf padded */
    const float *d;               /* [n_used * (n_edges + 2) * n_classes] l(x|c) */
    const float *d0;              /* [n_classes] l(c) */
    uint32_t n_stops;
    const uint32_t *stop_at;      /* [n_stops] strictly increasing, 1 .. n_used-1 */
    const float *stop_margin;     /* [n_stops] answer the leader if its margin is larger */
    const float *costs;           /* [n_features] or NULL (cost 1 each) */
} fm_nbk;

typedef struct {
    uint32_t n_features;
    uint32_t n_used;
    uint32_t n_classes;
    uint32_t n_edges;
    const uint32_t *order;
    const int32_t *edge_keys;     /* fm_key_bits() of the float32 edges */
    const uint32_t *d;            /* [n_used * (n_edges + 2) * W] packed lane pairs, W = (n_classes + 1) / 2 */
    const uint32_t *d0;           /* [W] packed priors */
    uint32_t n_stops;
    const uint32_t *stop_at;
    const int32_t *stop_margin;
    const uint16_t *costs;        /* [n_features] integer cost units or NULL (1 each) */
} fm_nbk_q15;

int fm_nbk_predict(const fm_nbk *m, const fm_reader *in, fm_result *out);
int fm_nbk_q15_predict(const fm_nbk_q15 *m, const fm_reader *in, fm_result *out);
int fm_nbk_predict_vec(const fm_nbk *m, const float *in, uint32_t n, fm_result *out);
int fm_nbk_q15_predict_vec(const fm_nbk_q15 *m, const float *in, uint32_t n, fm_result *out);
int fm_nbk_predict_batch(const fm_nbk *m, const float *in, uint32_t rows, uint32_t cols,
                         fm_result *out, uint32_t *n_done);
int fm_nbk_q15_predict_batch(const fm_nbk_q15 *m, const float *in, uint32_t rows, uint32_t cols,
                             fm_result *out, uint32_t *n_done);
/* FM_OK or FM_E_MODEL: 2 <= n_classes <= FM_VEC_MAX_OUTPUTS, every feature
 * index in range and read once, edges sorted and not NaN, stops increasing
 * inside the order, entries, priors and costs finite (costs >= 0), margins
 * not NaN; q15: no class lane can leave int16 (see above). */
int fm_nbk_check(const fm_nbk *m);
int fm_nbk_q15_check(const fm_nbk_q15 *m);

#ifdef __cplusplus
}
#endif

#endif /* FM_NB_H */
