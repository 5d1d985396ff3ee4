/*
 * Builders of the shared blocks from fuzz input (see fuzz_common.h for the
 * encoding): fm_linear / fm_linear_q15 and fm_trees / fm_trees_q15. The tree
 * builder is the one place that knows the tree table layout; the trees,
 * cascade and gated harnesses all use it.
 */
#ifndef FM_FUZZ_BUILD_H
#define FM_FUZZ_BUILD_H

#include "fuzz_common.h"
#include "fm_linear.h"
#include "fm_nb.h"
#include "fm_trees.h"

#define FZ_MAX_NNZ 8u
#define FZ_MAX_NODES 24u
#define FZ_MAX_TREES 6u
#define FZ_MAX_OUTPUTS 3u

typedef struct {
    int32_t feature[FZ_MAX_NNZ];
    float weight[FZ_MAX_NNZ];
    int16_t weight_q[FZ_MAX_NNZ];
    uint8_t term_shift[FZ_MAX_NNZ];
} fz_linear_arrays;

/* Tree tables (fm_trees.h layout): internal node slots per tree up to node_end[t], leaves
 * n_nodes + n_trees, an optional child table (NULL: the implicit heap layout). */
typedef struct {
    uint32_t node_end[FZ_MAX_TREES], child[FZ_MAX_NODES];
    uint16_t feature[FZ_MAX_NODES], tree_output[FZ_MAX_TREES];
    float threshold[FZ_MAX_NODES], leaf[FZ_MAX_NODES + FZ_MAX_TREES], base_score[FZ_MAX_OUTPUTS];
    uint16_t threshold_q[FZ_MAX_NODES];
    uint16_t split_feature[FZ_MAX_NODES]; /* the float32 split dictionary (fz_trees_f32_tail) */
    float split_threshold[FZ_MAX_NODES];
    int16_t leaf_q[FZ_MAX_NODES + FZ_MAX_TREES];
    int32_t base_q[FZ_MAX_OUTPUTS];
} fz_trees_arrays;

/* Pointer fields of the shared blocks (null-each, fuzz_common.h), at a member path ending in a dot
 * inside an enclosing struct, or at the top (empty path): FZ_LINEAR_PTRS(fm_gated, f1.linear.),
 * FZ_TREES_PTRS(fm_trees, ). */
#define FZ_LINEAR_PTRS(T, at) offsetof(T, at feature), offsetof(T, at weight), offsetof(T, at costs)
#define FZ_LINEAR_Q15_PTRS(T, at) offsetof(T, at feature), offsetof(T, at weight_q), offsetof(T, at costs)
#define FZ_TREES_PTRS(T, at)                                                                                   \
    offsetof(T, at node_end), offsetof(T, at feature), offsetof(T, at threshold), offsetof(T, at child),       \
        offsetof(T, at leaf), offsetof(T, at tree_output), offsetof(T, at base_score), offsetof(T, at costs),  \
        offsetof(T, at split), offsetof(T, at split_feature), offsetof(T, at split_threshold)
#define FZ_TREES_Q15_PTRS(T, at)                                                                               \
    offsetof(T, at node_end), offsetof(T, at feature), offsetof(T, at threshold_q), offsetof(T, at child),     \
        offsetof(T, at leaf_q), offsetof(T, at tree_output), offsetof(T, at base_q), offsetof(T, at costs)

/* Null-each over the tree tables (on since fm_trees*_check refuse NULL feature / threshold tables of
 * trees without internal nodes; -DFZ_NO_NULL_TREES leaves them out). */
#ifdef FZ_NO_NULL_TREES
#define FZ_TREE_NULLS(nulls) ((void)(nulls), (const fz_nulls *)NULL)
#else
#define FZ_TREE_NULLS(nulls) (nulls)
#endif

/* The scalars of a linear model: float32 bias and decision threshold; q15 the same, then its input and weight
 * shifts and, after an odd byte, a term shift per term (any byte: the check refuses those out of range). */
static inline void fz_linear_f32_tail(fz_in *in, fz_linear_arrays *a, fm_linear *m)
{
    (void)a;
    m->bias = fz_float(in, fz_byte(in));
    m->decision_threshold = fz_float(in, fz_byte(in));
}

static inline void fz_linear_q15_tail(fz_in *in, fz_linear_arrays *a, fm_linear_q15 *m)
{
    m->bias_q = (int32_t)fz_u32raw(in);
    m->decision_threshold_q = (int32_t)fz_u32raw(in);
    m->in_shift = fz_byte(in);
    m->w_shift = fz_byte(in);
    if ((fz_byte(in) & 1u) != 0u) {
        uint32_t k;
        for (k = 0; k < m->nnz; ++k) {
            a->term_shift[k] = fz_byte(in);
        }
        m->term_shift = a->term_shift;
    }
}

/* NAME(in, a, m, nf, costs): builds linear model m (struct T, costs of type TC): its terms (the weights
 * a->w_ by FW, field W), then TAIL(in, a, m). */
#define FZ_LINEAR_BUILDER(NAME, T, TC, FW, w_, W, TAIL)                                        \
    static inline void NAME(fz_in *in, fz_linear_arrays *a, T *m, uint32_t nf, const TC *costs) \
    {                                                                                           \
        memset(m, 0, sizeof *m);                                                                \
        m->n_features = nf;                                                                     \
        m->nnz = fz_dim(in, FZ_MAX_NNZ);                                                        \
        fz_i32s(in, a->feature, m->nnz);                                                        \
        FW(in, a->w_, m->nnz);                                                                  \
        m->feature = a->feature;                                                                \
        m->W = a->w_;                                                                           \
        TAIL(in, a, m);                                                                         \
        m->costs = costs;                                                                       \
    }

FZ_LINEAR_BUILDER(fz_linear, fm_linear, float, fz_floats, weight, weight, fz_linear_f32_tail)
FZ_LINEAR_BUILDER(fz_linear_q15, fm_linear_q15, uint16_t, fz_i16s, weight_q, weight_q, fz_linear_q15_tail)

static inline const uint32_t *fz_trees_common(fz_in *in, fz_trees_arrays *a, uint32_t *n_outputs, uint32_t *n_nodes,
                                              uint32_t *n_trees)
{
    *n_outputs = fz_dim(in, FZ_MAX_OUTPUTS);
    *n_nodes = fz_dim(in, FZ_MAX_NODES);
    *n_trees = fz_dim(in, FZ_MAX_TREES);
    fz_u32s(in, a->node_end, *n_trees);
    fz_u16s(in, a->feature, *n_nodes);
    fz_u16s(in, a->tree_output, *n_trees);
    return FZ_OPTIONAL(in, fz_u32s, a->child, *n_nodes);
}

/* fm_trees.depth: mostly 0 (per-tree walk), else 1..7 (the check verifies it against node_end); the same
 * byte's bits 3-4 give fm_trees.run (0..3: runs of equal trees, verified by the check too) and bit 5
 * fm_trees.shared_splits (each run's splits once: the split arrays are read at the runs' offsets only). */
static inline uint32_t fz_trees_depth(fz_in *in, uint32_t *run, uint32_t *shared_splits)
{
    const uint8_t b = fz_byte(in);
    *run = b < 64u ? (uint32_t)((b >> 3) & 3u) : 0u;
    *shared_splits = b < 64u ? (uint32_t)((b >> 5) & 1u) : 0u;
    return b < 64u ? (uint32_t)(b & 7u) : 0u;
}

/* The last fields of a tree model: float32 the decision threshold, depth, run and exact_costs (0, 1: checked
 * against the costs, or invalid); q15 the decision threshold, the leaf shift, depth and run. float32: the
 * exact_costs byte's bit 2 sets the split dictionary (fm_trees.split): the feature array read as split codes
 * into n_splits (0..FZ_MAX_NODES) pairs from the input, feature and threshold NULL unless bit 3 keeps them
 * (refused by the check). */
static inline void fz_trees_f32_tail(fz_in *in, fz_trees_arrays *a, fm_trees *m)
{
    uint8_t e;
    m->decision_threshold = fz_float(in, fz_byte(in));
    m->depth = fz_trees_depth(in, &m->run, &m->shared_splits);
    e = fz_byte(in);
    m->exact_costs = e & 3u;
    if (e & 4u) {
        m->n_splits = fz_dim(in, FZ_MAX_NODES);
        fz_u16s(in, a->split_feature, m->n_splits);
        fz_floats(in, a->split_threshold, m->n_splits);
        m->split = m->feature;
        m->split_feature = a->split_feature;
        m->split_threshold = a->split_threshold;
        if (!(e & 8u)) {
            m->feature = NULL;
            m->threshold = NULL;
        }
    }
}

static inline void fz_trees_q15_tail(fz_in *in, fz_trees_arrays *a, fm_trees_q15 *m)
{
    (void)a;
    m->decision_threshold_q = (int32_t)fz_u32raw(in);
    m->shift = fz_byte(in);
    m->depth = fz_trees_depth(in, &m->run, &m->shared_splits);
}

/* NAME(in, a, m, nf, costs): builds tree model m (struct T, costs of type TC): the common tables, the
 * thresholds a->thr_ by FT (field THR), the leaves a->leaf_ by FL (LEAF), the base scores a->base_ by FB
 * (BASE), then TAIL(in, a, m). */
#define FZ_TREES_BUILDER(NAME, T, TC, FT, thr_, THR, FL, leaf_, LEAF, FB, base_, BASE, TAIL)                    \
    static inline void NAME(fz_in *in, fz_trees_arrays *a, T *m, uint32_t nf, const TC *costs)               \
    {                                                                                                         \
        memset(m, 0, sizeof *m);                                                                              \
        m->n_features = nf;                                                                                   \
        m->child = fz_trees_common(in, a, &m->n_outputs, &m->n_nodes, &m->n_trees);                           \
        FT(in, a->thr_, m->n_nodes);                                                                          \
        FL(in, a->leaf_, m->n_nodes + m->n_trees);                                                            \
        FB(in, a->base_, m->n_outputs);                                                                       \
        m->node_end = a->node_end;                                                                            \
        m->feature = a->feature;                                                                              \
        m->THR = a->thr_;                                                                                     \
        m->LEAF = a->leaf_;                                                                                   \
        m->tree_output = a->tree_output;                                                                      \
        m->BASE = a->base_;                                                                                   \
        m->costs = costs;                                                                                     \
        TAIL(in, a, m);                                                                                       \
    }

FZ_TREES_BUILDER(fz_trees, fm_trees, float, fz_floats, threshold, threshold, fz_floats, leaf, leaf, fz_floats,
                 base_score, base_score, fz_trees_f32_tail)
FZ_TREES_BUILDER(fz_trees_q15, fm_trees_q15, uint16_t, fz_u16s, threshold_q, threshold_q, fz_i16s, leaf_q, leaf_q,
                 fz_i32s, base_q, base_q, fz_trees_q15_tail)

#define FZ_NB_MAX_USED 6u
#define FZ_NB_MAX_EDGES 4u
#define FZ_NB_MAX_STOPS 4u

typedef struct {
    uint32_t order[FZ_NB_MAX_USED], stop_at[FZ_NB_MAX_STOPS];
    float edges[FZ_NB_MAX_USED * FZ_NB_MAX_EDGES], d[FZ_NB_MAX_USED * (FZ_NB_MAX_EDGES + 2u)];
    float stop_hi[FZ_NB_MAX_STOPS], stop_lo[FZ_NB_MAX_STOPS], costs[FZ_MAX_FEATURES];
    int32_t edge_keys[FZ_NB_MAX_USED * FZ_NB_MAX_EDGES], stop_hi_q[FZ_NB_MAX_STOPS], stop_lo_q[FZ_NB_MAX_STOPS];
    int16_t d_q[FZ_NB_MAX_USED * (FZ_NB_MAX_EDGES + 2u)];
    uint16_t costs_q[FZ_MAX_FEATURES];
    fm_nb_pos pos[FZ_NB_MAX_USED];
    fm_nb_q15_pos pos_q[FZ_NB_MAX_USED];
    float cum[FZ_NB_MAX_USED + 1u];
    uint32_t cum_q[FZ_NB_MAX_USED + 1u];
} fz_nb_arrays;

static inline void fz_nb_dims(fz_in *in, fz_nb_arrays *a, uint32_t *used, uint32_t *ne, uint32_t *ns)
{
    *used = fz_dim(in, FZ_NB_MAX_USED);
    *ne = fz_dim(in, FZ_NB_MAX_EDGES);
    *ns = fz_dim(in, FZ_NB_MAX_STOPS);
    fz_u32s(in, a->order, *used);
    fz_u32s(in, a->stop_at, *ns);
}

/* Scalars of the fuzz input: a float32 from a selector byte (fz_float), a q15 one from a raw 32-bit word. */
#define fz_f32_scalar(in) fz_float(in, fz_byte(in))
#define fz_q15_scalar(in) ((int32_t)fz_u32raw(in))

/* NAME(in, a, m, nf): builds NB model m (struct T) from the input. The tables of a it fills and the readers of
 * their elements: EDGES (field of T: edges / edge_keys) from a->edges_ by FE, the d table a->d_ by FD, the stop
 * bounds a->hi_ / a->lo_ by FS, d0 and threshold by SCALAR, the optional costs a->costs_ by FC; in the record
 * layout (two edges, a flag byte), records a->pos_ and the optional cumulative costs a->cum_ by FCUM. */
#define FZ_NB_BUILDER(NAME, T, EDGES, FE, edges_, FD, d_, FS, hi_, lo_, SCALAR, FC, costs_, pos_, FCUM, cum_)  \
    static inline void NAME(fz_in *in, fz_nb_arrays *a, T *m, uint32_t nf)                                    \
    {                                                                                                         \
        memset(m, 0, sizeof *m);                                                                              \
        m->n_features = nf;                                                                                   \
        fz_nb_dims(in, a, &m->n_used, &m->n_edges, &m->n_stops);                                              \
        FE(in, a->edges_, m->n_used * m->n_edges);                                                            \
        FD(in, a->d_, m->n_used * (m->n_edges + 2u));                                                         \
        FS(in, a->hi_, m->n_stops);                                                                           \
        FS(in, a->lo_, m->n_stops);                                                                           \
        m->order = a->order;                                                                                  \
        m->EDGES = a->edges_;                                                                                 \
        m->d = a->d_;                                                                                         \
        m->d0 = SCALAR(in);                                                                                   \
        m->threshold = SCALAR(in);                                                                            \
        m->stop_at = a->stop_at;                                                                              \
        m->stop_hi = a->hi_;                                                                                  \
        m->stop_lo = a->lo_;                                                                                  \
        m->costs = FZ_OPTIONAL(in, FC, a->costs_, nf);                                                        \
        if (m->n_edges == 2u && (fz_byte(in) & 1u)) { /* the record layout over the same tables */           \
            uint32_t i;                                                                                       \
            for (i = 0; i < m->n_used; ++i) {                                                                 \
                a->pos_[i].feature = a->order[i];                                                             \
                memcpy(a->pos_[i].edge, a->edges_ + 2u * i, sizeof a->pos_[i].edge);                          \
                memcpy(a->pos_[i].d, a->d_ + 4u * i, sizeof a->pos_[i].d);                                    \
            }                                                                                                 \
            m->pos = a->pos_;                                                                                 \
            m->order = NULL;                                                                                  \
            m->EDGES = NULL;                                                                                  \
            m->d = NULL;                                                                                      \
            m->costs = NULL;                                                                                  \
            m->cum_cost = FZ_OPTIONAL(in, FCUM, a->cum_, m->n_used + 1u);                                     \
        }                                                                                                     \
    }

FZ_NB_BUILDER(fz_nb, fm_nb, edges, fz_floats, edges, fz_floats, d, fz_floats, stop_hi, stop_lo, fz_f32_scalar,
              fz_floats, costs, pos, fz_floats, cum)
FZ_NB_BUILDER(fz_nb_q15, fm_nb_q15, edge_keys, fz_i32s, edge_keys, fz_i16s, d_q, fz_i32s, stop_hi_q, stop_lo_q,
              fz_q15_scalar, fz_u16s, costs_q, pos_q, fz_u32s, cum_q)

/* The adapters of fz_run (fz_harness's signatures) over a family's calls PFX_*, model type T; each harness
 * names its float32 and q15 sets by a suffix SFX (f32, q15). The context the adapters get is the model itself
 * (fz_self) or an fz_ctx holding it with the caller's memo (fz_ctx_model). */
#define fz_self(c) (c)
#define fz_ctx_model(c) (((const fz_ctx *)(c))->m)

/* A model with the caller's memo (linear, cstc, trees: one memo, its keys set for the eager q15 walk). */
typedef struct {
    const void *m;
    fm_memo *memo;
} fz_ctx;

/* check_SFX: PFX_check(m), the load-time check fz_run's null-each test calls. */
#define FZ_CHECK_ADAPTER(SFX, PFX, T)               \
    static int check_##SFX(const void *m)           \
    {                                               \
        return PFX##_check((const T *)m);           \
    }

/* NAME: PFX_predict_vec(m, x, n, out) on the model GET(c) finds in its context. */
#define FZ_VEC_ADAPTER(NAME, PFX, T, GET)                                     \
    static int NAME(const void *c, const float *x, uint32_t n, fm_result *out) \
    {                                                                          \
        return PFX##_predict_vec((const T *)GET(c), x, n, out);                \
    }

/* batch_SFX of a family with a caller scratch holding scores of type S: PFX_scratch_size(m),
 * PFX_scratch_init(m, buf, size, memo, &scores), PFX_predict_batch(m, X, rows, cols, memo, scores, out, n_done).
 * It asks for the scratch size, checks 4 bytes less is refused, and runs in exactly that many bytes. */
#define FZ_SCRATCH_BATCH(SFX, PFX, T, S, GET)                                                                   \
    static int batch_##SFX(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out,         \
                           uint32_t *n_done)                                                                    \
    {                                                                                                           \
        const T *m = (const T *)GET(c);                                                                         \
        fz_scratch buf;                                                                                         \
        fm_memo memo;                                                                                           \
        S *scores = NULL;                                                                                       \
        const size_t size = PFX##_scratch_size(m);                                                              \
        fz_scratch_fits(size, size > 0u ? PFX##_scratch_init(m, &buf, size - 4u, &memo, &scores) : FM_E_ARG);  \
        fz_require(PFX##_scratch_init(m, &buf, size, &memo, &scores) == FM_OK);                                \
        return PFX##_predict_batch(m, X, rows, cols, &memo, scores, out, n_done);                               \
    }

/* The eager, lazy and batch adapters of a family whose API has the common shape (cascade, gated) on the bare
 * model: PFX_predict_vec, PFX_predict(m, r, memo, scores, out) on a memo of its own, FZ_SCRATCH_BATCH.
 * LAZY_CHECK(m) runs before the lazy predict (e.g. a bound on the outputs; fz_no_check for none). */
#define fz_no_check(m) ((void)(m))
#define FZ_SCRATCH_ADAPTERS(SFX, PFX, T, S, LAZY_CHECK)                                                      \
    FZ_VEC_ADAPTER(eager_##SFX, PFX, T, fz_self)                                                               \
    static int lazy_##SFX(const void *m, const fm_reader *r, fm_result *out)                                  \
    {                                                                                                          \
        float values[FZ_MAX_FEATURES];                                                                         \
        S scores[FZ_MAX_OUTPUTS];                                                                              \
        uint8_t seen[FZ_MAX_FEATURES];                                                                         \
        fm_memo memo;                                                                                          \
        fm_memo_init(&memo, values, seen, FZ_MAX_FEATURES);                                                    \
        LAZY_CHECK((const T *)m);                                                                              \
        return PFX##_predict((const T *)m, r, &memo, scores, out);                                             \
    }                                                                                                          \
    FZ_SCRATCH_BATCH(SFX, PFX, T, S, fz_self)

/* The same on an fz_ctx (trees): the lazy walk on the caller's memo with scores of type S; raw_SFX is the
 * eager call on the bare model (the null-each test's). */
#define FZ_CTX_SCRATCH_ADAPTERS(SFX, PFX, T, S)                                        \
    FZ_VEC_ADAPTER(raw_##SFX, PFX, T, fz_self)                                           \
    FZ_VEC_ADAPTER(eager_##SFX, PFX, T, fz_ctx_model)                                    \
    static int lazy_##SFX(const void *c, const fm_reader *r, fm_result *out)            \
    {                                                                                    \
        const fz_ctx *k = (const fz_ctx *)c;                                             \
        S scores[FZ_MAX_OUTPUTS];                                                        \
        return PFX##_predict((const T *)k->m, r, k->memo, scores, out);                  \
    }                                                                                    \
    FZ_SCRATCH_BATCH(SFX, PFX, T, S, fz_ctx_model)

/* lazy_SFX and batch_SFX (on an fz_ctx) of a family whose predict takes no scores: PFX_predict(m, r, memo, out),
 * PFX_scratch_size(m), PFX_scratch_init(m, buf, size, memo), PFX_predict_batch(m, X, rows, cols, memo, out,
 * n_done); the batch adapter checks the scratch size as FZ_SCRATCH_BATCH does. */
#define FZ_MEMO_ADAPTERS(SFX, PFX, T)                                                                  \
    static int lazy_##SFX(const void *c, const fm_reader *r, fm_result *out)                           \
    {                                                                                                   \
        const fz_ctx *k = (const fz_ctx *)c;                                                            \
        return PFX##_predict((const T *)k->m, r, k->memo, out);                                         \
    }                                                                                                   \
    static int batch_##SFX(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out, \
                           uint32_t *n_done)                                                            \
    {                                                                                                   \
        const T *m = (const T *)fz_ctx_model(c);                                                        \
        fz_scratch buf;                                                                                 \
        fm_memo memo;                                                                                   \
        const size_t size = PFX##_scratch_size(m);                                                      \
        fz_scratch_fits(size, size > 0u ? PFX##_scratch_init(m, &buf, size - 4u, &memo) : FM_E_ARG);   \
        fz_require(PFX##_scratch_init(m, &buf, size, &memo) == FM_OK);                                  \
        return PFX##_predict_batch(m, X, rows, cols, &memo, out, n_done);                               \
    }

/* The entry point's branch of a harness on an fz_ctx (linear, trees): builds model m (struct T) by
 * BUILD(&in, &a, &m, nf, costs) with the optional costs read by FC into costs_ and runs the accepted model
 * through fz_run with the null-each test NULLS(&nulls) (fz_self or FZ_TREE_NULLS) and the labels up to
 * MAX_LABEL(m). The harness holds the input in, the arrays a, the features nf and the memo. */
#define fz_one_label(m) 1
#define FZ_CTX_RUN(T, SFX, PTRS, BUILD, FC, costs_, NULLS, MAX_LABEL)                                    \
    do {                                                                                                  \
        T m;                                                                                              \
        fz_ctx k = {&m, &memo};                                                                           \
        const fz_nulls nulls = FZ_NULLS(&m, PTRS, check_##SFX, raw_##SFX);                                \
        BUILD(&in, &a, &m, nf, FZ_OPTIONAL(&in, FC, costs_, nf));                                         \
        if (check_##SFX(&m) == FM_OK) {                                                                   \
            fz_run(&in, &k, nf, eager_##SFX, lazy_##SFX, batch_##SFX, NULLS(&nulls), 0, MAX_LABEL(m));    \
        }                                                                                                 \
    } while (0)

/* eager_SFX, lazy_SFX and batch_SFX of a family that keeps no memo (nb, nbk) on the bare model:
 * PFX_predict_vec, PFX_predict(m, r, out), PFX_predict_batch(m, X, rows, cols, out, n_done). */
#define FZ_PLAIN_ADAPTERS(SFX, PFX, T)                                                                  \
    FZ_VEC_ADAPTER(eager_##SFX, PFX, T, fz_self)                                                          \
    static int lazy_##SFX(const void *m, const fm_reader *r, fm_result *out)                            \
    {                                                                                                     \
        return PFX##_predict((const T *)m, r, out);                                                       \
    }                                                                                                     \
    static int batch_##SFX(const void *m, const float *X, uint32_t rows, uint32_t cols, fm_result *out, \
                           uint32_t *n_done)                                                              \
    {                                                                                                     \
        return PFX##_predict_batch((const T *)m, X, rows, cols, out, n_done);                            \
    }

#endif /* FM_FUZZ_BUILD_H */
