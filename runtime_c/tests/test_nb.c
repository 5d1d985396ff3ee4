/* C unit tests of the NB evaluator: known answers, table checks, bad input,
 * lazy reads, q15 saturation. Exit status 0 when every check passes. */
#include <stdio.h>
#include <math.h>

#include "fm_nb.h"
#include "fm_check.h"

/* Two features read in order 1, 0, two edges per position. Feature 1: edges
 * {-1, 1}, entries {zero, <=-1, (-1,1], >1}; feature 0: one edge {0.5} padded
 * with +inf, no zero bin of its own (its zero falls in "<= 0.5": -0.5). */
static const uint32_t order[2] = {1, 0};
static const float edges[4] = {-1.0f, 1.0f, 0.5f, INFINITY};
static const float d[8] = {0.0f, -2.0f, 0.25f, 2.0f, -0.5f, -0.5f, 0.5f, 0.5f};
static const uint32_t stop_at[1] = {1};
static const float stop_hi[1] = {1.5f};
static const float stop_lo[1] = {-1.5f};

static const fm_nb model = {2u, 2u, 2u, order, edges, d, 0.125f, 0.0f, 1u, stop_at, stop_hi, stop_lo, NULL, NULL, NULL};

typedef struct {
    const float *x;
    unsigned reads[2];
    int fail_on;
} counting_ctx;

static int counting_read(void *ctx, uint32_t j, float *v)
{
    counting_ctx *c = (counting_ctx *)ctx;
    if ((int)j == c->fail_on) {
        return 1;
    }
    c->reads[j]++;
    *v = c->x[j];
    return 0;
}

static void test_known_answers(void)
{
    fm_result r;
    /* x1 = 3 -> bin 3 -> +2.0: score 2.125 > 1.5: stops after 1 feature, label 1 */
    float a[2] = {0.0f, 3.0f};
    /* x1 = -3 -> bin 1 -> -2.0: score -1.875 < -1.5: stops, label 0 */
    float b[2] = {0.0f, -3.0f};
    /* x1 = 0 -> zero entry -> 0: 0.125; x0 = 0.75 -> above 0.5 -> +0.5: 0.625 > 0: label 1 */
    float c[2] = {0.75f, 0.0f};
    /* x1 = 0.5 -> (-1,1] -> 0.25: 0.375; x0 = 0.5 -> "<= 0.5" -> -0.5: -0.125 -> 0 */
    float e[2] = {0.5f, 0.5f};
    /* -0.0 is an exact zero; feature 0's zero uses its "<= 0.5" entry */
    float z[2] = {0.75f, -0.0f};
    float z0[2] = {0.0f, 0.5f};

    CHECK(fm_nb_predict_vec(&model, a, 2, &r) == FM_OK);
    CHECK(r.label == 1 && r.n_read == 1 && r.stage == 1 && r.score == 2.125f && r.cost == 1.0f);
    CHECK(fm_nb_predict_vec(&model, b, 2, &r) == FM_OK);
    CHECK(r.label == 0 && r.n_read == 1 && r.score == -1.875f);
    CHECK(fm_nb_predict_vec(&model, c, 2, &r) == FM_OK);
    CHECK(r.label == 1 && r.n_read == 2 && r.stage == 0 && r.score == 0.625f);
    CHECK(fm_nb_predict_vec(&model, e, 2, &r) == FM_OK);
    CHECK(r.label == 0 && r.n_read == 2 && r.score == -0.125f);
    CHECK(fm_nb_predict_vec(&model, z, 2, &r) == FM_OK);
    CHECK(r.label == 1 && r.score == 0.625f);
    CHECK(fm_nb_predict_vec(&model, z0, 2, &r) == FM_OK);
    CHECK(r.label == 0 && r.score == -0.125f);
}

static void test_lazy_reads_once(void)
{
    float x[2] = {0.75f, 0.0f};
    counting_ctx c = {x, {0, 0}, -1};
    fm_reader in = {counting_read, &c};
    fm_result r;
    CHECK(fm_nb_predict(&model, &in, &r) == FM_OK);
    CHECK(c.reads[0] == 1 && c.reads[1] == 1 && r.n_read == 2);
    c.fail_on = 0;
    CHECK(fm_nb_predict(&model, &in, &r) == FM_E_READ);
}

static void test_bad_input(void)
{
    fm_result r;
    float nan_x[2] = {NAN, 0.0f};
    float inf_x[2] = {0.0f, INFINITY};
    float rows[4] = {0.0f, 3.0f, 0.0f, NAN};
    fm_result out[2];
    uint32_t done = 99;
    CHECK(fm_nb_predict_vec(&model, nan_x, 2, &r) == FM_E_VALUE);
    CHECK(fm_nb_predict_vec(&model, inf_x, 2, &r) == FM_E_VALUE);
    CHECK(fm_nb_predict_vec(&model, nan_x, 3, &r) == FM_E_ARG);
    CHECK(fm_nb_predict_vec(NULL, nan_x, 2, &r) == FM_E_ARG);
    CHECK(fm_nb_predict_batch(&model, rows, 2, 2, out, &done) == FM_E_VALUE);
    CHECK(done == 1 && out[0].label == 1);
}

/* Copies of the model for fm_nb_check, each with the tables of its case (the model's own where it
 * keeps them) and the status expected. */
static const uint32_t bad_order[2] = {1, 7};
static const uint32_t dup_order[2] = {1, 1};
static const uint32_t bad_stops[1] = {2};
static const float unsorted[4] = {1.0f, -1.0f, 0.5f, INFINITY};
static const float nan_d[8] = {0.0f, -2.0f, NAN, 2.0f, -0.5f, -0.5f, 0.5f, 0.5f};

typedef struct {
    const uint32_t *order;
    const uint32_t *stop_at;
    const float *edges;
    const float *d;
    float threshold;
    uint32_t n_edges;
    int status;
} nb_check_case;

static const nb_check_case CHECK_CASES[] = {
    {order, stop_at, edges, d, 0.0f, 2u, FM_OK},
    {bad_order, stop_at, edges, d, 0.0f, 2u, FM_E_MODEL},
    {dup_order, stop_at, edges, d, 0.0f, 2u, FM_E_MODEL},
    {order, bad_stops, edges, d, 0.0f, 2u, FM_E_MODEL},
    {order, stop_at, unsorted, d, 0.0f, 2u, FM_E_MODEL},
    {order, stop_at, edges, nan_d, 0.0f, 2u, FM_E_MODEL},
    {order, stop_at, edges, d, NAN, 2u, FM_E_MODEL},
    {order, stop_at, edges, NULL, 0.0f, 2u, FM_E_MODEL},
    /* the fixed-stride layout without an order (and no records): the walk would read order[0] */
    {NULL, stop_at, edges, d, 0.0f, 2u, FM_E_MODEL},
    /* no edges: the walks would still offset the NULL pointer (n_edges 0: one zero / non-zero pair) */
    {order, stop_at, NULL, d, 0.0f, 0u, FM_E_MODEL},
    {order, stop_at, edges, d, 0.0f, 0u, FM_OK},
};

static void test_checks(void)
{
    size_t i;
    for (i = 0; i < sizeof CHECK_CASES / sizeof CHECK_CASES[0]; ++i) {
        const nb_check_case *c = &CHECK_CASES[i];
        fm_nb bad = model;
        bad.order = c->order;
        bad.stop_at = c->stop_at;
        bad.edges = c->edges;
        bad.d = c->d;
        bad.threshold = c->threshold;
        bad.n_edges = c->n_edges;
        CHECK(fm_nb_check(&bad) == c->status);
    }
    CHECK(fm_nb_check(NULL) == FM_E_ARG);
}

static void test_q15_saturation(void)
{
    /* keys of -1, 1, 0.5, +inf */
    static const int32_t keys[4] = {-1065353216, 1065353216, 1056964608, 2139095040};
    static const int16_t dq[8] = {0, -32768, 8, 32767, -16, -16, 16, 16};
    static const int32_t hi[1] = {INT32_MAX};
    static const int32_t lo[1] = {INT32_MIN};
    fm_nb_q15 q = {2u, 2u, 2u, order, keys, dq, INT32_MAX - 10, 0, 1u, stop_at, hi, lo, NULL, NULL, NULL, NULL};
    float up[2] = {0.75f, 3.0f};
    float down[2] = {0.0f, -3.0f};
    fm_result r;
    CHECK(fm_nb_q15_check(&q) == FM_OK);
    CHECK(fm_nb_q15_predict_vec(&q, up, 2, &r) == FM_OK);
    CHECK(r.score_q == INT32_MAX && r.label == 1 && r.n_read == 2 && r.cost_q == 2);
    q.d0 = INT32_MIN + 10;
    CHECK(fm_nb_q15_predict_vec(&q, down, 2, &r) == FM_OK);
    CHECK(r.score_q == INT32_MIN && r.label == 0);
    CHECK(fm_key_bits(fm_float_bits(-0.0f)) == fm_key_bits(fm_float_bits(0.0f)));
    CHECK(fm_key_bits(fm_float_bits(-2.0f)) < fm_key_bits(fm_float_bits(-1.0f)));
    CHECK(fm_key_bits(fm_float_bits(1.0f)) == keys[1]);
    /* stride tables without order or edge keys are refused, as in float32 */
    q.order = NULL;
    CHECK(fm_nb_q15_check(&q) == FM_E_MODEL);
    q.order = order;
    q.n_edges = 0u;
    q.edge_keys = NULL;
    CHECK(fm_nb_q15_check(&q) == FM_E_MODEL);
}

/* K-class NB without edges (n_edges 0: each position splits zero / non-zero only), three classes:
 * a known answer, and the edge table is required even when empty (the walks offset it by
 * n_edges * position; NULL + 0 is undefined; fuzz/crashes/nbk/null-edges-offset). */
static void test_nbk_no_edges(void)
{
    static const uint32_t k_order[2] = {1, 0};
    static const float no_edge[1] = {0.0f};
    static const float k_d[12] = {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.5f, 0.0f, 0.25f, 0.0f, -1.0f, 1.0f, 0.0f};
    static const float k_d0[3] = {0.0f, 0.0f, 0.25f};
    static const int32_t no_key[1] = {0};
    /* q15: the lanes {0, 0, 0}, {4, 0, 2}, {0, 1, 0}, {-4, 4, 0} and priors {0, 0, 1} packed two a word */
    static const uint32_t k_dq[8] = {0u, 0u, 4u, 2u, 0x10000u, 0u, 0x3fffcu, 0u};
    static const uint32_t k_d0q[2] = {0u, 1u};
    static const float x[2] = {0.0f, 2.0f};
    fm_nbk m = {2u, 2u, 3u, 0u, k_order, no_edge, k_d, k_d0, 0u, NULL, NULL, NULL};
    fm_nbk_q15 mq = {2u, 2u, 3u, 0u, k_order, no_key, k_dq, k_d0q, 0u, NULL, NULL, NULL};
    fm_result r;
    CHECK(fm_nbk_check(&m) == FM_OK);
    CHECK(fm_nbk_predict_vec(&m, x, 2, &r) == FM_OK);
    CHECK(r.label == 0 && r.score == 1.0f && r.n_read == 2 && r.stage == 0 && r.cost == 2.0f);
    CHECK(fm_nbk_q15_check(&mq) == FM_OK);
    CHECK(fm_nbk_q15_predict_vec(&mq, x, 2, &r) == FM_OK);
    CHECK(r.label == 0 && r.score_q == 4 && r.n_read == 2 && r.cost_q == 2u);
    m.edges = NULL;
    CHECK(fm_nbk_check(&m) == FM_E_MODEL);
    mq.edge_keys = NULL;
    CHECK(fm_nbk_q15_check(&mq) == FM_E_MODEL);
    /* no positions: nothing is offset, the priors alone answer */
    m.n_used = mq.n_used = 0u;
    CHECK(fm_nbk_check(&m) == FM_OK && fm_nbk_q15_check(&mq) == FM_OK);
    CHECK(fm_nbk_predict_vec(&m, x, 2, &r) == FM_OK && r.label == 2 && r.n_read == 0);
}

/* The word of two q15 lanes: hi * 65536 + lo, mod 2^32. */
static uint32_t nbk_pack(int32_t lo, int32_t hi)
{
    return (uint32_t)hi * 65536u + (uint32_t)lo;
}

/* Packed K-class q15 lanes at the int16 edge: sums that reach +-32767 in both lanes decode exactly, and a
 * model whose lane bound is 32768 is refused. */
static void test_nbk_q15_lane_edges(void)
{
    static const uint32_t order[1] = {0};
    static const int32_t no_key[1] = {0};
    const uint32_t d[2] = {nbk_pack(-20000, 30000), nbk_pack(20000, -30000)};
    uint32_t d0[1];
    const float x0[1] = {0.0f}, x1[1] = {-3.5f};
    fm_nbk_q15 m = {1u, 1u, 2u, 0u, order, no_key, d, d0, 0u, NULL, NULL, NULL};
    fm_result r;
    d0[0] = nbk_pack(-12767, 2767);
    CHECK(fm_nbk_q15_check(&m) == FM_OK);
    CHECK(fm_nbk_q15_predict_vec(&m, x1, 1, &r) == FM_OK && r.label == 0 && r.score_q == 7233);
    CHECK(fm_nbk_q15_predict_vec(&m, x0, 1, &r) == FM_OK && r.label == 1 && r.score_q == 32767);
    d0[0] = nbk_pack(-12767, -2767);
    CHECK(fm_nbk_q15_predict_vec(&m, x0, 1, &r) == FM_OK && r.label == 1 && r.score_q == 27233);
    d0[0] = nbk_pack(-12768, 2767);
    CHECK(fm_nbk_q15_check(&m) == FM_E_MODEL);
    d0[0] = nbk_pack(-12767, 2768);
    CHECK(fm_nbk_q15_check(&m) == FM_E_MODEL);
}

int main(void)
{
    test_known_answers();
    test_lazy_reads_once();
    test_bad_input();
    test_checks();
    test_q15_saturation();
    test_nbk_no_edges();
    test_nbk_q15_lane_edges();
    return fm_check_done("test_nb");
}
