/*
 * frugalml pipeline: a model's input columns computed from a raw window by
 * the feature library, lazily, as the model reads them.
 *
 * An fm_plan lists the model's columns as features of a window (column j is
 * features[j]); export-c writes it next to the model's tables when the model
 * was trained on windows. An fm_window is one window's state: the feature
 * context (fm_features.h) in caller scratch, and the status of the first
 * feature that failed. Its reader (fm_window_reader) is an ordinary
 * fm_reader: the model's lazy predict calls it for the columns it needs, and
 * feature j is computed on its first request, each group's intermediate (a
 * channel's pass, its spectrum, ...) once per window.
 *
 *     fm_window w;  fm_reader r;
 *     rc = fm_window_begin(&w, &plan, x, n_channels, len, scratch, size);
 *     r = fm_window_reader(&w);
 *     rc = fm_window_status(&w, fm_cascade_predict(&m, &r, &memo, scores, &res));
 *
 * fm_window_status turns the model's FM_E_READ into the feature's own status
 * (FM_E_WINDOW, FM_E_SAMPLE, FM_E_VALUE, ...). Samples are checked only in
 * the channels a read feature uses (the model never looks at the others).
 * fm_window_eager computes every column first (the eager baseline).
 *
 * No malloc, no global state; the generated NAME_predict_window of a header
 * (compiler/pipeline_header.py) does all of the above in one call.
 */
#ifndef FM_WINDOW_H
#define FM_WINDOW_H

#include "fm_features.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const fm_feat_spec *features; /* [n_features]: column j of the model's input */
    uint32_t n_features;
    uint32_t n_channels;          /* channels of a window */
    uint32_t min_len;             /* shortest window every feature accepts */
} fm_plan;

typedef struct {
    const fm_plan *plan;
    fm_feat_ctx feat;
    int status;      /* FM_OK, or the status of the first feature that failed */
    uint32_t failed; /* that feature's column */
    uint32_t n_computed; /* features computed since begin */
} fm_window;

/* FM_OK, FM_E_ARG (NULL, no features, min_len wrong) or the first feature's
 * fm_feat_check status (FM_E_FEATURE, FM_E_CHANNEL). */
int fm_plan_check(const fm_plan *plan);

/* Bytes of feature scratch for a window of len samples (0 over the bounds):
 * for sizing buffers; fm_window_begin checks a scratch's size itself. */
size_t fm_window_scratch_size(const fm_plan *plan, uint32_t len);

/* Starts a window: FM_E_ARG (NULL, scratch too small, len over
 * FM_FEAT_MAX_LEN), FM_E_CHANNEL (n_channels is not the plan's), FM_E_WINDOW
 * (len below plan->min_len). The scratch is laid out and its size checked
 * once, here (fm_feat_begin). */
int fm_window_begin(fm_window *w, const fm_plan *plan, const float *x, uint32_t n_channels, uint32_t len,
                    void *scratch, size_t scratch_size);
int fm_window_q15_begin(fm_window *w, const fm_plan *plan, const int16_t *x, uint32_t n_channels, uint32_t len,
                        void *scratch, size_t scratch_size);

/* fm_read_fn of a window (ctx: the fm_window): computes column index. */
int fm_window_read(void *ctx, uint32_t index, float *value);

static inline fm_reader fm_window_reader(fm_window *w)
{
    fm_reader r;
    r.read = fm_window_read;
    r.ctx = w;
    return r;
}

/* The status of a prediction that read through the window: the feature's
 * status when the model failed to read, else model_status. */
int fm_window_status(const fm_window *w, int model_status);

/* Every column into values[plan->n_features], in column order. */
int fm_window_eager(fm_window *w, float *values);

#ifdef __cplusplus
}
#endif

#endif /* FM_WINDOW_H */
