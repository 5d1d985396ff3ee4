/* Inner loops of the histogram gradient-boosting core; see histboost.h. */
#include "histboost.h"

#include <stddef.h>

/* One feature's cells: gh[code * 2 + {0,1}] += {g[i], h[i]} and cnt[code] += 1 (cnt may be NULL) for row i of rows
 * (rows == NULL: 0..n_rows-1); the four loops keep the tests out of the inner loop. */
static void add_column(const uint8_t *col, const int32_t *rows, int64_t n_rows, const double *g, const double *h,
                       double *gh, int32_t *cnt)
{
    int64_t i;
    if (rows && cnt) {
        for (i = 0; i < n_rows; ++i) {
            const int64_t code = col[rows[i]];
            gh[code * 2] += g[i];
            gh[code * 2 + 1] += h[i];
            ++cnt[code];
        }
    } else if (rows) {
        for (i = 0; i < n_rows; ++i) {
            const int64_t code = col[rows[i]];
            gh[code * 2] += g[i];
            gh[code * 2 + 1] += h[i];
        }
    } else if (cnt) {
        for (i = 0; i < n_rows; ++i) {
            const int64_t code = col[i];
            gh[code * 2] += g[i];
            gh[code * 2 + 1] += h[i];
            ++cnt[code];
        }
    } else {
        for (i = 0; i < n_rows; ++i) {
            const int64_t code = col[i];
            gh[code * 2] += g[i];
            gh[code * 2 + 1] += h[i];
        }
    }
}

void hb_histogram(const uint8_t *codes, int64_t n_total, int64_t n_cols, const int32_t *rows, int64_t n_rows,
                  const double *g, const double *h, int32_t n_bins, double *scratch, double *gh, int32_t *cnt)
{
    int64_t i, j, start;
    if (!rows) {
        for (j = 0; j < n_cols; ++j)
            add_column(codes + j * n_total, NULL, n_rows, g, h, gh + j * n_bins * 2, cnt ? cnt + j * n_bins : NULL);
        return;
    }
    /* ordered gradients, a block of rows at a time: read sequentially once per feature; every cell still adds
     * its rows in their order, so the sums are those of one pass */
    for (start = 0; start < n_rows; start += HB_GATHER_BLOCK) {
        const int64_t m = n_rows - start < HB_GATHER_BLOCK ? n_rows - start : HB_GATHER_BLOCK;
        const int32_t *r = rows + start;
        double *gs = scratch, *hs = scratch + m;
        for (i = 0; i < m; ++i) {
            gs[i] = g[r[i]];
            hs[i] = h[r[i]];
        }
        for (j = 0; j < n_cols; ++j)
            add_column(codes + j * n_total, r, m, gs, hs, gh + j * n_bins * 2, cnt ? cnt + j * n_bins : NULL);
    }
}

void hb_subtract(const double *a, const double *b, int64_t n, double *out)
{
    int64_t i;
    for (i = 0; i < n; ++i)
        out[i] = a[i] - b[i];
}

void hb_subtract_counts(const int32_t *a, const int32_t *b, int64_t n, int32_t *out)
{
    int64_t i;
    for (i = 0; i < n; ++i)
        out[i] = a[i] - b[i];
}

int64_t hb_partition(const uint8_t *codes, int64_t n_total, int32_t *rows, int64_t n_rows, int32_t feature,
                     int32_t bin, int32_t *scratch)
{
    int64_t i, n_left = 0, n_right = 0;
    const uint8_t *col = codes + (int64_t)feature * n_total;
    for (i = 0; i < n_rows; ++i) {
        const int32_t r = rows[i];
        if ((int32_t)col[r] <= bin)
            rows[n_left++] = r;
        else
            scratch[n_right++] = r;
    }
    for (i = 0; i < n_right; ++i)
        rows[n_left + i] = scratch[i];
    return n_left;
}

void hb_best_split(const double *gh, const int32_t *cnt, int32_t n_cols, int32_t n_bins, const int32_t *n_thr,
                   const double *penalty, const uint8_t *allowed, double l2, double min_child_weight,
                   double min_child_count, double gain_scale, hb_split *out)
{
    int32_t j, b;
    double G = 0.0, H = 0.0, C = 0.0, parent;
    const int64_t stride = (int64_t)n_bins * 2;
    out->feature = -1;
    out->bin = -1;
    out->gain = 0.0;
    out->gl = out->hl = out->cl = 0.0;
    if (n_cols <= 0)
        return;
    for (b = 0; b < n_bins; ++b) {
        G += gh[b * 2];
        H += gh[b * 2 + 1];
        C += cnt[b];
    }
    parent = G * G / (H + l2);
    for (j = 0; j < n_cols; ++j) {
        const double *f = gh + j * stride;
        const int32_t *c = cnt + (int64_t)j * n_bins;
        double gl = 0.0, hl = 0.0, cl = 0.0;
        if (allowed && !allowed[j])
            continue;
        for (b = 0; b < n_thr[j]; ++b) {
            double gr, hr, cr, gain;
            gl += f[b * 2];
            hl += f[b * 2 + 1];
            cl += c[b];
            gr = G - gl;
            hr = H - hl;
            cr = C - cl;
            if (cl < min_child_count || cr < min_child_count)
                continue;
            if (hl < min_child_weight || hr < min_child_weight || !(hl + l2 > 0.0) || !(hr + l2 > 0.0))
                continue;
            gain = gain_scale * 0.5 * (gl * gl / (hl + l2) + gr * gr / (hr + l2) - parent) - penalty[j];
            if (out->feature < 0 || gain > out->gain) {
                out->feature = j;
                out->bin = b;
                out->gain = gain;
                out->gl = gl;
                out->hl = hl;
                out->cl = cl;
            }
        }
    }
}

void hb_best_split_multi(const double *gh, const int32_t *cnt, int32_t n_outputs, int32_t n_cols, int32_t n_bins,
                         const int32_t *n_thr, const double *penalty, const uint8_t *allowed, double l2,
                         double min_child_weight, double min_child_count, double gain_scale, double *work,
                         hb_split *out)
{
    int32_t j, b, k;
    double C = 0.0, parent = 0.0;
    const int64_t stride = (int64_t)n_bins * 2, size = (int64_t)n_cols * stride;
    double *G = work, *H = work + n_outputs, *gl = H + n_outputs, *hl = gl + n_outputs;
    out->feature = -1;
    out->bin = -1;
    out->gain = 0.0;
    out->gl = out->hl = out->cl = 0.0;
    if (n_cols <= 0 || n_outputs <= 0)
        return;
    for (k = 0; k < n_outputs; ++k) {
        const double *f = gh + k * size;
        G[k] = H[k] = 0.0;
        for (b = 0; b < n_bins; ++b) {
            G[k] += f[b * 2];
            H[k] += f[b * 2 + 1];
        }
        parent += G[k] * G[k] / (H[k] + l2);
    }
    for (b = 0; b < n_bins; ++b)
        C += cnt[b];
    for (j = 0; j < n_cols; ++j) {
        double cl = 0.0;
        if (allowed && !allowed[j])
            continue;
        for (k = 0; k < n_outputs; ++k)
            gl[k] = hl[k] = 0.0;
        for (b = 0; b < n_thr[j]; ++b) {
            const double *cell = gh + j * stride + b * 2;
            double hl_sum = 0.0, hr_sum = 0.0, score = 0.0, gain;
            int ok = 1;
            cl += cnt[(int64_t)j * n_bins + b];
            for (k = 0; k < n_outputs; ++k) {
                gl[k] += cell[k * size];
                hl[k] += cell[k * size + 1];
            }
            if (cl < min_child_count || C - cl < min_child_count)
                continue;
            for (k = 0; k < n_outputs; ++k) {
                const double gr = G[k] - gl[k], hr = H[k] - hl[k];
                hl_sum += hl[k];
                hr_sum += hr;
                if (!(hl[k] + l2 > 0.0) || !(hr + l2 > 0.0))
                    ok = 0;
                else
                    score += gl[k] * gl[k] / (hl[k] + l2) + gr * gr / (hr + l2);
            }
            if (!ok || hl_sum < min_child_weight || hr_sum < min_child_weight)
                continue;
            gain = gain_scale * 0.5 * (score - parent) - penalty[j];
            if (out->feature < 0 || gain > out->gain) {
                out->feature = j;
                out->bin = b;
                out->gain = gain;
                out->gl = gl[0];
                out->hl = hl[0];
                out->cl = cl;
            }
        }
    }
}

void hb_apply_add(const uint8_t *codes, int64_t n_rows, const int32_t *feature,
                  const int32_t *bin, const int32_t *left, const int32_t *right, const float *value,
                  float *F, int64_t f_stride, int64_t f_col, int32_t *leaf_out)
{
    int64_t r;
    for (r = 0; r < n_rows; ++r) {
        int32_t node = 0;
        while (feature[node] >= 0)
            node = (int32_t)codes[(int64_t)feature[node] * n_rows + r] <= bin[node] ? left[node] : right[node];
        if (F) {
            float *cell = F + r * f_stride + f_col;
            *cell = *cell + value[node];
        }
        if (leaf_out)
            leaf_out[r] = node;
    }
}

void hb_bin_codes(const float *X, int64_t n_rows, int64_t n_cols, const float *thr, const int64_t *thr_start,
                  uint8_t *codes)
{
    int64_t r, j;
    for (r = 0; r < n_rows; ++r) { /* X read once in row order; one sequential write stream per feature */
        const float *x = X + r * n_cols;
        for (j = 0; j < n_cols; ++j) {
            const float *t = thr + thr_start[j];
            const float v = x[j];
            int64_t lo = 0, hi = thr_start[j + 1] - thr_start[j];
            while (lo < hi) { /* first threshold >= v */
                const int64_t mid = lo + (hi - lo) / 2;
                if (t[mid] < v)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            codes[j * n_rows + r] = (uint8_t)lo;
        }
    }
}
