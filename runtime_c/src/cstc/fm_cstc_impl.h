/* frugalml runtime: the walk of fm_cstc.c, written once for float32 and q15
 * (fm_cstc.c includes it twice with the macros below set). Not a public
 * header: no include guard on purpose.
 *
 *   C_MODEL                  fm_cstc or fm_cstc_q15
 *   C_ACC                    float or int32_t (a scorer's accumulator, table units)
 *   C_FN(n)                  fm_cstc_n or fm_cstc_q15_n
 *   C_BIAS(m), C_THR(m)      the bias and threshold arrays
 *   C_SCORE(m, s, k, in, memo, acc, out)  scorer s (of node k) added to *acc
 *   C_SET_SCORE(out, acc)    out->score or out->score_q
 */

/* A K-class leaf: its K scorers in class order over the shared memo; the first largest wins. */
static int C_FN(leaf_k)(const C_MODEL *m, uint32_t k, const fm_reader *in, fm_memo *memo, fm_result *out)
{
    const uint32_t first = m->class_first[k];
    C_ACC best = 0;
    int32_t label = 0;
    uint32_t c;
    for (c = 0u; c < m->n_classes; ++c) {
        C_ACC acc = C_BIAS(m)[first + c];
        const int rc = C_SCORE(m, first + c, k, in, memo, &acc, out);
        if (rc != FM_OK) {
            return rc;
        }
        if (c == 0u || acc > best) {
            best = acc;
            label = (int32_t)c;
        }
    }
    out->label = label;
    C_SET_SCORE(out, best);
    out->stage = k;
    return FM_OK;
}

int C_FN(predict)(const C_MODEL *m, const fm_reader *in, fm_memo *memo, fm_result *out)
{
    uint32_t k = 0u;
    uint32_t steps;
    if (m == NULL || in == NULL || memo == NULL || out == NULL || memo->n < m->n_features) {
        return FM_E_ARG;
    }
    fm_memo_start(memo, out);
    /* children have larger indices: at most n_nodes steps */
    for (steps = 0u; steps < m->n_nodes && k < m->n_nodes; ++steps) {
        C_ACC acc = C_BIAS(m)[k];
        int above;
        int rc;
        if (m->upper[k] < 0 && m->n_classes >= 3u) {
            return C_FN(leaf_k)(m, k, in, memo, out);
        }
        rc = C_SCORE(m, k, k, in, memo, &acc, out);
        if (rc != FM_OK) {
            return rc;
        }
        above = acc > C_THR(m)[k];
        if (m->upper[k] < 0) {
            out->label = above ? 1 : 0;
            C_SET_SCORE(out, acc);
            out->stage = k;
            return FM_OK;
        }
        k = (uint32_t)(above ? m->upper[k] : m->lower[k]);
    }
    return FM_E_MODEL; /* unreachable for checked tables */
}

static int C_FN(row)(const void *m, const float *x, uint32_t i, void *memo, fm_result *out)
{
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const C_MODEL *)m)->n_features);
    (void)i;
    return C_FN(predict)((const C_MODEL *)m, &r, (fm_memo *)memo, out);
}

int C_FN(predict_batch)(const C_MODEL *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo,
                        fm_result *out, uint32_t *n_done)
{
    const int ok = m != NULL && memo != NULL && cols == m->n_features;
    return fm_batch_rows(ok, C_FN(row), m, X, rows, cols, memo, out, n_done);
}

int C_FN(predict_vec)(const C_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    float values[FM_VEC_MAX_FEATURES];
    uint8_t seen[FM_VEC_MAX_FEATURES];
    fm_memo memo;
    fm_vector v;
    fm_reader r;
    if (m == NULL || x == NULL || out == NULL || n != m->n_features || n > FM_VEC_MAX_FEATURES) {
        return FM_E_ARG;
    }
    fm_memo_init(&memo, values, seen, n);
    r = fm_vector_reader(&v, x, n);
    return C_FN(predict)(m, &r, &memo, out);
}

size_t C_FN(scratch_size)(const C_MODEL *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, 0u, 0);
}

int C_FN(scratch_init)(const C_MODEL *m, void *buf, size_t size, fm_memo *memo)
{
    return m == NULL ? FM_E_ARG : fm_scratch_split(buf, size, m->n_features, 0u, 0, memo, NULL);
}
