/*
 * libFuzzer harness: K-class naive Bayes tables (fm_nbk, fm_nbk_q15 of fm_nb.h), structure-aware.
 *
 * Input: a flags byte (bit 0 q15; bit 1 structured order and stops: a permutation prefix of the
 * features and increasing stop points inside it; bit 2 each edge row sorted; bit 3 empty tables
 * NULL rather than zero-length blocks; bit 4 a byte of table pointers set to NULL before the check),
 * the feature count (0..8), the class count K (2..9, or with the byte's top two bits set an odd one:
 * 0, 1, FM_VEC_MAX_OUTPUTS - 1, FM_VEC_MAX_OUTPUTS, FM_VEC_MAX_OUTPUTS + 1, UINT32_MAX), n_used (0..6),
 * n_edges (0..4, or 0xffff / 0x10000 with n_used 0), n_stops (0..4), then the tables in struct order.
 * Every table is its own heap block of exactly its element count (ASan sees a read one past it);
 * a K the check must refuse gets empty class tables. q15 class tables are packed words, (K + 1) / 2 a row;
 * unless flag bit 5 is set, each word's two int16 lanes are cut to 13 bits (arithmetic shift by 3), so
 * that most models pass the lane-bound check (7 terms of at most 4096 stay under 32768).
 *
 * Accepted tables go through fz_run (eager = lazy, failing reader, batch, null-each); every eager
 * prediction is also compared, field by field and bit for bit, with the reference walk below (an
 * independent restatement of fm_nb.h's K-class rule: float32 sums in reading order, q15 sums of the
 * decoded lanes in 64 bits, the first largest class leads, stop when its margin exceeds the stop's).
 */
#include "fuzz_build.h"

#define FZ_NBK_MAX_USED 6u
#define FZ_NBK_MAX_EDGES 4u
#define FZ_NBK_MAX_STOPS 4u
#define FZ_NBK_BLOCKS 8u

typedef struct {
    void *block[FZ_NBK_BLOCKS];
    unsigned n;
    int empty_null;
} fz_pool;

/* n elements of size bytes each in a block of exactly that size (empty: NULL or a zero-size block). */
static void *fz_alloc(fz_pool *pool, size_t n, size_t size)
{
    void *p;
    if (n == 0 && pool->empty_null) {
        return NULL;
    }
    p = malloc(n * size);
    fz_require(p != NULL || n == 0);
    fz_require(pool->n < FZ_NBK_BLOCKS);
    pool->block[pool->n++] = p;
    return p;
}

static void fz_pool_free(fz_pool *pool)
{
    unsigned i;
    for (i = 0; i < pool->n; ++i) {
        free(pool->block[i]);
    }
}

static uint32_t fz_nbk_classes(fz_in *in)
{
    static const uint32_t odd[] = {0u, 1u, FM_VEC_MAX_OUTPUTS - 1u, FM_VEC_MAX_OUTPUTS, FM_VEC_MAX_OUTPUTS + 1u,
                                   UINT32_MAX};
    const uint8_t b = fz_byte(in);
    if ((b & 0xc0u) == 0xc0u) {
        return odd[b % (sizeof odd / sizeof odd[0])];
    }
    return 2u + b % 8u;
}

/* Class-table entries: none for a K the check must refuse before reading them. */
static size_t fz_nbk_entries(uint32_t k, size_t per_class)
{
    return k <= FM_VEC_MAX_OUTPUTS + 1u ? per_class * k : 0u;
}

/* Packed q15 class-table words: (K + 1) / 2 a row. */
static size_t fz_nbk_words(uint32_t k, size_t rows)
{
    return k <= FM_VEC_MAX_OUTPUTS + 1u ? rows * ((k + 1u) / 2u) : 0u;
}

/* Lane c of packed words w, restated: the low half as a signed 16-bit value, the high half of w minus it. */
static int64_t fz_lane(const uint32_t *w, uint32_t c)
{
    const uint32_t v = w[c / 2u];
    const int64_t lo = (int64_t)(v & 0xffffu) - ((v & 0x8000u) != 0u ? 65536 : 0);
    const uint32_t h = ((v - (uint32_t)lo) >> 16) & 0xffffu;
    return (c % 2u) == 0u ? lo : (int64_t)h - ((h & 0x8000u) != 0u ? 65536 : 0);
}

/* Words from the input; unless raw, both lanes of each cut to 13 bits (the packed form of lo >> 3, hi >> 3). */
static void fz_lane_words(fz_in *in, uint32_t *w, size_t n, int raw)
{
    size_t i;
    fz_u32s(in, w, n);
    for (i = 0; !raw && i < n; ++i) {
        const int64_t lo = fz_lane(&w[i], 0u) / 8, hi = fz_lane(&w[i], 1u) / 8;
        w[i] = (uint32_t)hi * 65536u + (uint32_t)lo;
    }
}

/* The dimensions and reading order / stop points shared by both numeric types. */
typedef struct {
    uint32_t nf, k, used, ne, ns;
    uint8_t flags;
    uint32_t *order, *stop_at;
} fz_nbk_shape;

static void fz_nbk_shape_read(fz_in *in, fz_pool *pool, fz_nbk_shape *s)
{
    uint32_t i;
    uint8_t b;
    s->flags = fz_byte(in);
    s->nf = fz_dim(in, FZ_MAX_FEATURES);
    s->k = fz_nbk_classes(in);
    s->used = fz_dim(in, FZ_NBK_MAX_USED);
    b = fz_byte(in);
    s->ne = b % (FZ_NBK_MAX_EDGES + 1u);
    if (b & 0x80u) { /* the largest edge count the check takes, and one over it, without positions */
        s->ne = (b & 1u) ? 0x10000u : 0xffffu;
        s->used = 0;
    }
    s->ns = fz_dim(in, FZ_NBK_MAX_STOPS);
    if (s->flags & 2u) {
        uint32_t perm[FZ_MAX_FEATURES], want = s->ns, t;
        s->used = s->used < s->nf ? s->used : s->nf;
        for (i = 0; i < s->nf; ++i) {
            perm[i] = i;
        }
        for (i = 0; i < s->used; ++i) { /* Fisher-Yates prefix */
            const uint32_t j = i + fz_byte(in) % (s->nf - i), v = perm[i];
            perm[i] = perm[j];
            perm[j] = v;
        }
        s->order = fz_alloc(pool, s->used, sizeof *s->order);
        if (s->used > 0) {
            memcpy(s->order, perm, s->used * sizeof *s->order);
        }
        b = fz_byte(in); /* stop points: the set bits of b among 1 .. used-1, at most want of them */
        s->ns = 0;
        for (t = 1; t < s->used && s->ns < want; ++t) {
            s->ns += (b >> t) & 1u;
        }
        s->stop_at = fz_alloc(pool, s->ns, sizeof *s->stop_at);
        for (t = 1, i = 0; i < s->ns; ++t) {
            if ((b >> t) & 1u) {
                s->stop_at[i++] = t;
            }
        }
    } else {
        s->order = fz_alloc(pool, s->used, sizeof *s->order);
        fz_u32s(in, s->order, s->used);
        s->stop_at = fz_alloc(pool, s->ns, sizeof *s->stop_at);
        fz_u32s(in, s->stop_at, s->ns);
    }
}

/* Sorts each of the used rows of ne keys (insertion sort; NaN edges stay where they fall). */
#define FZ_SORT_ROWS(T, a, rows, ne)                                        \
    do {                                                                    \
        uint32_t r_, c_, k_;                                                \
        for (r_ = 0; r_ < (rows); ++r_) {                                   \
            T *row_ = (a) + (size_t)r_ * (ne);                              \
            for (c_ = 1; c_ < (ne); ++c_) {                                 \
                const T v_ = row_[c_];                                      \
                for (k_ = c_; k_ > 0 && row_[k_ - 1u] > v_; --k_) {         \
                    row_[k_] = row_[k_ - 1u];                               \
                }                                                           \
                row_[k_] = v_;                                              \
            }                                                               \
        }                                                                   \
    } while (0)

/* Bit i of the mask byte: table pointer i of the struct NULL before the check. */
#define FZ_MAYBE_NULL(mask, i, ptr) ((((mask) >> (i)) & 1u) ? NULL : (ptr))

/* ---------- reference walk (both numeric types) ---------- */

/* First class of largest score, and the largest score of the other classes. */
#define FZ_LEADER(s, k, lead, second)                     \
    do {                                                  \
        uint32_t c_;                                      \
        int have_ = 0;                                    \
        (lead) = 0;                                       \
        for (c_ = 1; c_ < (k); ++c_) {                    \
            if ((s)[c_] > (s)[(lead)]) {                  \
                (lead) = c_;                              \
            }                                             \
        }                                                 \
        for (c_ = 0; c_ < (k); ++c_) {                    \
            if (c_ != (lead) && (!have_ || (s)[c_] > (second))) { \
                (second) = (s)[c_];                       \
                have_ = 1;                                \
            }                                             \
        }                                                 \
    } while (0)

/* The walk of both types over scores s (initialised from PRIOR(m, c)): positions in reading order, the
 * slot of each value (0 for zero, else 1 + the edges EDGES below KEY(v)), entries ENTRY(m, row, c) added,
 * COST_1 per feature without a cost table; the leader decided at every stop point and at the end. */
#define FZ_REF_WALK(m, x, s, out, EDGES, KEY, ENTRY, PRIOR, cost, COST_1)                            \
    do {                                                                                              \
        uint32_t i_ = 0, t_ = 0, c_, lead_ = 0;                                                       \
        memset((out), 0, sizeof *(out));                                                              \
        for (c_ = 0; c_ < (m)->n_classes; ++c_) {                                                     \
            (s)[c_] = PRIOR((m), c_);                                                                 \
        }                                                                                             \
        for (;;) {                                                                                    \
            const uint32_t next_ = t_ < (m)->n_stops ? (m)->stop_at[t_] : (m)->n_used;                \
            for (; i_ < next_; ++i_) {                                                                \
                const float v_ = (x)[(m)->order[i_]];                                                 \
                uint32_t slot_ = 0, e_;                                                               \
                if (v_ != v_ || v_ - v_ != 0.0f) {                                                    \
                    return FM_E_VALUE;                                                                \
                }                                                                                     \
                if (v_ != 0.0f) {                                                                     \
                    for (slot_ = 1, e_ = 0; e_ < (m)->n_edges; ++e_) {                                \
                        slot_ += (m)->EDGES[(size_t)i_ * (m)->n_edges + e_] < KEY(v_);                \
                    }                                                                                 \
                }                                                                                     \
                for (c_ = 0; c_ < (m)->n_classes; ++c_) {                                             \
                    (s)[c_] += ENTRY((m), (size_t)i_ * ((m)->n_edges + 2u) + slot_, c_);              \
                }                                                                                     \
                (cost) += (m)->costs != NULL ? (m)->costs[(m)->order[i_]] : (COST_1);                 \
            }                                                                                         \
            FZ_LEADER(s, (m)->n_classes, lead_, second);                                              \
            if (t_ == (m)->n_stops) {                                                                 \
                break;                                                                                \
            }                                                                                         \
            if ((s)[lead_] - second > (m)->stop_margin[t_++]) {                                       \
                (out)->stage = t_;                                                                    \
                break;                                                                                \
            }                                                                                         \
        }                                                                                             \
        (out)->label = (int32_t)lead_;                                                                \
        (out)->n_read = i_;                                                                           \
        best = (s)[lead_];                                                                            \
    } while (0)

#define FZ_KEY_F32(v) (v)
#define FZ_KEY_Q15(v) fm_key_bits(fm_float_bits(v))
#define FZ_ENTRY_F32(m, row, c) (m)->d[(row) * (m)->n_classes + (c)]
#define FZ_PRIOR_F32(m, c) (m)->d0[(c)]
#define FZ_ENTRY_Q15(m, row, c) fz_lane((m)->d + (row) * (((m)->n_classes + 1u) / 2u), (c))
#define FZ_PRIOR_Q15(m, c) fz_lane((m)->d0, (c))

static int ref_f32(const fm_nbk *m, const float *x, fm_result *out)
{
    float s[FM_VEC_MAX_OUTPUTS], second = 0.0f, cost = 0.0f, best;
    FZ_REF_WALK(m, x, s, out, edges, FZ_KEY_F32, FZ_ENTRY_F32, FZ_PRIOR_F32, cost, 1.0f);
    out->score = best;
    out->cost = cost;
    return FM_OK;
}

static int ref_q15(const fm_nbk_q15 *m, const float *x, fm_result *out)
{
    int64_t s[FM_VEC_MAX_OUTPUTS], second = 0, best;
    uint32_t cost = 0;
    FZ_REF_WALK(m, x, s, out, edge_keys, FZ_KEY_Q15, FZ_ENTRY_Q15, FZ_PRIOR_Q15, cost, 1u);
    out->score_q = (int32_t)best;
    out->cost_q = cost;
    return FM_OK;
}

/* ---------- the family's calls for fz_run ---------- */

static const size_t nbk_ptrs[] = {offsetof(fm_nbk, order),   offsetof(fm_nbk, edges),       offsetof(fm_nbk, d),
                                  offsetof(fm_nbk, d0),      offsetof(fm_nbk, stop_at),     offsetof(fm_nbk, stop_margin),
                                  offsetof(fm_nbk, costs)};
static const size_t nbk_q15_ptrs[] = {offsetof(fm_nbk_q15, order),   offsetof(fm_nbk_q15, edge_keys),
                                      offsetof(fm_nbk_q15, d),       offsetof(fm_nbk_q15, d0),
                                      offsetof(fm_nbk_q15, stop_at), offsetof(fm_nbk_q15, stop_margin),
                                      offsetof(fm_nbk_q15, costs)};

FZ_CHECK_ADAPTER(f32, fm_nbk, fm_nbk)
FZ_CHECK_ADAPTER(q15, fm_nbk_q15, fm_nbk_q15)
FZ_PLAIN_ADAPTERS(f32, fm_nbk, fm_nbk)
FZ_PLAIN_ADAPTERS(q15, fm_nbk_q15, fm_nbk_q15)

/* The eager call of fz_run: the runtime's answer, equal to the reference walk's (ref_SFX) on a right-length row. */
#define FZ_EAGER_REF(SFX, T)                                                                  \
    static int eager_ref_##SFX(const void *m, const float *x, uint32_t n, fm_result *out)     \
    {                                                                                         \
        const int rc = eager_##SFX(m, x, n, out);                                             \
        if (n == ((const T *)m)->n_features) {                                                \
            fm_result want;                                                                   \
            fz_require(ref_##SFX((const T *)m, x, &want) == rc);                              \
            fz_require(rc != FM_OK || fz_same(out, &want));                                   \
        }                                                                                     \
        return rc;                                                                            \
    }
FZ_EAGER_REF(f32, fm_nbk)
FZ_EAGER_REF(q15, fm_nbk_q15)

/* Builds model m (struct MODEL; TE/TD/TS/TC: the element types of its edge, class, margin and cost tables,
 * filled by FE/FD/FS/FC, TP of its priors; COUNT(k, rows): the class-table elements; EDGES: the edge field)
 * from shape s and the input, and runs the accepted model through fz_run with the reference check. */
#define FZ_NBK_RUN(MODEL, EDGES, TE, FE, TD, FD, TP, TS, FS, TC, FC, COUNT, CHECK, EAGER, EAGER_REF, LAZY, BATCH, \
                   PTRS)                                                                                  \
    do {                                                                                                  \
        MODEL m;                                                                                          \
        const fz_nulls nulls = FZ_NULLS(&m, PTRS, CHECK, EAGER);                                          \
        const uint32_t n_d = (uint32_t)COUNT(s->k, (size_t)s->used * (s->ne + 2u));                       \
        const uint32_t n_d0 = (uint32_t)COUNT(s->k, 1u);                                                  \
        TE *edges = fz_alloc(pool, (size_t)s->used * s->ne, sizeof(TE));                                  \
        TD *d = fz_alloc(pool, n_d, sizeof(TD));                                                          \
        TP *d0 = fz_alloc(pool, n_d0, sizeof(TP));                                                        \
        TS *margin = fz_alloc(pool, s->ns, sizeof(TS));                                                   \
        TC *costs = fz_alloc(pool, s->nf, sizeof(TC));                                                    \
        const uint8_t mask = (s->flags & 16u) ? fz_byte(in) : 0u;                                         \
        FE(in, edges, s->used * s->ne);                                                                   \
        if ((s->flags & 4u) && s->ne > 1u) {                                                              \
            FZ_SORT_ROWS(TE, edges, s->used, s->ne);                                                      \
        }                                                                                                 \
        FD(in, d, n_d);                                                                                   \
        FD(in, d0, n_d0);                                                                                 \
        FS(in, margin, s->ns);                                                                            \
        memset(&m, 0, sizeof m);                                                                          \
        m.n_features = s->nf;                                                                             \
        m.n_used = s->used;                                                                               \
        m.n_classes = s->k;                                                                               \
        m.n_edges = s->ne;                                                                                \
        m.order = FZ_MAYBE_NULL(mask, 0, s->order);                                                       \
        m.EDGES = FZ_MAYBE_NULL(mask, 1, edges);                                                          \
        m.d = FZ_MAYBE_NULL(mask, 2, d);                                                                  \
        m.d0 = FZ_MAYBE_NULL(mask, 3, d0);                                                                \
        m.n_stops = s->ns;                                                                                \
        m.stop_at = FZ_MAYBE_NULL(mask, 4, s->stop_at);                                                   \
        m.stop_margin = FZ_MAYBE_NULL(mask, 5, margin);                                                   \
        m.costs = FZ_OPTIONAL(in, FC, costs, s->nf);                                                      \
        if (CHECK(&m) == FM_OK) {                                                                         \
            fz_run(in, &m, s->nf, EAGER_REF, LAZY, BATCH, &nulls, 0, (int32_t)s->k - 1);                  \
        }                                                                                                 \
    } while (0)

static void run_f32(fz_in *in, fz_pool *pool, const fz_nbk_shape *s)
{
    FZ_NBK_RUN(fm_nbk, edges, float, fz_floats, float, fz_floats, float, float, fz_floats, float, fz_floats,
               fz_nbk_entries, check_f32, eager_f32, eager_ref_f32, lazy_f32, batch_f32, nbk_ptrs);
}

static void run_q15(fz_in *in, fz_pool *pool, const fz_nbk_shape *s)
{
#define FZ_Q15_WORDS(in, w, n) fz_lane_words((in), (w), (n), (s->flags & 32u) != 0u)
    FZ_NBK_RUN(fm_nbk_q15, edge_keys, int32_t, fz_i32s, uint32_t, FZ_Q15_WORDS, uint32_t, int32_t, fz_i32s, uint16_t,
               fz_u16s, fz_nbk_words, check_q15, eager_q15, eager_ref_q15, lazy_q15, batch_q15, nbk_q15_ptrs);
#undef FZ_Q15_WORDS
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_pool pool;
    fz_nbk_shape s;
    memset(&pool, 0, sizeof pool);
    pool.empty_null = 1; /* the shape's own tables first: decided by the flags byte below */
    memset(&s, 0, sizeof s);
    if (size > 0) {
        pool.empty_null = (data[0] & 8u) != 0;
    }
    fz_nbk_shape_read(&in, &pool, &s);
    if (s.flags & 1u) {
        run_q15(&in, &pool, &s);
    } else {
        run_f32(&in, &pool, &s);
    }
    fz_pool_free(&pool);
    return 0;
}
