/*
 * Unit tests of the API conventions shared by every family (docs/runtime.md,
 * "C API conventions"): fm_strerror for every status, the one-buffer caller
 * scratch (fm_scratch_size / fm_scratch_split and each family's
 * fm_<family>[_q15]_scratch_size / _scratch_init: a predict with exactly the
 * reported bytes, heap-allocated so ASan catches any byte beyond), and the
 * FM_VEC_MAX_FEATURES / FM_VEC_MAX_OUTPUTS bounds of the *_predict_vec calls.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fm_cascade.h"
#include "fm_cstc.h"
#include "fm_gated.h"
#include "fm_linear.h"
#include "fm_nb.h"
#include "fm_skymodel.h"

#include "fm_check.h"
#include "trees_fixture.h"

#define N_BIG (FM_VEC_MAX_FEATURES + 1u)

static float big_x[N_BIG];

static int same(const fm_result *a, const fm_result *b)
{
    return a->label == b->label && a->score == b->score && a->score_q == b->score_q && a->n_read == b->n_read &&
           a->cost == b->cost && a->stage == b->stage && a->cost_q == b->cost_q;
}

/* A heap buffer of exactly `size` bytes (malloc is 4-aligned; at least 1 byte so it is never NULL). */
static void *exact(size_t size)
{
    void *p = malloc(size > 0u ? size : 1u);
    if (p == NULL) {
        abort();
    }
    return p;
}

static void test_strerror(void)
{
    CHECK(strcmp(fm_strerror(FM_OK), "success") == 0);
    CHECK(strcmp(fm_strerror(FM_E_VALUE), "a feature value is NaN or infinite") == 0);
    CHECK(strcmp(fm_strerror(FM_E_BUDGET), "nothing fits the budget") == 0);
    CHECK(strcmp(fm_strerror(FM_E_SAMPLE), "a window sample is NaN or infinite") == 0);
    CHECK(strcmp(fm_strerror(-10), "unknown status code") == 0);
    CHECK(strcmp(fm_strerror(1), "unknown status code") == 0);
    CHECK(fm_strerror(FM_E_ARG) != NULL && fm_strerror(FM_E_READ) != NULL && fm_strerror(FM_E_MODEL) != NULL);
}

static void test_scratch_layout(void)
{
    uint32_t words[16];
    fm_memo memo;
    void *scores = NULL;
    CHECK(fm_scratch_size(3u, 0u, 0) == 16u);  /* 3 * 5 = 15, padded to 16 */
    CHECK(fm_scratch_size(3u, 2u, 1) == 32u);  /* 8 + 21 = 29, padded to 32 */
    CHECK(fm_scratch_size(0u, 0u, 1) == 0u);
    if (sizeof(size_t) > 4u) {
        CHECK(fm_scratch_size(0xffffffffu, 0xffffffffu, 1) == (size_t)((11ull * 0xffffffffull + 3ull) & ~3ull));
    } else {
        CHECK(fm_scratch_size(0xffffffffu, 0u, 0) == (size_t)-1); /* does not fit: SIZE_MAX */
    }
    CHECK(fm_scratch_split(words, 32u, 3u, 2u, 1, &memo, &scores) == FM_OK);
    CHECK(scores == (void *)words && memo.values == (float *)(void *)(words + 2) && memo.n == 3u);
    CHECK(memo.keys == (int16_t *)(void *)(words + 5) && memo.seen == (uint8_t *)(void *)words + 26);
    CHECK(fm_scratch_split(words, 31u, 3u, 2u, 1, &memo, &scores) == FM_E_ARG);        /* one byte short */
    CHECK(fm_scratch_split((char *)words + 2, 60u, 3u, 2u, 1, &memo, &scores) == FM_E_ARG); /* misaligned */
    CHECK(fm_scratch_split(NULL, 0u, 3u, 0u, 0, &memo, NULL) == FM_E_ARG);
    CHECK(fm_scratch_split(words, 64u, 3u, 0u, 0, NULL, NULL) == FM_E_ARG);
    CHECK(fm_scratch_split(NULL, 0u, 0u, 0u, 0, &memo, &scores) == FM_OK && memo.n == 0u && scores == NULL);
}

/* ---- linear: 2 * x0 - x1 + 0.5 * x2 ---------------------------------------------------------- */
static const int32_t lin_feature[3] = {0, 1, 2};
static const float lin_weight[3] = {2.0f, -1.0f, 0.5f};
static const int16_t lin_weight_q[3] = {16384, -8192, 4096};
static const float row[3] = {1.0f, 3.0f, 4.0f};

static void test_linear(void)
{
    fm_linear m;
    fm_linear_q15 q;
    fm_memo memo;
    fm_result a, b;
    fm_vector v = {row, 3u};
    fm_reader in = {fm_vector_read, &v};
    size_t size;
    void *buf;
    memset(&m, 0, sizeof m);
    m.n_features = 3u;
    m.nnz = 3u;
    m.feature = lin_feature;
    m.weight = lin_weight;
    CHECK(fm_linear_check(&m) == FM_OK);
    size = fm_linear_scratch_size(&m);
    CHECK(size == fm_scratch_size(3u, 0u, 0) && fm_linear_scratch_size(NULL) == 0u);
    buf = exact(size);
    CHECK(fm_linear_scratch_init(&m, buf, size - 1u, &memo) == FM_E_ARG);
    CHECK(fm_linear_scratch_init(&m, buf, size, &memo) == FM_OK);
    CHECK(fm_linear_predict(&m, &in, &memo, &a) == FM_OK && a.label == 1 && a.score == 1.0f && a.n_read == 3u);
    CHECK(fm_linear_predict_batch(&m, row, 1u, 3u, &memo, &b, NULL) == FM_OK && same(&a, &b));
    free(buf);

    memset(&q, 0, sizeof q);
    q.n_features = 3u;
    q.nnz = 3u;
    q.feature = lin_feature;
    q.weight_q = lin_weight_q;
    q.in_shift = 8u;
    q.w_shift = 13u;
    CHECK(fm_linear_q15_check(&q) == FM_OK);
    size = fm_linear_q15_scratch_size(&q);
    buf = exact(size);
    CHECK(fm_linear_q15_scratch_init(&q, buf, size, &memo) == FM_OK);
    CHECK(fm_linear_q15_predict(&q, &in, &memo, &a) == FM_OK && a.label == 1 && a.score_q == 8192);
    CHECK(fm_linear_q15_predict_batch(&q, row, 1u, 3u, &memo, &b, NULL) == FM_OK && same(&a, &b));
    free(buf);
}

/* ---- cstc: root 2*x0 - x1 + 0.5*x2 > 0 -> node 1 (x1 > 2), else node 2 (x2 > 5) -------------- */
static const uint32_t cs_start[4] = {0u, 3u, 4u, 5u};
static const int32_t cs_feature[5] = {0, 1, 2, 1, 2};
static const float cs_weight[5] = {2.0f, -1.0f, 0.5f, 1.0f, 1.0f};
static const int16_t cs_weight_q[5] = {16384, -8192, 4096, 8192, 8192};
static const float cs_bias[3] = {0.0f, 0.0f, 0.0f};
static const int32_t cs_bias_q[3] = {0, 0, 0};
static const float cs_threshold[3] = {0.0f, 2.0f, 5.0f};
static const int32_t cs_threshold_q[3] = {0, 16384, 40960};
static const uint8_t cs_shift[3] = {13u, 13u, 13u};
static const int32_t cs_upper[3] = {1, -1, -1};
static const int32_t cs_lower[3] = {2, -1, -1};

/* A 3-node tree over cs_threshold / cs_upper / cs_lower with the given terms (binary unless set after): the
 * fields fm_cstc and fm_cstc_q15 share, zeroed first (no costs, classes or class scorers). */
#define CS_TABLES(m, start, feature_, W, weight_, B, bias_) \
    do {                                                     \
        memset((m), 0, sizeof *(m));                         \
        (m)->n_features = 3u;                                \
        (m)->n_nodes = 3u;                                   \
        (m)->term_start = (start);                           \
        (m)->feature = (feature_);                           \
        (m)->W = (weight_);                                  \
        (m)->B = (bias_);                                    \
        (m)->upper = cs_upper;                               \
        (m)->lower = cs_lower;                               \
    } while (0)

static void cs_model(fm_cstc *m, const uint32_t *start, const int32_t *feature, const float *weight, const float *bias)
{
    CS_TABLES(m, start, feature, weight, weight, bias, bias);
    m->threshold = cs_threshold;
}

static void cs_model_q15(fm_cstc_q15 *q, const uint32_t *start, const int32_t *feature, const int16_t *weight_q,
                         const int32_t *bias_q)
{
    CS_TABLES(q, start, feature, weight_q, weight_q, bias_q, bias_q);
    q->threshold_q = cs_threshold_q;
    q->w_shift = cs_shift;
    q->in_shift = 8u;
    q->n_classes = 2u; /* 0 or 2: binary leaves */
}

static void test_cstc(void)
{
    fm_cstc m;
    fm_cstc_q15 q;
    fm_memo memo;
    fm_result a, b, c;
    fm_vector v = {row, 3u};
    fm_reader in = {fm_vector_read, &v};
    size_t size;
    void *buf;
    cs_model(&m, cs_start, cs_feature, cs_weight, cs_bias);
    CHECK(fm_cstc_check(&m) == FM_OK);
    size = fm_cstc_scratch_size(&m);
    CHECK(size == 16u && fm_cstc_scratch_size(NULL) == 0u);
    buf = exact(size);
    CHECK(fm_cstc_scratch_init(&m, buf, size - 1u, &memo) == FM_E_ARG);
    CHECK(fm_cstc_scratch_init(NULL, buf, size, &memo) == FM_E_ARG);
    CHECK(fm_cstc_scratch_init(&m, buf, size, &memo) == FM_OK);
    CHECK(fm_cstc_predict(&m, &in, &memo, &a) == FM_OK && a.stage == 1u && a.label == 1 && a.n_read == 3u);
    CHECK(fm_cstc_predict_batch(&m, row, 1u, 3u, &memo, &b, NULL) == FM_OK && same(&a, &b));
    CHECK(fm_cstc_predict_vec(&m, row, 3u, &c) == FM_OK && same(&a, &c));
    free(buf);
    m.n_features = N_BIG; /* the same tables over more features: over the stack bound */
    CHECK(fm_cstc_check(&m) == FM_OK);
    CHECK(fm_cstc_predict_vec(&m, big_x, N_BIG, &c) == FM_E_ARG);
    size = fm_cstc_scratch_size(&m);
    buf = exact(size);
    CHECK(fm_cstc_scratch_init(&m, buf, size, &memo) == FM_OK);
    CHECK(fm_cstc_predict_batch(&m, big_x, 1u, N_BIG, &memo, &b, NULL) == FM_OK && b.n_read == 3u);
    free(buf);

    cs_model_q15(&q, cs_start, cs_feature, cs_weight_q, cs_bias_q);
    CHECK(fm_cstc_q15_check(&q) == FM_OK);
    size = fm_cstc_q15_scratch_size(&q);
    buf = exact(size);
    CHECK(fm_cstc_q15_scratch_init(&q, buf, size, &memo) == FM_OK);
    CHECK(fm_cstc_q15_predict(&q, &in, &memo, &a) == FM_OK && a.stage == 1u && a.label == 1);
    CHECK(fm_cstc_q15_predict_vec(&q, row, 3u, &c) == FM_OK && same(&a, &c));
    free(buf);
    q.n_features = N_BIG;
    CHECK(fm_cstc_q15_predict_vec(&q, big_x, N_BIG, &c) == FM_E_ARG);
}

/* ---- cstc, 64 classes: the same routers; leaf 1's class c scores c + x1, leaf 2's -c + x2 ------------ */
#define CSK 64u
static uint32_t csk_start[3u + 2u * CSK + 1u];
static int32_t csk_feature[5u + 2u * CSK];
static float csk_weight[5u + 2u * CSK];
static int16_t csk_weight_q[5u + 2u * CSK];
static float csk_bias[3u + 2u * CSK];
static int32_t csk_bias_q[3u + 2u * CSK];
static uint32_t csk_first[3] = {0u, 3u, 3u + CSK};

static void test_cstc_k(void)
{
    fm_cstc m;
    fm_cstc_q15 q;
    fm_result a, b;
    uint32_t s;
    const float up[3] = {1.0f, 1.0f, 1.0f}, down[3] = {-1.0f, 1.0f, 1.0f};
    for (s = 0u; s < 5u; ++s) {
        csk_feature[s] = cs_feature[s];
        csk_weight[s] = cs_weight[s];
        csk_weight_q[s] = cs_weight_q[s];
    }
    for (s = 0u; s < 4u; ++s) {
        csk_start[s] = cs_start[s]; /* the leaves' own scorers: one term each, never evaluated */
    }
    for (s = 3u; s < 3u + 2u * CSK; ++s) { /* one term per class scorer: x1 (leaf 1) or x2 (leaf 2) */
        const uint32_t c = (s - 3u) % CSK;
        csk_start[s + 1u] = csk_start[s] + 1u;
        csk_feature[csk_start[s]] = s < 3u + CSK ? 1 : 2;
        csk_weight[csk_start[s]] = 1.0f;
        csk_weight_q[csk_start[s]] = 8192;
        csk_bias[s] = s < 3u + CSK ? (float)c : -(float)c;
        csk_bias_q[s] = (s < 3u + CSK ? 1 : -1) * (int32_t)c * 8192;
    }
    cs_model(&m, csk_start, csk_feature, csk_weight, csk_bias);
    m.n_classes = CSK;
    m.n_class_scorers = 2u * CSK;
    m.class_first = csk_first;
    CHECK(fm_cstc_check(&m) == FM_OK);
    CHECK(fm_cstc_predict_vec(&m, up, 3u, &a) == FM_OK && a.stage == 1u && a.label == (int32_t)CSK - 1 &&
          a.score == 64.0f && a.n_read == 3u);
    CHECK(fm_cstc_predict_vec(&m, down, 3u, &b) == FM_OK && b.stage == 2u && b.label == 0 && b.score == 1.0f);
    m.n_classes = CSK + 1u; /* more than FM_VEC_MAX_OUTPUTS */
    CHECK(fm_cstc_check(&m) == FM_E_MODEL);
    m.n_classes = 1u;
    CHECK(fm_cstc_check(&m) == FM_E_MODEL);
    m.n_classes = CSK;
    csk_first[2] = 3u + CSK + 1u; /* past the last class scorer */
    CHECK(fm_cstc_check(&m) == FM_E_MODEL);
    csk_first[2] = 2u; /* a node scorer */
    CHECK(fm_cstc_check(&m) == FM_E_MODEL);
    csk_first[2] = 3u + CSK;
    m.class_first = NULL;
    CHECK(fm_cstc_check(&m) == FM_E_MODEL);

    cs_model_q15(&q, csk_start, csk_feature, csk_weight_q, csk_bias_q);
    q.n_classes = CSK;
    q.n_class_scorers = 2u * CSK;
    q.class_first = csk_first;
    CHECK(fm_cstc_q15_check(&q) == FM_OK);
    CHECK(fm_cstc_q15_predict_vec(&q, up, 3u, &a) == FM_OK && a.stage == 1u && a.label == (int32_t)CSK - 1);
    CHECK(fm_cstc_q15_predict_vec(&q, down, 3u, &b) == FM_OK && b.stage == 2u && b.label == 0);
    q.n_class_scorers = CSK - 1u;
    CHECK(fm_cstc_q15_check(&q) == FM_E_MODEL);
}

/* ---- cascade: one stage, one stump x1 <= 2 ? -1 : 1 on output 0 ------------------------------- */
static const uint32_t t_node_end[1] = {1u};
static const uint16_t t_feature[1] = {1u};
static const float t_threshold[1] = {2.0f};
static const uint16_t t_key[1] = {0xc000}; /* fm_ukey16(2.0f) = fm_key16(2.0f) + 32768 */
static const float t_leaf[2] = {-1.0f, 1.0f};
static const int16_t t_leaf_q[2] = {-100, 100};
static const uint16_t t_out[1] = {0u};
static float t_base[FM_VEC_MAX_OUTPUTS + 1u];
static int32_t t_base_q[FM_VEC_MAX_OUTPUTS + 1u];
static const uint32_t stage_end[1] = {1u};
static const float up[1] = {INFINITY}, lo[1] = {-INFINITY};
static const int32_t up_q[1] = {INT32_MAX}, lo_q[1] = {INT32_MIN};

static fm_trees stump(uint32_t n_features, uint32_t n_outputs)
{
    fm_trees t;
    TREES_TABLES(t, n_features, n_outputs, 1u, 1u, t_node_end, t_feature, t_out, threshold, t_threshold, leaf, t_leaf,
                 base_score, t_base, NULL);
    return t;
}

static fm_trees_q15 stump_q(uint32_t n_features, uint32_t n_outputs)
{
    fm_trees_q15 t;
    TREES_TABLES(t, n_features, n_outputs, 1u, 1u, t_node_end, t_feature, t_out, threshold_q, t_key, leaf_q, t_leaf_q,
                 base_q, t_base_q, NULL);
    t.shift = 7u;
    return t;
}

static void test_cascade(void)
{
    const uint32_t shapes[4][2] = {{3u, 1u}, {3u, 2u}, {N_BIG, 1u}, {3u, FM_VEC_MAX_OUTPUTS + 1u}};
    uint32_t s;
    for (s = 0u; s < 4u; ++s) {
        const uint32_t nf = shapes[s][0], no = shapes[s][1];
        const float *x = nf == 3u ? row : big_x;
        const int over = nf > FM_VEC_MAX_FEATURES || no > FM_VEC_MAX_OUTPUTS;
        fm_cascade m;
        fm_cascade_q15 q;
        fm_memo memo;
        fm_result a, b, c;
        fm_vector v = {x, nf};
        fm_reader in = {fm_vector_read, &v};
        float *scores = NULL;
        int32_t *scores_q = NULL;
        size_t size;
        void *buf;
        m.trees = stump(nf, no);
        m.n_stages = 1u;
        m.stage_end = stage_end;
        m.exit_upper = up;
        m.exit_lower = lo;
        m.exit_rule = no == 1u ? FM_EXIT_SCORE : FM_EXIT_MARGIN;
        CHECK(fm_cascade_check(&m) == FM_OK);
        size = fm_cascade_scratch_size(&m);
        CHECK(size == fm_scratch_size(nf, no, 0));
        buf = exact(size);
        CHECK(fm_cascade_scratch_init(&m, buf, size - 1u, &memo, &scores) == FM_E_ARG);
        CHECK(fm_cascade_scratch_init(&m, buf, size, &memo, &scores) == FM_OK && scores == buf);
        CHECK(fm_cascade_predict(&m, &in, &memo, scores, &a) == FM_OK && a.label == (no == 1u && x == row ? 1 : 0));
        CHECK(a.n_read == 1u && a.cost == 1.0f);
        CHECK(fm_cascade_predict_batch(&m, x, 1u, nf, &memo, scores, &b, NULL) == FM_OK && same(&a, &b));
        CHECK(fm_cascade_predict_vec(&m, x, nf, &c) == (over ? FM_E_ARG : FM_OK));
        CHECK(over || same(&a, &c));
        free(buf);

        q.trees = stump_q(nf, no);
        q.n_stages = 1u;
        q.stage_end = stage_end;
        q.exit_upper_q = up_q;
        q.exit_lower_q = lo_q;
        q.exit_rule = m.exit_rule;
        CHECK(fm_cascade_q15_check(&q) == FM_OK);
        size = fm_cascade_q15_scratch_size(&q);
        CHECK(size == fm_scratch_size(nf, no, 1));
        buf = exact(size);
        CHECK(fm_cascade_q15_scratch_init(&q, buf, size, &memo, &scores_q) == FM_OK && memo.keys != NULL);
        CHECK(fm_cascade_q15_predict(&q, &in, &memo, scores_q, &a) == FM_OK && a.n_read == 1u);
        CHECK(fm_cascade_q15_predict_batch(&q, x, 1u, nf, &memo, scores_q, &b, NULL) == FM_OK && same(&a, &b));
        CHECK(fm_cascade_q15_predict_vec(&q, x, nf, &c) == (over ? FM_E_ARG : FM_OK));
        CHECK(over || same(&a, &c));
        free(buf);
    }
}

/* The trees family's own scratch query (the same stump as the cascade's), every batch's n_done on a bad
 * argument, and the families with no scratch (NB, the skyline index) answering 0. */
static void test_trees_nb_skyline(void)
{
    const uint32_t shapes[3][2] = {{3u, 1u}, {3u, 2u}, {N_BIG, 1u}};
    uint32_t s, n_done;
    fm_skyline sky;
    fm_result out[2];
    for (s = 0u; s < 3u; ++s) {
        const uint32_t nf = shapes[s][0], no = shapes[s][1];
        const float *x = nf == 3u ? row : big_x;
        const fm_trees m = stump(nf, no);
        const fm_trees_q15 q = stump_q(nf, no);
        fm_memo memo;
        fm_result a, b;
        fm_vector v = {x, nf};
        fm_reader in = {fm_vector_read, &v};
        float *scores = NULL;
        int32_t *scores_q = NULL;
        size_t size = fm_trees_scratch_size(&m);
        void *buf;
        CHECK(size == fm_scratch_size(nf, no, 0) && fm_trees_scratch_size(NULL) == 0u);
        buf = exact(size);
        CHECK(fm_trees_scratch_init(&m, buf, size - 1u, &memo, &scores) == FM_E_ARG);
        CHECK(fm_trees_scratch_init(&m, buf, size, &memo, &scores) == FM_OK && scores == buf);
        CHECK(fm_trees_predict(&m, &in, &memo, scores, &a) == FM_OK && a.n_read == 1u);
        CHECK(fm_trees_predict_batch(&m, x, 1u, nf, &memo, scores, &b, NULL) == FM_OK && same(&a, &b));
        n_done = 7u;
        CHECK(fm_trees_predict_batch(&m, x, 1u, nf + 1u, &memo, scores, &b, &n_done) == FM_E_ARG && n_done == 0u);
        free(buf);
        size = fm_trees_q15_scratch_size(&q);
        CHECK(size == fm_scratch_size(nf, no, 1));
        buf = exact(size);
        CHECK(fm_trees_q15_scratch_init(&q, buf, size, &memo, &scores_q) == FM_OK && memo.keys != NULL);
        CHECK(fm_trees_q15_predict(&q, &in, &memo, scores_q, &a) == FM_OK && a.n_read == 1u);
        CHECK(fm_trees_q15_predict_batch(&q, x, 1u, nf, &memo, scores_q, &b, NULL) == FM_OK && same(&a, &b));
        free(buf);
    }
    CHECK(fm_nb_scratch_size(NULL) == 0u && fm_nb_q15_scratch_size(NULL) == 0u);
    CHECK(fm_nb_predict_batch(NULL, row, 1u, 3u, out, NULL) == FM_E_ARG);
    CHECK(fm_nb_q15_predict_batch(NULL, row, 1u, 3u, out, NULL) == FM_E_ARG);
    memset(&sky, 0, sizeof sky);
    CHECK(fm_skyline_scratch_size(&sky) == 0u);
}

/* ---- gated: gate x0 > 0 lets the linear f1 answer, else the stump f0 --------------------------- */
static const int32_t gate_feature[1] = {0};
static const float gate_weight[1] = {1.0f};
static const int16_t gate_weight_q[1] = {16384};

static void test_gated(void)
{
    const uint32_t shapes[3][2] = {{3u, 2u}, {N_BIG, 1u}, {3u, FM_VEC_MAX_OUTPUTS + 1u}};
    const float neg[3] = {-1.0f, 3.0f, 4.0f};
    uint32_t s;
    for (s = 0u; s < 3u; ++s) {
        const uint32_t nf = shapes[s][0], no = shapes[s][1];
        const int over = nf > FM_VEC_MAX_FEATURES || no > FM_VEC_MAX_OUTPUTS;
        float xs[2][3];
        uint32_t k;
        memcpy(xs[0], row, sizeof row);
        memcpy(xs[1], neg, sizeof neg);
        for (k = 0u; k < 2u; ++k) {
            float *x = nf == 3u ? xs[k] : big_x;
            fm_gated m;
            fm_gated_q15 q;
            fm_memo memo;
            fm_result a, b, c;
            fm_vector v = {x, nf};
            fm_reader in = {fm_vector_read, &v};
            float *scores = NULL;
            int32_t *scores_q = NULL;
            size_t size;
            void *buf;
            if (nf != 3u) {
                big_x[0] = xs[k][0];
                big_x[1] = xs[k][1];
                big_x[2] = xs[k][2];
            }
            memset(&m, 0, sizeof m);
            m.n_features = nf;
            m.gate_above = FM_GATE_ABOVE_F1;
            m.gate.type = FM_PART_LINEAR;
            m.gate.linear.n_features = nf;
            m.gate.linear.nnz = 1u;
            m.gate.linear.feature = gate_feature;
            m.gate.linear.weight = gate_weight;
            m.f1.type = FM_PART_LINEAR;
            m.f1.linear.n_features = nf;
            m.f1.linear.nnz = 3u;
            m.f1.linear.feature = lin_feature;
            m.f1.linear.weight = lin_weight;
            m.f0.type = FM_PART_TREES;
            m.f0.trees = stump(nf, no);
            CHECK(fm_gated_check(&m) == FM_OK);
            size = fm_gated_scratch_size(&m);
            CHECK(size == fm_scratch_size(nf, no, 0));
            buf = exact(size);
            CHECK(fm_gated_scratch_init(&m, buf, size - 1u, &memo, &scores) == FM_E_ARG);
            CHECK(fm_gated_scratch_init(&m, buf, size, &memo, &scores) == FM_OK);
            CHECK(fm_gated_predict(&m, &in, &memo, scores, &a) == FM_OK && a.stage == (k == 0u ? 0u : 1u));
            CHECK(fm_gated_predict_batch(&m, x, 1u, nf, &memo, scores, &b, NULL) == FM_OK && same(&a, &b));
            CHECK(fm_gated_predict_vec(&m, x, nf, &c) == (over ? FM_E_ARG : FM_OK));
            CHECK(over || same(&a, &c));
            free(buf);

            memset(&q, 0, sizeof q);
            q.n_features = nf;
            q.gate_above = FM_GATE_ABOVE_F1;
            q.gate.type = FM_PART_LINEAR;
            q.gate.linear.n_features = nf;
            q.gate.linear.nnz = 1u;
            q.gate.linear.feature = gate_feature;
            q.gate.linear.weight_q = gate_weight_q;
            q.gate.linear.in_shift = 8u;
            q.gate.linear.w_shift = 14u;
            q.f1.type = FM_PART_LINEAR;
            q.f1.linear.n_features = nf;
            q.f1.linear.nnz = 3u;
            q.f1.linear.feature = lin_feature;
            q.f1.linear.weight_q = lin_weight_q;
            q.f1.linear.in_shift = 8u;
            q.f1.linear.w_shift = 13u;
            q.f0.type = FM_PART_TREES;
            q.f0.trees = stump_q(nf, no);
            CHECK(fm_gated_q15_check(&q) == FM_OK);
            size = fm_gated_q15_scratch_size(&q);
            CHECK(size == fm_scratch_size(nf, no, 1));
            buf = exact(size);
            CHECK(fm_gated_q15_scratch_init(&q, buf, size, &memo, &scores_q) == FM_OK);
            CHECK(fm_gated_q15_predict(&q, &in, &memo, scores_q, &a) == FM_OK && a.stage == (k == 0u ? 0u : 1u));
            CHECK(fm_gated_q15_predict_batch(&q, x, 1u, nf, &memo, scores_q, &b, NULL) == FM_OK && same(&a, &b));
            CHECK(fm_gated_q15_predict_vec(&q, x, nf, &c) == (over ? FM_E_ARG : FM_OK));
            CHECK(over || same(&a, &c));
            free(buf);
        }
    }
}

/* ---- skymodel, linear base: one indexed model on {x0, x1} of cost 1 --------------------------- */
static const double sk_coef[3] = {1.0, 0.0, 0.0};
static const uint32_t sk_feat_ptr[2] = {0u, 2u};
static const uint32_t sk_feat_idx[2] = {0u, 1u};
static const double sk_breaks[1] = {0.0};
static const uint32_t sk_sky_ptr[2] = {0u, 1u};
static const uint32_t sk_sky_model[1] = {0u};

static void test_skymodel(void)
{
    const uint32_t sizes[2] = {3u, N_BIG};
    uint32_t s;
    memset(big_x, 0, sizeof big_x);
    for (s = 0u; s < 2u; ++s) {
        const uint32_t nf = sizes[s];
        const float *x = nf == 3u ? row : big_x;
        fm_linear l;
        fm_skymodel m;
        fm_memo memo;
        fm_result a, c;
        fm_vector v = {x, nf};
        fm_reader in = {fm_vector_read, &v};
        size_t size;
        void *buf;
        memset(&l, 0, sizeof l);
        l.n_features = nf;
        l.nnz = 2u;
        l.feature = lin_feature;
        l.weight = lin_weight;
        m.index.n_features = nf;
        m.index.n_models = 1u;
        m.index.n_ranges = 1u;
        m.index.model_coef = sk_coef;
        m.index.feat_ptr = sk_feat_ptr;
        m.index.feat_idx = sk_feat_idx;
        m.index.breaks = sk_breaks;
        m.index.sky_ptr = sk_sky_ptr;
        m.index.sky_model = sk_sky_model;
        m.base = FM_SKY_LINEAR;
        m.nb = NULL;
        m.linear = &l;
        m.default_budget = INFINITY;
        m.default_size = 0.0;
        CHECK(fm_skymodel_check(&m) == FM_OK);
        size = fm_skymodel_scratch_size(&m);
        CHECK(size == fm_scratch_size(nf, 0u, 0));
        buf = exact(size);
        CHECK(fm_skymodel_scratch_init(&m, buf, size - 1u, &memo) == FM_E_ARG);
        CHECK(fm_skymodel_scratch_init(&m, buf, size, &memo) == FM_OK);
        CHECK(fm_skymodel_predict(&m, &in, &memo, INFINITY, 0.0, &a, NULL) == FM_OK);
        CHECK(a.n_read == 2u && a.stage == 0u && a.score == (x == row ? -1.0f : 0.0f));
        CHECK(fm_skymodel_predict_vec(&m, x, nf, &c) == (nf > FM_VEC_MAX_FEATURES ? FM_E_ARG : FM_OK));
        CHECK(nf > FM_VEC_MAX_FEATURES || same(&a, &c));
        free(buf);
    }
}

int main(void)
{
    test_strerror();
    test_scratch_layout();
    test_linear();
    test_cstc();
    test_cstc_k();
    test_cascade();
    test_trees_nb_skyline();
    test_gated();
    test_skymodel();
    return fm_check_done("test_api");
}
