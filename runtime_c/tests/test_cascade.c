/*
 * Unit tests of the cascade runtime (fm_cascade.c): exits per stage with
 * known answers, one feature memo shared across stages, the margin rule,
 * fixed point, the eager vector call and the load-time checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fm_cascade.h"
#include "fm_check.h"
#include "reader_fixture.h"
#include "trees_fixture.h"


/*
 * Stage 0 = tree 0: n0: x0 <= 3 ? n1 : n2 (leaf 2); n1: x0 <= 0 ? n3 (-1) : n4 (0.5)
 * Stage 1 = tree 1: n5: x1 <= 0 ? n6 (-2) : n7 (2)
 * Stage 2 = tree 2: n8: x0 <= 5 ? n9 : n10 (8); n9: x2 <= 0 ? n11 (-4) : n12 (4)
 * Costs {1, 10, 100}; exits: stage 0 above 1.5 / below -0.75, stage 1 above
 * 2.25 / below -2.25.
 */
/* Compact implicit tables: trees 0 and 2 as complete depth-2 trees (the
 * right leaf behind a dummy node on feature 0), tree 1 of depth 1. */
static const uint32_t C_NODE_END[3] = {3u, 4u, 7u};
static const uint16_t C_FEATURE[7] = {0u, 0u, 0u, 1u, 0u, 2u, 0u};
static const float C_THRESHOLD[7] = {3.0f, 0.0f, 0.0f, 0.0f, 5.0f, 0.0f, 0.0f};
static const float C_VALUE[10] = {-1.0f, 0.5f, 2.0f, 2.0f, -2.0f, 2.0f, -4.0f, 4.0f, 8.0f, 8.0f};
static const uint16_t C_OUT1[3] = {0, 0, 0};
static const uint16_t C_OUT2[3] = {0, 1, 0};
static const float C_BASE[2] = {0.0f, 0.0f};
static const float C_COSTS[3] = {1.0f, 10.0f, 100.0f};
static const uint16_t C_COSTS_Q[3] = {1u, 10u, 100u};
static const uint32_t C_STAGE_END[3] = {1u, 2u, 3u};
static const float C_UPPER[3] = {1.5f, 2.25f, INFINITY};
static const float C_LOWER[3] = {-0.75f, -2.25f, -INFINITY};
static const float C_MARGIN[3] = {1.0f, 1.0f, INFINITY};

static fm_cascade hand_cascade(int two_outputs)
{
    fm_cascade m;
    TREES_TABLES(m.trees, 3u, two_outputs ? 2u : 1u, 3u, 7u, C_NODE_END, C_FEATURE, two_outputs ? C_OUT2 : C_OUT1,
                 threshold, C_THRESHOLD, leaf, C_VALUE, base_score, C_BASE, C_COSTS);
    m.n_stages = 3u;
    m.stage_end = C_STAGE_END;
    m.exit_upper = two_outputs ? C_MARGIN : C_UPPER;
    m.exit_lower = C_LOWER;
    m.exit_rule = two_outputs ? FM_EXIT_MARGIN : FM_EXIT_SCORE;
    return m;
}

typedef struct {
    float x[3];
    float score;
    int32_t label;
    uint32_t stage;
    uint32_t n_read;
    float cost;
} hand_case;

static const hand_case SCORE_CASES[] = {
    {{4.0f, 0.0f, 0.0f}, 2.0f, 1, 0u, 1u, 1.0f},
    {{-1.0f, 0.0f, 0.0f}, -1.0f, 0, 0u, 1u, 1.0f},
    {{1.0f, 1.0f, 0.0f}, 2.5f, 1, 1u, 2u, 11.0f},
    {{1.0f, -1.0f, 1.0f}, 2.5f, 1, 2u, 3u, 111.0f},
    {{1.0f, -1.0f, -1.0f}, -5.5f, 0, 2u, 3u, 111.0f},
    {{0.0f, 0.0f, 0.0f}, -1.0f, 0, 0u, 1u, 1.0f}, /* ties go left: -1 exits at once */
    {{1.0f, 0.0f, 0.0f}, -5.5f, 0, 2u, 3u, 111.0f}, /* ties go left: 0.5 - 2 - 4 */
};

static void test_score_rule(void)
{
    fm_cascade m = hand_cascade(0);
    float values[3];
    uint8_t seen[3];
    float scores[1];
    fm_memo memo;
    size_t i;
    CHECK(fm_cascade_check(&m) == FM_OK);
    fm_memo_init(&memo, values, seen, 3u);
    for (i = 0; i < sizeof SCORE_CASES / sizeof SCORE_CASES[0]; ++i) {
        const hand_case *c = &SCORE_CASES[i];
        log_reader cr;
        fm_reader r;
        fm_result res, vec;
        log_init(&cr, c->x, 3u);
        r.read = log_read;
        r.ctx = &cr;
        CHECK(fm_cascade_predict(&m, &r, &memo, scores, &res) == FM_OK);
        CHECK(res.label == c->label);
        CHECK(res.score == c->score);
        CHECK(res.stage == c->stage);
        CHECK(res.n_read == c->n_read);
        CHECK(res.cost == c->cost);
        /* x0 is used by stages 0 and 2 but read once: the memo is shared */
        CHECK(cr.calls[0] == 1u);
        CHECK(cr.calls[1] == (c->stage >= 1u ? 1u : 0u));
        CHECK(cr.calls[2] == (c->stage >= 2u ? 1u : 0u));
        CHECK(fm_cascade_predict_vec(&m, c->x, 3u, &vec) == FM_OK);
        CHECK(vec.label == res.label && vec.score == res.score && vec.stage == res.stage &&
              vec.n_read == res.n_read && vec.cost == res.cost);
    }
}

static void test_margin_rule(void)
{
    static const struct {
        float x[3];
        int32_t label;
        uint32_t stage;
        uint32_t n_read;
    } cases[] = {
        {{4.0f, 0.0f, 0.0f}, 0, 0u, 1u},   /* {2, 0}: margin 2 */
        {{1.0f, 1.0f, 0.0f}, 1, 1u, 2u},   /* {0.5, 0} then {0.5, 2} */
        {{1.0f, -1.0f, 1.0f}, 0, 1u, 2u},  /* {0.5, -2}: margin 2.5 */
        {{0.0f, 0.5f, 1.0f}, 1, 1u, 2u},   /* {-1, 2}: margin 3 */
    };
    fm_cascade m = hand_cascade(1);
    float values[3];
    uint8_t seen[3];
    float scores[2];
    fm_memo memo;
    size_t i;
    CHECK(fm_cascade_check(&m) == FM_OK);
    fm_memo_init(&memo, values, seen, 3u);
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        fm_vector v;
        fm_reader r;
        fm_result res;
        v.x = cases[i].x;
        v.n = 3u;
        r.read = fm_vector_read;
        r.ctx = &v;
        CHECK(fm_cascade_predict(&m, &r, &memo, scores, &res) == FM_OK);
        CHECK(res.label == cases[i].label);
        CHECK(res.stage == cases[i].stage);
        CHECK(res.n_read == cases[i].n_read);
    }
}

static void test_errors_and_checks(void)
{
    fm_cascade m = hand_cascade(0);
    fm_cascade bad;
    float values[3];
    uint8_t seen[3];
    float scores[1];
    fm_memo memo;
    log_reader cr;
    fm_reader r;
    fm_result res;
    static const float nan_x[3] = {1.0f, NAN, 0.0f};
    static const uint32_t decreasing[3] = {2u, 1u, 3u};
    static const uint32_t short_end[3] = {1u, 2u, 2u};
    static const uint32_t empty_stages[3] = {0u, 0u, 3u};
    static const float nan_upper[3] = {NAN, 1.0f, INFINITY};
    fm_memo_init(&memo, values, seen, 3u);
    log_init(&cr, nan_x, 3u);
    r.read = log_read;
    r.ctx = &cr;
    CHECK(fm_cascade_predict(&m, &r, &memo, scores, &res) == FM_E_VALUE);
    cr.fail = 1;
    CHECK(fm_cascade_predict(&m, &r, &memo, scores, &res) == FM_E_READ);
    CHECK(fm_cascade_predict(NULL, &r, &memo, scores, &res) == FM_E_ARG);
    CHECK(fm_cascade_predict_vec(&m, nan_x, 2u, &res) == FM_E_ARG);
    CHECK(fm_cascade_predict_batch(&m, nan_x, 1u, 2u, &memo, scores, &res, NULL) == FM_E_ARG);

    bad = m;
    bad.stage_end = decreasing;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.stage_end = short_end;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.n_stages = 0u;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.exit_upper = nan_upper;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.exit_rule = FM_EXIT_MARGIN; /* one output */
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.exit_rule = 7u;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.stage_end = NULL;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = hand_cascade(1);
    bad.exit_rule = FM_EXIT_SCORE; /* two outputs */
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    bad = m;
    bad.trees.node_end = NULL;
    CHECK(fm_cascade_check(&bad) == FM_E_MODEL);
    /* empty stages are allowed: they exit on the same partial score */
    bad = m;
    bad.stage_end = empty_stages;
    CHECK(fm_cascade_check(&bad) == FM_OK);
    {
        static const float x[3] = {6.0f, 0.0f, 0.0f};
        CHECK(fm_cascade_predict_vec(&bad, x, 3u, &res) == FM_OK);
        CHECK(res.stage == 2u && res.n_read == 2u && res.label == 1); /* 2 - 2 + 8 */
        CHECK(res.score == 8.0f);
    }
}

static void test_q15(void)
{
    /* shift 8: leaves * 256; thresholds as keys of the float thresholds */
    static const int16_t value_q[10] = {-256, 128, 512, 512, -512, 512, -1024, 1024, 2048, 2048};
    static const int32_t base_q[1] = {0};
    static const int32_t upper_q[3] = {384, 576, INT32_MAX};
    static const int32_t lower_q[3] = {-192, -576, INT32_MIN};
    uint16_t key[7];
    fm_cascade_q15 m;
    float values[3];
    uint8_t seen[3];
    int32_t scores[1];
    fm_memo memo;
    size_t i;
    for (i = 0; i < 7u; ++i) {
        key[i] = (uint16_t)fm_ukey16(fm_float_bits(C_THRESHOLD[i]));
    }
    TREES_TABLES(m.trees, 3u, 1u, 3u, 7u, C_NODE_END, C_FEATURE, C_OUT1, threshold_q, key, leaf_q, value_q, base_q,
                 base_q, C_COSTS_Q);
    m.trees.shift = 8u;
    m.n_stages = 3u;
    m.stage_end = C_STAGE_END;
    m.exit_upper_q = upper_q;
    m.exit_lower_q = lower_q;
    m.exit_rule = FM_EXIT_SCORE;
    CHECK(fm_cascade_q15_check(&m) == FM_OK);
    fm_memo_init(&memo, values, seen, 3u);
    for (i = 0; i < sizeof SCORE_CASES / sizeof SCORE_CASES[0]; ++i) {
        const hand_case *c = &SCORE_CASES[i];
        fm_result res, vec;
        CHECK(fm_cascade_q15_predict_batch(&m, c->x, 1u, 3u, &memo, scores, &res, NULL) == FM_OK);
        CHECK(res.label == c->label);
        CHECK(res.score_q == (int32_t)(c->score * 256.0f));
        CHECK(res.stage == c->stage);
        CHECK(res.n_read == c->n_read);
        CHECK(res.cost_q == (uint32_t)c->cost);
        CHECK(fm_cascade_q15_predict_vec(&m, c->x, 3u, &vec) == FM_OK);
        CHECK(vec.label == res.label && vec.score_q == res.score_q && vec.stage == res.stage &&
              vec.n_read == res.n_read && vec.cost_q == res.cost_q);
    }
    m.stage_end = NULL;
    CHECK(fm_cascade_q15_check(&m) == FM_E_MODEL);
}

int main(void)
{
    test_score_rule();
    test_margin_rule();
    test_errors_and_checks();
    test_q15();
    return fm_check_done("test_cascade");
}
