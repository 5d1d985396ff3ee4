/* Unit test of the skyline lookup: known answers, nothing fits, bad tables. */
#include <stdio.h>

#include "fm_skyline.h"

static int failures = 0;

#define EXPECT(cond)                                                   \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                \
        }                                                              \
    } while (0)

/* Three models: m0 = {}, cost 0; m1 = {f0}, cost 1 + n; m2 = {f1}, cost 11;
 * m3 = {f0, f1}, cost 12 + n. Accuracies m0 < m1 = m2 < m3. Below n = 10 the
 * skyline is m0, m1, m3; from n = 10 on it is m0, m2, m3. */
static const double coef[] = {0, 0, 0, 1, 1, 0, 11, 0, 0, 12, 1, 0};
static const uint32_t feat_ptr[] = {0, 0, 1, 2, 4};
static const uint32_t feat_idx[] = {0, 1, 0, 1};
static const double breaks[] = {0.0, 10.0};
static const uint32_t sky_ptr[] = {0, 3, 6};
static const uint32_t sky_model[] = {0, 1, 3, 0, 2, 3};

static fm_skyline make(void)
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

static void test_known_answers(void)
{
    fm_skyline s = make();
    uint32_t m = 0;
    double c = -1.0;
    EXPECT(fm_skyline_check(&s) == FM_OK);
    EXPECT(fm_skyline_select(&s, 3.0, 2.0, &m, &c) == FM_OK && m == 1 && c == 3.0);
    EXPECT(fm_skyline_select(&s, 2.5, 2.0, &m, &c) == FM_OK && m == 0 && c == 0.0);
    EXPECT(fm_skyline_select(&s, 14.0, 2.0, &m, &c) == FM_OK && m == 3 && c == 14.0);
    EXPECT(fm_skyline_select(&s, 11.0, 20.0, &m, &c) == FM_OK && m == 2 && c == 11.0);
    EXPECT(fm_skyline_select(&s, 31.9, 20.0, &m, &c) == FM_OK && m == 2);
    EXPECT(fm_skyline_select(&s, 32.0, 20.0, &m, &c) == FM_OK && m == 3 && c == 32.0);
    EXPECT(fm_skyline_select(&s, 11.0, 10.0, &m, &c) == FM_OK && m == 2);
    /* below the first break: range 0 */
    EXPECT(fm_skyline_select(&s, 0.6, -0.5, &m, &c) == FM_OK && m == 1 && c == 0.5);
    EXPECT(fm_skyline_model_cost(&s, 3, 2.0) == 14.0);
}

static void test_nothing_fits(void)
{
    fm_skyline s = make();
    uint32_t m = 7;
    double c = 5.0;
    EXPECT(fm_skyline_select(&s, -1.0, 2.0, &m, &c) == FM_E_BUDGET && m == UINT32_MAX && c == 0.0);
    s.sky_ptr = sky_ptr;
    {
        static const uint32_t empty_ptr[] = {0, 0, 0};
        s.sky_ptr = empty_ptr;
        EXPECT(fm_skyline_check(&s) == FM_OK);
        EXPECT(fm_skyline_select(&s, 1e300, 2.0, &m, &c) == FM_E_BUDGET);
    }
}

static void test_bad_arguments_and_tables(void)
{
    fm_skyline s = make();
    uint32_t m;
    double c;
    double zero = 0.0;
    double nan = zero / zero;
    double inf = 1.0 / zero;
    EXPECT(fm_skyline_select(NULL, 1.0, 1.0, &m, &c) == FM_E_ARG);
    EXPECT(fm_skyline_select(&s, 1.0, 1.0, NULL, &c) == FM_E_ARG);
    EXPECT(fm_skyline_select(&s, nan, 1.0, &m, &c) == FM_E_ARG);
    EXPECT(fm_skyline_select(&s, 1.0, nan, &m, &c) == FM_E_ARG);
    EXPECT(fm_skyline_select(&s, 1.0, inf, &m, &c) == FM_E_ARG);
    EXPECT(fm_skyline_select(&s, inf, 1.0, &m, &c) == FM_OK && m == 3);
    EXPECT(fm_skyline_check(NULL) == FM_E_ARG);
    {
        static const uint32_t bad_model[] = {0, 1, 4, 0, 2, 3};
        s = make();
        s.sky_model = bad_model;
        EXPECT(fm_skyline_check(&s) == FM_E_MODEL);
    }
    {
        static const double bad_breaks[] = {10.0, 0.0};
        s = make();
        s.breaks = bad_breaks;
        EXPECT(fm_skyline_check(&s) == FM_E_MODEL);
    }
    {
        static const uint32_t bad_feat[] = {0, 1, 1, 0};
        s = make();
        s.feat_idx = bad_feat;
        EXPECT(fm_skyline_check(&s) == FM_E_MODEL);
    }
    {
        static const double bad_coef[] = {0, 0, 0, 1, -1, 0, 11, 0, 0, 12, 1, 0};
        s = make();
        s.model_coef = bad_coef;
        EXPECT(fm_skyline_check(&s) == FM_E_MODEL);
    }
    s = make();
    s.n_ranges = 0;
    EXPECT(fm_skyline_check(&s) == FM_E_MODEL);
}

int main(void)
{
    test_known_answers();
    test_nothing_fits();
    test_bad_arguments_and_tables();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_skyline: ok\n");
    return 0;
}
