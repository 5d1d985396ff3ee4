/* frugalml runtime: the prediction, batch and scratch calls of a linear scorer, one body for float32 and
 * q15. Included by fm_linear.c once per type, with:
 *   L_T      the model struct, also the calls' prefix (fm_linear, fm_linear_q15)
 *   L_ROW    the batch row adapter's name
 *   L_ACC    the accumulator type (float, int32_t), started at m->L_BIAS by <L_T>_score
 *   L_SCORE  the fm_result field the score goes to; the label is score > m->L_THR
 * The header undefines them at its end. */

#define L_CAT2(a, b) a##_##b
#define L_CAT(a, b) L_CAT2(a, b)
#define L_FN(name) L_CAT(L_T, name)

int L_FN(predict)(const L_T *m, const fm_reader *in, fm_memo *memo, fm_result *out)
{
    L_ACC acc;
    int rc;
    if (m == NULL || memo == NULL || out == NULL) {
        return FM_E_ARG;
    }
    fm_memo_start(memo, out);
    acc = m->L_BIAS;
    rc = L_FN(score)(m, in, memo, &acc, out);
    if (rc != FM_OK) {
        return rc;
    }
    out->L_SCORE = acc;
    out->label = (acc > m->L_THR) ? 1 : 0;
    return FM_OK;
}

int L_FN(argmax)(const L_T *classes, uint32_t n_classes, const fm_reader *in, fm_memo *memo, fm_result *out)
{
    L_ACC best = 0;
    int32_t label = 0;
    uint32_t c;
    for (c = 0u; c < n_classes; ++c) {
        L_ACC acc = classes[c].L_BIAS;
        const int rc = L_FN(score)(&classes[c], in, memo, &acc, out);
        if (rc != FM_OK) {
            return rc;
        }
        if (c == 0u || acc > best) {
            best = acc;
            label = (int32_t)c;
        }
    }
    out->L_SCORE = best;
    out->label = label;
    return FM_OK;
}

static int L_ROW(const void *m, const float *x, uint32_t i, void *memo, fm_result *out)
{
    fm_vector v;
    const fm_reader r = fm_vector_reader(&v, x, ((const L_T *)m)->n_features);
    (void)i;
    return L_FN(predict)((const L_T *)m, &r, (fm_memo *)memo, out);
}

int L_FN(predict_batch)(const L_T *m, const float *X, uint32_t rows, uint32_t cols, fm_memo *memo, fm_result *out,
                        uint32_t *n_done)
{
    const int ok = m != NULL && memo != NULL && cols == m->n_features;
    return fm_batch_rows(ok, L_ROW, m, X, rows, cols, memo, out, n_done);
}

size_t L_FN(scratch_size)(const L_T *m)
{
    return m == NULL ? 0u : fm_scratch_size(m->n_features, 0u, 0);
}

int L_FN(scratch_init)(const L_T *m, void *buf, size_t size, fm_memo *memo)
{
    return m == NULL ? FM_E_ARG : fm_scratch_split(buf, size, m->n_features, 0u, 0, memo, NULL);
}

#undef L_FN
#undef L_CAT
#undef L_CAT2
#undef L_T
#undef L_ROW
#undef L_ACC
#undef L_BIAS
#undef L_SCORE
#undef L_THR
