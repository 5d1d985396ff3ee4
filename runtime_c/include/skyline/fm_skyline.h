/*
 * frugalml runtime: budget index (skyline) lookup.
 *
 * An index over n_models models (each on its own feature set) answers, for
 * an item of size n and a budget B, which model is the most accurate one
 * whose cost c0 + c1*n + c2*n*n is at most B. The lookup is two binary
 * searches over const tables: the size range (last r with breaks[r] <= n;
 * sizes below breaks[0] use range 0), then the cost-sorted skyline of that
 * range (last entry whose cost at n is <= B). Only an entry whose cost was
 * compared with the budget can be returned, so the budget is never exceeded.
 *
 * Costs are evaluated in double as c0 + c1 * n + c2 * n * n (compile with
 * -ffp-contract=off so the result matches pyruntime/skyline.py bit for bit).
 */
#ifndef FM_SKYLINE_H
#define FM_SKYLINE_H

#include "frugalml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t n_features;
    uint32_t n_models;
    uint32_t n_ranges;          /* >= 1 */
    const double *model_coef;   /* [3 * n_models]: c0, c1, c2 of model m at 3m..3m+2 */
    const uint32_t *feat_ptr;   /* [n_models + 1] */
    const uint32_t *feat_idx;   /* [feat_ptr[n_models]], ascending per model */
    const double *breaks;       /* [n_ranges], strictly ascending */
    const uint32_t *sky_ptr;    /* [n_ranges + 1] */
    const uint32_t *sky_model;  /* [sky_ptr[n_ranges]], cost-sorted per range */
} fm_skyline;

/* FM_OK when every table is consistent, FM_E_MODEL otherwise, FM_E_ARG on NULL. */
int fm_skyline_check(const fm_skyline *s);

/* Cost of model m for an item of the given size (no checks). */
double fm_skyline_model_cost(const fm_skyline *s, uint32_t m, double size);

/* Choose the model for one call (budget, then size: the order of fm_skymodel_predict; the function
 * was fm_skyline_lookup(s, size, budget, ...) until issue 21, renamed so that an old
 * call fails to link instead of swapping two doubles). On FM_OK, *model and *cost hold the chosen
 * model and its cost (<= budget). FM_E_BUDGET when nothing fits (then
 * *model = UINT32_MAX, *cost = 0), FM_E_ARG on NULL pointers, a NaN budget
 * or a non-finite size. */
int fm_skyline_select(const fm_skyline *s, double budget, double size, uint32_t *model, double *cost);

/* Caller scratch: none (0 bytes; the query of every family, see fm_memo.h). */
size_t fm_skyline_scratch_size(const fm_skyline *s);

#ifdef __cplusplus
}
#endif

#endif /* FM_SKYLINE_H */
