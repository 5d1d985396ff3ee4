#include <float.h>

#include "fm_skymodel.h"
#include "fm_batch.h"

/* Is feature j one of model k's indexed features (ascending list)? */
static int sky_has_feature(const fm_skyline *s, uint32_t k, uint32_t j)
{
    uint32_t lo = s->feat_ptr[k], hi = s->feat_ptr[k + 1u];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (s->feat_idx[mid] == j) {
            return 1;
        }
        if (s->feat_idx[mid] < j) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return 0;
}

/* A linear scorer of model k: valid, over the index's features, reading only model k's set. */
static int sky_check_linear(const fm_skyline *s, uint32_t k, const fm_linear *lin)
{
    uint32_t i;
    const int rc = fm_linear_check(lin);
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
static int sky_uses_memo(const fm_skymodel *m)
{
    return m->base == FM_SKY_LINEAR || m->base == FM_SKY_LINEARK;
}

static int sky_check_model(const fm_skymodel *m, uint32_t k)
{
    const fm_skyline *s = &m->index;
    uint32_t i;
    int rc;
    if (m->base == FM_SKY_NB) {
        const fm_nb *nb = &m->nb[k];
        rc = fm_nb_check(nb);
        if (rc != FM_OK) {
            return rc;
        }
        if (nb->n_features != s->n_features) {
            return FM_E_MODEL;
        }
        /* fm_nb_check accepts either layout: the record layout keeps each position's feature in
         * pos[i].feature and may leave order NULL */
        for (i = 0; i < nb->n_used; ++i) {
            if (!sky_has_feature(s, k, nb->pos != NULL ? nb->pos[i].feature : nb->order[i])) {
                return FM_E_MODEL;
            }
        }
        return FM_OK;
    }
    if (m->base == FM_SKY_NBK) {
        const fm_nbk *nbk = &m->nbk[k];
        rc = fm_nbk_check(nbk);
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
            rc = sky_check_linear(s, k, &m->lineark[k * m->n_classes + c]);
            if (rc != FM_OK) {
                return rc;
            }
        }
        return FM_OK;
    }
    return sky_check_linear(s, k, &m->linear[k]);
}

int fm_skymodel_check(const fm_skymodel *m)
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
        rc = sky_check_model(m, k);
        if (rc != FM_OK) {
            return rc;
        }
    }
    return FM_OK;
}

static void sky_nothing(const fm_skymodel *m, fm_result *out, double *spent)
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

int fm_skymodel_predict(const fm_skymodel *m, const fm_reader *in, fm_memo *memo, double budget, double size,
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
        sky_nothing(m, out, spent);
        return rc;
    }
    if (m->base == FM_SKY_NB) {
        rc = fm_nb_predict(&m->nb[k], in, out);
    } else if (m->base == FM_SKY_LINEAR) {
        if (memo == NULL || memo->n < m->linear[k].n_features) {
            return FM_E_ARG;
        }
        rc = fm_linear_predict(&m->linear[k], in, memo, out);
    } else if (m->base == FM_SKY_NBK) {
        rc = fm_nbk_predict(&m->nbk[k], in, out);
    } else if (m->base == FM_SKY_LINEARK) {
        if (memo == NULL || memo->n < m->index.n_features) {
            return FM_E_ARG;
        }
        fm_memo_start(memo, out);
        rc = fm_linear_argmax(&m->lineark[k * m->n_classes], m->n_classes, in, memo, out);
    } else {
        return FM_E_MODEL;
    }
    if (rc != FM_OK) {
        return rc;
    }
    out->stage = k;
    out->cost = (float)cost;
    out->cost_q = 0u;
    if (spent != NULL) {
        *spent = cost;
    }
    return FM_OK;
}

int fm_skymodel_predict_vec_at(const fm_skymodel *m, const float *x, uint32_t n, double budget, double size,
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
    if (sky_uses_memo(m)) {
        if (n > FM_VEC_MAX_FEATURES) {
            return FM_E_ARG;
        }
        fm_memo_init(&memo, values, seen, n);
        return fm_skymodel_predict(m, &r, &memo, budget, size, out, spent);
    }
    return fm_skymodel_predict(m, &r, NULL, budget, size, out, spent);
}

int fm_skymodel_predict_vec(const fm_skymodel *m, const float *x, uint32_t n, fm_result *out)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    return fm_skymodel_predict_vec_at(m, x, n, m->default_budget, m->default_size, out, NULL);
}

typedef struct {
    const double *budget; /* per row, or NULL: the model's default */
    const double *size;
    double *spent;
} skymodel_rows;

static int skymodel_row(const void *model, const float *x, uint32_t i, void *work, fm_result *out)
{
    const fm_skymodel *m = (const fm_skymodel *)model;
    const skymodel_rows *w = (const skymodel_rows *)work;
    const double b = w->budget != NULL ? w->budget[i] : m->default_budget;
    const double s = w->size != NULL ? w->size[i] : m->default_size;
    const int rc = fm_skymodel_predict_vec_at(m, x, m->index.n_features, b, s, out,
                                              w->spent != NULL ? &w->spent[i] : NULL);
    return rc == FM_E_BUDGET ? FM_OK : rc;
}

int fm_skymodel_predict_batch(const fm_skymodel *m, const float *X, uint32_t rows, uint32_t cols,
                              const double *budget, const double *size, fm_result *out, double *spent,
                              uint32_t *n_done)
{
    skymodel_rows w;
    const int ok = m != NULL && out != NULL && cols == m->index.n_features;
    w.budget = budget;
    w.size = size;
    w.spent = spent;
    return fm_batch_rows(ok, skymodel_row, m, X, rows, cols, &w, out, n_done);
}

size_t fm_skymodel_scratch_size(const fm_skymodel *m)
{
    if (m == NULL) {
        return 0u;
    }
    return fm_scratch_size(sky_uses_memo(m) ? m->index.n_features : 0u, 0u, 0);
}

int fm_skymodel_scratch_init(const fm_skymodel *m, void *buf, size_t size, fm_memo *memo)
{
    if (m == NULL) {
        return FM_E_ARG;
    }
    return fm_scratch_split(buf, size, sky_uses_memo(m) ? m->index.n_features : 0u, 0u, 0, memo, NULL);
}
