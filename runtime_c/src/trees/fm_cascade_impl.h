/* frugalml runtime: the body of fm_cascade.c, written once for float32 and
 * q15 (fm_cascade.c includes it twice with the macros below set). Not a
 * public header: no include guard on purpose.
 *
 *   CS_MODEL, CS_EAGER        fm_cascade[_q15], fm_trees[_q15]_eager
 *   CS_SCORE                  float or int32_t
 *   CS_FN(n), CS_TR_FN(n)     fm_cascade[_q15]_n, fm_trees[_q15]_n
 *   CS_UPPER(m), CS_LOWER(m)  the exit threshold arrays (exit_upper[_q], exit_lower[_q])
 *   CS_NAN(v)                 1 iff threshold v is NaN (q15: 0)
 *   CS_GAP(a, b)              best - second best: float32 subtraction, q15 saturating int32
 *   CS_EAGER_WALK(t, first, end, x, e, scores)  the trees' marked walk of trees first..end-1
 *                             (float32 reads x, q15 the keys of its start)
 *   CS_Q                      0 (float32) or 1 (q15): q15 walks a one-stage cascade in one
 *                             call (fm_trees_q15_eager_predict), its batch rows read
 *                             through a reader when the memo has no key cache and the
 *                             table is not eager, and its predict_vec is always eager
 */

int CS_FN(check)(const CS_MODEL *m)
{
    uint32_t s;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = CS_TR_FN(check)(&m->trees);
    if (rc != FM_OK) {
        return rc;
    }
    if (!stages_valid(m->n_stages, m->stage_end, m->trees.n_trees, m->exit_rule, m->trees.n_outputs) ||
        CS_UPPER(m) == NULL || CS_LOWER(m) == NULL) {
        return FM_E_MODEL;
    }
    for (s = 0; s < m->n_stages; ++s) {
        /* +-inf allowed (never exit), NaN not */
        if (CS_NAN(CS_UPPER(m)[s]) || CS_NAN(CS_LOWER(m)[s])) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

/* ---- exit tests -------------------------------------------------------- */

/* The first largest score minus the largest of the others. */
static CS_SCORE CS_FN(margin)(const CS_SCORE *scores, uint32_t n_outputs)
{
    uint32_t o;
    uint32_t best = 0u;
    CS_SCORE second;
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
    return CS_GAP(scores[best], second);
}

static int CS_FN(exits)(const CS_MODEL *m, uint32_t s, const CS_SCORE *scores)
{
    if (m->exit_rule == FM_EXIT_SCORE) {
        return scores[0] > CS_UPPER(m)[s] || scores[0] < CS_LOWER(m)[s];
    }
    return CS_FN(margin)(scores, m->trees.n_outputs) > CS_UPPER(m)[s];
}

/* ---- the walks ---------------------------------------------------------- */

/* One eager prediction through the trees' marked walk (fm_trees*_eager_ok). */
static int CS_FN(run_marked)(const CS_MODEL *m, const float *x, CS_SCORE *scores, fm_result *res)
{
    CS_EAGER e;
    uint32_t s;
    uint32_t start = 0u;
    int rc;
#if CS_Q
    if (m->n_stages == 1u) { /* no exit to test: the whole walk in one call (res->stage = 0) */
        return CS_TR_FN(eager_predict)(&m->trees, x, &e, scores, res);
    }
#endif
    rc = CS_TR_FN(eager_start)(&m->trees, x, &e, scores, res);
    for (s = 0; rc == FM_OK && s < m->n_stages; ++s) {
        const uint32_t end = m->stage_end[s];
        rc = CS_EAGER_WALK(&m->trees, start, end, x, &e, scores);
        start = end;
        if (rc == FM_OK && (s + 1u == m->n_stages || CS_FN(exits)(m, s, scores))) {
            rc = CS_TR_FN(eager_finish)(&m->trees, x, &e, scores, res);
            res->stage = s;
            return rc;
        }
    }
    return rc;
}

/* One prediction: eager from x when x != NULL, else lazy through in. */
static int CS_FN(run)(const CS_MODEL *m, const fm_reader *in, const float *x, fm_memo *memo, CS_SCORE *scores,
                      fm_result *out)
{
    uint32_t s;
    uint32_t start = 0u;
    int rc;
    if (x != NULL && CS_TR_FN(eager_ok)(&m->trees)) {
        return CS_FN(run_marked)(m, x, scores, out);
    }
    fm_memo_start(memo, out);
    rc = CS_TR_FN(begin)(&m->trees, scores);
    for (s = 0; rc == FM_OK && s < m->n_stages; ++s) {
        uint32_t end = m->stage_end[s];
        rc = (x != NULL) ? CS_TR_FN(accumulate_vec)(&m->trees, start, end, x, memo, scores, out)
                         : CS_TR_FN(accumulate)(&m->trees, start, end, in, memo, scores, out);
        start = end;
        if (rc == FM_OK && (s + 1u == m->n_stages || CS_FN(exits)(m, s, scores))) {
            out->stage = s;
            return CS_TR_FN(finish)(&m->trees, scores, out);
        }
    }
    return rc;
}

/* ---- public calls ------------------------------------------------------- */

int CS_FN(predict)(const CS_MODEL *m, const fm_reader *in, fm_memo *memo, CS_SCORE *scores, fm_result *out)
{
    if (m == NULL || in == NULL || memo == NULL || scores == NULL || out == NULL) {
        return FM_E_ARG;
    }
    return CS_FN(run)(m, in, NULL, memo, scores, out);
}

static int CS_FN(row)(const void *model, const float *x, uint32_t i, void *work, fm_result *out)
{
    const CS_MODEL *m = (const CS_MODEL *)model;
    const fm_batch_work *w = (const fm_batch_work *)work;
    fm_vector v;
    fm_reader r;
    (void)i;
    if (!CS_Q || w->memo->keys != NULL || CS_TR_FN(eager_ok)(&m->trees)) {
        return CS_FN(run)(m, NULL, x, w->memo, (CS_SCORE *)w->scores, out);
    }
    r = fm_vector_reader(&v, x, m->trees.n_features);
    return CS_FN(run)(m, &r, NULL, w->memo, (CS_SCORE *)w->scores, out);
}

int CS_FN(predict_batch)(const CS_MODEL *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                         CS_SCORE *scores, fm_result *out, uint32_t *n_done)
{
    FM_BATCH_MEMO_ROWS(CS_FN(row), m, m->trees.n_features, X, rows, cols, memo, scores, out, n_done);
}

/* ---- caller scratch ---------------------------------------------------- */

size_t CS_FN(scratch_size)(const CS_MODEL *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->trees.n_features, m->trees.n_outputs, CS_Q);
}

int CS_FN(scratch_init)(const CS_MODEL *m, void *buf, size_t size, fm_memo *memo, CS_SCORE **scores)
{
    FM_SCRATCH_INIT_SCORES(CS_SCORE, m, m->trees.n_features, m->trees.n_outputs, CS_Q, buf, size, memo, scores);
}

/* ---- eager with stack scratch ------------------------------------------ */

/* The memo walk with stack scratch, in its own frame (the marked walk's frame does not carry it); q15
 * never takes it. */
static FM_NOINLINE int CS_FN(predict_vec_memo)(const CS_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    FM_VEC_STACK_MEMO(CS_SCORE, scores, memo, n);
    return CS_FN(run)(m, NULL, x, &memo, scores, out);
}

int CS_FN(predict_vec)(const CS_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    CS_SCORE scores[FM_VEC_MAX_OUTPUTS];
    if (m == NULL || x == NULL || out == NULL || n != m->trees.n_features ||
        n > FM_VEC_MAX_FEATURES || m->trees.n_outputs > FM_VEC_MAX_OUTPUTS) {
        return FM_E_ARG;
    }
    if (CS_Q || CS_TR_FN(eager_ok)(&m->trees)) { /* every q15 table with n <= the maximum is eager_ok */
        return CS_FN(run_marked)(m, x, scores, out);
    }
    return CS_FN(predict_vec_memo)(m, x, n, out);
}
