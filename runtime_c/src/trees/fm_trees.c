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

/* Structure shared by the float32 and q15 tables. */
static int structure_valid(uint32_t n_features, uint32_t n_outputs, uint32_t n_trees, uint32_t n_nodes,
                           const uint32_t *node_end, const uint16_t *feature, const uint32_t *child,
                           const uint16_t *tree_output)
{
    uint32_t t;
    uint32_t start = 0u;
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
        for (i = 0; i < n_inner; ++i) {
            if (feature[start + i] >= n_features) {
                return 0;
            }
            if (child != NULL) {
                uint32_t c = child[start + i];
                /* forward (no cycles), inside the tree, a pair never straddles nodes and leaves */
                if (c <= i || c >= 2u * n_inner || c == n_inner - 1u) {
                    return 0;
                }
            }
        }
        start = stop;
    }
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
        uint32_t b = fm_float_bits(costs[j]) & 0x7fffffffu;
        uint32_t mant = b & 0x7fffffu;
        int32_t ex = (int32_t)(b >> 23);
        if (b == 0u) {
            continue;
        }
        if (ex == 0) {
            ex = 1; /* subnormal */
        } else {
            mant |= 0x800000u;
        }
        ex -= 150;
        while ((mant & 1u) == 0u) {
            mant >>= 1;
            ++ex;
        }
        if (ex < e) {
            e = ex;
        }
    }
    for (j = 0; j < n; ++j) {
        uint32_t b = fm_float_bits(costs[j]) & 0x7fffffffu;
        uint32_t mant = b & 0x7fffffu;
        int32_t ex = (int32_t)(b >> 23);
        if (b == 0u) {
            continue;
        }
        if (ex == 0) {
            ex = 1;
        } else {
            mant |= 0x800000u;
        }
        ex -= 150;
        while ((mant & 1u) == 0u) {
            mant >>= 1;
            ++ex;
        }
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

int fm_trees_check(const fm_trees *m)
{
    uint32_t n_leaves;
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!structure_valid(m->n_features, m->n_outputs, m->n_trees, m->n_nodes, m->node_end, m->feature,
                         m->child, m->tree_output)) {
        return FM_E_MODEL;
    }
    n_leaves = m->n_nodes + m->n_trees;
    if (m->threshold == NULL || m->leaf == NULL ||
        m->base_score == NULL) {
        return FM_E_MODEL;
    }
    if (!finite_f32(m->threshold, m->n_nodes) || !finite_f32(m->leaf, n_leaves) ||
        !finite_f32(m->base_score, m->n_outputs) || !finite_f32(&m->decision_threshold, 1u) ||
        !fm_costs_ok(m->costs, m->n_features)) {
        return FM_E_MODEL;
    }
    if (!depth_valid(m->depth, m->n_trees, m->node_end, m->child) || m->exact_costs > 1u ||
        (m->exact_costs == 1u && !costs_order_exact(m->costs, m->n_features))) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

int fm_trees_q15_check(const fm_trees_q15 *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if (!structure_valid(m->n_features, m->n_outputs, m->n_trees, m->n_nodes, m->node_end, m->feature,
                         m->child, m->tree_output)) {
        return FM_E_MODEL;
    }
    if (m->threshold_q == NULL || m->leaf_q == NULL ||
        m->base_q == NULL || m->shift > 30u || !depth_valid(m->depth, m->n_trees, m->node_end, m->child)) {
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

/* A step down an implicit (heap-ordered) tree: i = 2i + 1 + (go right). */
/* The tree's nodes start at index B of fe/th: local node l = i - B moves to 2l + 1 + (go right). */
#define FM_STEP_F32(i, B)                                                                                     \
    do {                                                                                                      \
        const size_t f_ = fe[i];                                                                              \
        const size_t r_ = x[f_] > th[i] ? 1u : 0u;                                                            \
        mark[f_] = 1u;                                                                                        \
        (i) = 2u * (i) + 1u - (B) + r_;                                                                       \
    } while (0)

/* q15 steps count nodes from 1 (heap order: node l's children are 2l and 2l + 1, at fe[l] and th[l] with
 * fe and th one slot before the tree, see FM_HEAP_BASE): l = 2l + (go right). The eager keys are
 * fm_ukey16(x) - FM_EKEY_SUB (uint16) and the thresholds biased keys (fm_trees.h), so going right,
 * fm_ukey16(x) > threshold, is one unsigned compare whose carry is the outcome, added with carry
 * (l + l + C): on 32-bit Arm `cmp key, t` sets C iff key >= t (keys fm_ukey16 - 1, wrapping to 0xffff
 * only for NaNs, which fail the prediction anyway); on x86 `cmp` sets CF iff t < key (keys fm_ukey16).
 * FM_HEAP_ROOT is the first step (l = one + one + C, `one` a register holding 1). fm_port.h defines
 * them where the target has the carry step; elsewhere (Thumb-1, AArch64, FM_PORTABLE) the q15 walk is
 * the 0-based one below, whose compare is the sign of t - k folded into the index arithmetic. */
#ifndef FM_EKEY_SUB
#define FM_EKEY_SUB 0u
#define FM_EKEY_RIGHT(k, t) ((k) > (t))
#endif
/* p - k as an address (p may be an array's first element: no pointer before it is formed by pointer
 * arithmetic); read only at indices >= k. */
#define FM_HEAP_BASE(T, p, k) ((const T *)((uintptr_t)(p) - (uintptr_t)(k) * sizeof(T)))
#define FM_STEP_Q(l)                                                                                          \
    do {                                                                                                      \
        const uint32_t f_ = fe[l];                                                                            \
        const uint32_t k_ = keys[f_];                                                                         \
        const uint32_t t_ = th[l];                                                                            \
        mark[f_] = 1u;                                                                                        \
        FM_HEAP_STEP(l, k_, t_);                                                                              \
    } while (0)
/* D (a constant 1..4) steps down a tree whose nodes are fe[1..], from the root to l in 2^D .. 2^(D+1)-1. */
#define FM_WALK_LEVELS_Q(l)                                                                                   \
    do {                                                                                                      \
        const uint32_t f_ = fe[1];                                                                            \
        const uint32_t k_ = keys[f_];                                                                         \
        const uint32_t t_ = th[1];                                                                            \
        mark[f_] = 1u;                                                                                        \
        FM_HEAP_ROOT(l, k_, t_, one);                                                                         \
        if (D > 1u) {                                                                                         \
            FM_STEP_Q(l);                                                                                     \
        }                                                                                                     \
        if (D > 2u) {                                                                                         \
            FM_STEP_Q(l);                                                                                     \
        }                                                                                                     \
        if (D > 3u) {                                                                                         \
            FM_STEP_Q(l);                                                                                     \
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

/* Complete trees of depth D (constant), one output: trees [first, end). With a single-precision FPU on
 * 32-bit Arm (FM_F32_GT_STEP of fm_port.h) the float32 walk counts heap nodes from 1 as the q15 walk
 * (FM_HEAP_BASE), l = (l + l + C) ^ 1, with no register-offset vldr to save; elsewhere the 0-based form
 * below. */
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
#if defined(FM_F32_GT_STEP)
#define FM_STEP_F1(l)                                                                                         \
    do {                                                                                                      \
        const uint32_t f_ = fe[l];                                                                            \
        const float tv_ = th[l];                                                                              \
        mark[f_] = 1u;                                                                                        \
        FM_F32_GT_STEP(l, x[f_], tv_);                                                                        \
    } while (0)
#define FM_WALK_LEVELS_F1(l)                                                                                  \
    do {                                                                                                      \
        const uint32_t f0_ = fe[1];                                                                           \
        const float t0_ = th[1];                                                                              \
        mark[f0_] = 1u;                                                                                       \
        FM_F32_GT_ROOT(l, x[f0_], t0_, one);                                                                  \
        if (D > 1u) {                                                                                         \
            FM_STEP_F1(l);                                                                                    \
        }                                                                                                     \
        if (D > 2u) {                                                                                         \
            FM_STEP_F1(l);                                                                                    \
        }                                                                                                     \
        if (D > 3u) {                                                                                         \
            FM_STEP_F1(l);                                                                                    \
        }                                                                                                     \
    } while (0)

FM_WALK float ewalk_f32_depth(const fm_trees *m, uint32_t first, uint32_t end, const float *x, uint8_t *mark,
                              float acc, uint32_t D, float *scores, int single)
{
    const uint16_t *to = m->tree_output + first; /* read when !single (several outputs) */
    const uint32_t I = (1u << D) - 1u;
    const size_t one = 1u;
    const uint16_t *fe = FM_HEAP_BASE(uint16_t, m->feature + (size_t)first * I, 1u);
    const float *th = FM_HEAP_BASE(float, m->threshold + (size_t)first * I, 1u);
    const float *lf = FM_HEAP_BASE(float, m->leaf + (size_t)first * (I + 1u), I + 1u);
    uint32_t t;
    /* two trees per iteration (the second one's nodes at fe + I, its leaves at lf + I + 1) */
    for (t = (end - first) / 2u; t != 0u; --t) {
        size_t i;
        FM_WALK_LEVELS_F1(i);
        FM_LEAF_ADD(lf[i]);
        fe += I;
        th += I;
        lf += I + 1u;
        FM_WALK_LEVELS_F1(i);
        FM_LEAF_ADD(lf[i]);
        fe += I;
        th += I;
        lf += I + 1u;
    }
    if ((end - first) & 1u) {
        size_t i;
        FM_WALK_LEVELS_F1(i);
        FM_LEAF_ADD(lf[i]);
    }
    return acc;
}

#else
FM_WALK float ewalk_f32_depth(const fm_trees *m, uint32_t first, uint32_t end, const float *x, uint8_t *mark,
                              float acc, uint32_t D, float *scores, int single)
{
    const uint16_t *to = m->tree_output + first; /* read when !single (several outputs) */
    const uint32_t I = (1u << D) - 1u;
    const uint16_t *fe = m->feature + (size_t)first * I;
    const float *th = m->threshold + (size_t)first * I;
    const float *lf = m->leaf + (size_t)first * (I + 1u);
    uint32_t t;
    /* two trees per iteration off the same pointers (the second at node I, leaf I + 1) */
    for (t = (end - first) / 2u; t != 0u; --t) {
        size_t i = 0u;
        size_t j = I;
        FM_WALK_LEVELS(FM_STEP_F32, i, 0u);
        FM_LEAF_ADD(lf[i - I]);
        FM_WALK_LEVELS(FM_STEP_F32, j, I);
        FM_LEAF_ADD(lf[j - I + 1u]);
        fe += 2u * I;
        th += 2u * I;
        lf += 2u * (I + 1u);
    }
    if ((end - first) & 1u) {
        size_t i = 0u;
        FM_WALK_LEVELS(FM_STEP_F32, i, 0u);
        FM_LEAF_ADD(lf[i - I]);
    }
    return acc;
}

#endif

#define E_MODEL fm_trees
#define E_IN float
#define E_TH float
#define E_LEAF float
#define E_ACC float
#define E_NAME(n) ewalk_f32_##n
#define E_THRS(m) ((m)->threshold)
#define E_LEAVES(m) ((m)->leaf)
#define E_RIGHT(k, t) ((k) > (t))
#define E_SAT_ADD(a, v) ((a) + (v))
#define E_Q 0
#include "fm_trees_ewalk_impl.h"

#undef E_MODEL
#undef E_IN
#undef E_TH
#undef E_LEAF
#undef E_ACC
#undef E_NAME
#undef E_THRS
#undef E_LEAVES
#undef E_RIGHT
#undef E_SAT_ADD
#undef E_Q
#undef FM_EWALK_ANY
#undef FM_EWALK_DEPTH

static void ewalk_f32(const fm_trees *m, uint32_t first, uint32_t end, const float *x, uint8_t *mark, float *scores)
{
    if (first >= end) {
        return;
    }
    if (m->n_outputs == 1u) {
        switch (m->depth) {
        case 1u:
            scores[0] = ewalk_f32_d1(m, first, end, x, mark, scores[0]);
            return;
        case 2u:
            scores[0] = ewalk_f32_d2(m, first, end, x, mark, scores[0]);
            return;
        case 3u:
            scores[0] = ewalk_f32_d3(m, first, end, x, mark, scores[0]);
            return;
        case 4u:
            scores[0] = ewalk_f32_d4(m, first, end, x, mark, scores[0]);
            return;
        default:
            break;
        }
        if (m->child == NULL) {
            ewalk_f32_is(m, first, end, x, mark, scores);
        } else {
            ewalk_f32_es(m, first, end, x, mark, scores);
        }
    } else if (m->depth == 3u) {
        ewalk_f32_m3(m, first, end, x, mark, scores);
    } else if (m->child == NULL) {
        ewalk_f32_im(m, first, end, x, mark, scores);
    } else {
        ewalk_f32_em(m, first, end, x, mark, scores);
    }
}

#if defined(FM_HEAP_STEP)
/* q15: complete trees of depth D, one output, no saturation possible (1-based heap, FM_STEP_Q). */
FM_WALK int32_t ewalk_q_depth(const fm_trees_q15 *m, uint32_t first, uint32_t end, const uint16_t *keys,
                              uint8_t *mark, int32_t acc, uint32_t D, int32_t *scores, int single)
{
    const uint16_t *to = m->tree_output + first; /* read when !single (several outputs) */
    const uint32_t I = (1u << D) - 1u;
    const size_t one = 1u;
    const uint16_t *fe = FM_HEAP_BASE(uint16_t, m->feature + (size_t)first * I, 1u);
    const uint16_t *th = FM_HEAP_BASE(uint16_t, m->threshold_q + (size_t)first * I, 1u);
    const int16_t *lf = FM_HEAP_BASE(int16_t, m->leaf_q + (size_t)first * (I + 1u), I + 1u);
    uint32_t t;
    /* two trees per iteration: the second one's nodes at fe + I, its leaves at lf + I + 1 */
    for (t = (end - first) / 2u; t != 0u; --t) {
        size_t i;
        FM_WALK_LEVELS_Q(i);
        FM_LEAF_ADD((int32_t)lf[i]); /* no overflow: q_no_overflow */
        fe += I;
        th += I;
        lf += I + 1u;
        FM_WALK_LEVELS_Q(i);
        FM_LEAF_ADD((int32_t)lf[i]);
        fe += I;
        th += I;
        lf += I + 1u;
    }
    if ((end - first) & 1u) {
        size_t i;
        FM_WALK_LEVELS_Q(i);
        FM_LEAF_ADD((int32_t)lf[i]);
    }
    return acc;
}

#else
/* q15, 0-based heap (Thumb-1, AArch64, FM_PORTABLE): go right iff k > t, the sign bit of t - k (16-bit operands: no overflow). */
#define FM_STEP_Q0(i, B)                                                                                      \
    do {                                                                                                      \
        const size_t f_ = fe[i];                                                                              \
        const size_t r_ = (size_t)((uint32_t)((int32_t)th[i] - (int32_t)keys[f_]) >> 31);                     \
        mark[f_] = 1u;                                                                                        \
        (i) = 2u * (i) + 1u - (B) + r_;                                                                       \
    } while (0)
FM_WALK int32_t ewalk_q_depth(const fm_trees_q15 *m, uint32_t first, uint32_t end, const uint16_t *keys,
                              uint8_t *mark, int32_t acc, uint32_t D, int32_t *scores, int single)
{
    const uint16_t *to = m->tree_output + first; /* read when !single (several outputs) */
    const uint32_t I = (1u << D) - 1u;
    const uint16_t *fe = m->feature + (size_t)first * I;
    const uint16_t *th = m->threshold_q + (size_t)first * I;
    const int16_t *lf = m->leaf_q + (size_t)first * (I + 1u);
    uint32_t t;
    for (t = (end - first) / 2u; t != 0u; --t) {
        size_t i = 0u;
        size_t j = I;
        FM_WALK_LEVELS(FM_STEP_Q0, i, 0u);
        FM_WALK_LEVELS(FM_STEP_Q0, j, I);
        if (single) {
            acc += (int32_t)lf[i - I] + (int32_t)lf[j - I + 1u]; /* no overflow: q_no_overflow */
        } else {
            FM_LEAF_ADD((int32_t)lf[i - I]);
            FM_LEAF_ADD((int32_t)lf[j - I + 1u]);
        }
        fe += 2u * I;
        th += 2u * I;
        lf += 2u * (I + 1u);
    }
    if ((end - first) & 1u) {
        size_t i = 0u;
        FM_WALK_LEVELS(FM_STEP_Q0, i, 0u);
        FM_LEAF_ADD((int32_t)lf[i - I]);
    }
    return acc;
}
#endif


#define E_MODEL fm_trees_q15
#define E_IN uint16_t
#define E_TH uint16_t
#define E_LEAF int16_t
#define E_ACC int32_t
#define E_NAME(n) ewalk_q_##n
#define E_THRS(m) ((m)->threshold_q)
#define E_LEAVES(m) ((m)->leaf_q)
#define E_RIGHT(k, t) FM_EKEY_RIGHT((uint32_t)(k), (uint32_t)(t))
#define E_SAT_ADD(a, v) fm_add_sat32((a), (v))
#define E_Q 1
#include "fm_trees_ewalk_impl.h"

/* 1 when adding `trees` leaves (|leaf| <= 32768) to s cannot leave int32. */
static int q_no_overflow(int32_t s, uint32_t trees)
{
    const uint32_t a = (s < 0) ? 0u - (uint32_t)s : (uint32_t)s;
    return a <= 0x7fffffffu && trees <= ((0x7fffffffu - a) >> 15);
}

FM_WALK void ewalk_q(const fm_trees_q15 *m, uint32_t first, uint32_t end, const uint16_t *keys, uint8_t *mark,
                    int32_t *scores)
{
    if (first >= end) {
        return;
    }
    if (m->n_outputs != 1u) {
        uint32_t o, ok = m->depth == 3u;
        for (o = 0; o < m->n_outputs && ok; ++o) {
            ok = q_no_overflow(scores[o], end - first);
        }
        if (ok) {
            ewalk_q_m3(m, first, end, keys, mark, scores);
        } else if (m->child == NULL) {
            ewalk_q_im(m, first, end, keys, mark, scores);
        } else {
            ewalk_q_em(m, first, end, keys, mark, scores);
        }
        return;
    }
    if (!q_no_overflow(scores[0], end - first)) {
        if (m->child == NULL) {
            ewalk_q_iss(m, first, end, keys, mark, scores);
        } else {
            ewalk_q_ess(m, first, end, keys, mark, scores);
        }
        return;
    }
    switch (m->depth) {
    case 1u:
        scores[0] = ewalk_q_d1(m, first, end, keys, mark, scores[0]);
        return;
    case 2u:
        scores[0] = ewalk_q_d2(m, first, end, keys, mark, scores[0]);
        return;
    case 3u:
        scores[0] = ewalk_q_d3(m, first, end, keys, mark, scores[0]);
        return;
    case 4u:
        scores[0] = ewalk_q_d4(m, first, end, keys, mark, scores[0]);
        return;
    default:
        break;
    }
    if (m->child == NULL) {
        ewalk_q_is(m, first, end, keys, mark, scores);
    } else {
        ewalk_q_es(m, first, end, keys, mark, scores);
    }
}

static void zero_result(fm_result *res)
{
    res->label = 0;
    res->score = 0.0f;
    res->score_q = 0;
    res->n_read = 0u;
    res->cost = 0.0f;
    res->stage = 0u;
    res->cost_q = 0u;
}

int fm_trees_eager_ok(const fm_trees *m)
{
    return m != NULL && m->n_features <= FM_VEC_MAX_FEATURES && (m->costs == NULL || m->exact_costs == 1u);
}

int fm_trees_q15_eager_ok(const fm_trees_q15 *m)
{
    return m != NULL && m->n_features <= FM_VEC_MAX_FEATURES;
}

int fm_trees_eager_start(const fm_trees *m, const float *x, fm_trees_eager *e, float *scores, fm_result *res)
{
    uint32_t o;
    if (!fm_trees_eager_ok(m) || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    zero_result(res);
    marks_clear(e->mark, m->n_features);
    for (o = 0; o < m->n_outputs; ++o) {
        scores[o] = m->base_score[o];
    }
    return FM_OK;
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

int fm_trees_q15_eager_start(const fm_trees_q15 *m, const float *x, fm_trees_q15_eager *e, int32_t *scores,
                             fm_result *res)
{
    uint32_t o;
    if (!fm_trees_q15_eager_ok(m) || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    zero_result(res);
    e->nonfinite = q_keys_marks(x, m->n_features, e->keys, e->mark) != 0u;
    for (o = 0; o < m->n_outputs; ++o) {
        scores[o] = m->base_q[o];
    }
    return FM_OK;
}

int fm_trees_eager_walk(const fm_trees *m, uint32_t first_tree, uint32_t end_tree, const float *x, fm_trees_eager *e,
                        float *scores)
{
    if (m == NULL || x == NULL || e == NULL || scores == NULL || first_tree > end_tree || end_tree > m->n_trees) {
        return FM_E_ARG;
    }
    ewalk_f32(m, first_tree, end_tree, x, (uint8_t *)e->mark, scores);
    return FM_OK;
}

int fm_trees_q15_eager_walk(const fm_trees_q15 *m, uint32_t first_tree, uint32_t end_tree, fm_trees_q15_eager *e,
                            int32_t *scores)
{
    if (m == NULL || e == NULL || scores == NULL || first_tree > end_tree || end_tree > m->n_trees) {
        return FM_E_ARG;
    }
    ewalk_q(m, first_tree, end_tree, e->keys, (uint8_t *)e->mark, scores);
    return FM_OK;
}

int fm_trees_eager_finish(const fm_trees *m, const float *x, const fm_trees_eager *e, const float *scores,
                          fm_result *res)
{
    const uint8_t *mark;
    const float *costs;
    uint32_t n;
    float cost = 0.0f;
    if (m == NULL || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    mark = (const uint8_t *)e->mark;
    n = m->n_features;
    costs = m->costs;
    /* every feature first (no mark test), the marked ones only when one of them is not finite */
    if (any_nonfinite(x, n) && marked_nonfinite(x, mark, n)) {
        return FM_E_VALUE;
    }
    res->n_read = marks_count(e->mark, n);
    if (costs == NULL) {
        cost = (float)res->n_read;
    } else {
        uint32_t f;
        for (f = 0; f < n; ++f) { /* feature index order: the costs are order-exact (fm_trees_eager_ok) */
            if (mark[f]) {
                cost = cost + costs[f];
            }
        }
    }
    res->cost = cost;
    return fm_trees_finish(m, scores, res);
}

int fm_trees_q15_eager_finish(const fm_trees_q15 *m, const float *x, const fm_trees_q15_eager *e,
                              const int32_t *scores, fm_result *res)
{
    const uint8_t *mark;
    uint32_t n;
    if (m == NULL || x == NULL || e == NULL || scores == NULL || res == NULL) {
        return FM_E_ARG;
    }
    mark = (const uint8_t *)e->mark;
    n = m->n_features;
    if (e->nonfinite && marked_nonfinite(x, mark, n)) {
        return FM_E_VALUE;
    }
    res->n_read = marks_count(e->mark, n);
    if (m->costs == NULL) {
        res->cost_q = res->n_read;
    } else {
        uint32_t f;
        uint32_t cost = 0u; /* <= 512 * 65535: no saturation */
        for (f = 0; f < n; ++f) {
            cost += (uint32_t)mark[f] * (uint32_t)m->costs[f];
        }
        res->cost_q = cost;
    }
    return fm_trees_q15_finish(m, scores, res);
}

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
    memo->values[f] = v;
    memo->seen[f] = memo->epoch;
    if (memo->keys != NULL) {
        memo->keys[f] = (int16_t)fm_key16(fm_float_bits(v));
    }
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
    if (m->costs == NULL) {
        res->cost_q = res->n_read;
    } else {
        const uint8_t *mark = (const uint8_t *)e->mark;
        uint32_t f;
        uint32_t cost = 0u; /* <= 512 * 65535: no saturation */
        for (f = 0; f < n; ++f) {
            cost += (uint32_t)mark[f] * (uint32_t)m->costs[f];
        }
        res->cost_q = cost;
    }
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

#define T_MODEL fm_trees
#define T_SCORE float
#define T_TH float
#define T_LEAF float
#define T_FN(n) fm_trees_##n
#define T_PRIV(n) n##_f32
#define T_BASE(m) ((m)->base_score)
#define T_THRS(m) ((m)->threshold)
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
#include "fm_trees_impl.h"
#undef T_MODEL
#undef T_SCORE
#undef T_TH
#undef T_LEAF
#undef T_FN
#undef T_PRIV
#undef T_BASE
#undef T_THRS
#undef T_LEAVES
#undef T_DECISION
#undef T_SET_SCORE
#undef T_ACC
#undef T_ACC_INIT
#undef T_VALUES_OF
#undef T_STEP
#undef T_LEAF_ADD
#undef T_WALK_VALUES
#undef T_MEMO_GET
#undef T_Q

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
#include "fm_trees_impl.h"
