/* frugalml runtime: cascades of tree-ensemble stages with early exits (see fm_cascade.h). */
#include "fm_cascade.h"
#include "fm_port.h"
#include "fm_batch.h"

/* ---- load-time checks ------------------------------------------------ */

static int stages_valid(uint32_t n_stages, const uint32_t *stage_end, uint32_t n_trees, uint32_t exit_rule,
                        uint32_t n_outputs)
{
    uint32_t s;
    uint32_t prev = 0u;
    if (n_stages == 0u || stage_end == NULL) {
        return 0;
    }
    for (s = 0; s < n_stages; ++s) {
        if (stage_end[s] < prev || stage_end[s] > n_trees) {
            return 0;
        }
        prev = stage_end[s];
    }
    if (prev != n_trees) {
        return 0;
    }
    if (exit_rule == FM_EXIT_SCORE) {
        return n_outputs == 1u;
    }
    if (exit_rule == FM_EXIT_MARGIN) {
        return n_outputs >= 2u;
    }
    return 0;
}

int fm_cascade_check(const fm_cascade *m)
{
    uint32_t s;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = fm_trees_check(&m->trees);
    if (rc != FM_OK) {
        return rc;
    }
    if (!stages_valid(m->n_stages, m->stage_end, m->trees.n_trees, m->exit_rule, m->trees.n_outputs) ||
        m->exit_upper == NULL || m->exit_lower == NULL) {
        return FM_E_MODEL;
    }
    for (s = 0; s < m->n_stages; ++s) {
        /* +-inf allowed (never exit), NaN not */
        if (m->exit_upper[s] != m->exit_upper[s] || m->exit_lower[s] != m->exit_lower[s]) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

int fm_cascade_q15_check(const fm_cascade_q15 *m)
{
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = fm_trees_q15_check(&m->trees);
    if (rc != FM_OK) {
        return rc;
    }
    if (!stages_valid(m->n_stages, m->stage_end, m->trees.n_trees, m->exit_rule, m->trees.n_outputs) ||
        m->exit_upper_q == NULL || m->exit_lower_q == NULL) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

/* ---- exit tests -------------------------------------------------------- */

/* Index of the first largest score and the largest of the others. */
static float margin_f32(const float *scores, uint32_t n_outputs)
{
    uint32_t o;
    uint32_t best = 0u;
    float second;
    for (o = 1; o < n_outputs; ++o) {
        if (scores[o] > scores[best]) {
            best = o;
        }
    }
    second = (best == 0u) ? scores[1] : scores[0];
    for (o = 0; o < n_outputs; ++o) {
        if (o != best && scores[o] > second) {
            second = scores[o];
        }
    }
    return scores[best] - second;
}

static int32_t margin_q(const int32_t *scores, uint32_t n_outputs)
{
    uint32_t o;
    uint32_t best = 0u;
    int32_t second;
    int64_t d;
    for (o = 1; o < n_outputs; ++o) {
        if (scores[o] > scores[best]) {
            best = o;
        }
    }
    second = (best == 0u) ? scores[1] : scores[0];
    for (o = 0; o < n_outputs; ++o) {
        if (o != best && scores[o] > second) {
            second = scores[o];
        }
    }
    d = (int64_t)scores[best] - (int64_t)second;
    return d > (int64_t)INT32_MAX ? INT32_MAX : (int32_t)d;
}

static int exits_f32(const fm_cascade *m, uint32_t s, const float *scores)
{
    if (m->exit_rule == FM_EXIT_SCORE) {
        return scores[0] > m->exit_upper[s] || scores[0] < m->exit_lower[s];
    }
    return margin_f32(scores, m->trees.n_outputs) > m->exit_upper[s];
}

static int exits_q(const fm_cascade_q15 *m, uint32_t s, const int32_t *scores)
{
    if (m->exit_rule == FM_EXIT_SCORE) {
        return scores[0] > m->exit_upper_q[s] || scores[0] < m->exit_lower_q[s];
    }
    return margin_q(scores, m->trees.n_outputs) > m->exit_upper_q[s];
}

/* ---- float32 ---------------------------------------------------------- */

/* One eager prediction through the trees' marked walk (fm_trees_eager_ok). */
static int run_marked_f32(const fm_cascade *m, const float *x, float *scores, fm_result *res)
{
    fm_trees_eager e;
    uint32_t s;
    uint32_t start = 0u;
    int rc = fm_trees_eager_start(&m->trees, x, &e, scores, res);
    for (s = 0; rc == FM_OK && s < m->n_stages; ++s) {
        const uint32_t end = m->stage_end[s];
        rc = fm_trees_eager_walk(&m->trees, start, end, x, &e, scores);
        start = end;
        if (rc == FM_OK && (s + 1u == m->n_stages || exits_f32(m, s, scores))) {
            rc = fm_trees_eager_finish(&m->trees, x, &e, scores, res);
            res->stage = s;
            return rc;
        }
    }
    return rc;
}

/* One prediction: eager from x when x != NULL, else lazy through r. */
static int run_f32(const fm_cascade *m, const fm_reader *in, const float *x, fm_memo *memo, float *scores,
                   fm_result *out)
{
    uint32_t s;
    uint32_t start = 0u;
    int rc;
    if (x != NULL && fm_trees_eager_ok(&m->trees)) {
        return run_marked_f32(m, x, scores, out);
    }
    fm_memo_start(memo, out);
    rc = fm_trees_begin(&m->trees, scores);
    for (s = 0; rc == FM_OK && s < m->n_stages; ++s) {
        uint32_t end = m->stage_end[s];
        rc = (x != NULL) ? fm_trees_accumulate_vec(&m->trees, start, end, x, memo, scores, out)
                         : fm_trees_accumulate(&m->trees, start, end, in, memo, scores, out);
        start = end;
        if (rc == FM_OK && (s + 1u == m->n_stages || exits_f32(m, s, scores))) {
            out->stage = s;
            return fm_trees_finish(&m->trees, scores, out);
        }
    }
    return rc;
}

int fm_cascade_predict(const fm_cascade *m, const fm_reader *in, fm_memo *memo, float *scores, fm_result *out)
{
    if (m == NULL || in == NULL || memo == NULL || scores == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return run_f32(m, in, NULL, memo, scores, out);
}

static int cascade_row(const void *m, const float *x, uint32_t i, void *work, fm_result *out)
{
    const fm_batch_work *w = (const fm_batch_work *)work;
    (void)i;
    return run_f32((const fm_cascade *)m, NULL, x, w->memo, (float *)w->scores, out);
}

int fm_cascade_predict_batch(const fm_cascade *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                             float *scores, fm_result *out, uint32_t *n_done)
{
    fm_batch_work w;
    const int ok = m != NULL && memo != NULL && scores != NULL && cols == m->trees.n_features;
    w.memo = memo;
    w.scores = scores;
    return fm_batch_rows(ok, cascade_row, m, X, rows, cols, &w, out, n_done);
}

/* The memo walk with stack scratch, in its own frame (the marked walk's frame does not carry it). */
static FM_NOINLINE int predict_vec_memo_f32(const fm_cascade *m, const float *x, uint32_t n,
                                                    fm_result *out)
{
    float values[FM_VEC_MAX_FEATURES];
    uint8_t seen[FM_VEC_MAX_FEATURES];
    float scores[FM_VEC_MAX_OUTPUTS];
    fm_memo memo;
    fm_memo_init(&memo, values, seen, n);
    return run_f32(m, NULL, x, &memo, scores, out);
}

int fm_cascade_predict_vec(const fm_cascade *m, const float *x, uint32_t n, fm_result *out)
{
    float scores[FM_VEC_MAX_OUTPUTS];
    if (m == NULL || x == NULL || out == NULL || n != m->trees.n_features ||
        n > FM_VEC_MAX_FEATURES || m->trees.n_outputs > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    if (fm_trees_eager_ok(&m->trees)) {
        return run_marked_f32(m, x, scores, out);
    }
    return predict_vec_memo_f32(m, x, n, out);
}

/* ---- fixed point ------------------------------------------------------ */

static int run_marked_q(const fm_cascade_q15 *m, const float *x, int32_t *scores, fm_result *res)
{
    fm_trees_q15_eager e;
    uint32_t s;
    uint32_t start = 0u;
    int rc;
    if (m->n_stages == 1u) { /* no exit to test: the whole walk in one call (res->stage = 0) */
        return fm_trees_q15_eager_predict(&m->trees, x, &e, scores, res);
    }
    rc = fm_trees_q15_eager_start(&m->trees, x, &e, scores, res);
    for (s = 0; rc == FM_OK && s < m->n_stages; ++s) {
        const uint32_t end = m->stage_end[s];
        rc = fm_trees_q15_eager_walk(&m->trees, start, end, &e, scores);
        start = end;
        if (rc == FM_OK && (s + 1u == m->n_stages || exits_q(m, s, scores))) {
            rc = fm_trees_q15_eager_finish(&m->trees, x, &e, scores, res);
            res->stage = s;
            return rc;
        }
    }
    return rc;
}

static int run_q(const fm_cascade_q15 *m, const fm_reader *in, const float *x, fm_memo *memo, int32_t *scores,
                 fm_result *out)
{
    uint32_t s;
    uint32_t start = 0u;
    int rc;
    if (x != NULL && fm_trees_q15_eager_ok(&m->trees)) {
        return run_marked_q(m, x, scores, out);
    }
    fm_memo_start(memo, out);
    rc = fm_trees_q15_begin(&m->trees, scores);
    for (s = 0; rc == FM_OK && s < m->n_stages; ++s) {
        uint32_t end = m->stage_end[s];
        rc = (x != NULL) ? fm_trees_q15_accumulate_vec(&m->trees, start, end, x, memo, scores, out)
                         : fm_trees_q15_accumulate(&m->trees, start, end, in, memo, scores, out);
        start = end;
        if (rc == FM_OK && (s + 1u == m->n_stages || exits_q(m, s, scores))) {
            out->stage = s;
            return fm_trees_q15_finish(&m->trees, scores, out);
        }
    }
    return rc;
}

int fm_cascade_q15_predict(const fm_cascade_q15 *m, const fm_reader *in, fm_memo *memo, int32_t *scores,
                           fm_result *out)
{
    if (m == NULL || in == NULL || memo == NULL || scores == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return run_q(m, in, NULL, memo, scores, out);
}

static int cascade_q15_row(const void *model, const float *x, uint32_t i, void *work, fm_result *out)
{
    const fm_cascade_q15 *m = (const fm_cascade_q15 *)model;
    const fm_batch_work *w = (const fm_batch_work *)work;
    fm_vector v;
    fm_reader r;
    (void)i;
    if (w->memo->keys != NULL || fm_trees_q15_eager_ok(&m->trees)) {
        return run_q(m, NULL, x, w->memo, (int32_t *)w->scores, out);
    }
    r = fm_vector_reader(&v, x, m->trees.n_features);
    return run_q(m, &r, NULL, w->memo, (int32_t *)w->scores, out);
}

int fm_cascade_q15_predict_batch(const fm_cascade_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                                 fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done)
{
    fm_batch_work w;
    const int ok = m != NULL && memo != NULL && scores != NULL && cols == m->trees.n_features;
    w.memo = memo;
    w.scores = scores;
    return fm_batch_rows(ok, cascade_q15_row, m, X, rows, cols, &w, out, n_done);
}

/* ---- caller scratch ---------------------------------------------------- */

size_t fm_cascade_scratch_size(const fm_cascade *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->trees.n_features, m->trees.n_outputs, 0);
}

size_t fm_cascade_q15_scratch_size(const fm_cascade_q15 *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->trees.n_features, m->trees.n_outputs, 1);
}

int fm_cascade_scratch_init(const fm_cascade *m, void *buf, size_t size, fm_memo *memo, float **scores)
{
    void *s = NULL;
    int rc;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    rc = fm_scratch_split(buf, size, m->trees.n_features, m->trees.n_outputs, 0, memo, &s);
    *scores = (float *)s;
    return rc;
}

int fm_cascade_q15_scratch_init(const fm_cascade_q15 *m, void *buf, size_t size, fm_memo *memo,
                                int32_t **scores)
{
    void *s = NULL;
    int rc;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    rc = fm_scratch_split(buf, size, m->trees.n_features, m->trees.n_outputs, 1, memo, &s);
    *scores = (int32_t *)s;
    return rc;
}

int fm_cascade_q15_predict_vec(const fm_cascade_q15 *m, const float *x, uint32_t n, fm_result *out)
{
    int32_t scores[FM_VEC_MAX_OUTPUTS];
    if (m == NULL || x == NULL || out == NULL || n != m->trees.n_features ||
        n > FM_VEC_MAX_FEATURES || m->trees.n_outputs > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    return run_marked_q(m, x, scores, out); /* every q15 table with n <= the maximum is eager_ok */
}
