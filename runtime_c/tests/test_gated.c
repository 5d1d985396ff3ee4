/*
 * Unit tests of the gated runtime (fm_gated.c): routing by the gate in both
 * directions, one feature memo shared by the gate and the answering part,
 * costs, deferral to a remote f0, fixed point, the eager vector call and the
 * load-time checks.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fm_gated.h"
#include "fm_check.h"
#include "reader_fixture.h"
#include "trees_fixture.h"


/* gate: x0 (> 0 = easy); f1: x0 + x1 > 0; f0: one stump on x2 (<= 0.5: class 0, else 1) */
static const int32_t gate_feature[1] = {0};
static const float gate_weight[1] = {1.0f};
static const int16_t gate_weight_q[1] = {16384};
static const int32_t f1_feature[2] = {0, 1};
static const float f1_weight[2] = {1.0f, 1.0f};
static const int16_t f1_weight_q[2] = {16384, 16384};
static const float costs[3] = {1.0f, 2.0f, 4.0f};
static const uint16_t costs_q[3] = {1u, 2u, 4u};
/* one stump: x2 <= 0.5 ? -1 : 1 (compact implicit tables) */
static const uint32_t t_node_end[1] = {1u};
static const uint16_t t_feature[1] = {2u};
static const float t_threshold[1] = {0.5f};
static const uint16_t t_key[1] = {0xbf00}; /* fm_ukey16(0.5f): low key bits of 0.5f are zero */
static const float t_value[2] = {-1.0f, 1.0f};
static const int16_t t_value_q[2] = {-100, 100};
static const uint16_t t_out[1] = {0};
static const float t_base[1] = {0.0f};
static const int32_t t_base_q[1] = {0};
static const float t_base2[2] = {0.0f, 0.0f};

/* A linear scorer over 3 features (nnz terms of feature_, weights weight_ in field W), costs cost_. */
#define SCORER(l, nnz_, feature_, W, weight_, cost_) \
    do {                                             \
        (l).n_features = 3u;                         \
        (l).nnz = (nnz_);                            \
        (l).feature = (feature_);                    \
        (l).W = (weight_);                           \
        (l).costs = (cost_);                         \
    } while (0)

/* A linear part: one scorer. */
#define LINEAR_PART(p, nnz_, feature_, W, weight_, cost_)           \
    do {                                                            \
        (p).type = FM_PART_LINEAR;                                  \
        SCORER((p).linear, nnz_, feature_, W, weight_, cost_);      \
    } while (0)

/* The tables the float32 and q15 models share, one macro for both structs (fm_gated, fm_gated_q15: the
 * same field names but for the weights W, the tree thresholds THR, leaves LEAF and base scores BASE). */
#define GATED_MODEL(m, W, gate_w, f1_w, THR, thr, LEAF, leaf, BASE, base, cost) \
    do {                                                                          \
        memset(&(m), 0, sizeof(m));                                               \
        (m).n_features = 3u;                                                      \
        (m).gate_above = FM_GATE_ABOVE_F1;                                        \
        LINEAR_PART((m).gate, 1u, gate_feature, W, gate_w, cost);                 \
        LINEAR_PART((m).f1, 2u, f1_feature, W, f1_w, cost);                       \
        (m).f0.type = FM_PART_TREES;                                              \
        TREES_TABLES((m).f0.trees, 3u, 1u, 1u, 1u, t_node_end, t_feature, t_out,  \
                     THR, thr, LEAF, leaf, BASE, base, cost);                     \
    } while (0)

static fm_gated make_model(void)
{
    fm_gated m;
    GATED_MODEL(m, weight, gate_weight, f1_weight, threshold, t_threshold, leaf, t_value, base_score, t_base, costs);
    return m;
}

static fm_gated_q15 make_model_q(void)
{
    fm_gated_q15 m;
    GATED_MODEL(m, weight_q, gate_weight_q, f1_weight_q, threshold_q, t_key, leaf_q, t_value_q, base_q, t_base_q,
                costs_q);
    m.gate.linear.in_shift = m.f1.linear.in_shift = 16u;
    m.gate.linear.w_shift = m.f1.linear.w_shift = 14u;
    m.f0.trees.shift = 7u;
    return m;
}

static void test_routing_float(void)
{
    fm_gated m = make_model();
    float values[3];
    uint8_t seen[3];
    float scores[1];
    fm_memo memo;
    fm_result res;
    fm_reader r;
    log_reader cr;
    const float easy[3] = {1.0f, -3.0f, 9.0f};  /* f1: 1 - 3 < 0 -> 0 */
    const float hard[3] = {-1.0f, 5.0f, 0.75f}; /* f0: x2 > 0.5 -> 1 */
    CHECK(fm_gated_check(&m) == FM_OK);
    CHECK(fm_gated_max_outputs(&m) == 1u);
    fm_memo_init(&memo, values, seen, 3u);
    r.read = log_read;
    r.ctx = &cr;

    log_init(&cr, easy, 3u);
    CHECK(fm_gated_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.label == 0 && res.stage == 0u && res.score == -2.0f);
    CHECK(res.n_read == 2u && res.cost == 3.0f);         /* x0 once (gate and f1), x1 */
    CHECK(cr.calls[0] == 1u && cr.calls[1] == 1u && cr.calls[2] == 0u);

    log_init(&cr, hard, 3u);
    CHECK(fm_gated_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.label == 1 && res.stage == 1u && res.score == 1.0f);
    CHECK(res.n_read == 2u && res.cost == 5.0f);         /* x0 (gate) and x2 (f0), never x1 */
    CHECK(cr.calls[1] == 0u);

    /* the other direction: score > threshold sends to f0 */
    m.gate_above = FM_GATE_ABOVE_F0;
    log_init(&cr, easy, 3u);
    CHECK(fm_gated_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.stage == 1u && res.label == 1 && res.n_read == 2u);

    /* remote f0: deferral with the gate's score, gate's reads only */
    m.gate_above = FM_GATE_ABOVE_F1;
    m.f0.type = FM_PART_REMOTE;
    CHECK(fm_gated_check(&m) == FM_OK);
    log_init(&cr, hard, 3u);
    CHECK(fm_gated_predict(&m, &r, &memo, scores, &res) == FM_OK);
    CHECK(res.label == FM_LABEL_DEFER && res.stage == 1u && res.score == -1.0f);
    CHECK(res.n_read == 1u && res.cost == 1.0f && cr.calls[2] == 0u);
}

static void test_routing_q15(void)
{
    fm_gated_q15 m = make_model_q();
    fm_result res;
    fm_result batch[2];
    uint32_t done = 0u;
    float values[3];
    uint8_t seen[3];
    int32_t scores[1];
    fm_memo memo;
    const float X[6] = {1.0f, -3.0f, 9.0f, -1.0f, 5.0f, 0.75f};
    CHECK(fm_gated_q15_check(&m) == FM_OK);
    CHECK(fm_gated_q15_predict_vec(&m, X, 3u, &res) == FM_OK);
    CHECK(res.label == 0 && res.stage == 0u && res.cost_q == 3u && res.n_read == 2u);
    CHECK(res.score_q == -2 * 16384);
    CHECK(fm_gated_q15_predict_vec(&m, X + 3, 3u, &res) == FM_OK);
    CHECK(res.label == 1 && res.stage == 1u && res.cost_q == 5u && res.score_q == 100);
    fm_memo_init(&memo, values, seen, 3u);
    CHECK(fm_gated_q15_predict_batch(&m, X, 2u, 3u, &memo, scores, batch, &done) == FM_OK);
    CHECK(done == 2u && batch[0].label == 0 && batch[1].label == 1);
    CHECK(fm_gated_q15_predict_batch(&m, X, 2u, 2u, &memo, scores, batch, &done) == FM_E_ARG);
    m.f0.type = FM_PART_REMOTE;
    CHECK(fm_gated_q15_predict_vec(&m, X + 3, 3u, &res) == FM_OK);
    CHECK(res.label == FM_LABEL_DEFER && res.cost_q == 1u);
}

static void test_vec_and_errors(void)
{
    fm_gated m = make_model();
    fm_result res;
    const float x[3] = {2.0f, 1.0f, 0.0f};
    const float bad[3] = {1.0f, INFINITY, 0.0f};
    CHECK(fm_gated_predict_vec(&m, x, 3u, &res) == FM_OK);
    CHECK(res.label == 1 && res.stage == 0u && res.n_read == 2u);
    CHECK(fm_gated_predict_vec(&m, x, 2u, &res) == FM_E_ARG);
    CHECK(fm_gated_predict_vec(&m, bad, 3u, &res) == FM_E_VALUE);
    CHECK(fm_gated_predict_vec(NULL, x, 3u, &res) == FM_E_ARG);
}

static void test_checks(void)
{
    fm_gated m = make_model();
    fm_gated_q15 mq = make_model_q();
    int32_t bad_feature[1] = {3};
    CHECK(fm_gated_check(NULL) == FM_E_ARG);
    m.f1.type = FM_PART_REMOTE; /* only f0 may be remote */
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.gate.type = FM_PART_REMOTE;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.gate_above = 7u;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.f0.type = 9u;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.gate.linear.feature = bad_feature;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.f1.linear.n_features = 2u; /* parts must agree on n_features */
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.gate = m.f0; /* a tree gate with one output is fine ... */
    CHECK(fm_gated_check(&m) == FM_OK);
    m.gate.trees.n_outputs = 2u; /* ... with two it is not */
    m.gate.trees.base_score = t_base2;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    mq.f0.trees.node_end = NULL;
    CHECK(fm_gated_q15_check(&mq) == FM_E_MODEL);
    mq = make_model_q();
    mq.f1.linear.in_shift = 31u;
    CHECK(fm_gated_q15_check(&mq) == FM_E_MODEL);
}

/* ---- margin gate: K = 3 classes over x0, x1 (class 0: x0, class 1: x1, class 2: x0 - x1, bias 0), easy iff
 * the top-2 margin > 1 (q15: 16384, scores x * 2^14); f0 the stump on x2. ---- */
static const int32_t k_feature[2] = {0, 1};
static const float k_weight[2] = {1.0f, -1.0f};
static const int16_t k_weight_q[2] = {16384, -16384};
static const float k_weight_big[2] = {FLT_MAX, -FLT_MAX}; /* x0 = x1 = 2: scores inf, inf, inf - inf */

/* The margin gate on model m (made by make_model / make_model_q): f1 the three scorers cls (weights w in
 * field W), the gate's threshold thr in field THR. */
#define MARGIN_GATE(m, cls, W, w, THR, thr, cost)                \
    do {                                                         \
        memset(cls, 0, sizeof(cls));                             \
        SCORER((cls)[0], 1u, k_feature, W, w, cost);             \
        SCORER((cls)[1], 1u, k_feature + 1, W, w, cost);         \
        SCORER((cls)[2], 2u, k_feature, W, w, cost);             \
        memset(&(m).gate, 0, sizeof((m).gate));                  \
        (m).gate.type = FM_PART_MARGIN;                          \
        (m).gate.linear.THR = (thr);                             \
        (m).f1.type = FM_PART_LINEAR_K;                          \
        (m).f1.n_classes = 3u;                                   \
        (m).f1.classes = (cls);                                  \
    } while (0)

static fm_linear k_classes[3];
static fm_linear_q15 k_classes_q[3];

static fm_gated make_margin_model(void)
{
    fm_gated m = make_model();
    MARGIN_GATE(m, k_classes, weight, k_weight, decision_threshold, 1.0f, costs);
    return m;
}

static fm_gated_q15 make_margin_model_q(void)
{
    fm_gated_q15 m = make_model_q();
    uint32_t c;
    MARGIN_GATE(m, k_classes_q, weight_q, k_weight_q, decision_threshold_q, 16384, costs_q);
    for (c = 0u; c < 3u; ++c) {
        k_classes_q[c].in_shift = 16u;
        k_classes_q[c].w_shift = 14u;
    }
    return m;
}

/* One row's known answer, float32 and q15 (score_q: easy x * 2^14, f0's leaves +-100); margin: what a
 * remote f0 defers with (q15: margin * 2^14). */
typedef struct {
    float x[3];
    int32_t label;
    uint32_t stage;
    float score;
    int32_t score_q;
    float margin;
    uint32_t n_read;
} margin_case;

static const margin_case margin_cases[] = {
    {{4.0f, 2.5f, 9.0f}, 0, 0u, 4.0f, 4 * 16384, 1.5f, 2u},    /* 4, 2.5, 1.5: margin 1.5 > 1: easy */
    {{3.0f, 2.0f, 0.75f}, 1, 1u, 1.0f, 100, 1.0f, 3u},         /* 3, 2, 1: margin 1, equal: hard, f0 */
    {{1.0f, 0.5f, 0.25f}, 0, 1u, -1.0f, -100, 0.5f, 3u},       /* 1, .5, .5: margin .5 below: hard, f0 */
    {{5.0f, -2.5f, 0.0f}, 2, 0u, 7.5f, 15 * 8192, 2.5f, 2u},   /* 5, -2.5, 7.5: class 2, margin 2.5 */
    {{2.0f, 2.0f, 9.0f}, 1, 1u, 1.0f, 100, 0.0f, 3u},          /* 2, 2, 0: a tie at the top, margin 0 */
    {{-3.0f, -0.5f, -1.0f}, 1, 0u, -0.5f, -8192, 2.0f, 2u},    /* -3, -.5, -2.5: class 1, margin 2 */
};

static void test_margin_float(void)
{
    fm_gated m = make_margin_model();
    float values[3];
    uint8_t seen[3];
    float scores[1];
    fm_memo memo;
    fm_result res, vec;
    fm_reader r;
    log_reader cr;
    size_t i;
    const float tie[3] = {2.0f, 2.0f, 0.0f};
    CHECK(fm_gated_check(&m) == FM_OK);
    CHECK(fm_gated_max_outputs(&m) == 1u);
    fm_memo_init(&memo, values, seen, 3u);
    r.read = log_read;
    r.ctx = &cr;
    for (i = 0u; i < sizeof margin_cases / sizeof margin_cases[0]; ++i) {
        const margin_case *k = &margin_cases[i];
        m.f0.type = FM_PART_TREES;
        log_init(&cr, k->x, 3u);
        CHECK(fm_gated_predict(&m, &r, &memo, scores, &res) == FM_OK);
        CHECK(res.label == k->label && res.stage == k->stage && res.score == k->score);
        CHECK(res.n_read == k->n_read && res.cost == (k->n_read == 2u ? 3.0f : 7.0f));
        CHECK(cr.calls[0] == 1u && cr.calls[1] == 1u && cr.calls[2] == k->stage); /* f1 not read again */
        CHECK(fm_gated_predict_vec(&m, k->x, 3u, &vec) == FM_OK && memcmp(&vec, &res, sizeof res) == 0);
        m.f0.type = FM_PART_REMOTE; /* hard: deferred with the margin, f1's reads */
        CHECK(fm_gated_predict_vec(&m, k->x, 3u, &res) == FM_OK && res.stage == k->stage);
        CHECK(k->stage == 0u ? (res.label == k->label && res.score == k->score)
                             : (res.label == FM_LABEL_DEFER && res.score == k->margin));
        CHECK(res.n_read == 2u && res.cost == 3.0f);
    }
    /* a tie below a negative threshold is easy: the first largest class */
    m.gate.linear.decision_threshold = -1.0f;
    CHECK(fm_gated_predict_vec(&m, tie, 3u, &res) == FM_OK);
    CHECK(res.label == 0 && res.stage == 0u && res.score == 2.0f);
    /* the margin is a float32 subtraction: 0.3f - 0.1f */
    m.gate.linear.decision_threshold = 1.0f;
    {
        const float x[3] = {0.1f, 0.3f, 0.0f};
        const float want = 0.3f - 0.1f;
        CHECK(fm_gated_predict_vec(&m, x, 3u, &res) == FM_OK);
        CHECK(res.label == FM_LABEL_DEFER && res.stage == 1u && res.score == want);
    }
    /* inf - inf: a NaN margin is hard, whatever the threshold */
    k_classes[0].weight = k_classes[1].weight = k_classes[2].weight = k_weight_big;
    m.gate.linear.decision_threshold = -FLT_MAX;
    CHECK(fm_gated_predict_vec(&m, tie, 3u, &res) == FM_OK);
    CHECK(res.label == FM_LABEL_DEFER && res.stage == 1u && res.score != res.score);
}

static void test_margin_q15(void)
{
    fm_gated_q15 m = make_margin_model_q();
    fm_result res, batch[2];
    float values[3];
    uint8_t seen[3];
    int32_t scores[1];
    fm_memo memo;
    uint32_t done = 0u;
    size_t i;
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    CHECK(fm_gated_q15_check(&m) == FM_OK);
    CHECK(fm_gated_q15_max_outputs(&m) == 1u);
    fm_memo_init(&memo, values, seen, 3u);
    for (i = 0u; i < sizeof margin_cases / sizeof margin_cases[0]; ++i) {
        const margin_case *k = &margin_cases[i];
        m.f0.type = FM_PART_TREES;
        CHECK(fm_gated_q15_predict_batch(&m, k->x, 1u, 3u, &memo, scores, batch, &done) == FM_OK && done == 1u);
        CHECK(batch[0].label == k->label && batch[0].stage == k->stage && batch[0].score_q == k->score_q);
        CHECK(batch[0].n_read == k->n_read && batch[0].cost_q == (k->n_read == 2u ? 3u : 7u));
        m.f0.type = FM_PART_REMOTE;
        CHECK(fm_gated_q15_predict_vec(&m, k->x, 3u, &res) == FM_OK && res.stage == k->stage);
        CHECK(k->stage == 0u ? (res.label == k->label && res.score_q == k->score_q)
                             : (res.label == FM_LABEL_DEFER && res.score_q == (int32_t)(k->margin * 16384.0f)));
        CHECK(res.n_read == 2u && res.cost_q == 3u);
    }
    /* int64 margins: INT32_MAX - 0 equals the threshold INT32_MAX (hard, deferred with INT32_MAX); INT32_MAX - (-1)
     * is above it (easy). A hard margin is at most the threshold, so its saturation never bites. */
    m.gate.linear.decision_threshold_q = INT32_MAX;
    k_classes_q[0].bias_q = INT32_MAX;
    CHECK(fm_gated_q15_predict_vec(&m, zero, 3u, &res) == FM_OK);
    CHECK(res.label == FM_LABEL_DEFER && res.stage == 1u && res.score_q == INT32_MAX);
    k_classes_q[1].bias_q = k_classes_q[2].bias_q = -1;
    CHECK(fm_gated_q15_predict_vec(&m, zero, 3u, &res) == FM_OK);
    CHECK(res.label == 0 && res.stage == 0u && res.score_q == INT32_MAX);
    /* a tie (margin 0) above INT32_MIN is easy */
    k_classes_q[0].bias_q = k_classes_q[1].bias_q = k_classes_q[2].bias_q = 0;
    m.gate.linear.decision_threshold_q = INT32_MIN;
    CHECK(fm_gated_q15_predict_vec(&m, zero, 3u, &res) == FM_OK);
    CHECK(res.label == 0 && res.stage == 0u && res.score_q == 0 && res.n_read == 2u);
}

static void test_margin_checks(void)
{
    fm_gated m = make_margin_model();
    fm_gated_q15 mq = make_margin_model_q();
    m.f1.type = FM_PART_LINEAR; /* f1 must be K-linear */
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_margin_model();
    m.f1 = m.f0;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_margin_model();
    m.f1.n_classes = 1u; /* ... and a valid one */
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_margin_model();
    m.gate_above = FM_GATE_ABOVE_F0;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m.gate_above = FM_GATE_ABOVE_F1;
    m.gate.linear.decision_threshold = NAN;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m.gate.linear.decision_threshold = INFINITY;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m.gate.linear.decision_threshold = -INFINITY;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m.gate.linear.decision_threshold = -FLT_MAX;
    CHECK(fm_gated_check(&m) == FM_OK);
    m.f0.type = FM_PART_MARGIN; /* the gate only */
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    m = make_model();
    m.f1.type = FM_PART_MARGIN;
    CHECK(fm_gated_check(&m) == FM_E_MODEL);
    mq.gate_above = FM_GATE_ABOVE_F0;
    CHECK(fm_gated_q15_check(&mq) == FM_E_MODEL);
    mq = make_margin_model_q();
    mq.f1.type = FM_PART_LINEAR;
    CHECK(fm_gated_q15_check(&mq) == FM_E_MODEL);
    mq = make_margin_model_q();
    k_classes_q[2].w_shift = 13u; /* one scale for the scores to compare */
    CHECK(fm_gated_q15_check(&mq) == FM_E_MODEL);
    mq = make_margin_model_q();
    mq.gate.linear.decision_threshold_q = INT32_MIN; /* any int32 */
    CHECK(fm_gated_q15_check(&mq) == FM_OK);
    mq.f0.type = FM_PART_MARGIN;
    CHECK(fm_gated_q15_check(&mq) == FM_E_MODEL);
}

int main(void)
{
    test_routing_float();
    test_routing_q15();
    test_vec_and_errors();
    test_checks();
    test_margin_float();
    test_margin_q15();
    test_margin_checks();
    return fm_check_done("test_gated");
}
