/* frugalml runtime: the body of fm_gated.c, written once for float32 and
 * q15 (fm_gated.c includes it twice with the macros below set). Not a
 * public header: no include guard on purpose.
 *
 *   G_MODEL, G_PART, G_LIN    model, part and linear scorer types
 *   G_SCORE                   float or int32_t
 *   G_FN(n), G_LIN_FN(n), G_TR_FN(n)  fm_gated[_q15]_n, fm_linear[_q15]_n, fm_trees[_q15]_n
 *   G_BIAS(l), G_THR(l)       a scorer's bias and decision threshold (table units)
 *   G_SET_SCORE(out, acc)     out->score or out->score_q
 *   G_Q                       0 (float32) or 1 (q15)
 *   G_SAME_SCALE(a, b)        1 iff two K-linear scorers share their scales
 *   G_MARGIN, G_WIDE(s)       a margin's type and a score widened to it: float and s; int64_t and (int64_t)s
 *   G_MARGIN_SCORE(out, mg)   out->score = mg; out->score_q = mg saturated to INT32_MAX
 *   G_THR_OK(l)               1 iff a margin gate's threshold is valid (float32: finite)
 */

static int G_FN(lin_k_ok)(const G_PART *p, uint32_t n_features)
{
    uint32_t c;
    if (p->classes == NULL || p->n_classes < 2u || p->n_classes > FM_VEC_MAX_OUTPUTS) {
        return 0;
    }
    for (c = 0u; c < p->n_classes; ++c) {
        if (G_LIN_FN(check)(&p->classes[c]) != FM_OK || p->classes[c].n_features != n_features ||
            !G_SAME_SCALE(&p->classes[c], &p->classes[0])) {
            return 0;
        }
    }
    return 1;
}

static int G_FN(part_ok)(const G_PART *p, uint32_t n_features, int is_gate, int may_be_remote)
{
    if (p->type == FM_PART_LINEAR) {
        return G_LIN_FN(check)(&p->linear) == FM_OK && p->linear.n_features == n_features;
    }
    if (p->type == FM_PART_TREES) {
        return G_TR_FN(check)(&p->trees) == FM_OK && p->trees.n_features == n_features &&
               (!is_gate || p->trees.n_outputs == 1u);
    }
    if (p->type == FM_PART_LINEAR_K) {
        return !is_gate && G_FN(lin_k_ok)(p, n_features);
    }
    return p->type == FM_PART_REMOTE && may_be_remote;
}

/* A margin gate needs f1 of K linear scorers or of trees with K > 1 outputs (checked as f1), gate_above F1 and
 * a valid threshold; any other gate is a part of its own. */
static int G_FN(gate_ok)(const G_MODEL *m)
{
    if (m->gate.type == FM_PART_MARGIN) {
        return (m->f1.type == FM_PART_LINEAR_K || (m->f1.type == FM_PART_TREES && m->f1.trees.n_outputs > 1u)) &&
               m->gate_above == FM_GATE_ABOVE_F1 && G_THR_OK(m->gate.linear);
    }
    return G_FN(part_ok)(&m->gate, m->n_features, 1, 0);
}

int G_FN(check)(const G_MODEL *m)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    if ((m->gate_above != FM_GATE_ABOVE_F0 && m->gate_above != FM_GATE_ABOVE_F1) || !G_FN(gate_ok)(m) ||
        !G_FN(part_ok)(&m->f1, m->n_features, 0, 0) ||
        !G_FN(part_ok)(&m->f0, m->n_features, 0, 1)) {
        return FM_E_MODEL;
    }
    return FM_OK;
}

static uint32_t G_FN(outputs_of)(const G_PART *p)
{
    return p->type == FM_PART_TREES ? p->trees.n_outputs : 1u;
}

uint32_t G_FN(max_outputs)(const G_MODEL *m)
{
    return fm_gated_max3(G_FN(outputs_of)(&m->gate), G_FN(outputs_of)(&m->f1), G_FN(outputs_of)(&m->f0));
}

/* ---- one part into a running prediction ------------------------------- */

/* x != NULL: eager (tree parts read x directly; linear parts read it through
 * `in`, a vector reader over x, sharing the memo). */
static int G_FN(part_eval)(const G_PART *p, const fm_reader *in, const float *x, fm_memo *memo, G_SCORE *scores,
                           fm_result *out)
{
    int rc;
    if (p->type == FM_PART_LINEAR) {
        G_SCORE acc = G_BIAS(p->linear);
        rc = G_LIN_FN(score)(&p->linear, in, memo, &acc, out);
        if (rc == FM_OK) {
            G_SET_SCORE(out, acc);
            out->label = (acc > G_THR(p->linear)) ? 1 : 0;
        }
        return rc;
    }
    if (p->type == FM_PART_LINEAR_K) {
        return G_LIN_FN(argmax)(p->classes, p->n_classes, in, memo, out); /* the first largest */
    }
    if (p->type != FM_PART_TREES) {
        return FM_E_ARG;
    }
    rc = G_TR_FN(begin)(&p->trees, scores);
    if (rc == FM_OK) {
        rc = (x != NULL && (!G_Q || memo->keys != NULL))
                 ? G_TR_FN(accumulate_vec)(&p->trees, 0u, p->trees.n_trees, x, memo, scores, out)
                 : G_TR_FN(accumulate)(&p->trees, 0u, p->trees.n_trees, in, memo, scores, out);
    }
    return rc == FM_OK ? G_TR_FN(finish)(&p->trees, scores, out) : rc;
}

/* A margin gate: f1 scored first, keeping the runner-up too (second: the largest score of the other classes, so
 * a tie at the top gives margin 0): K linear scorers as fm_linear_argmax, class by class through the memo; trees
 * as part_eval (fm_trees_finish's first largest), the runner-up from their scores. Easy iff margin = best -
 * second (float32: a float subtraction; q15: in int64) > the gate's threshold: *hard = 0 and out holds f1's
 * answer. Hard (also a NaN margin): *hard = 1, out->label f1's and out->score the margin (q15: saturated to
 * INT32_MAX), the answer of a deferral. */
static int G_FN(margin_eval)(const G_MODEL *m, const fm_reader *in, const float *x, fm_memo *memo, G_SCORE *scores,
                             fm_result *out, int *hard)
{
    const G_PART *p = &m->f1;
    G_SCORE best = 0, second = 0;
    G_MARGIN margin;
    int32_t label = 0;
    uint32_t c;
    if (p->type == FM_PART_TREES) {
        const int rc = G_FN(part_eval)(p, in, x, memo, scores, out);
        if (rc != FM_OK) {
            return rc;
        }
        label = out->label;
        best = scores[label];
        for (c = 0u; c < p->trees.n_outputs; ++c) {
            if (c != (uint32_t)label && (c == (label == 0 ? 1u : 0u) || scores[c] > second)) {
                second = scores[c];
            }
        }
    } else {
        for (c = 0u; c < p->n_classes; ++c) {
            G_SCORE acc = G_BIAS(p->classes[c]);
            const int rc = G_LIN_FN(score)(&p->classes[c], in, memo, &acc, out);
            if (rc != FM_OK) {
                return rc;
            }
            if (c == 0u || acc > best) {
                second = best; /* c == 0: overwritten at c == 1 */
                best = acc;
                label = (int32_t)c;
            } else if (c == 1u || acc > second) {
                second = acc;
            }
        }
    }
    margin = G_WIDE(best) - G_WIDE(second);
    *hard = !(margin > G_WIDE(G_THR(m->gate.linear)));
    out->label = label;
    if (*hard) {
        G_MARGIN_SCORE(out, margin);
    } else {
        G_SET_SCORE(out, best);
    }
    return FM_OK;
}

/* ---- predictions ------------------------------------------------------ */

static int G_FN(run)(const G_MODEL *m, const fm_reader *in, const float *x, fm_memo *memo, G_SCORE *scores,
                     fm_result *out)
{
    int rc;
    int hard;
    fm_memo_start(memo, out);
    if (m->gate.type == FM_PART_MARGIN) {
        rc = G_FN(margin_eval)(m, in, x, memo, scores, out, &hard); /* easy: f1's answer stands */
        if (rc != FM_OK || !hard) {
            out->stage = 0u;
            return rc;
        }
    } else {
        rc = G_FN(part_eval)(&m->gate, in, x, memo, scores, out);
        if (rc != FM_OK) {
            return rc;
        }
        hard = (m->gate_above == FM_GATE_ABOVE_F0) ? (out->label == 1) : (out->label == 0);
        if (!hard) {
            out->stage = 0u;
            return G_FN(part_eval)(&m->f1, in, x, memo, scores, out);
        }
    }
    out->stage = 1u;
    if (m->f0.type == FM_PART_REMOTE) {
        out->label = FM_LABEL_DEFER;
        return FM_OK;
    }
    return G_FN(part_eval)(&m->f0, in, x, memo, scores, out);
}

int G_FN(predict)(const G_MODEL *m, const fm_reader *in, fm_memo *memo, G_SCORE *scores, fm_result *out)
{
    if (m == NULL || in == NULL || memo == NULL || scores == NULL || out == NULL || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    return G_FN(run)(m, in, NULL, memo, scores, out);
}

static int G_FN(row)(const void *m, const float *x, uint32_t i, void *work, fm_result *out)
{
    const fm_batch_work *w = (const fm_batch_work *)work;
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const G_MODEL *)m)->n_features);
    (void)i;
    return G_FN(run)((const G_MODEL *)m, &r, x, w->memo, (G_SCORE *)w->scores, out);
}

int G_FN(predict_batch)(const G_MODEL *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                        G_SCORE *scores, fm_result *out, uint32_t *n_done)
{
    FM_BATCH_MEMO_ROWS(G_FN(row), m, m->n_features, X, rows, cols, memo, scores, out, n_done);
}

int G_FN(predict_vec)(const G_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    float values[FM_VEC_MAX_FEATURES];
    uint8_t seen[FM_VEC_MAX_FEATURES];
#if G_Q
    int16_t keys[FM_VEC_MAX_FEATURES];
#endif
    G_SCORE scores[FM_VEC_MAX_OUTPUTS];
    fm_memo memo;
    fm_vector v;
    fm_reader r;
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_VEC_MAX_FEATURES ||
        G_FN(max_outputs)(m) > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    fm_memo_init(&memo, values, seen, n);
    r = fm_vector_reader(&v, x, n);
#if G_Q
    fm_memo_set_keys(&memo, keys);
#endif
    return G_FN(run)(m, &r, x, &memo, scores, out);
}

/* ---- caller scratch ---------------------------------------------------- */

size_t G_FN(scratch_size)(const G_MODEL *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, G_FN(max_outputs)(m), G_Q);
}

int G_FN(scratch_init)(const G_MODEL *m, void *buf, size_t size, fm_memo *memo, G_SCORE **scores)
{
    FM_SCRATCH_INIT_SCORES(G_SCORE, m, m->n_features, G_FN(max_outputs)(m), G_Q, buf, size, memo, scores);
}
