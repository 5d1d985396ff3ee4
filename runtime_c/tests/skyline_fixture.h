/* The skyline index test_skyline.c and test_skymodel.c share. Four models: m0 = {}, cost 0;
 * m1 = {f0}, cost 1 + n; m2 = {f1}, cost 11; m3 = {f0, f1}, cost 12 + n. Accuracies m0 < m1 = m2 < m3.
 * Below n = 10 the skyline is m0, m1, m3; from n = 10 on it is m0, m2, m3. */
#ifndef SKYLINE_FIXTURE_H
#define SKYLINE_FIXTURE_H

#include "fm_skyline.h"

static const double coef[] = {0, 0, 0, 1, 1, 0, 11, 0, 0, 12, 1, 0};
static const uint32_t feat_ptr[] = {0, 0, 1, 2, 4};
static const uint32_t feat_idx[] = {0, 1, 0, 1};
static const double breaks[] = {0.0, 10.0};
static const uint32_t sky_ptr[] = {0, 3, 6};
static const uint32_t sky_model[] = {0, 1, 3, 0, 2, 3};

static fm_skyline make_index(void)
{
    fm_skyline s;
    s.n_features = 2;
    s.n_models = 4;
    s.n_ranges = 2;
    s.model_coef = coef;
    s.feat_ptr = feat_ptr;
    s.feat_idx = feat_idx;
    s.breaks = breaks;
    s.sky_ptr = sky_ptr;
    s.sky_model = sky_model;
    return s;
}

#endif /* SKYLINE_FIXTURE_H */
