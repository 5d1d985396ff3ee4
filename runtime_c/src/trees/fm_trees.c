/* frugalml runtime: tree ensembles in compact tables (see fm_trees.h). */
#include "fm_trees.h"
#include "fm_port.h"
#include "fm_batch.h"
#include "fm_fixed.h"

#define FM_WALK FM_ALWAYS_INLINE

/* ---- load-time checks ------------------------------------------------ */

static int finite_f32(const float *a, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; ++i) {
        if (fm_bits_nonfinite(fm_float_bits(a[i]))) {
            return 0;
        }
    }
    return 1;
}

/* The shape of runs (fm_trees.h, `run`): run 0 or 1, or R = n_outputs >= 2 dividing n_trees with tree j of every
 * run on output j and every tree of a run as many internal nodes as its first (node_end and tree_output only:
 * call first); shared_splits 0, or 1 with runs. */
static int run_shape_valid(uint32_t run, uint32_t shared_splits, uint32_t n_outputs, uint32_t n_trees,
                           const uint32_t *node_end, const uint16_t *tree_output)
{
    uint32_t t;
    uint32_t start = 0u;
    if (shared_splits > 1u || (shared_splits == 1u && run <= 1u)) {
        return 0;
    }
    if (run <= 1u) {
        return 1;
    }
    if (node_end == NULL || tree_output == NULL || run != n_outputs || n_trees % run != 0u) {
        return 0;
    }
    for (t = 0; t < n_trees; t += run) {
        const uint32_t n_inner = node_end[t] - start;
        uint32_t j;
        for (j = 0; j < run; ++j) {
            const uint32_t first = (t + j == 0u) ? 0u : node_end[t + j - 1u];
            if (tree_output[t + j] != j || node_end[t + j] - first != n_inner) {
                return 0; /* (unsigned: a decreasing node_end fails here or in structure_valid) */
            }
        }
        start = node_end[t + run - 1u];
    }
    return 1;
}

/* Structure shared by the float32 and q15 tables; *n_splits: the entries of the split arrays (feature,
 * threshold, child) the trees use. once = R >= 2 when each run of R trees stores its splits once (shared_splits;
 * run_shape_valid first), else 0. */
static int structure_valid(uint32_t n_features, uint32_t n_outputs, uint32_t n_trees, uint32_t n_nodes,
                           const uint32_t *node_end, const uint16_t *feature, const uint32_t *child,
                           const uint16_t *tree_output, uint32_t once, uint32_t *n_splits)
{
    uint32_t t;
    uint32_t start = 0u;
    uint32_t sp = 0u;  /* the current tree's first split */
    uint32_t in_run = 0u; /* tree t is tree in_run of its run (once) */
    if (n_outputs == 0u || n_nodes > 0x7fffffffu || n_trees > 0x7fffffffu - n_nodes) {
        return 0;
    }
    /* no table NULL (but child: the implicit layout): the walks offset each by the first tree's
     * first node, NULL + 0 is undefined even without trees or internal nodes; generated headers and
     * the binding pass a one-element array for an empty table */
    if (feature == NULL || node_end == NULL || tree_output == NULL) {
        return 0;
    }
    for (t = 0; t < n_trees; ++t) {
        uint32_t stop = node_end[t];
        uint32_t n_inner;
        uint32_t i;
        if (stop < start || stop > n_nodes || tree_output[t] >= n_outputs) {
            return 0;
        }
        n_inner = stop - start;
        if (child == NULL && ((n_inner + 1u) & n_inner) != 0u) {
            return 0; /* implicit trees are complete: I_t + 1 is a power of two */
        }
        if (in_run == 0u) { /* a tree with its own splits (every tree unless once) */
            for (i = 0; i < n_inner; ++i) {
                if (feature[sp + i] >= n_features) {
                    return 0;
                }
                if (child != NULL) {
                    uint32_t c = child[sp + i];
                    /* forward (no cycles), inside the tree, a pair never straddles nodes and leaves */
                    if (c <= i || c >= 2u * n_inner || c == n_inner - 1u) {
                        return 0;
                    }
                }
            }
            sp += n_inner;
        }
        if (once != 0u && ++in_run == once) {
            in_run = 0u;
        }
        start = stop;
    }
    *n_splits = sp;
    return start == n_nodes;
}

/* depth == 0, or the implicit layout with every tree complete of that depth (node_end[t] = (t + 1) * I).
 * Call after structure_valid. */
static int depth_valid(uint32_t depth, uint32_t n_trees, const uint32_t *node_end, const uint32_t *child)
{
    uint32_t t;
    uint32_t n_inner;
    if (depth == 0u) {
        return 1;
    }
    if (depth > 20u || child != NULL) {
        return 0;
    }
    n_inner = (1u << depth) - 1u;
    for (t = 0; t < n_trees; ++t) {
        if (node_end[t] != (t + 1u) * n_inner) {
            return 0;
        }
    }
    return 1;
}

/* Runs whose trees each hold their own copy of the splits (run >= 2, shared_splits 0): every tree of a run has the
 * features, thresholds bit for bit (th_size bytes each) and children of its first tree. Call after
 * run_shape_valid and structure_valid. */
static int run_copies_equal(uint32_t run, uint32_t n_trees, const uint32_t *node_end, const uint16_t *feature,
                            const void *th, size_t th_size, const uint32_t *child)
{
    const unsigned char *tb = (const unsigned char *)th;
    uint32_t t;
    uint32_t start = 0u;
    for (t = 0; run > 1u && t < n_trees; t += run) {
        const uint32_t n_inner = node_end[t] - start;
        uint32_t j;
        for (j = 1; j < run; ++j) {
            const uint32_t other = node_end[t + j - 1u]; /* tree t + j's first node */
            uint32_t i;
            for (i = 0; i < n_inner; ++i) {
                if (feature[other + i] != feature[start + i] ||
                    (child != NULL && child[other + i] != child[start + i])) {
                    return 0;
                }
            }
            for (i = 0; i < n_inner * th_size; ++i) {
                if (tb[other * th_size + i] != tb[start * th_size + i]) {
                    return 0;
                }
            }
        }
        start = node_end[t + run - 1u];
    }
    return 1;
}

/* Where the runs' walks (fm_trees_impl.h, fm_trees_ewalk_impl.h) start on tree `first` of a table with runs
 * of R > 1 trees (run_shape_valid): *rs its run's first tree (tree first is tree to[first] of its run: no
 * division), *start that tree's first internal node slot (node_end[rs - 1]; the leaves follow from it) and
 * *split the run's first split: *start, or *start / R with shared_splits (the runs before hold R trees of equal
 * node counts each; one division per call, on the first run only). */
static void run_start(const uint32_t *node_end, const uint16_t *to, uint32_t R, uint32_t shared, uint32_t first,
                      uint32_t *rs, uint32_t *start, uint32_t *split)
{
    *rs = first - to[first];
    *start = (*rs == 0u) ? 0u : node_end[*rs - 1u];
    *split = shared ? *start / R : *start;
}

/* The start of a loop body over the costs: cost c = mant * 2^ex with mant odd (declares mant and ex), and
 * `continue` when c is zero. */
#define FM_COST_ODD(c, mant, ex)                                                                              \
    const uint32_t b_ = fm_float_bits(c) & 0x7fffffffu;                                                       \
    uint32_t mant = b_ & 0x7fffffu;                                                                           \
    int32_t ex = (int32_t)(b_ >> 23);                                                                         \
    if (b_ == 0u) {                                                                                           \
        continue;                                                                                             \
    }                                                                                                         \
    if (ex == 0) {                                                                                            \
        ex = 1; /* subnormal */                                                                               \
    } else {                                                                                                  \
        mant |= 0x800000u;                                                                                    \
    }                                                                                                         \
    ex -= 150;                                                                                                \
    while ((mant & 1u) == 0u) {                                                                               \
        mant >>= 1;                                                                                           \
        ++ex;                                                                                                 \
    }                                                                                                         \
    (void)0

/* Costs (finite, >= 0: call after fm_costs_ok) are order-exact: every cost is k_j * 2^e for one e, with
 * integers k_j and sum_j k_j < 2^24, so that every partial sum is exact in float32, in any order. */
static int costs_order_exact(const float *costs, uint32_t n)
{
    uint32_t j;
    int32_t e = 1000;
    uint32_t sum = 0u;
    if (costs == NULL) {
        return 1;
    }
    /* the smallest exponent of a lowest set bit: costs[j] = mant_j * 2^(ex_j), mant_j odd */
    for (j = 0; j < n; ++j) {
        FM_COST_ODD(costs[j], mant, ex);
        if (ex < e) {
            e = ex;
        }
    }
    for (j = 0; j < n; ++j) {
        FM_COST_ODD(costs[j], mant, ex);
        /* k_j = mant * 2^(ex - e) must keep the sum below 2^24 */
        if (ex - e >= 24 || mant >= (0x1000000u >> (uint32_t)(ex - e))) {
            return 0;
        }
        mant <<= (uint32_t)(ex - e);
        if (mant >= 0x1000000u - sum) {
            return 0;
        }
        sum += mant;
    }
    return 1;
}

/* The float32 split dictionary (fm_trees.h, "Split dictionary"): split == NULL with the per-node arrays
 * (feature, threshold) and no dictionary (split_feature, split_threshold NULL, n_splits 0); or split != NULL with
 * feature and threshold NULL and n_splits <= 65536 pairs of a feature < n_features and a finite threshold (the
 * codes are checked by structure_valid). */
static int split_dict_valid(const fm_trees *m)
{
    uint32_t k;
    if (m->split == NULL) {
        return m->threshold != NULL && m->split_feature == NULL && m->split_threshold == NULL && m->n_splits == 0u;
    }
    if (m->feature != NULL || m->threshold != NULL || m->split_feature == NULL || m->split_threshold == NULL ||
        m->n_splits > 65536u || !finite_f32(m->split_threshold, m->n_splits)) {
        return 0;
    }
    for (k = 0; k < m->n_splits; ++k) {
        if (m->split_feature[k] >= m->n_features) {
            return 0;
        }
    }
    return 1;
}

int fm_trees_check(const fm_trees *m)
{
    uint32_t n_leaves;
    uint32_t n_splits;
    int dict;
    if (m == NULL) {
        return FM_E_ARG;
    }
    dict = m->split != NULL;
    if (!split_dict_valid(m)) {
        return FM_E_MODEL;
    }
    /* with the dictionary the split codes stand where the features were, bounded by n_splits */
    if (!run_shape_valid(m->run, m->shared_splits, m->n_outputs, m->n_trees, m->node_end, m->tree_output) ||
        !structure_valid(dict ? m->n_splits : m->n_features, m->n_outputs, m->n_trees, m->n_nodes, m->node_end,
                         dict ? m->split : m->feature, m->child, m->tree_output, m->shared_splits ? m->run : 0u,
                         &n_splits)) {
        return FM_E_MODEL;
    }
    n_leaves = m->n_nodes + m->n_trees;
    if (m->leaf == NULL || m->base_score == NULL) {
        return FM_E_MODEL;
    }
    if ((!dict && !finite_f32(m->threshold, n_splits)) || !finite_f32(m->leaf, n_leaves) ||
        !finite_f32(m->base_score, m->n_outputs) || !finite_f32(&m->decision_threshold, 1u) ||
        !fm_costs_ok(m->costs, m->n_features)) {
        return FM_E_MODEL;
    }
    if (!depth_valid(m->depth, m->n_trees, m->node_end, m->child) || m->exact_costs > 1u ||
        (m->exact_costs == 1u && !costs_order_exact(m->costs, m->n_features)) ||
        (!m->shared_splits && !run_copies_equal(m->run, m->n_trees, m->node_end, dict ? m->split : m->feature,
                                                dict ? (const void *)m->split : (const void *)m->threshold,
                                                dict ? sizeof(uint16_t) : sizeof(float), m->child))) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

int fm_trees_q15_check(const fm_trees_q15 *m)
{
    uint32_t n_splits;
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!run_shape_valid(m->run, m->shared_splits, m->n_outputs, m->n_trees, m->node_end, m->tree_output) ||
        !structure_valid(m->n_features, m->n_outputs, m->n_trees, m->n_nodes, m->node_end, m->feature,
                         m->child, m->tree_output, m->shared_splits ? m->run : 0u, &n_splits)) {
        return FM_E_MODEL;
    }
    if (m->threshold_q == NULL || m->leaf_q == NULL ||
        m->base_q == NULL || m->shift > 30u || !depth_valid(m->depth, m->n_trees, m->node_end, m->child) ||
        (!m->shared_splits && !run_copies_equal(m->run, m->n_trees, m->node_end, m->feature, m->threshold_q,
                                                sizeof(uint16_t), m->child))) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---- eager walks (fm_trees.h, "Eager walks") ------------------------------ */

/* Marks: one byte per feature in 32-bit words (cleared and counted a word at a time). */
static void marks_clear(uint32_t *mark, uint32_t n)
{
    uint32_t w;
    for (w = 0; w < (n + 3u) / 4u; ++w) {
        mark[w] = 0u;
    }
}

/* Number of marked features: byte lanes summed per word (each lane <= 128 for n <= 512). */
FM_WALK uint32_t marks_count(const uint32_t *mark, uint32_t n)
{
    const uint32_t words = (n + 3u) / 4u;
    uint32_t w;
    uint32_t s = words & 1u ? mark[0] : 0u;
    for (w = words & 1u; w < words; w += 2u) { /* two words per step */
        s += mark[w] + mark[w + 1u];
    }
    s = (s & 0x00ff00ffu) + ((s >> 8) & 0x00ff00ffu);
    return (s & 0xffffu) + (s >> 16);
}

/* Bit 31 set when the float's exponent is all ones (NaN or infinity). */
#define FM_NONFINITE_BIT(bits) (((bits) & 0x7f800000u) + 0x00800000u)

/* Nonzero when some value of x[0..n) is NaN or infinite (x86 with SSE2: nonzero also when the float sum of
 * a lane overflows, fm_port.h; then the caller's exact test of the marked features decides). */
#ifdef FM_ANY_NONFINITE
#define any_nonfinite(x, n) FM_ANY_NONFINITE(x, n)
#else
static uint32_t any_nonfinite(const float *x, uint32_t n)
{
    uint32_t f;
    uint32_t bad = 0u;
    for (f = 0; f < n; ++f) {
        bad |= FM_NONFINITE_BIT(fm_float_bits(x[f]));
    }
    return bad & 0x80000000u;
}
#endif

/* Nonzero when some marked feature's value is NaN or infinite. */
static uint32_t marked_nonfinite(const float *x, const uint8_t *mark, uint32_t n)
{
    uint32_t f;
    uint32_t bad = 0u;
    for (f = 0; f < n; ++f) {
        bad |= FM_NONFINITE_BIT(fm_float_bits(x[f])) & (0u - (uint32_t)mark[f]);
    }
    return bad & 0x80000000u;
}

/* ---- the eager walks' steps ------------------------------------------------------------------------------
 * Written once in fm_trees_ewalk_impl.h over the E_* hooks that fm_trees.c sets for float32, then q15.
 *
 * 0-based form: the tree's nodes start at index B of fe/th, local node l = i - B moves to 2l + 1 + (go
 * right), i = 2i + 1 - B + E_RIGHT0 (float32: x > t; q15: the sign of t - k, 16-bit operands, no
 * overflow).
 *
 * 1-based heap form: nodes count from 1 (node l's children are 2l and 2l + 1, at fe[l] and th[l] with fe
 * and th one slot before the tree, see FM_HEAP_BASE): l = 2l + (go right), the outcome a carry added with
 * carry (l + l + C). q15 (FM_HEAP_STEP): the eager keys are fm_ukey16(x) - FM_EKEY_SUB (uint16) and the
 * thresholds biased keys (fm_trees.h), so going right, fm_ukey16(x) > threshold, is one unsigned compare:
 * on 32-bit Arm `cmp key, t` sets C iff key >= t (keys fm_ukey16 - 1, wrapping to 0xffff only for NaNs,
 * which fail the prediction anyway); on x86 `cmp` sets CF iff t < key (keys fm_ukey16). float32
 * (FM_F32_GT_STEP: a single-precision FPU on 32-bit Arm, l = (l + l + C) ^ 1 with no register-offset vldr
 * to save; x86-64 comiss). The root step (E_HEAP_ROOT) is l = one + one + C, `one` a register holding 1.
 * fm_port.h defines them where the target has the carry step; elsewhere (Thumb-1, AArch64, FM_PORTABLE)
 * the walk is the 0-based one. */
#ifndef FM_EKEY_SUB
#define FM_EKEY_SUB 0u
#define FM_EKEY_RIGHT(k, t) ((k) > (t))
#endif
/* p - k as an address (p may be an array's first element: no pointer before it is formed by pointer
 * arithmetic); read only at indices >= k. */
#define FM_HEAP_BASE(T, p, k) ((const T *)((uintptr_t)(p) - (uintptr_t)(k) * sizeof(T)))

/* One step of the 0-based walk (in: what the walk compares, x or the keys). */
#define FM_STEP0(i, B)                                                                                        \
    do {                                                                                                      \
        const size_t f_ = E_FEAT(fe, i);                                                                      \
        const size_t r_ = E_RIGHT0(in[f_], E_THR(th, i));                                                     \
        mark[f_] = 1u;                                                                                        \
        (i) = 2u * (i) + 1u - (B) + r_;                                                                       \
    } while (0)

/* One step of the heap walk from node n with STEP (E_HEAP_ROOT or E_HEAP_STEP); q15 reads its key before
 * the mark (E_HEAP_KEY), float32 compares x[f] straight from memory (E_HEAP_IN). */
#define FM_HEAP_NODE(STEP, l, n)                                                                              \
    do {                                                                                                      \
        const uint32_t f_ = E_FEAT(fe, n);                                                                    \
        E_HEAP_KEY(k_, f_)                                                                                    \
        const E_HEAP_TH t_ = E_THR(th, n);                                                                    \
        mark[f_] = 1u;                                                                                        \
        STEP(l, E_HEAP_IN(k_, f_), t_);                                                                       \
    } while (0)
/* D (a constant 1..4) steps down a tree whose nodes are fe[1..], from the root to l in 2^D .. 2^(D+1)-1. */
#define FM_WALK_LEVELS_HEAP(l)                                                                                \
    do {                                                                                                      \
        FM_HEAP_NODE(E_HEAP_ROOT, l, 1);                                                                      \
        if (D > 1u) {                                                                                         \
            FM_HEAP_NODE(E_HEAP_STEP, l, l);                                                                  \
        }                                                                                                     \
        if (D > 2u) {                                                                                         \
            FM_HEAP_NODE(E_HEAP_STEP, l, l);                                                                  \
        }                                                                                                     \
        if (D > 3u) {                                                                                         \
            FM_HEAP_NODE(E_HEAP_STEP, l, l);                                                                  \
        }                                                                                                     \
    } while (0)

/* D (a constant 1..4) steps down a tree whose nodes start at B. */
#define FM_WALK_LEVELS(STEP, i, B)                                                                            \
    do {                                                                                                      \
        STEP(i, B);                                                                                           \
        if (D > 1u) {                                                                                         \
            STEP(i, B);                                                                                       \
        }                                                                                                     \
        if (D > 2u) {                                                                                         \
            STEP(i, B);                                                                                       \
        }                                                                                                     \
        if (D > 3u) {                                                                                         \
            STEP(i, B);                                                                                       \
        }                                                                                                     \
    } while (0)

/* A leaf value v: into acc (one output: single, a constant in each instance) or into the tree's output
 * (to walks tree_output). */
#define FM_LEAF_ADD(v)                                                                                        \
    do {                                                                                                      \
        if (single) {                                                                                         \
            acc = acc + (v);                                                                                  \
        } else {                                                                                              \
            scores[*to] = scores[*to] + (v);                                                                  \
            ++to;                                                                                             \
        }                                                                                                     \
    } while (0)

/* 1 when adding `trees` leaves (|leaf| <= 32768) to s cannot leave int32. */
static int q_no_overflow(int32_t s, uint32_t trees)
{
    const uint32_t a = (s < 0) ? 0u - (uint32_t)s : (uint32_t)s;
    return a <= 0x7fffffffu && trees <= ((0x7fffffffu - a) >> 15);
}

static void zero_result(fm_result *res)
{
    FM_RESULT_ZERO(res);
}

int fm_trees_eager_ok(const fm_trees *m)
{
    return m != NULL && m->n_features <= FM_VEC_MAX_FEATURES && (m->costs == NULL || m->exact_costs == 1u);
}

int fm_trees_q15_eager_ok(const fm_trees_q15 *m)
{
    return m != NULL && m->n_features <= FM_VEC_MAX_FEATURES;
}

/* Eager keys: fm_ukey16 - FM_EKEY_SUB = (fm_key_bits + 2^31 - 2^16 * FM_EKEY_SUB) >> 16, with fm_key_bits =
 * (bits ^ (neg >> 1)) - neg (neg: all ones when negative); FM_EKEY_SUB == 1 wraps to 0xffff only for NaNs
 * (fm_key16 = -32768). bad collects FM_NONFINITE_BIT. */
#define FM_EKEY_C (0x80000000u - 0x10000u * FM_EKEY_SUB)
#ifndef FM_EKEY /* 32-bit Arm: 7 instructions in fm_port.h */
#define FM_EKEY(dst, bits, bad)                                                                               \
    do {                                                                                                      \
        const uint32_t b_ = (bits);                                                                           \
        const uint32_t neg_ = 0u - (b_ >> 31);                                                                \
        (bad) |= FM_NONFINITE_BIT(b_);                                                                        \
        (dst) = (uint16_t)(((b_ ^ (neg_ >> 1)) + (FM_EKEY_C - neg_)) >> 16);                                  \
    } while (0)
#define FM_EKEY_BAD(bad) ((bad) >> 31)
/* Keeps GCC from merging the 16-bit key stores into words (bit-field inserts cost more than the stores). */
#define FM_NO_MERGE() FM_COMPILER_BARRIER()
#endif
#ifndef FM_LOAD2 /* Thumb-2: one ldrd in fm_port.h */
#define FM_LOAD2(b0, b1, x)                                                                                   \
    do {                                                                                                      \
        (b0) = fm_float_bits((x)[0]);                                                                         \
        (b1) = fm_float_bits((x)[1]);                                                                         \
        (x) += 2;                                                                                             \
    } while (0)
#endif
/* Keys of x[0 .. n-1] and cleared marks, four features (one mark word) per step; non-zero when some x[f]
 * is not finite. */
FM_WALK uint32_t q_keys_marks(const float *x, uint32_t n, uint16_t *keys, uint32_t *mark)
{
    const float *end4 = x + (n & ~3u);
    uint32_t bad = 0u;
    uint32_t f;
    while (x != end4) {
        uint32_t b0;
        uint32_t b1;
        FM_LOAD2(b0, b1, x);
        FM_EKEY(keys[0], b0, bad);
        FM_EKEY(keys[1], b1, bad);
        FM_NO_MERGE();
        FM_LOAD2(b0, b1, x);
        FM_EKEY(keys[2], b0, bad);
        FM_NO_MERGE();
        FM_EKEY(keys[3], b1, bad);
        *mark++ = 0u;
        keys += 4;
    }
    if (n & 3u) {
        *mark = 0u;
        for (f = 0; f < (n & 3u); ++f) {
            FM_EKEY(keys[f], fm_float_bits(x[f]), bad);
        }
    }
    return FM_EKEY_BAD(bad);
}

/* The marked features' cost (res->n_read set): float32 in feature index order (the costs are order-exact,
 * fm_trees_eager_ok), q15 an integer sum (<= 512 * 65535: no saturation). */
#define FM_F32_MARKED_COST(costs, mark, n, res)                                                                   \
    do {                                                                                                      \
        float cost_ = 0.0f;                                                                                   \
        if ((costs) == NULL) {                                                                                \
            cost_ = (float)(res)->n_read;                                                                     \
        } else {                                                                                              \
            uint32_t f_;                                                                                      \
            for (f_ = 0; f_ < (n); ++f_) {                                                                    \
                if ((mark)[f_]) {                                                                             \
                    cost_ = cost_ + (costs)[f_];                                                              \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        (res)->cost = cost_;                                                                                  \
    } while (0)
#define FM_Q_MARKED_COST(costs, mark, n, res)                                                                     \
    do {                                                                                                      \
        if ((costs) == NULL) {                                                                                \
            (res)->cost_q = (res)->n_read;                                                                    \
        } else {                                                                                              \
            uint32_t f_;                                                                                      \
            uint32_t cost_ = 0u;                                                                              \
            for (f_ = 0; f_ < (n); ++f_) {                                                                    \
                cost_ += (uint32_t)(mark)[f_] * (uint32_t)(costs)[f_];                                        \
            }                                                                                                 \
            (res)->cost_q = cost_;                                                                            \
        }                                                                                                     \
    } while (0)

/* Node i's feature and threshold in the walks (the E_FEAT / E_THR and T_FEAT / T_THR hooks): fe[i], th[i] from the
 * per-node arrays, or through the split dictionary (fm_trees.h, "Split dictionary"): fe walks the split codes and
 * th, walking them too, is unread; FM_DICT_VARS(obj) declares the dictionary's d_sf, d_st from m or the walk_env. */
#define FM_NODE_FEAT(fe, i) (fe)[i]
#define FM_NODE_THR(th, i) (th)[i]
#define FM_DICT_FEAT(fe, i) d_sf[(fe)[i]]
#define FM_DICT_THR(th, i) ((void)(th), d_st[fe[i]])
#define FM_DICT_VARS(obj)                                                                                     \
    const uint16_t *const d_sf = (obj)->split_feature;                                                        \
    const float *const d_st = (obj)->split_threshold;

/* ---- float32 then q15: fm_trees_ewalk_impl.h (the walks, their dispatch, fm_trees*_eager_start|walk|finish) */

/* float32: the split dictionary's walks first (ewalk_d, reached from ewalk_f32's E_DICT_DISPATCH; that instance
 * leaves the hooks before E_TH defined), then the per-node arrays' */
#define E_MODEL fm_trees
#define E_EAGER fm_trees_eager
#define E_IN float
#define E_LEAF float
#define E_ACC float
#define E_FN(n) fm_trees_##n
#define E_LEAVES(m) ((m)->leaf)
#define E_BASE(m) ((m)->base_score)
#define E_RIGHT(k, t) ((k) > (t))
#define E_RIGHT0(k, t) ((k) > (t) ? 1u : 0u)
#define E_SAT_ADD(a, v) ((a) + (v))
#define E_Q 0
#if defined(FM_F32_GT_STEP)
#define E_HEAP 1
#define E_HEAP_KEY(k, f)
#define E_HEAP_IN(k, f) in[f]
#define E_HEAP_TH float
#define E_HEAP_ROOT(l, k, t) FM_F32_GT_ROOT(l, k, t, one)
#define E_HEAP_STEP(l, k, t) FM_F32_GT_STEP(l, k, t)
#else
#define E_HEAP 0
#endif
#define E_MARKS_START(m, x, e) marks_clear((e)->mark, (m)->n_features)
#define E_WALK_X const float *x,
#define E_WALK_X_NULL x == NULL ||
#define E_WALK_IN(x, e) (x)
#define E_MAYBE_NONFINITE(x, e, n) any_nonfinite(x, n) /* every feature (no mark test) first */
#define E_FINISH_COSTS(m) const float *costs = (m)->costs;
#define E_COSTS(m) costs
#define E_MARKED_COST FM_F32_MARKED_COST
#define E_TH uint16_t /* th walks the split codes too (unread) */
#define E_NAME(n) ewalk_d_##n
#define E_WALK ewalk_d
#define E_WALK_STORAGE static FM_NOINLINE
#define E_THRS(m) ((m)->split)
#define E_FEATS(m) ((m)->split)
#define E_FEAT FM_DICT_FEAT
#define E_THR FM_DICT_THR
#define E_DICT_VARS FM_DICT_VARS
#define E_DICT 1
#define E_DICT_DISPATCH
#include "fm_trees_ewalk_impl.h"

#define E_TH float
#define E_NAME(n) ewalk_f32_##n
#define E_WALK ewalk_f32
#define E_WALK_STORAGE static
#define E_THRS(m) ((m)->threshold)
#define E_FEATS(m) ((m)->feature)
#define E_FEAT FM_NODE_FEAT
#define E_THR FM_NODE_THR
#define E_DICT_VARS(m)
#define E_DICT 0
#define E_DICT_DISPATCH                                                                                       \
    if (m->split != NULL) { /* the split dictionary */                                                        \
        ewalk_d(m, first, end, in, mark, scores);                                                             \
        return;                                                                                               \
    }
#include "fm_trees_ewalk_impl.h"

#define E_MODEL fm_trees_q15
#define E_EAGER fm_trees_q15_eager
#define E_IN uint16_t
#define E_TH uint16_t
#define E_LEAF int16_t
#define E_ACC int32_t
#define E_NAME(n) ewalk_q_##n
#define E_WALK ewalk_q
#define E_WALK_STORAGE FM_WALK
#define E_FN(n) fm_trees_q15_##n
#define E_THRS(m) ((m)->threshold_q)
#define E_LEAVES(m) ((m)->leaf_q)
#define E_BASE(m) ((m)->base_q)
#define E_RIGHT(k, t) FM_EKEY_RIGHT((uint32_t)(k), (uint32_t)(t))
#define E_RIGHT0(k, t) (size_t)((uint32_t)((int32_t)(t) - (int32_t)(k)) >> 31)
#define E_SAT_ADD(a, v) fm_add_sat32((a), (v))
#define E_Q 1
#if defined(FM_HEAP_STEP)
#define E_HEAP 1
#define E_HEAP_KEY(k, f) const uint32_t k = in[f];
#define E_HEAP_IN(k, f) k
#define E_HEAP_TH uint32_t
#define E_HEAP_ROOT(l, k, t) FM_HEAP_ROOT(l, k, t, one)
#define E_HEAP_STEP(l, k, t) FM_HEAP_STEP(l, k, t)
#else
#define E_HEAP 0
#endif
#define E_MARKS_START(m, x, e) ((e)->nonfinite = q_keys_marks(x, (m)->n_features, (e)->keys, (e)->mark) != 0u)
#define E_WALK_X
#define E_WALK_X_NULL
#define E_WALK_IN(x, e) ((e)->keys)
#define E_MAYBE_NONFINITE(x, e, n) (e)->nonfinite /* some key was not finite */
#define E_FINISH_COSTS(m)
#define E_COSTS(m) ((m)->costs)
#define E_MARKED_COST FM_Q_MARKED_COST
#define E_FEATS(m) ((m)->feature)
#define E_FEAT FM_NODE_FEAT
#define E_THR FM_NODE_THR
#define E_DICT_VARS(m)
#define E_DICT 0
#define E_DICT_DISPATCH
#include "fm_trees_ewalk_impl.h"

/* ---- first use of a feature on the eager path --------------------------- */

/* Stamp feature f as read with float32 accounting; FM_E_VALUE when x[f] is
 * not finite (the lazy path's fm_memo_get with a vector reader, minus the
 * callback). */
static int touch_f32(fm_memo *memo, const float *costs, const float *x, uint32_t f, fm_result *res)
{
    float v = x[f];
    if (fm_bits_nonfinite(fm_float_bits(v))) {
        return FM_E_VALUE;
    }
    FM_MEMO_STORE(memo, f, v);
    res->n_read += 1u;
    res->cost = res->cost + (costs != NULL ? costs[f] : 1.0f);
    return FM_OK;
}

static int touch_q(fm_memo *memo, const uint16_t *costs, const float *x, uint32_t f, fm_result *res)
{
    float v = x[f];
    uint32_t c;
    if (fm_bits_nonfinite(fm_float_bits(v))) {
        return FM_E_VALUE;
    }
    memo->values[f] = v;
    memo->seen[f] = memo->epoch;
    memo->keys[f] = (int16_t)fm_key16(fm_float_bits(v));
    c = costs != NULL ? (uint32_t)costs[f] : 1u;
    res->n_read += 1u;
    res->cost_q = fm_cost_add_sat(res->cost_q, c);
    return FM_OK;
}

/* ---- the walk ------------------------------------------------------------
 * A slice of trees is walked by a call-free loop (run_*) that returns when it
 * meets a feature this prediction has not used yet (at most once per feature
 * per slice) or when the slice is done; the caller then reads/stamps the
 * feature (fm_memo_get or the eager touch) and resumes. Keeping calls out of
 * the loop lets the compiler hold the walk in registers. */

#define FM_WALK_DONE 0xffffffffu

/* Where a walk stands: the current tree's tables, local node and sums. */
typedef struct {
    const uint16_t *fe;   /* current tree's features */
    const void *th;       /* current tree's thresholds (float or int16_t) */
    const uint32_t *ch;   /* current tree's child table (explicit layout) */
    const void *lf;       /* current tree's leaves (float or int16_t) */
    const uint32_t *ne;   /* node_end of the next tree */
    const uint16_t *to;   /* current tree's output */
    uint32_t prev;        /* current tree's node_end */
    uint32_t n_inner;     /* current tree's internal nodes */
    uint32_t i;           /* current local node */
    int active;           /* 0 once the slice is done */
    float acc;            /* float32, one output: the running score */
    int32_t acc_q;        /* q15, one output */
} walk_state;

/* What the loop reads besides the state. */
typedef struct {
    const uint32_t *ne_end;
    const void *values;   /* eager float32: x; lazy: memo values; eager q15: memo keys */
    uint8_t *seen;
    uint8_t epoch;
    void *scores;
    /* eager: the first use of a finite feature is accounted in the loop */
    const float *x;
    fm_memo *memo;
    fm_result *res;
    const void *costs;
    /* the float32 split dictionary's walks (T_DICT): its features and thresholds */
    const uint16_t *split_feature;
    const float *split_threshold;
} walk_env;

/* Eager first use of feature f inside the loop: stamp, copy and account it
 * (the same as touch_f32 / touch_q); 0 when x[f] is not finite (the caller
 * then reports FM_E_VALUE through touch_*). */
FM_WALK int stamp_eager(const walk_env *env, uint32_t f, int q)
{
    const float v = env->x[f];
    const uint32_t bits = fm_float_bits(v);
    fm_memo *memo = env->memo;
    fm_result *res = env->res;
    if (fm_bits_nonfinite(bits)) {
        return 0;
    }
    memo->values[f] = v;
    env->seen[f] = env->epoch;
    if (memo->keys != NULL) {
        memo->keys[f] = (int16_t)fm_key16(bits);
    }
    res->n_read += 1u;
    if (q) {
        const uint16_t *costs = (const uint16_t *)env->costs;
        const uint32_t c = costs != NULL ? (uint32_t)costs[f] : 1u;
        res->cost_q = fm_cost_add_sat(res->cost_q, c);
    } else {
        const float *costs = (const float *)env->costs;
        res->cost = res->cost + (costs != NULL ? costs[f] : 1.0f);
    }
    return 1;
}

static void walk_init(walk_state *st, const uint16_t *feature, const void *th, size_t th_size,
                      const uint32_t *child, const void *leaf, size_t leaf_size, const uint32_t *node_end,
                      const uint16_t *tree_output, uint32_t first_tree, uint32_t end_tree)
{
    const uint32_t start = (first_tree == 0u) ? 0u : node_end[first_tree - 1u];
    st->fe = feature + start;
    st->th = (const void *)((const unsigned char *)th + th_size * start);
    st->ch = (child != NULL) ? child + start : NULL;
    st->lf = (const void *)((const unsigned char *)leaf + leaf_size * ((size_t)start + first_tree));
    st->to = tree_output + first_tree;
    st->ne = node_end + first_tree;
    st->i = 0u;
    st->active = first_tree < end_tree;
    if (st->active) {
        st->n_inner = node_end[first_tree] - start;
        st->prev = node_end[first_tree];
        st->ne++;
    } else {
        st->n_inner = 0u;
        st->prev = start;
    }
}

/* One out-of-line function per variant: each gets its own register allocation. */
#define FM_RUN_VARIANT(name, run, implicit, single, eager)                                                    \
    static FM_NOINLINE uint32_t name(walk_state *st, const walk_env *env)                                     \
    {                                                                                                         \
        return run(st, env, implicit, single, eager);                                                         \
    }

typedef uint32_t (*run_fn)(walk_state *st, const walk_env *env);

/* Where the runs' memo walk stands (fm_trees_impl.h, T_PRIV(runs)): tree t, local node i, the first node slot
 * and the first split of t's run. */
typedef struct {
    uint32_t t;
    uint32_t i;
    uint32_t start;
    uint32_t split;
} run_pos;

static int args_ok(const void *m, const void *scores, const void *res, const fm_memo *memo, uint32_t first_tree,
                   uint32_t end_tree, uint32_t n_trees, uint32_t n_features)
{
    return m != NULL && memo != NULL && scores != NULL && res != NULL && first_tree <= end_tree &&
           end_tree <= n_trees && memo->n >= n_features;
}

/* One eager prediction without the memo (fm_trees_eager_ok(m)). */
static int predict_marked_f32(const fm_trees *m, const float *x, float *scores, fm_result *res)
{
    fm_trees_eager e;
    int rc = fm_trees_eager_start(m, x, &e, scores, res);
    if (rc == FM_OK) {
        ewalk_f32(m, 0u, m->n_trees, x, (uint8_t *)e.mark, scores);
        rc = fm_trees_eager_finish(m, x, &e, scores, res);
    }
    return rc;
}

/* fm_trees_q15_eager_start, every tree, fm_trees_q15_eager_finish in one frame (arguments checked by the
 * caller, fm_trees_q15_eager_ok(m)). */
static int marked_q(const fm_trees_q15 *m, const float *x, fm_trees_q15_eager *e, int32_t *scores, fm_result *res)
{
    const uint32_t n = m->n_features;
    uint32_t o;
    /* every other field is set below (zero_result on the error path) */
    res->score = 0.0f;
    res->cost = 0.0f;
    res->stage = 0u;
    e->nonfinite = q_keys_marks(x, n, e->keys, e->mark) != 0u;
    scores[0] = m->base_q[0];
    for (o = 1; o < m->n_outputs; ++o) {
        scores[o] = m->base_q[o];
    }
    ewalk_q(m, 0u, m->n_trees, e->keys, (uint8_t *)e->mark, scores);
    if (e->nonfinite && marked_nonfinite(x, (const uint8_t *)e->mark, n)) {
        zero_result(res);
        return FM_E_VALUE;
    }
    res->n_read = marks_count(e->mark, n);
    FM_Q_MARKED_COST(m->costs, (const uint8_t *)e->mark, n, res);
    if (m->n_outputs == 1u) {
        res->score_q = scores[0];
        res->label = (scores[0] > m->decision_threshold_q) ? 1 : 0;
        return FM_OK;
    }
    return fm_trees_q15_finish(m, scores, res);
}

int fm_trees_q15_eager_predict(const fm_trees_q15 *m, const float *x, fm_trees_q15_eager *e, int32_t *scores,
                               fm_result *res)
{
    if (!fm_trees_q15_eager_ok(m) || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    return marked_q(m, x, e, scores, res);
}

static int predict_marked_q(const fm_trees_q15 *m, const float *x, int32_t *scores, fm_result *res)
{
    fm_trees_q15_eager e;
    return marked_q(m, x, &e, scores, res);
}

/* ---- the memo walk and the prediction calls: fm_trees_impl.h, float32 then q15 ---- */

/* float32: the split dictionary's memo walk first (accumulate_d, reached from T_DICT_DISPATCH), then the per-node
 * arrays' */
#define T_MODEL fm_trees
#define T_SCORE float
#define T_LEAF float
#define T_FN(n) fm_trees_##n
#define T_BASE(m) ((m)->base_score)
#define T_LEAVES(m) ((m)->leaf)
#define T_DECISION(m) ((m)->decision_threshold)
#define T_SET_SCORE(res, v) ((res)->score = (v))
#define T_ACC acc
#define T_ACC_INIT(st, scores) ((st).acc = (scores)[0], (st).acc_q = 0)
#define T_VALUES_OF(env) const float *values = (const float *)(env)->values
#define T_STEP(i, c, f, t, eager) ((i) = (c) + (values[f] > (t) ? 1u : 0u))
#define T_LEAF_ADD(a, l) ((a) + (l))
#define T_WALK_VALUES(x, memo) (x)
#define T_MEMO_GET fm_memo_get
#define T_Q 0
#define T_TH uint16_t /* th walks the split codes too (unread) */
#define T_PRIV(n) n##_d
#define T_THRS(m) ((m)->split)
#define T_FEATS(m) ((m)->split)
#define T_FEAT FM_DICT_FEAT
#define T_THR FM_DICT_THR
#define T_DICT_VARS FM_DICT_VARS
#define T_DICT 1
#define T_DICT_DISPATCH
#define touch_d touch_f32
#include "fm_trees_impl.h"
#undef touch_d

#define T_TH float
#define T_PRIV(n) n##_f32
#define T_THRS(m) ((m)->threshold)
#define T_FEATS(m) ((m)->feature)
#define T_FEAT FM_NODE_FEAT
#define T_THR FM_NODE_THR
#define T_DICT_VARS(obj)
#define T_DICT 0
#define T_DICT_DISPATCH                                                                                       \
    if (m->split != NULL) { /* the split dictionary */                                                        \
        return accumulate_d(m, first_tree, end_tree, r, x, memo, scores, res);                                \
    }
#include "fm_trees_impl.h"

/* q15 keys: eager from the memo's key cache (biased by 32768), lazy from the float values */
#define T_MODEL fm_trees_q15
#define T_SCORE int32_t
#define T_TH uint16_t
#define T_LEAF int16_t
#define T_FN(n) fm_trees_q15_##n
#define T_PRIV(n) n##_q
#define T_BASE(m) ((m)->base_q)
#define T_THRS(m) ((m)->threshold_q)
#define T_LEAVES(m) ((m)->leaf_q)
#define T_DECISION(m) ((m)->decision_threshold_q)
#define T_SET_SCORE(res, v) ((res)->score_q = (v))
#define T_ACC acc_q
#define T_ACC_INIT(st, scores) ((st).acc = 0.0f, (st).acc_q = (scores)[0])
#define T_VALUES_OF(env)                                                                                      \
    const int16_t *keys = (const int16_t *)(env)->values;                                                     \
    const float *values = (const float *)(env)->values
#define T_STEP(i, c, f, t, eager)                                                                             \
    do {                                                                                                      \
        const uint32_t k_ = (eager) ? (uint32_t)((int32_t)keys[f] + 32768) : fm_ukey16(fm_float_bits(values[f])); \
        (i) = (c) + (k_ > (uint32_t)(t) ? 1u : 0u);                                                           \
    } while (0)
#define T_LEAF_ADD(a, l) fm_add_sat32((a), (int32_t)(l))
#define T_WALK_VALUES(x, memo) ((memo)->keys)
#define T_MEMO_GET fm_memo_get_q
#define T_Q 1
#define T_FEATS(m) ((m)->feature)
#define T_FEAT FM_NODE_FEAT
#define T_THR FM_NODE_THR
#define T_DICT_VARS(obj)
#define T_DICT 0
#define T_DICT_DISPATCH
#include "fm_trees_impl.h"
