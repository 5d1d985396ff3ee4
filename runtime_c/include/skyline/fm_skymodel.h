/*
 * frugalml runtime: budget-indexed model family (kind "skyline").
 *
 * A skyline model is a budget index (fm_skyline.h) over n_models models,
 * each on its own feature set, plus the models' own tables: naive Bayes
 * (fm_nb, base FM_SKY_NB), sparse linear scorers (fm_linear, base
 * FM_SKY_LINEAR), K-class naive Bayes (fm_nbk, base FM_SKY_NBK: every
 * model has the same n_classes; out->label is the class index) or K-class
 * linear scorers (base FM_SKY_LINEARK: model k is the n_classes scorers
 * lineark[k * n_classes + c], c = 0 .. n_classes - 1, argmax as
 * fm_linear_argmax; out->label is the class index). One
 * prediction for an item of size n under a budget B:
 *
 *   1. fm_skyline_select: the most accurate model whose cost
 *      c0 + c1*n + c2*n*n is <= B (FM_E_BUDGET when nothing fits: then
 *      out->label = FM_LABEL_DEFER, out->stage = n_models, nothing read);
 *   2. evaluate that model (it reads only features of its set);
 *   3. out->stage = the chosen model, out->cost = its polynomial cost at n
 *      (float32 rounding of the double; *spent, when not NULL, gets the
 *      double, which is <= B).
 *
 * The default budget and size (the model file's defaults) serve the generic
 * FM_PREDICT_VEC. Float32 tables (fm_skymodel) and q15 tables
 * (fm_skymodel_q15, below).
 */
#ifndef FM_SKYMODEL_H
#define FM_SKYMODEL_H

#include "frugalml.h"
#include "fm_linear.h"
#include "fm_nb.h"
#include "fm_skyline.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FM_SKY_NB 0u
#define FM_SKY_LINEAR 1u
#define FM_SKY_NBK 2u
#define FM_SKY_LINEARK 3u

/* Classes of a FM_SKY_LINEARK model (the argmax needs no buffer: the
 * bound only keeps index.n_models * n_classes far from overflow). */
#define FM_SKY_MAX_CLASSES 65535u

/* Upper bound on n_features for the stack memo of fm_skymodel_predict_vec*
 * (linear bases only); larger models must call fm_skymodel_predict with
 * their own memo. */
#ifndef FM_VEC_MAX_FEATURES
#define FM_VEC_MAX_FEATURES 256u
#endif

typedef struct {
    fm_skyline index;
    uint32_t base;                /* FM_SKY_NB, FM_SKY_LINEAR, FM_SKY_NBK or FM_SKY_LINEARK */
    const fm_nb *nb;          /* [index.n_models] when base == FM_SKY_NB, else NULL */
    const fm_linear *linear;      /* [index.n_models] when base == FM_SKY_LINEAR, else NULL */
    double default_budget;        /* may be +inf: the most accurate model */
    double default_size;
    const fm_nbk *nbk;            /* [index.n_models] when base == FM_SKY_NBK, else NULL (last: older
                                   * initializers stay valid) */
    uint32_t n_classes;           /* FM_SKY_LINEARK: 2 .. FM_SKY_MAX_CLASSES scorers per model, else 0 */
    const fm_linear *lineark;     /* [index.n_models * n_classes] when base == FM_SKY_LINEARK, else NULL */
} fm_skymodel;

/* The same family over q15 tables (fm_nb_q15, fm_linear_q15, fm_nbk_q15):
 * the index, budgets, sizes and costs stay doubles (out->cost is the
 * polynomial cost, out->cost_q 0, as in float32); out->score_q is the
 * chosen model's score. The K scorers of a FM_SKY_LINEARK model must share
 * in_shift and w_shift (their scores compare in one unit). API: fm_skymodel_q15_<verb>,
 * the same calls as fm_skymodel_<verb>. */
typedef struct {
    fm_skyline index;
    uint32_t base;                /* FM_SKY_NB, FM_SKY_LINEAR, FM_SKY_NBK or FM_SKY_LINEARK */
    const fm_nb_q15 *nb;
    const fm_linear_q15 *linear;
    double default_budget;
    double default_size;
    const fm_nbk_q15 *nbk;
    uint32_t n_classes;
    const fm_linear_q15 *lineark; /* [index.n_models * n_classes] */
} fm_skymodel_q15;

/* FM_OK when the index and every model are consistent and each model reads
 * only features of its indexed set (FM_SKY_NBK: every model has the same
 * n_classes; FM_SKY_LINEARK: n_classes in 2 .. FM_SKY_MAX_CLASSES, each
 * scorer over index.n_features); FM_E_MODEL otherwise, FM_E_ARG on NULL. */
int fm_skymodel_check(const fm_skymodel *m);

/* Caller scratch of fm_skymodel_predict in one buffer (layout in
 * fm_memo.h): a memo of n_features for the linear bases, nothing (0 bytes,
 * buf may be NULL) for the NB base. scratch_size is 0 for NULL;
 * scratch_init fills *memo. */
size_t fm_skymodel_scratch_size(const fm_skymodel *m);
int fm_skymodel_scratch_init(const fm_skymodel *m, void *buf, size_t size, fm_memo *memo);

/* One prediction under (budget, size) with lazy reads; memo is used by the
 * linear bases only (may be NULL for FM_SKY_NB and FM_SKY_NBK). spent may
 * be NULL. */
int fm_skymodel_predict(const fm_skymodel *m, const fm_reader *in, fm_memo *memo, double budget, double size,
                        fm_result *out, double *spent);

/* Eager forms over a float vector of length n (stack memo, see above). */
int fm_skymodel_predict_vec_at(const fm_skymodel *m, const float *x, uint32_t n, double budget, double size,
                               fm_result *out, double *spent);
int fm_skymodel_predict_vec(const fm_skymodel *m, const float *x, uint32_t n, fm_result *out);

/* Batch over a row-major matrix, one budget and size per row (budget/size
 * NULL: the defaults). A row where nothing fits is not an error: its result
 * says so (stage n_models) and spent[i] = 0. Stops at the first other
 * failing row; *n_done = rows done. spent may be NULL. */
int fm_skymodel_predict_batch(const fm_skymodel *m, const float *X, uint32_t rows, uint32_t cols,
                              const double *budget, const double *size, fm_result *out, double *spent,
                              uint32_t *n_done);

int fm_skymodel_q15_check(const fm_skymodel_q15 *m);
size_t fm_skymodel_q15_scratch_size(const fm_skymodel_q15 *m);
int fm_skymodel_q15_scratch_init(const fm_skymodel_q15 *m, void *buf, size_t size, fm_memo *memo);
int fm_skymodel_q15_predict(const fm_skymodel_q15 *m, const fm_reader *in, fm_memo *memo, double budget,
                            double size, fm_result *out, double *spent);
int fm_skymodel_q15_predict_vec_at(const fm_skymodel_q15 *m, const float *x, uint32_t n, double budget,
                                   double size, fm_result *out, double *spent);
int fm_skymodel_q15_predict_vec(const fm_skymodel_q15 *m, const float *x, uint32_t n, fm_result *out);
int fm_skymodel_q15_predict_batch(const fm_skymodel_q15 *m, const float *X, uint32_t rows, uint32_t cols,
                                  const double *budget, const double *size, fm_result *out, double *spent,
                                  uint32_t *n_done);

#ifdef __cplusplus
}
#endif

#endif /* FM_SKYMODEL_H */
