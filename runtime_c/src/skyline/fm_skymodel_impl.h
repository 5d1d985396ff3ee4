/* frugalml runtime: the body of fm_skymodel.c, written once for float32 and q15 (fm_skymodel.c includes it
 * twice with the macros below set). Not a public header: no include guard on purpose.
 *
 *   S_MODEL, S_NB, S_NBK, S_LIN       the model, NB, K-class NB and linear scorer types
 *   S_FN(n), S_PRIV(n)                the public calls fm_skymodel[_q15]_n and the file's static helpers
 *   S_NB_FN(n), S_NBK_FN(n), S_LIN_FN(n)  fm_nb[_q15]_n, fm_nbk[_q15]_n, fm_linear[_q15]_n
 *   S_NB_FEATURE(nb, i)               the feature of NB reading position i (any layout)
 *   S_SAME_SCALE(a, b)                1 iff two K-class linear scorers' scores compare (q15: same shifts)
 */

/* A linear scorer of model k: valid, over the index's features, reading only model k's set. */
static int S_PRIV(check_linear)(const fm_skyline *s, uint32_t k, const S_LIN *lin)
{
    uint32_t i;
    const int rc = S_LIN_FN(check)(lin);
    if (rc != FM_OK) {
        return rc;
    }
    if (lin->n_features != s->n_features) {
        return FM_E_MODEL;
    }
    for (i = 0; i < lin->nnz; ++i) {
        if (lin->feature[i] < 0 || !sky_has_feature(s, k, (uint32_t)lin->feature[i])) {
            return FM_E_MODEL;
        }
    }
    return FM_OK;
}

/* The linear bases read through a memo; the NB bases read each feature once by construction. */
static int S_PRIV(uses_memo)(const S_MODEL *m)
{
    return m->base == FM_SKY_LINEAR || m->base == FM_SKY_LINEARK;
}

static int S_PRIV(check_model)(const S_MODEL *m, uint32_t k)
{
    const fm_skyline *s = &m->index;
    uint32_t i;
    int rc;
    if (m->base == FM_SKY_NB) {
        const S_NB *nb = &m->nb[k];
        rc = S_NB_FN(check)(nb);
        if (rc != FM_OK) {
            return rc;
        }
        if (nb->n_features != s->n_features) {
            return FM_E_MODEL;
        }
        /* the NB check accepts each layout; S_NB_FEATURE reads the position's feature from the one in use */
        for (i = 0; i < nb->n_used; ++i) {
            if (!sky_has_feature(s, k, S_NB_FEATURE(nb, i))) {
                return FM_E_MODEL;
            }
        }
        return FM_OK;
    }
    if (m->base == FM_SKY_NBK) {
        const S_NBK *nbk = &m->nbk[k];
        rc = S_NBK_FN(check)(nbk);
        if (rc != FM_OK) {
            return rc;
        }
        if (nbk->n_features != s->n_features || nbk->n_classes != m->nbk[0].n_classes) {
            return FM_E_MODEL;
        }
        for (i = 0; i < nbk->n_used; ++i) {
            if (!sky_has_feature(s, k, nbk->order[i])) {
                return FM_E_MODEL;
            }
        }
        return FM_OK;
    }
    if (m->base == FM_SKY_LINEARK) {
        uint32_t c;
        for (c = 0u; c < m->n_classes; ++c) {
            rc = S_PRIV(check_linear)(s, k, &m->lineark[k * m->n_classes + c]);
            if (rc != FM_OK) {
                return rc;
            }
            if (!S_SAME_SCALE(&m->lineark[k * m->n_classes + c], &m->lineark[k * m->n_classes])) {
                return FM_E_MODEL; /* q15: model k's K scores compare in one unit only */
            }
        }
        return FM_OK;
    }
    return S_PRIV(check_linear)(s, k, &m->linear[k]);
}

int S_FN(check)(const S_MODEL *m)
{
    uint32_t k;
    int rc;
    if (m == NULL) {
        return FM_E_ARG;
    }
    rc = fm_skyline_check(&m->index);
    if (rc != FM_OK) {
        return rc;
    }
    if (m->base == FM_SKY_NB) {
        if (m->nb == NULL && m->index.n_models > 0) {
            return FM_E_ARG;
        }
    } else if (m->base == FM_SKY_LINEAR) {
        if (m->linear == NULL && m->index.n_models > 0) {
            return FM_E_ARG;
        }
    } else if (m->base == FM_SKY_NBK) {
        if (m->nbk == NULL && m->index.n_models > 0) {
            return FM_E_ARG;
        }
    } else if (m->base == FM_SKY_LINEARK) {
        if (m->lineark == NULL && m->index.n_models > 0) {
            return FM_E_ARG;
        }
        if (m->n_classes < 2u || m->n_classes > FM_SKY_MAX_CLASSES || m->index.n_models > UINT32_MAX / m->n_classes) {
            return FM_E_MODEL;
        }
    } else {
        return FM_E_MODEL;
    }
    /* a NaN budget or a non-finite size is rejected (the lookup would refuse it on every call) */
    if (m->default_budget != m->default_budget || !(m->default_size >= -DBL_MAX && m->default_size <= DBL_MAX)) {
        return FM_E_MODEL;
    }
    for (k = 0; k < m->index.n_models; ++k) {
        rc = S_PRIV(check_model)(m, k);
        if (rc != FM_OK) {
            return rc;
        }
    }
    return FM_OK;
}

/* The cost as float32, rounded as numpy rounds it: +-inf from FM_F32_INF_FROM on, where a plain cast is undefined
 * (C99 6.3.1.5: a huge budget at a huge size, round 68's probe). */
static float S_PRIV(cost_f32)(double cost)
{
    if (cost >= FM_F32_INF_FROM) {
        return HUGE_VALF;
    }
    if (cost <= -FM_F32_INF_FROM) {
        return -HUGE_VALF;
    }
    return (float)cost;
}

static void S_PRIV(nothing)(const S_MODEL *m, fm_result *out, double *spent)
{
    out->label = FM_LABEL_DEFER;
    out->score = 0.0f;
    out->score_q = 0;
    out->n_read = 0u;
    out->cost = 0.0f;
    out->stage = m->index.n_models;
    out->cost_q = 0u;
    if (spent != NULL) {
        *spent = 0.0;
    }
}

int S_FN(predict)(const S_MODEL *m, const fm_reader *in, fm_memo *memo, double budget, double size,
                        fm_result *out, double *spent)
{
    uint32_t k;
    double cost;
    int rc;
    if (m == NULL || in == NULL || out == NULL) {
        return FM_E_ARG;
    }
    rc = fm_skyline_select(&m->index, budget, size, &k, &cost);
    if (rc != FM_OK) {
        S_PRIV(nothing)(m, out, spent);
        return rc;
    }
    if (m->base == FM_SKY_NB) {
        rc = S_NB_FN(predict)(&m->nb[k], in, out);
    } else if (m->base == FM_SKY_LINEAR) {
        if (memo == NULL || memo->n < m->linear[k].n_features) {
            return FM_E_ARG;
        }
        rc = S_LIN_FN(predict)(&m->linear[k], in, memo, out);
    } else if (m->base == FM_SKY_NBK) {
        rc = S_NBK_FN(predict)(&m->nbk[k], in, out);
    } else if (m->base == FM_SKY_LINEARK) {
        if (memo == NULL || memo->n < m->index.n_features) {
            return FM_E_ARG;
        }
        fm_memo_start(memo, out);
        rc = S_LIN_FN(argmax)(&m->lineark[k * m->n_classes], m->n_classes, in, memo, out);
    } else {
        return FM_E_MODEL;
    }
    if (rc != FM_OK) {
        return rc;
    }
    out->stage = k;
    out->cost = S_PRIV(cost_f32)(cost);
    out->cost_q = 0u;
    if (spent != NULL) {
        *spent = cost;
    }
    return FM_OK;
}

int S_FN(predict_vec_at)(const S_MODEL *m, const float *x, uint32_t n, double budget, double size,
                               fm_result *out, double *spent)
{
    float values[FM_VEC_MAX_FEATURES];
    uint8_t seen[FM_VEC_MAX_FEATURES];
    fm_memo memo;
    fm_vector v;
    fm_reader r;
    if (m == NULL || x == NULL || out == NULL || n != m->index.n_features) {
        return FM_E_ARG;
    }
    v.x = x;
    v.n = n;
    r.read = fm_vector_read;
    r.ctx = &v;
    if (S_PRIV(uses_memo)(m)) {
        if (n > FM_VEC_MAX_FEATURES) {
            return FM_E_ARG;
        }
        fm_memo_init(&memo, values, seen, n);
        return S_FN(predict)(m, &r, &memo, budget, size, out, spent);
    }
    return S_FN(predict)(m, &r, NULL, budget, size, out, spent);
}

int S_FN(predict_vec)(const S_MODEL *m, const float *x, uint32_t n, fm_result *out)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    return S_FN(predict_vec_at)(m, x, n, m->default_budget, m->default_size, out, NULL);
}

typedef struct {
    const double *budget; /* per row, or NULL: the model's default */
    const double *size;
    double *spent;
} S_PRIV(rows);

static int S_PRIV(row)(const void *model, const float *x, uint32_t i, void *work, fm_result *out)
{
    const S_MODEL *m = (const S_MODEL *)model;
    const S_PRIV(rows) *w = (const S_PRIV(rows) *)work;
    const double b = w->budget != NULL ? w->budget[i] : m->default_budget;
    const double s = w->size != NULL ? w->size[i] : m->default_size;
    const int rc = S_FN(predict_vec_at)(m, x, m->index.n_features, b, s, out,
                                              w->spent != NULL ? &w->spent[i] : NULL);
    return rc == FM_E_BUDGET ? FM_OK : rc;
}

int S_FN(predict_batch)(const S_MODEL *m, const float *X, uint32_t rows, uint32_t cols,
                              const double *budget, const double *size, fm_result *out, double *spent,
                              uint32_t *n_done)
{
    S_PRIV(rows) w;
    const int ok = m != NULL && out != NULL && cols == m->index.n_features;
    w.budget = budget;
    w.size = size;
    w.spent = spent;
    return fm_batch_rows(ok, S_PRIV(row), m, X, rows, cols, &w, out, n_done);
}

size_t S_FN(scratch_size)(const S_MODEL *m)
{
    if (m == NULL) {
        return 0u;
    }
    return fm_scratch_size(S_PRIV(uses_memo)(m) ? m->index.n_features : 0u, 0u, 0);
}

int S_FN(scratch_init)(const S_MODEL *m, void *buf, size_t size, fm_memo *memo)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    return fm_scratch_split(buf, size, S_PRIV(uses_memo)(m) ? m->index.n_features : 0u, 0u, 0, memo, NULL);
}
