/*
 * Unit tests of the tree-ensemble and linear-scorer runtime (fm_trees.c,
 * fm_linear.c). Returns non-zero when a check fails.
 *
 *   test_trees                 run the unit tests
 *   test_trees chain D REPS    evaluate a one-tree chain of D internal nodes
 *                              REPS times (per-node instruction counts are
 *                              measured by tests/test_trees_runtime.py under
 *                              callgrind, as a difference between two D)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fm_linear.h"
#include "fm_trees.h"
#include "fm_batch.h"
#include "fm_check.h"
#include "reader_fixture.h"
#include "trees_fixture.h"

/*
 * Tree 0: n0: x0 <= 1 ? leaf 0.5 : n2
 *         n2: x1 <= -0.5 ? leaf -1 : leaf 2
 * Tree 1: leaf 0.125
 * base 0.25, threshold 0, costs {1, 10, 100}. Feature 2 is never used.
 * Compact: tree 0 as a complete tree of depth 2, the left leaf behind a
 * dummy node on feature 0 (heap order: n0, dummy, n2); the same tables in
 * the explicit layout have child = {1, 3, 5}.
 */
static const uint32_t H_NODE_END[2] = {3u, 3u};
static const uint16_t H_FEATURE[3] = {0u, 0u, 1u};
static const float H_THRESHOLD[3] = {1.0f, 0.0f, -0.5f};
static const uint32_t H_CHILD[3] = {1u, 3u, 5u};
static const float H_LEAF[5] = {0.5f, 0.5f, -1.0f, 2.0f, 0.125f};
static const uint16_t H_OUT[2] = {0u, 0u};
static const float H_BASE[1] = {0.25f};
static const float H_COSTS[3] = {1.0f, 10.0f, 100.0f};

static fm_trees hand_trees(void)
{
    fm_trees m;
    TREES_TABLES(m, 3, 1, 2, 3, H_NODE_END, H_FEATURE, H_OUT, threshold, H_THRESHOLD, leaf, H_LEAF, base_score, H_BASE,
                 H_COSTS);
    return m;
}

static void test_hand_float(void)
{
    static const struct {
        float x[3];
        float score;
        int32_t label;
        uint32_t n_read;
        float cost;
    } cases[] = {
        {{0.5f, 99.0f, 0.0f}, 0.875f, 1, 1u, 1.0f},
        {{1.0f, -0.5f, 7.0f}, 0.875f, 1, 1u, 1.0f}, /* tie goes left */
        {{2.0f, -0.5f, 0.0f}, -0.625f, 0, 2u, 11.0f},
        {{2.0f, 0.0f, 0.0f}, 2.375f, 1, 2u, 11.0f},
        {{1.5f, -3.0f, 0.0f}, -0.625f, 0, 2u, 11.0f},
    };
    fm_trees m = hand_trees();
    float values[3];
    uint8_t seen[3];
    float scores[1];
    fm_memo memo;
    size_t i;
    CHECK(fm_trees_check(&m) == FM_OK);
    fm_memo_init(&memo, values, seen, 3u);
    for (i = 0; i < 2u * (sizeof cases / sizeof cases[0]); ++i) {
        log_reader lr;
        fm_reader r;
        fm_result res;
        fm_result eager;
        m.child = (i & 1u) ? H_CHILD : NULL; /* both layouts */
        CHECK(fm_trees_check(&m) == FM_OK);
        CHECK(fm_trees_predict_vec(&m, cases[i / 2u].x, 3u, &eager) == FM_OK);
        CHECK(eager.label == cases[i / 2u].label && eager.score == cases[i / 2u].score);
        CHECK(eager.n_read == cases[i / 2u].n_read && eager.cost == cases[i / 2u].cost);
        log_init(&lr, cases[i / 2u].x, 3u);
        r.read = log_read;
        r.ctx = &lr;
        CHECK(fm_trees_predict(&m, &r, &memo, scores, &res) == FM_OK);
        CHECK(res.label == cases[i / 2u].label);
        CHECK(res.score == cases[i / 2u].score);
        CHECK(res.n_read == cases[i / 2u].n_read);
        CHECK(res.cost == cases[i / 2u].cost);
        CHECK(lr.calls[2] == 0u);              /* never branches on feature 2 */
        CHECK(lr.calls[0] == 1u);              /* root feature read once */
        CHECK(lr.calls[1] == res.n_read - 1u); /* at most once */
        CHECK(lr.order[0] == 0u);
    }
}

static void test_errors(void)
{
    fm_trees m = hand_trees();
    float values[3];
    uint8_t seen[3];
    float scores[1];
    fm_memo memo;
    fm_memo small;
    fm_result res;
    log_reader lr;
    fm_reader r;
    const float nan_x[3] = {2.0f, 0.0f, 0.0f};
    float x[3];
    float inf = 1e38f;
    fm_memo_init(&memo, values, seen, 3u);
    r.read = log_read;
    r.ctx = &lr;

    memcpy(x, nan_x, sizeof x);
    inf = inf * 10.0f;   /* +infinity without libm */
    x[1] = inf;
    log_init(&lr, x, 3u);
    CHECK(fm_trees_predict(&m, &r, &memo, scores, &res) == FM_E_VALUE);
    x[1] = inf - inf;    /* NaN */
    log_init(&lr, x, 3u);
    CHECK(fm_trees_predict(&m, &r, &memo, scores, &res) == FM_E_VALUE);
    x[1] = 0.0f;
    x[2] = inf - inf;    /* never read: no error */
    log_init(&lr, x, 3u);
    CHECK(fm_trees_predict(&m, &r, &memo, scores, &res) == FM_OK);
    lr.fail = 1;
    CHECK(fm_trees_predict(&m, &r, &memo, scores, &res) == FM_E_READ);
    /* eager: the same value errors, unread NaN ignored */
    x[1] = inf;
    CHECK(fm_trees_predict_vec(&m, x, 3u, &res) == FM_E_VALUE);
    x[1] = 0.0f;
    CHECK(fm_trees_predict_vec(&m, x, 3u, &res) == FM_OK);
    CHECK(fm_trees_predict_vec(&m, x, 2u, &res) == FM_E_ARG);

    /* a memo smaller than n_features and bad tree ranges are argument errors */
    fm_memo_init(&small, values, seen, 2u);
    log_init(&lr, nan_x, 3u);
    CHECK(fm_trees_predict(&m, &r, &small, scores, &res) == FM_E_ARG);
    fm_memo_start(&memo, &res);
    CHECK(fm_trees_accumulate(&m, 1u, 0u, &r, &memo, scores, &res) == FM_E_ARG);
    CHECK(fm_trees_accumulate(&m, 0u, 3u, &r, &memo, scores, &res) == FM_E_ARG);
    CHECK(fm_trees_predict(NULL, &r, &memo, scores, &res) == FM_E_ARG);
}

static void test_slices_share_memo(void)
{
    fm_trees m = hand_trees();
    float values[3];
    uint8_t seen[3];
    float s_full[1];
    float s_cut[1];
    fm_memo memo;
    fm_result full;
    fm_result cut;
    log_reader lr;
    fm_reader r;
    const float x[3] = {2.0f, -1.0f, 5.0f};
    int k;
    fm_memo_init(&memo, values, seen, 3u);
    r.read = log_read;
    r.ctx = &lr;
    log_init(&lr, x, 3u);
    CHECK(fm_trees_predict(&m, &r, &memo, s_full, &full) == FM_OK);

    log_init(&lr, x, 3u);
    fm_memo_start(&memo, &cut);
    CHECK(fm_trees_begin(&m, s_cut) == FM_OK);
    CHECK(fm_trees_accumulate(&m, 0u, 1u, &r, &memo, s_cut, &cut) == FM_OK);
    CHECK(cut.n_read == 2u && s_cut[0] == -0.75f);
    /* the same slice again reads nothing new (the memo is shared) */
    CHECK(fm_trees_accumulate(&m, 0u, 0u, &r, &memo, s_cut, &cut) == FM_OK);
    CHECK(fm_trees_accumulate(&m, 1u, 2u, &r, &memo, s_cut, &cut) == FM_OK);
    CHECK(fm_trees_finish(&m, s_cut, &cut) == FM_OK);
    CHECK(lr.n_calls == 2u);
    CHECK(cut.score == full.score && cut.label == full.label && cut.n_read == full.n_read &&
          cut.cost == full.cost);

    /* the epoch stamp wraps every 255 predictions: results stay the same */
    for (k = 0; k < 600; ++k) {
        fm_result again;
        log_init(&lr, x, 3u);
        CHECK(fm_trees_predict(&m, &r, &memo, s_full, &again) == FM_OK);
        CHECK(again.n_read == 2u && again.score == full.score && lr.n_calls == 2u);
    }
}

static void test_check_rejects(void)
{
    uint16_t feature[3];
    uint32_t child[3];
    uint32_t node_end[2];
    uint16_t out[2];
    float thr[3];
    float costs[3];
    fm_trees m;
    int k;
    for (k = 0; k < 14; ++k) {
        memcpy(feature, H_FEATURE, sizeof feature);
        memcpy(child, H_CHILD, sizeof child);
        memcpy(node_end, H_NODE_END, sizeof node_end);
        memcpy(out, H_OUT, sizeof out);
        memcpy(thr, H_THRESHOLD, sizeof thr);
        memcpy(costs, H_COSTS, sizeof costs);
        m = hand_trees();
        m.feature = feature;
        m.child = child;
        m.node_end = node_end;
        m.tree_output = out;
        m.threshold = thr;
        m.costs = costs;
        switch (k) {
        case 0: child[2] = 6; break;          /* child out of the tree */
        case 1: child[0] = 0; break;          /* self loop */
        case 2: child[2] = 1; break;          /* points backward */
        case 3: child[0] = 2; break;          /* pair straddles nodes and leaves */
        case 4: feature[2] = 3; break;        /* feature >= n_features */
        case 5: node_end[0] = 4; break;       /* beyond n_nodes */
        case 6: node_end[1] = 2; break;       /* decreasing */
        case 7: out[1] = 1; break;            /* output >= n_outputs */
        case 8: m.n_outputs = 0; break;
        case 9: thr[0] = thr[0] * 1e38f * 1e38f; break; /* infinite threshold */
        case 10: costs[1] = -1.0f; break;
        case 11: m.feature = NULL; break;
        case 12: m.child = NULL; node_end[0] = 2; node_end[1] = 2; m.n_nodes = 2; break; /* not complete */
        default: m.n_nodes = 2; break;        /* last node_end != n_nodes */
        }
        if (fm_trees_check(&m) != FM_E_MODEL) {
            fprintf(stderr, "corruption %d not rejected\n", k);
            failures++;
        }
    }
}

static void test_q15(void)
{
    static const int16_t vq[5] = {32767, 32767, -32768, 32767, 32767};
    static const uint16_t keys[3] = {0xbf80, 0xbf80, 0x4100}; /* biased 16-bit keys of 1.0f, -0.5f */
    static const uint16_t cq[3] = {3u, 40u, 500u};
    int32_t base[1];
    int32_t scores[1];
    float values[3];
    uint8_t seen[3];
    fm_memo memo;
    fm_result res;
    fm_reader r;
    fm_vector v;
    float x[3] = {0.5f, 0.0f, 0.0f};
    fm_trees_q15 m;
    fm_result eager;
    TREES_TABLES(m, 3, 1, 2, 3, H_NODE_END, H_FEATURE, H_OUT, threshold_q, keys, leaf_q, vq, base_q, base, cq);
    /* 1.0f and -0.5f have all-zero low 16 key bits: key16 = key >> 16 keeps x <= t exact */
    CHECK(keys[0] == fm_ukey16(fm_float_bits(1.0f)) && fm_key16(fm_float_bits(1.0000001f)) == 0x3f80);
    CHECK(keys[2] == fm_ukey16(fm_float_bits(-0.5f)) && fm_key16(fm_float_bits(-0.5f)) + 32768 == 0x4100);
    CHECK(fm_trees_q15_check(&m) == FM_OK);
    fm_memo_init(&memo, values, seen, 3u);
    v.x = x;
    v.n = 3u;
    r.read = fm_vector_read;
    r.ctx = &v;
    /* saturation at the top */
    base[0] = INT32_MAX - 40000;
    CHECK(fm_trees_q15_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.score_q == INT32_MAX && res.label == 1 && res.n_read == 1u && res.cost_q == 3u);
    CHECK(res.score == 0.0f && res.cost == 0.0f);
    /* no saturation just below */
    base[0] = INT32_MAX - 2 * 32767;
    CHECK(fm_trees_q15_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.score_q == INT32_MAX);
    base[0] = INT32_MAX - 2 * 32767 - 1;
    CHECK(fm_trees_q15_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.score_q == INT32_MAX - 1);
    /* saturation at the bottom: x0 > 1, x1 <= -0.5 reaches -32768 */
    x[0] = 3.0f;
    x[1] = -0.5f;
    base[0] = INT32_MIN + 100;
    CHECK(fm_trees_q15_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.score_q == INT32_MIN + 32767 && res.n_read == 2u && res.cost_q == 43u);
    base[0] = INT32_MIN;
    CHECK(fm_trees_q15_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.score_q == INT32_MIN + 32767); /* clamped first, then + 32767 */
    CHECK(res.label == 0);
    CHECK(fm_trees_q15_predict_vec(&m, x, 3u, &eager) == FM_OK);
    CHECK(eager.score_q == res.score_q && eager.n_read == res.n_read && eager.cost_q == res.cost_q);
}

static void test_fixed_conversion(void)
{
    CHECK(fm_float_to_fixed(fm_float_bits(0.0f), 16) == 0);
    CHECK(fm_float_to_fixed(fm_float_bits(-0.0f), 16) == 0);
    CHECK(fm_float_to_fixed(fm_float_bits(1.5f), 1) == 3);
    CHECK(fm_float_to_fixed(fm_float_bits(-1.75f), 0) == -1);  /* truncation toward zero */
    CHECK(fm_float_to_fixed(fm_float_bits(1.75f), 0) == 1);
    CHECK(fm_float_to_fixed(fm_float_bits(0.5f), 30) == (1 << 29));
    CHECK(fm_float_to_fixed(fm_float_bits(1.0f), 30) == (1 << 30));
    CHECK(fm_float_to_fixed(fm_float_bits(2.0f), 30) == INT32_MAX);
    CHECK(fm_float_to_fixed(fm_float_bits(-2.0f), 30) == -INT32_MAX);
    CHECK(fm_float_to_fixed(fm_float_bits(3e38f), 0) == INT32_MAX);
    CHECK(fm_float_to_fixed(fm_float_bits(2147483520.0f), 0) == 2147483520); /* largest float < 2^31 */
    CHECK(fm_float_to_fixed(fm_float_bits(1e-45f), 30) == 0);               /* subnormal */
    CHECK(fm_float_to_fixed(fm_float_bits(-123.456f), 8) == -31604);        /* trunc(-31604.7) */
}

static void test_linear(void)
{
    static const int32_t feature[3] = {2, 0, 2};
    static const float weight[3] = {0.5f, -2.0f, 0.25f};
    static const int16_t wq[3] = {16384, -32768, 8192};  /* w_shift 15: 0.5, -1.0, 0.25 */
    static const float costs[3] = {1.0f, 10.0f, 100.0f};
    static const uint16_t cq[3] = {1u, 10u, 100u};
    const float x[3] = {1.0f, 1e30f, 3.0f};
    float values[3];
    uint8_t seen[3];
    fm_memo memo;
    fm_result res;
    log_reader lr;
    fm_reader r;
    fm_linear m;
    fm_linear_q15 q;
    m.n_features = 3;
    m.nnz = 3;
    m.feature = feature;
    m.weight = weight;
    m.bias = 0.125f;
    m.decision_threshold = 0.0f;
    m.costs = costs;
    CHECK(fm_linear_check(&m) == FM_OK);
    fm_memo_init(&memo, values, seen, 3u);
    r.read = log_read;
    r.ctx = &lr;
    log_init(&lr, x, 3u);
    CHECK(fm_linear_predict(&m, &r, &memo, &res) == FM_OK);
    /* 0.125 + 1.5 - 2 + 0.75 */
    CHECK(res.score == 0.375f && res.label == 1 && res.n_read == 2u && res.cost == 101.0f);
    CHECK(lr.calls[1] == 0u && lr.calls[2] == 1u && lr.order[0] == 2u && lr.order[1] == 0u);

    q.n_features = 3;
    q.nnz = 3;
    q.feature = feature;
    q.weight_q = wq;
    q.bias_q = 4096;            /* 0.125 * 2^15 */
    q.decision_threshold_q = 0;
    q.in_shift = 8;
    q.w_shift = 15;
    q.costs = cq;
    q.term_shift = NULL; /* one product shift, in_shift, for every term */
    CHECK(fm_linear_q15_check(&q) == FM_OK);
    log_init(&lr, x, 3u);
    CHECK(fm_linear_q15_predict(&q, &r, &memo, &res) == FM_OK);
    /* x2 = 3 -> 768; 16384*768 >> 8 = 49152; x0 = 1 -> 256: -32768; 8192*768>>8 = 24576 */
    CHECK(res.score_q == 4096 + 49152 - 32768 + 24576 && res.label == 1);
    CHECK(res.n_read == 2u && res.cost_q == 101u && res.cost == 0.0f);
    /* the same sum from a bias near INT32_MIN (no saturation on the way) */
    q.bias_q = INT32_MIN + 5;
    log_init(&lr, x, 3u);
    CHECK(fm_linear_q15_predict(&q, &r, &memo, &res) == FM_OK);
    CHECK(res.score_q == INT32_MIN + 5 + 49152 - 32768 + 24576);
    q.in_shift = 31;
    CHECK(fm_linear_q15_check(&q) == FM_E_MODEL);
    m.feature = NULL;
    CHECK(fm_linear_check(&m) == FM_E_MODEL);
}

/* A single chain tree: node i < depth splits on feature i % 8 with x <= 1
 * (true for x = 0) and goes left to i + 1; node depth is the leaf. */
static int chain_bench(uint32_t depth, uint32_t reps)
{
    /* compact explicit layout: c_0 at 0, then the pairs (c_k, dummy_k) at
     * (2k - 1, 2k) for k = 1 .. depth - 1; dummies and c_{depth-1} own leaf pairs */
    enum { MAXD = 4096 };
    static uint16_t feature[2 * MAXD];
    static float thr[2 * MAXD];
    static uint32_t child[2 * MAXD];
    static float leaf[2 * MAXD + 1];
    static const uint16_t out[1] = {0};
    static const float base[1] = {0.0f};
    uint32_t node_end[1];
    const float x[8] = {0};
    float values[8];
    uint8_t seen[8];
    float scores[1];
    fm_memo memo;
    fm_result res;
    fm_vector v;
    fm_reader r;
    fm_trees m;
    uint32_t i;
    uint32_t n_inner;
    float total = 0.0f;
    if (depth > MAXD || depth == 0u) {
        return 2;
    }
    n_inner = 2u * depth - 1u;
    for (i = 0; i < depth; ++i) {
        uint32_t at = (i == 0u) ? 0u : 2u * i - 1u;
        feature[at] = (uint16_t)(i % 8u);
        thr[at] = 1.0f;
        child[at] = (i + 1u < depth) ? 2u * i + 1u : n_inner + 2u * (depth - 1u);
        if (i > 0u) { /* dummy_i repeats c_{i-1}'s feature over leaves 0, 0 */
            feature[2u * i] = (uint16_t)((i - 1u) % 8u);
            thr[2u * i] = 1.0f;
            child[2u * i] = n_inner + 2u * (i - 1u);
        }
    }
    for (i = 0; i < n_inner + 1u; ++i) {
        leaf[i] = 0.0f;
    }
    leaf[2u * (depth - 1u)] = 1.0f;
    node_end[0] = n_inner;
    TREES_TABLES(m, 8, 1, 1, n_inner, node_end, feature, out, threshold, thr, leaf, leaf, base_score, base, NULL);
    m.child = child;
    if (fm_trees_check(&m) != FM_OK) {
        return 3;
    }
    fm_memo_init(&memo, values, seen, 8u);
    v.x = x;
    v.n = 8u;
    r.read = fm_vector_read;
    r.ctx = &v;
    for (i = 0; i < reps; ++i) {
        if (fm_trees_predict(&m, &r, &memo, scores, &res) != FM_OK) {
            return 4;
        }
        total = total + res.score;
    }
    printf("%u %u %.1f\n", (unsigned)depth, (unsigned)reps, (double)total);
    return total == (float)reps ? 0 : 5;
}

/* The float32 split dictionary (fm_trees.h, "Split dictionary"): two complete depth-2 trees whose 6 nodes use 4
 * distinct (feature, threshold) pairs give, through split codes, the per-node tables' results on every walk (marked
 * depth and any-layout walks, the lazy memo walk); the check refuses a code out of range, a dictionary feature out
 * of range, a non-finite dictionary threshold and the per-node arrays set beside the codes. */
static void test_split_dictionary(void)
{
    static const uint32_t end[2] = {3u, 6u};
    static const uint16_t feat[6] = {0u, 1u, 2u, 0u, 1u, 2u}, outs[2] = {0u, 0u};
    static const float thr[6] = {0.5f, 1.5f, -1.0f, 0.5f, 1.5f, 2.0f};
    static const uint16_t codes[6] = {0u, 1u, 2u, 0u, 1u, 3u}, pair_feat[4] = {0u, 1u, 2u, 2u};
    static const uint16_t bad_codes[6] = {0u, 1u, 2u, 0u, 1u, 4u}, bad_feat[4] = {0u, 1u, 2u, 3u};
    static const float pair_thr[4] = {0.5f, 1.5f, -1.0f, 2.0f}, bad_thr[4] = {0.5f, 1.5f, -1.0f, INFINITY};
    static const float leaves[8] = {0.5f, -0.25f, 1.0f, 2.0f, -1.5f, 0.125f, 3.0f, -2.0f};
    static const float base[1] = {0.25f}, costs[3] = {1.0f, 2.0f, 4.0f};
    static const float xs[4][3] = {{0.0f, 2.0f, 3.0f}, {1.0f, 1.0f, -2.0f}, {0.5f, 1.5f, 2.0f}, {9.0f, -9.0f, 0.0f}};
    fm_trees plain = {3u, 1u, 2u, 6u, end, feat, thr, NULL, leaves, outs, base, costs, 0.5f, 2u, 1u, 0u, 0u,
                      NULL, NULL, NULL, 0u};
    fm_trees d = plain;
    float values[3], scores[1];
    uint8_t seen[3];
    fm_memo memo;
    uint32_t row;
    uint32_t depth;
    d.feature = NULL;
    d.threshold = NULL;
    d.split = codes;
    d.split_feature = pair_feat;
    d.split_threshold = pair_thr;
    d.n_splits = 4u;
    fm_memo_init(&memo, values, seen, 3u);
    for (depth = 0u; depth <= 2u; depth += 2u) { /* the any-layout walk, then the depth-2 walk */
        plain.depth = d.depth = depth;
        CHECK(fm_trees_check(&plain) == FM_OK && fm_trees_check(&d) == FM_OK);
        for (row = 0; row < 4u; ++row) {
            fm_result a, b;
            fm_vector va, vb;
            fm_reader ra = fm_vector_reader(&va, xs[row], 3u), rb = fm_vector_reader(&vb, xs[row], 3u);
            CHECK(fm_trees_predict_vec(&plain, xs[row], 3u, &a) == FM_OK);
            CHECK(fm_trees_predict_vec(&d, xs[row], 3u, &b) == FM_OK);
            CHECK(a.label == b.label && a.score == b.score && a.n_read == b.n_read && a.cost == b.cost);
            CHECK(fm_trees_predict(&d, &rb, &memo, scores, &b) == FM_OK);
            CHECK(a.label == b.label && a.score == b.score && a.n_read == b.n_read && a.cost == b.cost);
            CHECK(fm_trees_predict(&plain, &ra, &memo, scores, &a) == FM_OK);
            CHECK(a.label == b.label && a.score == b.score && a.n_read == b.n_read && a.cost == b.cost);
        }
    }
    /* each corruption refused, then the field restored */
#define REFUSED_WITH(field, bad, good)                                                                        \
    do {                                                                                                      \
        d.field = (bad);                                                                                      \
        CHECK(fm_trees_check(&d) == FM_E_MODEL);                                                              \
        d.field = (good);                                                                                     \
    } while (0)
    REFUSED_WITH(split, bad_codes, codes);
    REFUSED_WITH(split_feature, bad_feat, pair_feat);
    REFUSED_WITH(split_threshold, bad_thr, pair_thr);
    REFUSED_WITH(feature, feat, NULL);
    REFUSED_WITH(threshold, thr, NULL);
#undef REFUSED_WITH
    CHECK(fm_trees_check(&d) == FM_OK);
    plain.n_splits = 4u; /* a dictionary's count without codes */
    CHECK(fm_trees_check(&plain) == FM_E_MODEL);
}

/* Trees without internal nodes (one leaf each), and no trees: every table but child is still required,
 * as generated headers give them (one-element arrays): the walks offset them by each tree's first node,
 * and NULL + 0 is undefined (fuzz/crashes/{trees,cascade,gated}/null-tree-feature-offset). */
static void test_leaf_only_tables(void)
{
    static const uint32_t end[2] = {0u, 0u};
    static const uint16_t feat[1] = {0u}, outs[2] = {0u, 0u}, thr_q[1] = {0u};
    static const float thr[1] = {0.0f}, leaves[2] = {0.5f, 0.25f}, base[1] = {0.125f};
    static const int16_t leaves_q[2] = {4, 2};
    static const int32_t base_q[1] = {1};
    static const float x[1] = {3.0f};
    fm_trees m = {1u, 1u, 2u, 0u, end, feat, thr, NULL, leaves, outs, base, NULL, 0.5f, 0u, 0u, 0u, 0u,
                  NULL, NULL, NULL, 0u};
    fm_trees_q15 q = {1u, 1u, 2u, 0u, end, feat, thr_q, NULL, leaves_q, outs, base_q, NULL, 6, 3u, 0u, 0u, 0u};
    fm_result r;
    CHECK(fm_trees_check(&m) == FM_OK && fm_trees_q15_check(&q) == FM_OK);
    CHECK(fm_trees_predict_vec(&m, x, 1u, &r) == FM_OK && r.label == 1 && r.score == 0.875f && r.n_read == 0);
    CHECK(fm_trees_q15_predict_vec(&q, x, 1u, &r) == FM_OK && r.label == 1 && r.score_q == 7 && r.n_read == 0);
    m.feature = NULL;
    q.feature = NULL;
    CHECK(fm_trees_check(&m) == FM_E_MODEL && fm_trees_q15_check(&q) == FM_E_MODEL);
    m.feature = feat;
    q.feature = feat;
    m.threshold = NULL;
    q.threshold_q = NULL;
    CHECK(fm_trees_check(&m) == FM_E_MODEL && fm_trees_q15_check(&q) == FM_E_MODEL);
    /* no trees at all: the walks still offset the tables by 0, so NULL is refused there too */
    m.threshold = thr;
    q.threshold_q = thr_q;
    m.n_trees = q.n_trees = 0u;
    CHECK(fm_trees_check(&m) == FM_OK && fm_trees_q15_check(&q) == FM_OK);
    m.tree_output = NULL;
    q.node_end = NULL;
    CHECK(fm_trees_check(&m) == FM_E_MODEL && fm_trees_q15_check(&q) == FM_E_MODEL);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "chain") == 0) {
        return chain_bench((uint32_t)strtoul(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10));
    }
    test_hand_float();
    test_errors();
    test_slices_share_memo();
    test_check_rejects();
    test_q15();
    test_fixed_conversion();
    test_linear();
    test_leaf_only_tables();
    test_split_dictionary();
    return fm_check_verdict("test_trees", "all tree/linear runtime tests passed");
}
