#include <float.h>

#include "fm_nb.h"
#include "fm_batch.h"
#include "fm_fixed.h"
#include "fm_port.h"

/* ---------- checks of tables loaded at run time ---------- */

static int finite_f(float v)
{
    return !fm_bits_nonfinite(fm_float_bits(v));
}

/* order == NULL: the record layout (features checked by nb_check_features). */
static int nb_check_common(uint32_t n_features, uint32_t n_used, const uint32_t *order, uint32_t n_stops,
                           const uint32_t *stop_at)
{
    uint32_t i, k;
    for (i = 0; order != NULL && i < n_used; ++i) {
        if (order[i] >= n_features) {
            return FM_E_MODEL;
        }
        for (k = 0; k < i; ++k) {
            if (order[k] == order[i]) {
                return FM_E_MODEL; /* a feature is read at most once */
            }
        }
    }
    if (n_stops > 0 && stop_at == NULL) {
        return FM_E_MODEL;
    }
    for (k = 0; k < n_stops; ++k) {
        if (stop_at[k] < 1 || stop_at[k] >= n_used || (k > 0 && stop_at[k] <= stop_at[k - 1])) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

/* Feature of position p, either layout. */
static uint32_t nb_feature(const uint32_t *order, const void *pos, size_t size, uint32_t p)
{
    uint32_t j;
    if (pos == NULL) {
        return order[p];
    }
    /* a typed load of the record's first member (a uint32_t in every record type): a memcpy from a pointer of
     * unknown alignment is a call on targets without unaligned loads (Thumb-1) */
    j = *(const uint32_t *)(const void *)((const unsigned char *)pos + (size_t)p * size);
    return j;
}

/* Features of the record layout: in range, each read once. */
static int nb_check_features(uint32_t n_features, uint32_t n_used, const void *recs, size_t size)
{
    uint32_t i, k, fi, fk;
    for (i = 0; i < n_used; ++i) {
        fi = nb_feature(NULL, recs, size, i);
        if (fi >= n_features) {
            return FM_E_MODEL;
        }
        for (k = 0; k < i; ++k) {
            fk = nb_feature(NULL, recs, size, k);
            if (fk == fi) {
                return FM_E_MODEL;
            }
        }
    }
    return FM_OK;
}

/* ---------- the q15 step stream (fm_nb_q15_hot) ---------- */

/* The int16 halves of a step's packed entries, sign-extended. */
static inline int32_t nb_lo16(uint32_t v)
{
#ifdef FM_I16
    return FM_I16(v);
#else
    return (int32_t)(v & 0xffffu) - (int32_t)((v & 0x8000u) << 1);
#endif
}

static inline int32_t nb_hi16(uint32_t v)
{
    return nb_lo16(v >> 16);
}

/* Edge key 0 of a leaving step, kept in above[0] (int32 bits). */
static int32_t nb_hot_key0(const fm_nb_q15_hot *h)
{
    const uint32_t u = h->above[0];
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* The bits of a positive finite value, +0 not among them (1 .. 0x7f7fffff): its fm_nb_key is its bits. */
static inline int nb_positive_finite(uint32_t bits)
{
    return bits - 1u < 0x7f7fffffu;
}

/* The entry of key at a leaving step (above[1] == 0): edge 0's key in above[0], edge 1's in key. */
FM_ALWAYS_INLINE int32_t nb_hot_leave_entry(const fm_nb_q15_hot *h, int32_t key)
{
    return key > h->key ? nb_hi16(h->d30) : key > nb_hot_key0(h) ? nb_hi16(h->d12) : nb_lo16(h->d12);
}

/* The entry of a finite value (bits) at a step off the raw-bit path: +-0, a leaving step (keys: edge 0's in
 * above[0], edge 1's in key), or a negative value at another step (above edge 0 only when key says so). What
 * the eager walk reads where the step loop let the value out. A positive finite value leaves the loop only at
 * a leaving step: one unsigned compare takes it there, without the key. */
FM_ALWAYS_INLINE int32_t nb_hot_exit_entry(const fm_nb_q15_hot *h, uint32_t bits)
{
    int32_t key;
    if (nb_positive_finite(bits)) {
        return nb_hot_leave_entry(h, (int32_t)bits);
    }
    if ((bits << 1) == 0u) {
        return nb_lo16(h->d30);
    }
    key = fm_nb_key(bits);
    if (h->above[1] != 0u) {
        return key > h->key ? nb_hi16(h->d12) : nb_lo16(h->d12);
    }
    return nb_hot_leave_entry(h, key);
}

/* Entry of a finite value (bits) at a step, any sign (the lazy walk): the raw bits of a positive value against
 * above[] at a step that does not leave, else nb_hot_exit_entry. */
static int32_t nb_hot_entry(const fm_nb_q15_hot *h, uint32_t bits)
{
    if (h->above[1] != 0u && bits - 1u < 0x7fffffffu) {
        return bits >= h->above[1] ? nb_hi16(h->d30) : bits >= h->above[0] ? nb_hi16(h->d12) : nb_lo16(h->d12);
    }
    return nb_hot_exit_entry(h, bits);
}

static int nb_check_pos(const fm_nb *m)
{
    uint32_t i, c;
    if (m->n_edges != 2u || m->costs != NULL ||
        nb_check_features(m->n_features, m->n_used, m->pos, sizeof *m->pos) != FM_OK) {
        return FM_E_MODEL;
    }
    for (i = 0; i < m->n_used; ++i) {
        const fm_nb_pos *r = &m->pos[i];
        if (!finite_f(r->edge[0]) || !finite_f(r->edge[1]) || r->edge[1] < r->edge[0]) {
            return FM_E_MODEL;
        }
        for (c = 0; c < 4u; ++c) {
            if (!finite_f(r->d[c])) {
                return FM_E_MODEL;
            }
        }
    }
    return FM_OK;
}

/* The start of both binary checks (returns from the caller on a fault): the model, then cum_cost when
 * given: a layout that reads it (not when no_layout), 0 first, and no step i with step_bad. A macro: the
 * checks' object code stays what it was. */
#define NB_CHECK_START(m, i, no_layout, zero, step_bad)                 \
    if ((m) == NULL) {                                                 \
        return FM_E_ARG;                                               \
    }                                                                  \
    if ((m)->cum_cost != NULL) {                                       \
        if ((no_layout) || (m)->cum_cost[0] != (zero)) {               \
            return FM_E_MODEL;                                         \
        }                                                              \
        for ((i) = 0; (i) < (m)->n_used; ++(i)) {                      \
            if (step_bad) {                                            \
                return FM_E_MODEL;                                     \
            }                                                          \
        }                                                              \
    }

int fm_nb_check(const fm_nb *m)
{
    uint32_t i, n_edges, n_table;
    int rc;
    NB_CHECK_START(m, i, m->pos == NULL, 0.0f,
                   !finite_f(m->cum_cost[i + 1u]) || !(m->cum_cost[i + 1u] >= m->cum_cost[i]));
    if (m->pos != NULL) {
        rc = nb_check_common(m->n_features, m->n_used, NULL, m->n_stops, m->stop_at);
        if (rc == FM_OK) {
            rc = nb_check_pos(m);
        }
        if (rc != FM_OK) {
            return rc;
        }
        n_edges = n_table = 0; /* no stride tables */
    } else {
        if (m->n_used > 0 && (m->order == NULL || m->edges == NULL)) {
            return FM_E_MODEL; /* the walks index order and edges (NULL + 0 when n_edges == 0) */
        }
        rc = nb_check_common(m->n_features, m->n_used, m->order, m->n_stops, m->stop_at);
    if (rc != FM_OK) {
        return rc;
    }
        n_edges = m->n_used * m->n_edges;
        n_table = m->n_used * (m->n_edges + 2u);
    }
    if ((n_edges > 0 && m->edges == NULL) || (n_table > 0 && m->d == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 0; i < n_edges; ++i) {
        /* NaN never compares; +inf is the padding */
        if (m->edges[i] != m->edges[i] || (i % m->n_edges != 0 && m->edges[i] < m->edges[i - 1])) {
            return FM_E_MODEL;
        }
    }
    for (i = 0; i < n_table; ++i) {
        if (!finite_f(m->d[i])) {
            return FM_E_MODEL;
        }
    }
    if (!finite_f(m->d0) || !finite_f(m->threshold)) {
        return FM_E_MODEL;
    }
    if (m->n_stops > 0 && (m->stop_hi == NULL || m->stop_lo == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 0; i < m->n_stops; ++i) {
        if (m->stop_hi[i] != m->stop_hi[i] || m->stop_lo[i] != m->stop_lo[i]) {
            return FM_E_MODEL;
        }
    }
    if (m->costs != NULL) {
        for (i = 0; i < m->n_features; ++i) {
            if (!finite_f(m->costs[i]) || m->costs[i] < 0.0f) {
                return FM_E_MODEL;
            }
        }
    }
    return FM_OK;
}

/* Non-zero when no sum of d0 and at most n_used int16 entries can leave
 * int32: |d0| + 32768 * n_used <= INT32_MAX. Then the plain add equals the
 * saturating add of the reference. */
static int nb_q15_cannot_saturate(int32_t d0, uint32_t n_used)
{
    uint32_t mag = d0 < 0 ? (uint32_t)0 - (uint32_t)d0 : (uint32_t)d0;
    return mag <= (uint32_t)INT32_MAX && n_used <= (((uint32_t)INT32_MAX - mag) >> 15);
}

/* The step stream (fm_nb.h): features in range and read once; a step that does not leave has
 * 1 <= above[0] <= above[1] <= 0x7f800000 and key INT32_MAX or a negative finite key (then above[0] == 1);
 * a leaving step (above[1] == 0) sorted finite keys; every stop point's position and the end leave. */
static int nb_q15_check_hot(const fm_nb_q15 *m)
{
    uint32_t p, s = 0;
    const fm_nb_q15_hot *const end = &m->hot[m->n_used];
    if (m->n_edges != 2u || m->costs != NULL || m->pos != NULL || !nb_q15_cannot_saturate(m->d0, m->n_used) ||
        nb_check_features(m->n_features, m->n_used, m->hot, sizeof *m->hot) != FM_OK ||
        end->above[1] != 0u || end->feature >= m->n_features) {
        return FM_E_MODEL;
    }
    for (p = 0; p < m->n_used; ++p) {
        const fm_nb_q15_hot *const h = &m->hot[p];
        const int stop = s < m->n_stops && m->stop_at[s] == p;
        s += (uint32_t)stop;
        if (h->above[1] == 0u) {
            const int32_t k0 = nb_hot_key0(h);
            if (k0 > h->key || k0 < -0x7f800000 || h->key >= 0x7f800000) {
                return FM_E_MODEL;
            }
        } else if (stop || h->above[0] < 1u || h->above[0] > h->above[1] || h->above[1] > 0x7f800000u ||
                   (h->key != INT32_MAX && (h->key >= -1 || h->key < -0x7f800000 || h->above[0] != 1u))) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

int fm_nb_q15_check(const fm_nb_q15 *m)
{
    uint32_t i, n_edges, n_table;
    int rc;
    NB_CHECK_START(m, i, m->pos == NULL && m->hot == NULL, 0u, m->cum_cost[i + 1u] < m->cum_cost[i]);
    if (m->pos != NULL) {
        /* records: two finite sorted edge keys each (finite: inside +-0x7f7fffff / -0x7f800000) */
        if (m->n_edges != 2u || m->costs != NULL || !nb_q15_cannot_saturate(m->d0, m->n_used) ||
            nb_check_features(m->n_features, m->n_used, m->pos, sizeof *m->pos) != FM_OK) {
            return FM_E_MODEL;
        }
        for (i = 0; i < m->n_used; ++i) {
            const int32_t *e = m->pos[i].edge;
            if (e[1] < e[0] || e[0] < -0x7f800000 || e[1] >= 0x7f800000) {
                return FM_E_MODEL;
            }
        }
        rc = m->hot != NULL ? FM_E_MODEL : nb_check_common(m->n_features, m->n_used, NULL, m->n_stops, m->stop_at);
        n_edges = n_table = 0;
    } else if (m->hot != NULL) {
        rc = nb_check_common(m->n_features, m->n_used, NULL, m->n_stops, m->stop_at);
        if (rc == FM_OK) {
            rc = nb_q15_check_hot(m);
        }
        n_edges = n_table = 0;
    } else {
        if (m->n_used > 0 && (m->order == NULL || m->edge_keys == NULL)) {
            return FM_E_MODEL; /* as fm_nb_check */
        }
        rc = nb_check_common(m->n_features, m->n_used, m->order, m->n_stops, m->stop_at);
        n_edges = m->n_used * m->n_edges;
        n_table = m->n_used * (m->n_edges + 2u);
    }
    if (rc != FM_OK) {
        return rc;
    }
    if ((n_edges > 0 && m->edge_keys == NULL) || (n_table > 0 && m->d == NULL)) {
        return FM_E_MODEL;
    }
    for (i = 1; i < n_edges; ++i) {
        if (i % m->n_edges != 0 && m->edge_keys[i] < m->edge_keys[i - 1]) {
            return FM_E_MODEL;
        }
    }
    if (m->n_stops > 0 && (m->stop_hi == NULL || m->stop_lo == NULL)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---------- shared pieces ---------- */

/* Reads feature j through the reader; FM_OK or an error code. */
static int nb_read(const fm_reader *in, uint32_t j, uint32_t *bits)
{
    float v;
    if (in->read(in->ctx, j, &v) != 0) {
        return FM_E_READ;
    }
    *bits = fm_float_bits(v);
    return fm_bits_nonfinite(*bits) ? FM_E_VALUE : FM_OK;
}

/* #{c < n : e[c] < v} of edges sorted ascending (the checks refuse others): a branch-free binary search, each
 * step halves the candidates by one compare and a conditional add, so a position of many edges (quantile:32)
 * costs log2(n) + 1 compares where counting every edge cost n; up to two edges (the paper's bins) the
 * compares are written out. A NaN passes no compare (0), as in the count. */
#define NB_BELOW(name, T)                                                                                \
    static inline uint32_t name(const T *e, uint32_t n, T v)                                             \
    {                                                                                                    \
        const T *b = e;                                                                                  \
        if (n <= 2u) { /* the paper's mean-std bins: no loop */                                          \
            return n == 2u ? (uint32_t)(e[0] < v) + (uint32_t)(e[1] < v) : n == 1u ? (uint32_t)(e[0] < v) : 0u; \
        }                                                                                                \
        while (n > 1u) {                                                                                 \
            const uint32_t half = n >> 1;                                                                \
            b += b[half - 1u] < v ? half : 0u;                                                           \
            n -= half;                                                                                   \
        }                                                                                                \
        return (uint32_t)(b - e) + (uint32_t)(b[0] < v);                                                 \
    }
NB_BELOW(nb_below_f32, float)
NB_BELOW(nb_below_key, int32_t)
#undef NB_BELOW

/* The table slot of a finite value (bits) at a fixed-stride position: 0 for an exact zero, else 1 + the edges
 * below it; branch-free in the value (zeros are common in sparse data). */
static inline uint32_t nb_slot_f32(const float *e, uint32_t n_edges, uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return (1u + nb_below_f32(e, n_edges, v)) & ((uint32_t)0 - (uint32_t)((bits & 0x7fffffffu) != 0u));
}

static inline uint32_t nb_slot_q15(const int32_t *e, uint32_t n_edges, uint32_t bits)
{
    int32_t key = fm_key_bits(bits);
    return (1u + nb_below_key(e, n_edges, key)) & ((uint32_t)0 - (uint32_t)(key != 0));
}


/* ---------- the answer at a stop point or at the end ---------- */

/* Fills out after n features were read; stage s (0 = the final threshold). */
static void nb_answer(fm_result *out, int32_t label, uint32_t stage, uint32_t n)
{
    out->label = label;
    out->stage = stage;
    out->n_read = n;
    out->score_q = 0;
    out->cost_q = 0;
}

/* 1-based index of the first non-finite feature among positions [0, n), 0 if none. */
static uint32_t nb_first_nonfinite(const uint32_t *order, const float *x, uint32_t n)
{
    uint32_t p;
    for (p = 0; p < n; ++p) {
        if (fm_bits_nonfinite(fm_float_bits(x[order[p]]))) {
            return p + 1u;
        }
    }
    return 0;
}

/* ---------- float32 evaluation ---------- */

/* Stop-point test after a segment: 1 or 0 when the stop answers, -1 to read on. */
#define NB_STOP_TEST(acc, hi, lo) ((acc) > (hi) ? 1 : (acc) < (lo) ? 0 : -1)

/* At a segment's end of an eager walk, either type: at the end (s == n_stops) the label is the threshold's
 * and s 0; else stop point s answers (label >= 0) or not, and s passes it. Breaks out of the walk's loop
 * when it answers. A macro (like the walks' parameters in fm_nb_impl.h): the object code stays that of the
 * walks written out. */
#define NB_SEGMENT_END(m, acc, n_stops, hi, lo, s, label)       \
    if ((s) == (n_stops)) {                                     \
        (label) = (int32_t)((acc) > (m)->threshold);            \
        (s) = 0;                                                \
        break;                                                  \
    }                                                           \
    (label) = NB_STOP_TEST((acc), (hi)[(s)], (lo)[(s)]);        \
    ++(s);                                                      \
    if ((label) >= 0) {                                         \
        break;                                                  \
    }

/* ---------- the record layout (pos != NULL) ---------- */

/* Entry of a finite value (bits) at a record: zero, <= edge[0], (edge[0], edge[1]], > edge[1]. */
static inline float nb_pos_entry_f32(const fm_nb_pos *r, uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return (bits << 1) == 0u ? r->d[0] : v > r->edge[1] ? r->d[3] : v > r->edge[0] ? r->d[2] : r->d[1];
}

static inline int32_t nb_pos_entry_q15(const fm_nb_q15_pos *r, uint32_t bits)
{
    const int32_t key = fm_nb_key(bits);
    return (bits << 1) == 0u ? r->d[0] : key > r->edge[1] ? r->d[3] : key > r->edge[0] ? r->d[2] : r->d[1];
}


/* Table entry of position i for a finite value (bits), either layout (the lazy walks). */
static float nb_f32_entry(const fm_nb *m, uint32_t i, uint32_t bits)
{
    const uint32_t ne = m->n_edges;
    if (m->pos != NULL) {
        return nb_pos_entry_f32(&m->pos[i], bits);
    }
    return m->d[(ne + 2u) * i + nb_slot_f32(m->edges + ne * i, ne, bits)];
}

static int32_t nb_q15_entry(const fm_nb_q15 *m, uint32_t i, uint32_t bits)
{
    const uint32_t ne = m->n_edges;
    if (m->hot != NULL) {
        return nb_hot_entry(&m->hot[i], bits);
    }
    if (m->pos != NULL) {
        return nb_pos_entry_q15(&m->pos[i], bits);
    }
    return m->d[(ne + 2u) * i + nb_slot_q15(m->edge_keys + ne * i, ne, bits)];
}

/* ---------- the binary walks, float32 then q15 (fm_nb_impl.h says the parameters) ---------- */

#define NB_MODEL fm_nb
#define NB_POS fm_nb_pos
#define NB_ACC float
#define NB_TAB float
#define NB_EDGE float
#define NB_COST float
#define NB_FN(n) nb_f32_##n
#define NB_EDGES(m) ((m)->edges)
#define NB_SET_SCORE(out, acc) ((out)->score = (acc))
#define NB_SET_COST(out, c) ((out)->cost = (c))
#define NB_WALK_OUT(out, acc, n, c, s) \
    ((out)->score = (acc), (out)->score_q = 0, (out)->n_read = (n), (out)->cost = (c), (out)->stage = (s), (out)->cost_q = 0)
#define NB_REC_VALUE(v, key, x) const float v = (x), key = v
#define NB_REC_BITS(v) fm_float_bits(v)
#define NB_REC_HI_BAD(key) ((key) > FLT_MAX)
#define NB_REC_LO_BAD(key) (!((key) >= -FLT_MAX))
#define NB_VEC2_LOCALS(next0)      \
    float acc = m->d0, chk = 0.0f; \
    uint32_t i = 0, s = 0, next = (next0)
#define NB_VEC_LOCALS              \
    float acc = m->d0, chk = 0.0f; \
    uint32_t i = 0, s = 0, end
#define NB_CHK_BAD(chk, order, x, n) (fm_bits_nonfinite(fm_float_bits(chk)) && nb_first_nonfinite((order), (x), (n)) != 0u)
#define NB_VEC2_ADD(x)                                                                                    \
    do {                                                                                                  \
        const float v = (x);                                                                              \
        chk += v;                                                                                         \
        acc += (fm_float_bits(v) << 1) == 0u ? t[0] : v > ep[1] ? t[3] : v > ep[0] ? t[2] : t[1];        \
    } while (0)
#define NB_VEC_ADD(x, i)                                                                                  \
    do {                                                                                                  \
        const float v = (x);                                                                              \
        chk += v;                                                                                         \
        acc += d[stride * (i) + nb_slot_f32(e + ne * (i), ne, fm_float_bits(v))];                         \
    } while (0)
#define NB_VEC_STOP(acc, hi, lo, label)                     \
    if (((label) = NB_STOP_TEST((acc), (hi), (lo))) >= 0) { \
        break;                                              \
    }
#define NB_RUN_FEATURE(m, i) nb_feature((m)->order, (m)->pos, sizeof *(m)->pos, (i))
#define NB_RUN_ADD(a, e) ((a) + (e))
#include "fm_nb_impl.h"

#define NB_MODEL fm_nb_q15
#define NB_POS fm_nb_q15_pos
#define NB_ACC int32_t
#define NB_TAB int16_t
#define NB_EDGE int32_t
#define NB_COST uint32_t
#define NB_FN(n) nb_q15_##n
#define NB_EDGES(m) ((m)->edge_keys)
#define NB_SET_SCORE(out, acc) ((out)->score = 0.0f, (out)->score_q = (acc))
#define NB_SET_COST(out, c) ((out)->cost = 0.0f, (out)->cost_q = (c))
/* (the step walk's answer too) */
#define NB_Q15_WALK_OUT(out, acc, n, c, s) \
    ((out)->score = 0.0f, (out)->score_q = (acc), (out)->n_read = (n), (out)->cost = 0.0f, (out)->cost_q = (c), (out)->stage = (s))
#define NB_WALK_OUT NB_Q15_WALK_OUT
#define NB_REC_VALUE(v, key, x) const uint32_t v = fm_float_bits(x); const int32_t key = fm_nb_key(v)
#define NB_REC_BITS(v) (v)
#define NB_REC_HI_BAD(key) ((key) >= 0x7f800000)
#define NB_REC_LO_BAD(key) ((key) < -0x7f800000)
#define NB_VEC2_LOCALS(next0) \
    int32_t acc = m->d0;      \
    uint32_t i = 0, s = 0, chk = 0, next = (next0)
#define NB_VEC_LOCALS        \
    int32_t acc = m->d0;     \
    uint32_t i = 0, s = 0, end, chk = 0
#define NB_CHK_BAD(chk, order, x, n) ((chk) != 0u)
#define NB_VEC2_ADD(x)                                                                                    \
    do {                                                                                                  \
        const uint32_t bits = fm_float_bits(x);                                                           \
        const uint32_t mag2 = bits << 1, sgn = (uint32_t)0 - (bits >> 31);                                \
        const int32_t key = (int32_t)(((mag2 >> 1) ^ sgn) - sgn); /* fm_key_bits(bits), branch-free */   \
        chk |= (uint32_t)(mag2 >= 0xff000000u);                                                           \
        acc += mag2 == 0u ? t[0] : key > ep[1] ? t[3] : key > ep[0] ? t[2] : t[1];                        \
    } while (0)
#define NB_VEC_ADD(x, i)                                                                                  \
    do {                                                                                                  \
        const uint32_t bits = fm_float_bits(x);                                                           \
        chk |= (uint32_t)fm_bits_nonfinite(bits);                                                         \
        acc = fm_add_sat32(acc, d[stride * (i) + nb_slot_q15(e + ne * (i), ne, bits)]);                   \
    } while (0)
/* two tests, not NB_STOP_TEST: GCC's code for this walk stays what it was */
#define NB_VEC_STOP(acc, hi, lo, label) \
    if ((acc) > (hi)) {                     \
        (label) = 1;                        \
        break;                              \
    }                                       \
    if ((acc) < (lo)) {                     \
        (label) = 0;                        \
        break;                              \
    }
#define NB_RUN_FEATURE(m, i) \
    ((m)->hot != NULL ? (m)->hot[(i)].feature : nb_feature((m)->order, (m)->pos, sizeof *(m)->pos, (i)))
#define NB_RUN_ADD(a, e) fm_add_sat32((a), (e))
#include "fm_nb_impl.h"

/* The q15 step loop (hot != NULL): from step r, adds each step's entry while its value's bits b are those
 * of a positive finite value or +0 (above[1] > b >= above[0]: d[2]; below above[0]: d[1], d[0] for +0; at
 * or above above[1]: d[3]) and stops at the first step whose above[1] is 0 or whose value is negative,
 * infinite or NaN. The C loop leaves r at that step (NB_HOT_PAST 0: one pointer walked, no copy kept for the
 * exit, which spent a register move a step in GCC's Thumb-1 code); FM_NB_HOT_RUN (fm_port.h) is the same
 * loop in Thumb-2, which leaves r past it (its ldm writes back; FM_NB_HOT_PAST 1), or in Thumb-1, which steps
 * back to it (FM_NB_HOT_PAST 0). */
#ifdef FM_NB_HOT_RUN
#define NB_HOT_PAST FM_NB_HOT_PAST
#else
#define NB_HOT_PAST 0u
static const fm_nb_q15_hot *nb_q15_hot_run(const fm_nb_q15_hot *r, const float *x, int32_t *acc)
{
    int32_t a = *acc;
    for (;; ++r) {
        const uint32_t b = fm_float_bits(x[r->feature]);
        if (b < r->above[1]) {
            a += b >= r->above[0] ? nb_hi16(r->d12) : b != 0u ? nb_lo16(r->d12) : nb_lo16(r->d30);
        } else if (r->above[1] != 0u && b < 0x7f800000u) {
            a += nb_hi16(r->d30);
        } else {
            break;
        }
    }
    *acc = a;
    return r;
}
#define FM_NB_HOT_RUN(r, x, acc) ((r) = nb_q15_hot_run((r), (x), &(acc)))
#endif

/* Where the step loop stands when it leaves at the step of stop point s's position (s == n_stops: the end's):
 * the walk tells a stop from the other exits with one pointer compare. */
static const fm_nb_q15_hot *nb_hot_stop(const fm_nb_q15 *m, uint32_t s)
{
    return m->hot + (s != m->n_stops ? m->stop_at[s] : m->n_used) + NB_HOT_PAST;
}

/* Eager q15 walk over the step stream: the loop leaves only at a step whose above[1] is 0 (a stop point
 * before it: the stop test; the end; a position with two negative edges) or at a negative, infinite or NaN
 * value; that position is then read by nb_hot_exit_entry, or fails, and the loop goes on from the next step.
 * The model's fields are read where used (the Thumb-2 loop's asm clobbers memory, so nothing held across it
 * is reloaded anyway, and nothing is spilled). Plain adds: a record model cannot saturate. */
static int nb_q15_hot_walk(const fm_nb_q15 *m, const float *x, fm_result *out)
{
    const fm_nb_q15_hot *r = m->hot;
    const fm_nb_q15_hot *stop = nb_hot_stop(m, 0u);
    uint32_t s = 0, n, bits;
    int32_t acc = m->d0, label;

    for (;;) {
        const fm_nb_q15_hot *h;
        FM_NB_HOT_RUN(r, x, acc);
        if (r == stop) {
            NB_SEGMENT_END(m, acc, m->n_stops, m->stop_hi, m->stop_lo, s, label);
            stop = nb_hot_stop(m, s);
        }
        h = r - NB_HOT_PAST; /* the step that left the loop */
        bits = fm_float_bits(x[h->feature]);
        if (!nb_positive_finite(bits) && fm_bits_nonfinite(bits)) {
            return FM_E_VALUE;
        }
        acc += nb_hot_exit_entry(h, bits);
        r = h + 1;
    }
    n = (uint32_t)(r - m->hot) - NB_HOT_PAST; /* the position of the step that left the loop */
    out->label = label;
    NB_Q15_WALK_OUT(out, acc, n, m->cum_cost != NULL ? m->cum_cost[n] : n, s);
    return FM_OK;
}

int fm_nb_predict(const fm_nb *m, const fm_reader *in, fm_result *out)
{
    if (m == NULL || in == NULL || in->read == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return nb_f32_run(m, in, out);
}

int fm_nb_predict_vec(const fm_nb *m, const float *in, uint32_t n, fm_result *out)
{
    if (m == NULL || in == NULL || out == NULL || n != m->n_features) {
        return FM_E_ARG;
    }
    return m->pos != NULL ? nb_f32_walk(m, in, out) : m->n_edges == 2u ? nb_f32_vec2(m, in, out) : nb_f32_vec(m, in, out);
}

size_t fm_nb_scratch_size(const fm_nb *m)
{
    (void)m;
    return 0u;
}

size_t fm_nb_q15_scratch_size(const fm_nb_q15 *m)
{
    (void)m;
    return 0u;
}

int fm_nb_predict_batch(const fm_nb *m, const float *in, uint32_t rows, uint32_t cols,
                        fm_result *out, uint32_t *n_done)
{
    uint32_t r;
    int rc = FM_OK;
    if (m == NULL || (rows > 0 && (in == NULL || out == NULL)) || cols != m->n_features) {
        return FM_E_ARG;
    }
    for (r = 0; r < rows && rc == FM_OK; ++r) {
        const float *row = in + (size_t)r * cols;
        rc = m->pos != NULL ? nb_f32_walk(m, row, out + r) : m->n_edges == 2u ? nb_f32_vec2(m, row, out + r)
                                                                             : nb_f32_vec(m, row, out + r);
    }
    if (n_done != NULL) {
        *n_done = rc == FM_OK ? rows : r - 1u;
    }
    return rc;
}

/* ---------- q15 evaluation: integer operations only ---------- */

/* The mean-std layout (two edges) of a model whose sums cannot saturate. */
static int nb_q15_fast(const fm_nb_q15 *m)
{
    return m->n_edges == 2u && nb_q15_cannot_saturate(m->d0, m->n_used);
}

int fm_nb_q15_predict(const fm_nb_q15 *m, const fm_reader *in, fm_result *out)
{
    if (m == NULL || in == NULL || in->read == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return nb_q15_run(m, in, out);
}

/* The eager walk of a q15 model's layout: the step stream, the records, or the fixed-stride tables. */
static int nb_q15_eager(const fm_nb_q15 *m, const float *x, fm_result *out, int fast)
{
    if (m->hot != NULL) {
        return nb_q15_hot_walk(m, x, out);
    }
    if (m->pos != NULL) {
        return nb_q15_walk(m, x, out);
    }
    return fast ? nb_q15_vec2(m, x, out) : nb_q15_vec(m, x, out);
}

int fm_nb_q15_predict_vec(const fm_nb_q15 *m, const float *in, uint32_t n, fm_result *out)
{
    if (m == NULL || in == NULL || out == NULL || n != m->n_features) {
        return FM_E_ARG;
    }
    return nb_q15_eager(m, in, out, m->hot == NULL && m->pos == NULL && nb_q15_fast(m));
}

int fm_nb_q15_predict_batch(const fm_nb_q15 *m, const float *in, uint32_t rows, uint32_t cols,
                            fm_result *out, uint32_t *n_done)
{
    uint32_t r;
    int rc = FM_OK, fast;
    if (m == NULL || (rows > 0 && (in == NULL || out == NULL)) || cols != m->n_features) {
        return FM_E_ARG;
    }
    fast = nb_q15_fast(m);
    for (r = 0; r < rows && rc == FM_OK; ++r) {
        const float *row = in + (size_t)r * cols;
        rc = nb_q15_eager(m, row, out + r, fast);
    }
    if (n_done != NULL) {
        *n_done = rc == FM_OK ? rows : r - 1u;
    }
    return rc;
}

/* ---------- K-class naive Bayes (fm_nbk, fm_nbk_q15) ---------- */

/* What both numeric types check the same way: classes, order, stops and edges' presence. */
static int nbk_check_shape(uint32_t n_features, uint32_t n_used, uint32_t n_classes, const uint32_t *order,
                           const void *edges, uint32_t n_edges, const void *d, const void *d0, uint32_t n_stops,
                           const uint32_t *stop_at, const void *stop_margin)
{
    /* the walks offset edges by n_edges * position: NULL + 0 when n_edges == 0 (undefined), so a
     * model with positions needs its edge table even when it is empty */
    if (n_classes < 2u || n_classes > FM_VEC_MAX_OUTPUTS || d0 == NULL || (n_used > 0 && order == NULL) ||
        (n_used > 0 && edges == NULL) || (n_used > 0 && d == NULL) ||
        (n_stops > 0 && stop_margin == NULL) || n_edges > 0xffffu) {
        return FM_E_MODEL;
    }
    return nb_check_common(n_features, n_used, order, n_stops, stop_at);
}

/* The start of both K-class checks (returns from the caller on a fault): the model, then its shape with
 * the edge table edges. A macro: the checks' object code stays what it was. */
#define NBK_CHECK_START(m, edges, rc)                                                                      \
    if ((m) == NULL) {                                                                                     \
        return FM_E_ARG;                                                                                   \
    }                                                                                                      \
    (rc) = nbk_check_shape((m)->n_features, (m)->n_used, (m)->n_classes, (m)->order, (edges), (m)->n_edges, \
                           (m)->d, (m)->d0, (m)->n_stops, (m)->stop_at, (m)->stop_margin);                 \
    if ((rc) != FM_OK) {                                                                                   \
        return (rc);                                                                                       \
    }

int fm_nbk_check(const fm_nbk *m)
{
    uint32_t i, n_table;
    int rc;
    NBK_CHECK_START(m, m->edges, rc);
    for (i = 0; i < m->n_used * m->n_edges; ++i) {
        if (m->edges[i] != m->edges[i] || (i % m->n_edges != 0 && m->edges[i] < m->edges[i - 1])) {
            return FM_E_MODEL;
        }
    }
    n_table = m->n_used * (m->n_edges + 2u) * m->n_classes;
    for (i = 0; i < n_table; ++i) {
        if (!finite_f(m->d[i])) {
            return FM_E_MODEL;
        }
    }
    for (i = 0; i < m->n_classes; ++i) {
        if (!finite_f(m->d0[i])) {
            return FM_E_MODEL;
        }
    }
    for (i = 0; i < m->n_stops; ++i) {
        if (m->stop_margin[i] != m->stop_margin[i]) {
            return FM_E_MODEL;
        }
    }
    for (i = 0; m->costs != NULL && i < m->n_features; ++i) {
        if (!finite_f(m->costs[i]) || m->costs[i] < 0.0f) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

/* Lane c of a packed row (fm_nbk_q15): class 2j in the low half of word j, sign-extended; class 2j + 1 the
 * high half of w - lo, i.e. of w + 0x8000 (lo + 0x8000 is 0 .. 0xffff), sign-extended. */
static inline int32_t nbk_lane(const uint32_t *w, uint32_t c)
{
    const uint32_t v = w[c >> 1];
    return (c & 1u) != 0u ? nb_lo16((v + 0x8000u) >> 16) : nb_lo16(v);
}

static inline uint32_t nbk_abs16(int32_t v)
{
    return (uint32_t)(v < 0 ? -v : v);
}

int fm_nbk_q15_check(const fm_nbk_q15 *m)
{
    uint32_t i, c, slot;
    size_t nw, stride;
    int rc;
    NBK_CHECK_START(m, m->edge_keys, rc);
    for (i = 0; i < m->n_used * m->n_edges; ++i) {
        if (i % m->n_edges != 0 && m->edge_keys[i] < m->edge_keys[i - 1]) {
            return FM_E_MODEL;
        }
    }
    /* no class's partial sum can leave its int16 lane: |prior| + the largest |entry| of each position */
    nw = (m->n_classes + 1u) / 2u;
    stride = (size_t)(m->n_edges + 2u) * nw;
    for (c = 0; c < m->n_classes; ++c) {
        uint32_t total = nbk_abs16(nbk_lane(m->d0, c));
        for (i = 0; i < m->n_used && total <= 32767u; ++i) {
            uint32_t peak = 0;
            for (slot = 0; slot < m->n_edges + 2u; ++slot) {
                const uint32_t a = nbk_abs16(nbk_lane(m->d + stride * i + nw * slot, c));
                peak = a > peak ? a : peak;
            }
            total += peak;
        }
        if (total > 32767u) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

/* The leader (first class of largest score) of s[0 .. k-1], k >= 2, and the best
 * other class's score, for both numeric types. */
#define NBK_LEADER(s, k, lead, second)                                   \
    do {                                                                 \
        uint32_t c_;                                                     \
        for (c_ = 1; c_ < (k); ++c_) {                                   \
            (lead) = (s)[c_] > (s)[(lead)] ? c_ : (lead);                \
        }                                                                \
        (second) = (lead) == 0u ? (s)[1] : (s)[0];                       \
        for (c_ = 1; c_ < (k); ++c_) {                                   \
            if (c_ != (lead) && (s)[c_] > (second)) {                    \
                (second) = (s)[c_];                                      \
            }                                                            \
        }                                                                \
    } while (0)

/* Feature j from the vector x (eager calls) or, when x is NULL, through the reader. */
static inline int nbk_read(const fm_reader *in, const float *x, uint32_t j, uint32_t *bits)
{
    if (x == NULL) {
        return nb_read(in, j, bits);
    }
    *bits = fm_float_bits(x[j]);
    return fm_bits_nonfinite(*bits) ? FM_E_VALUE : FM_OK;
}

/* The walk of both numeric types: positions in reading order (ADD(i, bits)
 * adds position i's class entries and its cost), then at each stop point and
 * at the end LEAD() sets lead and margin; a margin over the stop point's ends
 * the walk at stage t + 1. Returns from the caller on a failed read. */
#define NBK_WALK(m, in, x, i, lead, margin, stage, ADD, LEAD)             \
    do {                                                                  \
        uint32_t t_ = 0;                                                  \
        for (;;) {                                                        \
            const uint32_t next_ = t_ < (m)->n_stops ? (m)->stop_at[t_] : (m)->n_used; \
            for (; (i) < next_; ++(i)) {                                  \
                uint32_t bits_;                                           \
                const int rc_ = nbk_read((in), (x), (m)->order[(i)], &bits_); \
                if (rc_ != FM_OK) {                                       \
                    return rc_;                                           \
                }                                                         \
                ADD((i), bits_);                                          \
            }                                                             \
            LEAD();                                                       \
            if (t_ == (m)->n_stops) {                                     \
                break;                                                    \
            }                                                             \
            if ((margin) > (m)->stop_margin[t_++]) {                      \
                (stage) = t_;                                             \
                break;                                                    \
            }                                                             \
        }                                                                 \
    } while (0)

static int nbk_f32_run(const fm_nbk *m, const fm_reader *in, const float *x, fm_result *out)
{
    float s[FM_VEC_MAX_OUTPUTS], second, margin = 0.0f, cost = 0.0f;
    const uint32_t k = m->n_classes, ne = m->n_edges;
    const size_t row_step = (size_t)(ne + 2u) * k; /* one position's (ne + 2) x k entries */
    const float *row = m->d, *ek = m->edges;       /* the next position's entries and edges */
    uint32_t i = 0, c, lead = 0, stage = 0;

    if (k < 2u || k > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    for (c = 0; c < k; ++c) {
        s[c] = m->d0[c];
    }
#define NBK_F32_ADD(p, bits)                                                                           \
    do {                                                                                               \
        const float *e_ = row + (size_t)nb_slot_f32(ek, ne, bits) * k;                                 \
        for (c = 0; c < k; ++c) {                                                                      \
            s[c] += e_[c];                                                                             \
        }                                                                                              \
        cost += m->costs != NULL ? m->costs[m->order[(p)]] : 1.0f;                                     \
        row += row_step;                                                                               \
        ek += ne;                                                                                      \
    } while (0)
#define NBK_F32_LEAD()                        \
    do {                                      \
        lead = 0;                             \
        NBK_LEADER(s, k, lead, second);       \
        margin = s[lead] - second;            \
    } while (0)
    NBK_WALK(m, in, x, i, lead, margin, stage, NBK_F32_ADD, NBK_F32_LEAD);
#undef NBK_F32_ADD
#undef NBK_F32_LEAD
    nb_answer(out, (int32_t)lead, stage, i);
    out->score = s[lead];
    out->cost = cost;
    return FM_OK;
}

/* acc[j] += e[j] for the nw packed words of a row (uint32: both lanes of a word at once). */
static inline void nbk_q15_add(uint32_t *acc, const uint32_t *e, uint32_t nw)
{
    uint32_t j = 0;
#if defined(FM_NBK_ADD)
    FM_NBK_ADD(acc, e, nw);
    j = nw;
#endif
    for (; j < nw; ++j) {
        acc[j] += e[j];
    }
}

/* The leader (first class of largest score) of the k >= 2 packed class sums acc in *lead, and its margin
 * over the best other class (NBK_LEADER's, in one pass over the lanes as they are decoded). */
static inline int32_t nbk_q15_top2(const uint32_t *acc, uint32_t k, uint32_t *lead)
{
    uint32_t c, lc = 0;
    int32_t best = nb_lo16(acc[0]), second = INT32_MIN;
    const uint32_t *w = acc + 1, *const pairs_end = acc + k / 2u;
#define NBK_TOP2_STEP(v, cc)                                                  \
    do {                                                                      \
        const int32_t v_ = (v);                                               \
        if (v_ > second) { /* second <= best: most classes fail this one test */ \
            if (v_ > best) {                                                  \
                second = best;                                                \
                best = v_;                                                    \
                lc = (cc);                                                    \
            } else {                                                          \
                second = v_;                                                  \
            }                                                                 \
        }                                                                     \
    } while (0)
    NBK_TOP2_STEP(nb_lo16((acc[0] + 0x8000u) >> 16), 1u);
    for (c = 2; w != pairs_end; ++w, c += 2u) { /* words 1 .. k/2 - 1 hold two classes */
        NBK_TOP2_STEP(nb_lo16(*w), c);
        NBK_TOP2_STEP(nb_lo16((*w + 0x8000u) >> 16), c + 1u);
    }
    if ((k & 1u) != 0u) {
        NBK_TOP2_STEP(nb_lo16(*w), c);
    }
#undef NBK_TOP2_STEP
    *lead = lc;
    return best - second;
}

/* nb_slot_q15 for the K-class walk: +0 (key 0) to slot 0 by one branch, then the binary search. */
static inline uint32_t nbk_slot_q15(const int32_t *e, uint32_t n_edges, uint32_t bits)
{
    const int32_t key = fm_key_bits(bits);
    if (key == 0) {
        return 0u;
    }
    return 1u + nb_below_key(e, n_edges, key);
}

/* The answer of a K-class q15 walk that read positions 0..n-1 and stopped at stage (0: the end). */
static int nbk_q15_answer(const fm_nbk_q15 *m, const uint32_t *acc, uint32_t lead, uint32_t stage, uint32_t n,
                          fm_result *out)
{
    uint32_t p, cost = n; /* positions 0..n-1 read: their costs, or 1 each */
    if (m->costs != NULL) {
        for (cost = 0, p = 0; p < n; ++p) {
            cost += m->costs[m->order[p]];
        }
    }
    nb_answer(out, (int32_t)lead, stage, n);
    out->score = 0.0f;
    out->score_q = nbk_lane(acc, lead);
    out->cost = 0.0f;
    out->cost_q = cost;
    return FM_OK;
}

/* The lazy walk (and the eager one of any edge count): positions one by one through nbk_read. */
static int nbk_q15_run(const fm_nbk_q15 *m, const fm_reader *in, const float *x, fm_result *out)
{
    uint32_t acc[(FM_VEC_MAX_OUTPUTS + 1) / 2];
    int32_t margin = 0;
    const uint32_t k = m->n_classes, ne = m->n_edges, nw = (k + 1u) / 2u;
    const size_t row_step = (size_t)(ne + 2u) * nw;
    const uint32_t *row = m->d;
    const int32_t *ek = m->edge_keys;
    uint32_t i = 0, j, lead = 0, stage = 0;

    if (k < 2u || k > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    for (j = 0; j < nw; ++j) {
        acc[j] = m->d0[j];
    }
    /* plain 32-bit adds of packed words: no lane can overflow (fm_nbk_q15_check) */
#define NBK_Q15_ADD(p, bits)                                                                           \
    do {                                                                                               \
        nbk_q15_add(acc, row + (size_t)nbk_slot_q15(ek, ne, bits) * nw, nw);                          \
        (void)(p);                                                                                     \
        row += row_step;                                                                               \
        ek += ne;                                                                                      \
    } while (0)
#define NBK_Q15_LEAD() (margin = nbk_q15_top2(acc, k, &lead))
    NBK_WALK(m, in, x, i, lead, margin, stage, NBK_Q15_ADD, NBK_Q15_LEAD);
#undef NBK_Q15_ADD
#undef NBK_Q15_LEAD
    return nbk_q15_answer(m, acc, lead, stage, i, out);
}

/* The eager walk of the default layout (two edges a position): a segment (up to the next stop point or
 * the end) is one tight loop, the slot found with the edge count known; a non-finite value read sets the
 * top bit of bad ((exponent bits) + 2^23), tested once a segment, before its stop test: the same values
 * are read, so the answer and the error are nbk_q15_run's. */
/* What FM_NBK_SEG reads from memory: the segment's end in the order, the sums, the bytes of a slot's row. */
typedef struct {
    const uint32_t *end;
    uint32_t *acc;
    uint32_t nwb;
} nbk_seg;

static int nbk_q15_vec2(const fm_nbk_q15 *m, const float *x, fm_result *out)
{
    uint32_t acc[(FM_VEC_MAX_OUTPUTS + 1) / 2];
    const uint32_t k = m->n_classes, nw = (k + 1u) / 2u, n_stops = m->n_stops;
    const size_t row_step = 4u * (size_t)nw;
    const uint32_t *const order = m->order, *row = m->d;
    const int32_t *ek = m->edge_keys;
    uint32_t i = 0, j, t = 0, lead = 0, stage = 0, bad = 0;

    if (k < 2u || k > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    for (j = 0; j < nw; ++j) {
        acc[j] = m->d0[j];
    }
    for (;;) {
        const uint32_t next = t < n_stops ? m->stop_at[t] : m->n_used;
        int32_t margin;
#if defined(FM_NBK_SEG)
        if (i != next) {
            const nbk_seg ctx = {order + next, acc, 4u * nw};
            const uint32_t *o = order + i;
            FM_NBK_SEG(o, ek, row, x, &ctx);
            if (o == NULL) {
                return FM_E_VALUE;
            }
            i = next;
        }
        (void)row_step;
#else
        for (; i != next; ++i) {
            const uint32_t bits = fm_float_bits(x[order[i]]);
            const int32_t key = fm_key_bits(bits);
            uint32_t slot = 0;
            bad |= (bits & 0x7f800000u) + 0x00800000u;
            if (key != 0) {
                slot = 1u + (uint32_t)(ek[0] < key) + (uint32_t)(ek[1] < key);
            }
            nbk_q15_add(acc, row + slot * nw, nw); /* no lane can overflow (fm_nbk_q15_check) */
            ek += 2;
            row += row_step;
        }
#endif
        if ((bad & 0x80000000u) != 0u) {
            return FM_E_VALUE;
        }
        margin = nbk_q15_top2(acc, k, &lead);
        if (t == n_stops) {
            break;
        }
        if (margin > m->stop_margin[t++]) {
            stage = t;
            break;
        }
    }
    return nbk_q15_answer(m, acc, lead, stage, i, out);
}

/* The q15 walk of a call: the two-edge eager walk, or the general one. */
static int nbk_q15_call(const fm_nbk_q15 *m, const fm_reader *in, const float *x, fm_result *out)
{
    return x != NULL && m->n_edges == 2u ? nbk_q15_vec2(m, x, out) : nbk_q15_run(m, in, x, out);
}

/* The public calls of one numeric type: lazy, eager (a vector reader) and batch. */
#define NBK_API(PREFIX, MODEL, RUN)                                                                   \
    int PREFIX##_predict(const MODEL *m, const fm_reader *in, fm_result *out)                         \
    {                                                                                                 \
        if (m == NULL || in == NULL || in->read == NULL || out == NULL) {                             \
            return FM_E_ARG;                                                                          \
        }                                                                                             \
        return RUN(m, in, NULL, out);                                                                 \
    }                                                                                                 \
    int PREFIX##_predict_vec(const MODEL *m, const float *in, uint32_t n, fm_result *out)             \
    {                                                                                                 \
        if (m == NULL || in == NULL || out == NULL || n != m->n_features) {                           \
            return FM_E_ARG;                                                                          \
        }                                                                                             \
        return RUN(m, NULL, in, out);                                                                 \
    }                                                                                                 \
    int PREFIX##_predict_batch(const MODEL *m, const float *in, uint32_t rows, uint32_t cols,          \
                               fm_result *out, uint32_t *n_done)                                      \
    {                                                                                                 \
        uint32_t r;                                                                                   \
        int rc = FM_OK;                                                                               \
        if (m == NULL || (rows > 0 && (in == NULL || out == NULL)) || cols != m->n_features) {        \
            return FM_E_ARG;                                                                          \
        }                                                                                             \
        for (r = 0; r < rows && rc == FM_OK; ++r) {                                                   \
            rc = PREFIX##_predict_vec(m, in + (size_t)r * cols, cols, out + r);                       \
        }                                                                                             \
        if (n_done != NULL) {                                                                         \
            *n_done = rc == FM_OK ? rows : r - 1u;                                                    \
        }                                                                                             \
        return rc;                                                                                    \
    }

NBK_API(fm_nbk, fm_nbk, nbk_f32_run)
NBK_API(fm_nbk_q15, fm_nbk_q15, nbk_q15_call)
