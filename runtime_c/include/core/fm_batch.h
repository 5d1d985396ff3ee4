/* frugalml runtime: the one batch row loop behind every family's *_predict_batch, and the scratch set-ups
 * the memo families' calls share. Internal to the runtime's sources. */
#ifndef FM_BATCH_H
#define FM_BATCH_H

#include "fm_memo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Predicts row i (x: its floats) into *out with the family's scratch `work`. */
typedef int (*fm_row_fn)(const void *model, const float *x, uint32_t i, void *work, fm_result *out);

/* The scratch of the families whose predictions take a memo and a score buffer. */
typedef struct {
    fm_memo *memo;
    void *scores;
} fm_batch_work;

/* Rows 0 .. rows-1 of X (row-major, cols floats each) through row(), stopping at the first failure, whose
 * status it returns. args_ok: the family's own argument checks passed, else FM_E_ARG; X and out may be
 * NULL only when rows == 0. *n_done (when not NULL): the rows predicted (0 on FM_E_ARG). */
int fm_batch_rows(int args_ok, fm_row_fn row, const void *model, const float *X, uint32_t rows, uint32_t cols,
                  void *work, fm_result *out, uint32_t *n_done);

/* The body of a family's *_predict_batch whose rows take a memo and a score buffer: rows of X through row()
 * with the work {memo, scores}, the arguments checked (n_features: the model's feature count, read after
 * the test of m). Returns from the calling function. */
#define FM_BATCH_MEMO_ROWS(row, m, n_features, X, rows, cols, memo, scores, out, n_done)                       \
    do {                                                                                                      \
        fm_batch_work w_;                                                                                     \
        const int ok_ = (m) != NULL && (memo) != NULL && (scores) != NULL && (cols) == (n_features);          \
        w_.memo = (memo);                                                                                     \
        w_.scores = (scores);                                                                                 \
        return fm_batch_rows(ok_, row, m, X, rows, cols, &w_, out, n_done);                                   \
    } while (0)

/* The body of a family's *_scratch_init with a score buffer: memo and *scores (S *) split from buf
 * (fm_scratch_split: n_features, n_scores, q the key cache). Returns from the calling function. */
#define FM_SCRATCH_INIT_SCORES(S, m, n_features, n_scores, q, buf, size, memo, scores)                        \
    do {                                                                                                      \
        void *s_ = NULL;                                                                                      \
        int rc_;                                                                                              \
        if ((m) == NULL || (scores) == NULL) {                                                                \
            return FM_E_ARG;                                                                                  \
        }                                                                                                     \
        rc_ = fm_scratch_split(buf, size, n_features, n_scores, q, memo, &s_);                                \
        *(scores) = (S *)s_;                                                                                  \
        return rc_;                                                                                           \
    } while (0)

/* Stack scratch of an eager prediction through the memo walk (predict_vec without caller scratch):
 * declares S scores[FM_VEC_MAX_OUTPUTS] and the memo of n features. */
#define FM_VEC_STACK_MEMO(S, scores, memo, n)                                                                 \
    float memo##_values[FM_VEC_MAX_FEATURES];                                                                 \
    uint8_t memo##_seen[FM_VEC_MAX_FEATURES];                                                                 \
    S scores[FM_VEC_MAX_OUTPUTS];                                                                             \
    fm_memo memo;                                                                                             \
    fm_memo_init(&memo, memo##_values, memo##_seen, n)

/* A reader over x[0 .. n-1] (v: the caller's storage for the vector). */
static inline fm_reader fm_vector_reader(fm_vector *v, const float *x, uint32_t n)
{
    fm_reader r;
    v->x = x;
    v->n = n;
    r.read = fm_vector_read;
    r.ctx = v;
    return r;
}

#ifdef __cplusplus
}
#endif

#endif /* FM_BATCH_H */
