/* Unit test of the skyline model family: lookup then the chosen model, known answers for NB and linear
 * bases, nothing fits, defaults, batch, and tables that read outside their feature set. */
#include <math.h>
#include <stdio.h>

#include "fm_skymodel.h"

#include "fm_check.h"
#include "skyline_fixture.h"

/* NB tables: one edge at 0.5 per position; entries (zero, below, above). */
static const uint32_t o0[] = {0}, o1[] = {1}, o01[] = {0, 1};
static const float e1[] = {0.5f}, e2[] = {0.5f, 0.5f};
static const float d1[] = {-2.0f, -2.0f, 2.0f};
static const float d01[] = {-2.0f, -2.0f, 2.0f, -3.0f, -3.0f, 3.0f};

/* The fixed-stride tables fm_nb and fm_nbk share (one edge per position), zeroed first. */
#define NB_TABLES(m, n_used_, order_, edges_, d_)  \
    do {                                           \
        memset(&(m), 0, sizeof(m));                \
        (m).n_features = 2;                        \
        (m).n_used = (n_used_);                    \
        (m).n_edges = (n_used_) > 0 ? 1u : 0u;     \
        (m).order = (order_);                      \
        (m).edges = (edges_);                      \
        (m).d = (d_);                              \
    } while (0)

static fm_nb nb_model(uint32_t n_used, const uint32_t *order, const float *edges, const float *d, float d0)
{
    fm_nb m;
    NB_TABLES(m, n_used, order, edges, d);
    m.d0 = d0;
    m.threshold = 0.0f;
    return m;
}

static void test_nb(void)
{
    fm_nb nbs[4];
    fm_skymodel m;
    fm_result r;
    double spent = -1.0;
    const float a[2] = {1.0f, 0.0f}; /* m1 says 1, m2 says 0, m3: 2 - 3 < 0 says 0 */
    const float b[2] = {0.0f, 1.0f}; /* m1 says 0, m2 says 1, m3: -2 + 3 > 0 says 1 */
    const float rows[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    const double budgets[2] = {-1.0, 1.5};
    const double sizes[2] = {0.0, 0.0};
    fm_result out[2];
    double sp[2];
    uint32_t done = 0;
    nbs[0] = nb_model(0, o0, e1, d1, -1.0f);
    nbs[1] = nb_model(1, o0, e1, d1, 0.0f);
    nbs[2] = nb_model(1, o1, e1, d1, 0.0f);
    nbs[3] = nb_model(2, o01, e2, d01, 0.0f);
    m.index = make_index();
    m.base = FM_SKY_NB;
    m.nb = nbs;
    m.linear = NULL;
    m.default_budget = INFINITY;
    m.default_size = 0.0;
    CHECK(fm_skymodel_check(&m) == FM_OK);

    CHECK(fm_skymodel_predict_vec_at(&m, a, 2, -1.0, 0.0, &r, &spent) == FM_E_BUDGET);
    CHECK(r.label == FM_LABEL_DEFER && r.stage == 4u && r.n_read == 0u && r.cost == 0.0f && spent == 0.0);

    CHECK(fm_skymodel_predict_vec_at(&m, a, 2, 0.0, 0.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 0u && r.label == 0 && r.n_read == 0u && spent == 0.0);

    CHECK(fm_skymodel_predict_vec_at(&m, a, 2, 1.5, 0.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 1u && r.label == 1 && r.n_read == 1u && r.cost == 1.0f && spent == 1.0);

    CHECK(fm_skymodel_predict_vec_at(&m, a, 2, 100.0, 0.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 3u && r.label == 0 && r.n_read == 2u && spent == 12.0);

    CHECK(fm_skymodel_predict_vec_at(&m, b, 2, 15.0, 20.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 2u && r.label == 1 && r.n_read == 1u && spent == 11.0);
    CHECK(fm_skymodel_predict_vec_at(&m, b, 2, 10.5, 20.0, &r, NULL) == FM_OK);
    CHECK(r.stage == 0u);

    /* defaults: +inf budget = the best model */
    CHECK(fm_skymodel_predict_vec(&m, b, 2, &r) == FM_OK);
    CHECK(r.stage == 3u && r.label == 1 && r.cost == 12.0f);
    CHECK(fm_skymodel_predict_vec(&m, b, 1, &r) == FM_E_ARG);
    CHECK(fm_skymodel_predict_vec_at(&m, b, 2, NAN, 0.0, &r, NULL) == FM_E_ARG);

    /* batch: a row where nothing fits is reported, not an error */
    CHECK(fm_skymodel_predict_batch(&m, rows, 2, 2, budgets, sizes, out, sp, &done) == FM_OK);
    CHECK(done == 2u && out[0].stage == 4u && out[0].label == FM_LABEL_DEFER && sp[0] == 0.0);
    CHECK(out[1].stage == 1u && out[1].label == 0 && sp[1] == 1.0);

    /* m1 reading feature 1, outside its set {f0} */
    nbs[1] = nb_model(1, o1, e1, d1, 0.0f);
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    nbs[1] = nb_model(1, o0, e1, d1, 0.0f);
    m.default_budget = NAN;
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    m.default_budget = 3.0;
    m.default_size = -INFINITY; /* fm_skymodel_predict_vec would be FM_E_ARG on every call */
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    m.default_size = 0.0;
    m.base = 7u;
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    m.base = FM_SKY_LINEAR; /* no linear tables */
    CHECK(fm_skymodel_check(&m) == FM_E_ARG);
    CHECK(fm_skymodel_check(NULL) == FM_E_ARG);
}

/* The same NB models in the record layout (fm_nb_pos: one edge repeated, its last entry repeated),
 * order, edges and d NULL as the header writer emits them. fm_skymodel_check once read order[i] of
 * every model, a NULL dereference here (issue 23; fuzz/crashes/skymodel/). */
static const fm_nb_pos p0[] = {{0u, {0.5f, 0.5f}, {-2.0f, -2.0f, 2.0f, 2.0f}}};
static const fm_nb_pos p1[] = {{1u, {0.5f, 0.5f}, {-2.0f, -2.0f, 2.0f, 2.0f}}};
static const fm_nb_pos p01[] = {{0u, {0.5f, 0.5f}, {-2.0f, -2.0f, 2.0f, 2.0f}},
                                {1u, {0.5f, 0.5f}, {-3.0f, -3.0f, 3.0f, 3.0f}}};

static fm_nb nb_records(uint32_t n_used, const fm_nb_pos *pos, float d0)
{
    fm_nb m;
    memset(&m, 0, sizeof m);
    m.n_features = 2;
    m.n_used = n_used;
    m.n_edges = 2u;
    m.pos = pos;
    m.d0 = d0;
    m.threshold = 0.0f;
    return m;
}

static void test_nb_records(void)
{
    fm_nb nbs[4], strided[4];
    fm_skymodel m, ms;
    fm_result r, rs;
    const float rows[4][2] = {{1.0f, 0.0f}, {0.0f, 1.0f}, {0.75f, 0.25f}, {0.0f, 0.0f}};
    const double budgets[5] = {0.0, 1.5, 11.0, 12.0, 100.0};
    const double sizes[2] = {0.0, 20.0};
    uint32_t i, b, z;
    nbs[0] = nb_records(0, NULL, -1.0f);
    nbs[1] = nb_records(1, p0, 0.0f);
    nbs[2] = nb_records(1, p1, 0.0f);
    nbs[3] = nb_records(2, p01, 0.0f);
    strided[0] = nb_model(0, o0, e1, d1, -1.0f);
    strided[1] = nb_model(1, o0, e1, d1, 0.0f);
    strided[2] = nb_model(1, o1, e1, d1, 0.0f);
    strided[3] = nb_model(2, o01, e2, d01, 0.0f);
    memset(&m, 0, sizeof m);
    m.index = make_index();
    m.base = FM_SKY_NB;
    m.nb = nbs;
    m.default_budget = INFINITY;
    ms = m;
    ms.nb = strided;
    CHECK(fm_skymodel_check(&m) == FM_OK);
    CHECK(fm_skymodel_check(&ms) == FM_OK);
    /* both layouts give the same answer on every row, budget and size */
    for (i = 0; i < 4u; ++i) {
        for (b = 0; b < 5u; ++b) {
            for (z = 0; z < 2u; ++z) {
                CHECK(fm_skymodel_predict_vec_at(&m, rows[i], 2, budgets[b], sizes[z], &r, NULL) == FM_OK);
                CHECK(fm_skymodel_predict_vec_at(&ms, rows[i], 2, budgets[b], sizes[z], &rs, NULL) == FM_OK);
                CHECK(r.label == rs.label && r.stage == rs.stage && r.n_read == rs.n_read && r.score == rs.score &&
                       r.cost == rs.cost);
            }
        }
    }
    /* known answers as in test_nb: m1 on row a says 1, m3 (best, budget +inf) on row b says 1 */
    CHECK(fm_skymodel_predict_vec_at(&m, rows[0], 2, 1.5, 0.0, &r, NULL) == FM_OK);
    CHECK(r.stage == 1u && r.label == 1 && r.n_read == 1u && r.cost == 1.0f);
    CHECK(fm_skymodel_predict_vec(&m, rows[1], 2, &r) == FM_OK);
    CHECK(r.stage == 3u && r.label == 1 && r.n_read == 2u && r.score == 1.0f);
    /* a record reading feature 1 in m1 = {f0}: refused, as in the stride layout */
    nbs[1] = nb_records(1, p1, 0.0f);
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    /* no records and no order (NULL tables of either layout) */
    nbs[1] = nb_records(1, NULL, 0.0f);
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
}

static const int32_t lf0[] = {0}, lf1[] = {1}, lf01[] = {0, 1};
static const float w1[] = {1.0f}, w01[] = {1.0f, 1.0f};

static fm_linear lin(uint32_t nnz, const int32_t *feature, const float *weight, float bias)
{
    fm_linear l;
    l.n_features = 2;
    l.nnz = nnz;
    l.feature = feature;
    l.weight = weight;
    l.bias = bias;
    l.decision_threshold = 0.0f;
    l.costs = NULL;
    return l;
}

static void test_linear(void)
{
    fm_linear ls[4];
    fm_skymodel m;
    fm_result r;
    double spent;
    const float x[2] = {2.0f, -3.0f};
    ls[0] = lin(0, lf0, w1, 1.0f);
    ls[1] = lin(1, lf0, w1, -0.5f);  /* 1.5 > 0: 1 */
    ls[2] = lin(1, lf1, w1, 0.0f);   /* -3 : 0 */
    ls[3] = lin(2, lf01, w01, 0.5f); /* -0.5 : 0 */
    m.index = make_index();
    m.base = FM_SKY_LINEAR;
    m.nb = NULL;
    m.linear = ls;
    m.default_budget = 1.0;
    m.default_size = 0.0;
    CHECK(fm_skymodel_check(&m) == FM_OK);
    CHECK(fm_skymodel_predict_vec(&m, x, 2, &r) == FM_OK);
    CHECK(r.stage == 1u && r.label == 1 && r.n_read == 1u && r.score == 1.5f && r.cost == 1.0f);
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 0.5, 0.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 0u && r.label == 1 && r.n_read == 0u);
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 13.0, 1.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 3u && r.label == 0 && r.n_read == 2u && spent == 13.0);
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 12.5, 10.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 2u && r.label == 0 && spent == 11.0);
    ls[2] = lin(1, lf0, w1, 0.0f); /* m2 = {f1} reading f0 */
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
}

/* K = 3 classes (base FM_SKY_NBK): per position three slots (zero, below 0.5, above) of three class
 * entries; "below" votes class 0, "above" class 2; the prior favours class 1 (the empty model's answer). */
static const float dk1[] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
static const float dk01[] = {0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1};
static const float dk0[] = {0.0f, 0.5f, 0.0f};

static fm_nbk nbk_model(uint32_t n_used, const uint32_t *order, const float *edges, const float *d)
{
    fm_nbk m;
    NB_TABLES(m, n_used, order, edges, d);
    m.n_classes = 3;
    m.d0 = dk0;
    return m;
}

static void test_nbk(void)
{
    fm_nbk ks[4];
    fm_skymodel m;
    fm_result r;
    double spent = -1.0;
    const float x[2] = {1.0f, 0.0f};
    ks[0] = nbk_model(0, o0, e1, dk1);
    ks[1] = nbk_model(1, o0, e1, dk1);
    ks[2] = nbk_model(1, o1, e1, dk1);
    ks[3] = nbk_model(2, o01, e2, dk01);
    memset(&m, 0, sizeof m);
    m.index = make_index();
    m.base = FM_SKY_NBK;
    m.nbk = ks;
    m.default_budget = INFINITY;
    CHECK(fm_skymodel_check(&m) == FM_OK);
    /* budget 0: the empty model answers the prior's class 1, reading nothing */
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 0.0, 0.0, &r, &spent) == FM_OK);
    CHECK(r.label == 1 && r.n_read == 0u && r.stage == 0u && spent == 0.0);
    /* budget 2 at size 0: m1 (f0 above the edge: class 2), cost 1 */
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 2.0, 0.0, &r, &spent) == FM_OK);
    CHECK(r.label == 2 && r.n_read == 1u && r.stage == 1u && spent == 1.0);
    /* no budget: m3 reads both (f1 = 0: the zero slot), class 2 */
    CHECK(fm_skymodel_predict_vec(&m, x, 2, &r) == FM_OK);
    CHECK(r.label == 2 && r.n_read == 2u && r.stage == 3u);
    /* models of different class counts, no models, another base's tables only */
    ks[2].n_classes = 2;
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    ks[2].n_classes = 3;
    m.nbk = NULL;
    CHECK(fm_skymodel_check(&m) == FM_E_ARG);
}

/* K = 3 classes (base FM_SKY_LINEARK), model k's class c at lineark[3k + c], at x = (2, -3):
 * m0 (no features): biases 0, 0.5, 0.5: a tie, the first largest wins (class 1, score 0.5);
 * m1 {f0}: 2, 1, -2: class 0; m2 {f1}: -3, 3, 0: class 1; m3 {f0, f1}: -1, -2, 3.5: class 2. */
static const float wm1[] = {-1.0f};

static void test_lineark(void)
{
    fm_linear ks[12];
    fm_skymodel m;
    fm_result r;
    double spent;
    const float x[2] = {2.0f, -3.0f};
    ks[0] = lin(0, lf0, w1, 0.0f);
    ks[1] = lin(0, lf0, w1, 0.5f);
    ks[2] = lin(0, lf0, w1, 0.5f);
    ks[3] = lin(1, lf0, w1, 0.0f);
    ks[4] = lin(0, lf0, w1, 1.0f);
    ks[5] = lin(1, lf0, wm1, 0.0f);
    ks[6] = lin(1, lf1, w1, 0.0f);
    ks[7] = lin(1, lf1, wm1, 0.0f);
    ks[8] = lin(0, lf1, w1, 0.0f);
    ks[9] = lin(2, lf01, w01, 0.0f);
    ks[10] = lin(0, lf0, w1, -2.0f);
    ks[11] = lin(1, lf1, wm1, 0.5f);
    memset(&m, 0, sizeof m);
    m.index = make_index();
    m.base = FM_SKY_LINEARK;
    m.n_classes = 3;
    m.lineark = ks;
    m.default_budget = 1.0;
    CHECK(fm_skymodel_check(&m) == FM_OK);
    CHECK(fm_skymodel_predict_vec(&m, x, 2, &r) == FM_OK); /* budget 1: m1 */
    CHECK(r.stage == 1u && r.label == 0 && r.n_read == 1u && r.score == 2.0f && r.cost == 1.0f);
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 0.5, 0.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 0u && r.label == 1 && r.n_read == 0u && r.score == 0.5f && spent == 0.0);
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 12.5, 10.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 2u && r.label == 1 && r.n_read == 1u && r.score == 3.0f && spent == 11.0);
    /* m3: f1 is read by classes 0 and 2, once */
    CHECK(fm_skymodel_predict_vec_at(&m, x, 2, 13.0, 1.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 3u && r.label == 2 && r.n_read == 2u && r.score == 3.5f && spent == 13.0);
    CHECK(fm_skymodel_scratch_size(&m) == fm_scratch_size(2u, 0u, 0));
    /* one class, too many classes, no tables, a class scorer reading outside its model's set */
    m.n_classes = 1;
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    m.n_classes = FM_SKY_MAX_CLASSES + 1u;
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    m.n_classes = 3;
    ks[6] = lin(1, lf0, w1, 0.0f); /* m2 = {f1}, class 0 reading f0 */
    CHECK(fm_skymodel_check(&m) == FM_E_MODEL);
    ks[6] = lin(1, lf1, w1, 0.0f);
    CHECK(fm_skymodel_check(&m) == FM_OK);
    m.lineark = NULL;
    CHECK(fm_skymodel_check(&m) == FM_E_ARG);
}

/* test_lineark's model in q15 (in_shift 0, w_shift 1: scores in halves), and a scale mismatch refused. */
static const int16_t w1q[] = {2}, wm1q[] = {-2}, w01q[] = {2, 2};

static fm_linear_q15 lin_q(uint32_t nnz, const int32_t *feature, const int16_t *weight_q, int32_t bias_q)
{
    fm_linear_q15 l;
    memset(&l, 0, sizeof l);
    l.n_features = 2;
    l.nnz = nnz;
    l.feature = feature;
    l.weight_q = weight_q;
    l.bias_q = bias_q;
    l.w_shift = 1;
    return l;
}

static void test_lineark_q15(void)
{
    fm_linear_q15 ks[12];
    fm_skymodel_q15 m;
    fm_result r;
    double spent;
    const float x[2] = {2.0f, -3.0f};
    ks[0] = lin_q(0, lf0, w1q, 0);
    ks[1] = lin_q(0, lf0, w1q, 1);
    ks[2] = lin_q(0, lf0, w1q, 1);
    ks[3] = lin_q(1, lf0, w1q, 0);
    ks[4] = lin_q(0, lf0, w1q, 2);
    ks[5] = lin_q(1, lf0, wm1q, 0);
    ks[6] = lin_q(1, lf1, w1q, 0);
    ks[7] = lin_q(1, lf1, wm1q, 0);
    ks[8] = lin_q(0, lf1, w1q, 0);
    ks[9] = lin_q(2, lf01, w01q, 0);
    ks[10] = lin_q(0, lf0, w1q, -4);
    ks[11] = lin_q(1, lf1, wm1q, 1);
    memset(&m, 0, sizeof m);
    m.index = make_index();
    m.base = FM_SKY_LINEARK;
    m.n_classes = 3;
    m.lineark = ks;
    m.default_budget = 1.0;
    CHECK(fm_skymodel_q15_check(&m) == FM_OK);
    CHECK(fm_skymodel_q15_predict_vec(&m, x, 2, &r) == FM_OK);
    CHECK(r.stage == 1u && r.label == 0 && r.n_read == 1u && r.score_q == 4 && r.cost == 1.0f && r.cost_q == 0u);
    CHECK(fm_skymodel_q15_predict_vec_at(&m, x, 2, 0.5, 0.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 0u && r.label == 1 && r.n_read == 0u && r.score_q == 1);
    CHECK(fm_skymodel_q15_predict_vec_at(&m, x, 2, 12.5, 10.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 2u && r.label == 1 && r.score_q == 6 && spent == 11.0);
    CHECK(fm_skymodel_q15_predict_vec_at(&m, x, 2, 13.0, 1.0, &r, &spent) == FM_OK);
    CHECK(r.stage == 3u && r.label == 2 && r.n_read == 2u && r.score_q == 7 && spent == 13.0);
    CHECK(fm_skymodel_q15_predict_vec_at(&m, x, 2, -1.0, 0.0, &r, &spent) == FM_E_BUDGET);
    CHECK(r.label == FM_LABEL_DEFER && r.stage == 4u && spent == 0.0);
    ks[7].w_shift = 2; /* class 1 of m2 in another unit */
    CHECK(fm_skymodel_q15_check(&m) == FM_E_MODEL);
    ks[7].w_shift = 1; /* each model has its own unit: m3's three scorers in quarters */
    ks[9].w_shift = ks[10].w_shift = ks[11].w_shift = 2u;
    CHECK(fm_skymodel_q15_check(&m) == FM_OK);
}

int main(void)
{
    test_lineark();
    test_lineark_q15();
    test_nbk();
    test_nb();
    test_nb_records();
    test_linear();
    return fm_check_done("test_skymodel");
}
