/* Builder of an fm_skyline budget index from fuzz input (used by the skyline and skymodel harnesses).
 * The last entries of feat_ptr and sky_ptr give the lengths of feat_idx and sky_model (the tables'
 * contract): the harness sets them to the lengths it filled, every other entry is fuzzed. */
#ifndef FM_FUZZ_SKYLINE_H
#define FM_FUZZ_SKYLINE_H

#include "fuzz_common.h"
#include "fm_skyline.h"

#define FZ_SKY_MAX_MODELS 3u
#define FZ_SKY_MAX_RANGES 3u
#define FZ_SKY_MAX_IDX 12u

typedef struct {
    double coef[3u * FZ_SKY_MAX_MODELS], breaks[FZ_SKY_MAX_RANGES];
    uint32_t feat_ptr[FZ_SKY_MAX_MODELS + 1u], feat_idx[FZ_SKY_MAX_IDX];
    uint32_t sky_ptr[FZ_SKY_MAX_RANGES + 1u], sky_model[FZ_SKY_MAX_IDX];
} fz_skyline_arrays;

/* Pointer fields of an fm_skyline at a member path ending in a dot, or at the top (null-each). */
#define FZ_SKYLINE_PTRS(T, at)                                                                                 \
    offsetof(T, at model_coef), offsetof(T, at feat_ptr), offsetof(T, at feat_idx), offsetof(T, at breaks),    \
        offsetof(T, at sky_ptr), offsetof(T, at sky_model)

/* Non-zero when the tables go to fm_skyline_check. This harness found that the check once walked
 * feat_idx / sky_model up to a middle pointer before it had seen the later ones (sky_ptr = {0, 15, 3}
 * read past sky_model[3]); the check now tests every pointer first, so such tables are fed to it too.
 * Build with -DFZ_SKIP_UNBOUNDED_PTRS to leave them out. */
static inline int fz_ptrs_bounded(const uint32_t *ptr, uint32_t n)
{
#ifndef FZ_SKIP_UNBOUNDED_PTRS
    (void)ptr;
    (void)n;
#else
    uint32_t i;
    for (i = 0; i < n; ++i) {
        if (ptr[i] > ptr[n]) {
            return 0;
        }
    }
#endif
    return 1;
}

/* Returns 0 when the tables must be skipped (see fz_ptrs_bounded). */
static inline int fz_skyline(fz_in *in, fz_skyline_arrays *a, fm_skyline *s, uint32_t nf)
{
    uint32_t n_idx, n_sky;
    memset(s, 0, sizeof *s);
    s->n_features = nf;
    s->n_models = fz_dim(in, FZ_SKY_MAX_MODELS);
    s->n_ranges = fz_dim(in, FZ_SKY_MAX_RANGES);
    n_idx = fz_dim(in, FZ_SKY_MAX_IDX);
    n_sky = fz_dim(in, FZ_SKY_MAX_IDX);
    fz_doubles(in, a->coef, 3u * s->n_models);
    fz_u32s(in, a->feat_ptr, s->n_models);
    a->feat_ptr[s->n_models] = n_idx;
    fz_u32s(in, a->feat_idx, n_idx);
    fz_doubles(in, a->breaks, s->n_ranges);
    fz_u32s(in, a->sky_ptr, s->n_ranges);
    a->sky_ptr[s->n_ranges] = n_sky;
    fz_u32s(in, a->sky_model, n_sky);
    s->model_coef = a->coef;
    s->feat_ptr = a->feat_ptr;
    s->feat_idx = a->feat_idx;
    s->breaks = a->breaks;
    s->sky_ptr = a->sky_ptr;
    s->sky_model = a->sky_model;
    return fz_ptrs_bounded(a->feat_ptr, s->n_models) && fz_ptrs_bounded(a->sky_ptr, s->n_ranges);
}

#endif /* FM_FUZZ_SKYLINE_H */
