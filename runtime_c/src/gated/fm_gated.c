/* frugalml runtime: gated low-cost / high-cost prediction (see fm_gated.h). */
#include "fm_gated.h"
#include "fm_batch.h"

/* ---- load-time checks ------------------------------------------------ */

static int part_ok(const fm_gated_part *p, uint32_t n_features, int is_gate, int may_be_remote)
{
    if (p->type == FM_PART_LINEAR) {
        return fm_linear_check(&p->linear) == FM_OK && p->linear.n_features == n_features;
    }
    if (p->type == FM_PART_TREES) {
        return fm_trees_check(&p->trees) == FM_OK && p->trees.n_features == n_features &&
               (!is_gate || p->trees.n_outputs == 1u);
    }
    return p->type == FM_PART_REMOTE && may_be_remote;
}

static int part_q_ok(const fm_gated_part_q15 *p, uint32_t n_features, int is_gate, int may_be_remote)
{
    if (p->type == FM_PART_LINEAR) {
        return fm_linear_q15_check(&p->linear) == FM_OK && p->linear.n_features == n_features;
    }
    if (p->type == FM_PART_TREES) {
        return fm_trees_q15_check(&p->trees) == FM_OK && p->trees.n_features == n_features &&
               (!is_gate || p->trees.n_outputs == 1u);
    }
    return p->type == FM_PART_REMOTE && may_be_remote;
}

int fm_gated_check(const fm_gated *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if ((m->gate_above != FM_GATE_ABOVE_F0 && m->gate_above != FM_GATE_ABOVE_F1) ||
        !part_ok(&m->gate, m->n_features, 1, 0) || !part_ok(&m->f1, m->n_features, 0, 0) ||
        !part_ok(&m->f0, m->n_features, 0, 1)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

int fm_gated_q15_check(const fm_gated_q15 *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if ((m->gate_above != FM_GATE_ABOVE_F0 && m->gate_above != FM_GATE_ABOVE_F1) ||
        !part_q_ok(&m->gate, m->n_features, 1, 0) || !part_q_ok(&m->f1, m->n_features, 0, 0) ||
        !part_q_ok(&m->f0, m->n_features, 0, 1)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

static uint32_t outputs_of(const fm_gated_part *p)
{
    return p->type == FM_PART_TREES ? p->trees.n_outputs : 1u;
}

static uint32_t outputs_of_q(const fm_gated_part_q15 *p)
{
    return p->type == FM_PART_TREES ? p->trees.n_outputs : 1u;
}

static uint32_t max3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t m = a > b ? a : b;
    return m > c ? m : c;
}

uint32_t fm_gated_max_outputs(const fm_gated *m)
{
    return max3(outputs_of(&m->gate), outputs_of(&m->f1), outputs_of(&m->f0));
}

uint32_t fm_gated_q15_max_outputs(const fm_gated_q15 *m)
{
    return max3(outputs_of_q(&m->gate), outputs_of_q(&m->f1), outputs_of_q(&m->f0));
}

/* ---- one part into a running prediction ------------------------------- */

/* x != NULL: eager (tree parts read x directly; linear parts read it through
 * r, a vector reader over x, sharing the memo). */
static int part_eval(const fm_gated_part *p, const fm_reader *in, const float *x, fm_memo *memo, float *scores,
                     fm_result *out)
{
    int rc;
    if (p->type == FM_PART_LINEAR) {
        float acc = p->linear.bias;
        rc = fm_linear_score(&p->linear, in, memo, &acc, out);
        if (rc == FM_OK) {
            out->score = acc;
            out->label = (acc > p->linear.decision_threshold) ? 1 : 0;
        }
        return rc;
    }
    if (p->type != FM_PART_TREES) {
        return FM_E_ARG;
    }
    rc = fm_trees_begin(&p->trees, scores);
    if (rc == FM_OK) {
        rc = (x != NULL) ? fm_trees_accumulate_vec(&p->trees, 0u, p->trees.n_trees, x, memo, scores, out)
                         : fm_trees_accumulate(&p->trees, 0u, p->trees.n_trees, in, memo, scores, out);
    }
    return rc == FM_OK ? fm_trees_finish(&p->trees, scores, out) : rc;
}

static int part_eval_q(const fm_gated_part_q15 *p, const fm_reader *in, const float *x, fm_memo *memo,
                       int32_t *scores, fm_result *out)
{
    int rc;
    if (p->type == FM_PART_LINEAR) {
        int32_t acc = p->linear.bias_q;
        rc = fm_linear_q15_score(&p->linear, in, memo, &acc, out);
        if (rc == FM_OK) {
            out->score_q = acc;
            out->label = (acc > p->linear.decision_threshold_q) ? 1 : 0;
        }
        return rc;
    }
    if (p->type != FM_PART_TREES) {
        return FM_E_ARG;
    }
    rc = fm_trees_q15_begin(&p->trees, scores);
    if (rc == FM_OK) {
        rc = (x != NULL && memo->keys != NULL)
                 ? fm_trees_q15_accumulate_vec(&p->trees, 0u, p->trees.n_trees, x, memo, scores, out)
                 : fm_trees_q15_accumulate(&p->trees, 0u, p->trees.n_trees, in, memo, scores, out);
    }
    return rc == FM_OK ? fm_trees_q15_finish(&p->trees, scores, out) : rc;
}

/* ---- predictions ------------------------------------------------------ */

static int run(const fm_gated *m, const fm_reader *in, const float *x, fm_memo *memo, float *scores,
               fm_result *out)
{
    int rc;
    int hard;
    fm_memo_start(memo, out);
    rc = part_eval(&m->gate, in, x, memo, scores, out);
    if (rc != FM_OK) {
        return rc;
    }
    hard = (m->gate_above == FM_GATE_ABOVE_F0) ? (out->label == 1) : (out->label == 0);
    if (!hard) {
        out->stage = 0u;
        return part_eval(&m->f1, in, x, memo, scores, out);
    }
    out->stage = 1u;
    if (m->f0.type == FM_PART_REMOTE) {
        out->label = FM_LABEL_DEFER;
        return FM_OK;
    }
    return part_eval(&m->f0, in, x, memo, scores, out);
}

int fm_gated_predict(const fm_gated *m, const fm_reader *in, fm_memo *memo, float *scores, fm_result *out)
{
    if (m == NULL || in == NULL || memo == NULL || scores == NULL || out == NULL || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    return run(m, in, NULL, memo, scores, out);
}

static int run_q15(const fm_gated_q15 *m, const fm_reader *in, const float *x, fm_memo *memo, int32_t *scores,
                   fm_result *out)
{
    int rc;
    int hard;
    fm_memo_start(memo, out);
    rc = part_eval_q(&m->gate, in, x, memo, scores, out);
    if (rc != FM_OK) {
        return rc;
    }
    hard = (m->gate_above == FM_GATE_ABOVE_F0) ? (out->label == 1) : (out->label == 0);
    if (!hard) {
        out->stage = 0u;
        return part_eval_q(&m->f1, in, x, memo, scores, out);
    }
    out->stage = 1u;
    if (m->f0.type == FM_PART_REMOTE) {
        out->label = FM_LABEL_DEFER;
        return FM_OK;
    }
    return part_eval_q(&m->f0, in, x, memo, scores, out);
}

int fm_gated_q15_predict(const fm_gated_q15 *m, const fm_reader *in, fm_memo *memo, int32_t *scores,
                         fm_result *out)
{
    if (m == NULL || in == NULL || memo == NULL || scores == NULL || out == NULL || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    return run_q15(m, in, NULL, memo, scores, out);
}

static int gated_row(const void *m, const float *x, uint32_t i, void *work, fm_result *out)
{
    const fm_batch_work *w = (const fm_batch_work *)work;
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const fm_gated *)m)->n_features);
    (void)i;
    return run((const fm_gated *)m, &r, x, w->memo, (float *)w->scores, out);
}

int fm_gated_predict_batch(const fm_gated *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                           float *scores, fm_result *out, uint32_t *n_done)
{
    fm_batch_work w;
    const int ok = m != NULL && memo != NULL && scores != NULL && cols == m->n_features;
    w.memo = memo;
    w.scores = scores;
    return fm_batch_rows(ok, gated_row, m, X, rows, cols, &w, out, n_done);
}

static int gated_q15_row(const void *m, const float *x, uint32_t i, void *work, fm_result *out)
{
    const fm_batch_work *w = (const fm_batch_work *)work;
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const fm_gated_q15 *)m)->n_features);
    (void)i;
    return run_q15((const fm_gated_q15 *)m, &r, x, w->memo, (int32_t *)w->scores, out);
}

int fm_gated_q15_predict_batch(const fm_gated_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                               fm_memo *memo, int32_t *scores, fm_result *out, uint32_t *n_done)
{
    fm_batch_work w;
    const int ok = m != NULL && memo != NULL && scores != NULL && cols == m->n_features;
    w.memo = memo;
    w.scores = scores;
    return fm_batch_rows(ok, gated_q15_row, m, X, rows, cols, &w, out, n_done);
}

int fm_gated_predict_vec(const fm_gated *m, const float *x, uint32_t n, fm_result *out)
{
    float values[FM_VEC_MAX_FEATURES];
    uint8_t seen[FM_VEC_MAX_FEATURES];
    float scores[FM_VEC_MAX_OUTPUTS];
    fm_memo memo;
    fm_vector v;
    fm_reader r;
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_VEC_MAX_FEATURES ||
        fm_gated_max_outputs(m) > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    fm_memo_init(&memo, values, seen, n);
    v.x = x;
    v.n = n;
    r.read = fm_vector_read;
    r.ctx = &v;
    return run(m, &r, x, &memo, scores, out);
}

int fm_gated_q15_predict_vec(const fm_gated_q15 *m, const float *x, uint32_t n, fm_result *out)
{
    float values[FM_VEC_MAX_FEATURES];
    uint8_t seen[FM_VEC_MAX_FEATURES];
    int16_t keys[FM_VEC_MAX_FEATURES];
    int32_t scores[FM_VEC_MAX_OUTPUTS];
    fm_memo memo;
    fm_vector v;
    fm_reader r;
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_VEC_MAX_FEATURES ||
        fm_gated_q15_max_outputs(m) > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    fm_memo_init(&memo, values, seen, n);
    v.x = x;
    v.n = n;
    r.read = fm_vector_read;
    r.ctx = &v;
    fm_memo_set_keys(&memo, keys);
    return run_q15(m, &r, x, &memo, scores, out);
}

/* ---- caller scratch ---------------------------------------------------- */

size_t fm_gated_scratch_size(const fm_gated *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, fm_gated_max_outputs(m), 0);
}

size_t fm_gated_q15_scratch_size(const fm_gated_q15 *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, fm_gated_q15_max_outputs(m), 1);
}

int fm_gated_scratch_init(const fm_gated *m, void *buf, size_t size, fm_memo *memo, float **scores)
{
    void *s = NULL;
    int rc;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    rc = fm_scratch_split(buf, size, m->n_features, fm_gated_max_outputs(m), 0, memo, &s);
    *scores = (float *)s;
    return rc;
}

int fm_gated_q15_scratch_init(const fm_gated_q15 *m, void *buf, size_t size, fm_memo *memo, int32_t **scores)
{
    void *s = NULL;
    int rc;
    if (m == NULL || scores == NULL) {
        return FM_E_ARG;
    }
    rc = fm_scratch_split(buf, size, m->n_features, fm_gated_q15_max_outputs(m), 1, memo, &s);
    *scores = (int32_t *)s;
    return rc;
}
