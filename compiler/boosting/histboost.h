/* Inner loops of the histogram gradient-boosting core (compiler.boosting).
 *
 * Training-side helper, not part of the device runtime: built by cffi into
 * compiler.boosting._histboost at install. Bin codes are uint8, one feature's
 * codes after another (codes[j * n_rows + r]). A histogram is two arrays: per
 * feature and bin two doubles, summed gradient and hessian (gh), and the row
 * count as an int32 (cnt): 20 bytes a bin. No allocation, no global state.
 */
#ifndef FM_HISTBOOST_H
#define FM_HISTBOOST_H

#include <stdint.h>

typedef struct {
    int32_t feature; /* -1: no valid split */
    int32_t bin;     /* rows with code <= bin go left */
    double gain;     /* scaled gain minus the feature's penalty */
    double gl, hl, cl; /* left child's gradient, hessian, count sums */
} hb_split;

/* gh[(j * n_bins + code) * 2 + {0,1}] += {g[r], h[r]} and cnt[j * n_bins + code] += 1 for r in rows (rows == NULL:
 * 0..n_rows-1; cnt == NULL: no counts, for the K-1 further outputs of a shared histogram).
 * With rows, the gradients are first gathered into scratch (2 * min(n_rows, HB_GATHER_BLOCK) doubles), a block
 * of rows at a time, in row order. gh and cnt must be zeroed by the caller. */
#define HB_GATHER_BLOCK 4096
void hb_histogram(const uint8_t *codes, int64_t n_total, int64_t n_cols, const int32_t *rows, int64_t n_rows,
                  const double *g, const double *h, int32_t n_bins, double *scratch, double *gh, int32_t *cnt);

/* out[i] = a[i] - b[i] for i < n (histogram subtraction: the sums, then the counts). */
void hb_subtract(const double *a, const double *b, int64_t n, double *out);
void hb_subtract_counts(const int32_t *a, const int32_t *b, int64_t n, int32_t *out);

/* Stable in-place partition of rows: codes[r][feature] <= bin first. scratch holds n_rows ints.
 * Returns the number of rows on the left. */
int64_t hb_partition(const uint8_t *codes, int64_t n_total, int32_t *rows, int64_t n_rows, int32_t feature,
                     int32_t bin, int32_t *scratch);

/* Best split of one node from its histogram (gh, cnt). gain = gain_scale * 0.5 * (GL^2/(HL+l2) + GR^2/(HR+l2)
 * - G^2/(H+l2)) - penalty[j]; both children need hessian >= min_child_weight (and > 0) and count >=
 * min_child_count; only bins b < n_thr[j] and features with allowed[j] != 0 (allowed may be NULL).
 * Ties go to the lowest (feature, bin). */
void hb_best_split(const double *gh, const int32_t *cnt, int32_t n_cols, int32_t n_bins, const int32_t *n_thr,
                   const double *penalty, const uint8_t *allowed, double l2, double min_child_weight,
                   double min_child_count, double gain_scale, hb_split *out);

/* Best split of one node shared by K outputs (one tree structure, K leaf values): gh holds K gradient/hessian
 * arrays of the layout above back to back (output k at k * n_cols * n_bins * 2), cnt the counts (one array: they
 * are the same for every output). The gain
 * sums the K outputs' Newton gains: gain_scale * 0.5 * sum_k (GL_k^2/(HL_k+l2) + GR_k^2/(HR_k+l2) - G_k^2/(H_k+l2))
 * - penalty[j]; both children need hessian summed over the outputs >= min_child_weight (each output's + l2 > 0)
 * and count >= min_child_count. work holds 4 * K doubles. out->gl and out->hl are output 0's sums (the caller
 * takes the others from the histograms). Ties go to the lowest (feature, bin). */
void hb_best_split_multi(const double *gh, const int32_t *cnt, int32_t n_outputs, int32_t n_cols, int32_t n_bins,
                         const int32_t *n_thr, const double *penalty, const uint8_t *allowed, double l2,
                         double min_child_weight, double min_child_count, double gain_scale, double *work,
                         hb_split *out);

/* Walk every row through one tree on bin codes (go left iff code <= bin[node]; feature -1 = leaf),
 * add value[leaf] to F[r * f_stride + f_col] in float32 and store the leaf in leaf_out (may be NULL). */
void hb_apply_add(const uint8_t *codes, int64_t n_rows, const int32_t *feature,
                  const int32_t *bin, const int32_t *left, const int32_t *right, const float *value,
                  float *F, int64_t f_stride, int64_t f_col, int32_t *leaf_out);

/* codes[j * n_rows + r] = number of thresholds t of feature j with t < x (lower bound), x float32
 * (row-major: X[r * n_cols + j]; no transposed copy is made); thr holds every feature's sorted
 * thresholds back to back, thr_start[j] .. thr_start[j + 1]. */
void hb_bin_codes(const float *X, int64_t n_rows, int64_t n_cols, const float *thr, const int64_t *thr_start,
                  uint8_t *codes);

#endif
