/* Unit test of the skyline lookup: known answers, nothing fits, bad tables. */
#include <stdio.h>

#include "fm_skyline.h"

#include "fm_check.h"
#include "skyline_fixture.h"


static void test_known_answers(void)
{
    fm_skyline s = make_index();
    uint32_t m = 0;
    double c = -1.0;
    CHECK(fm_skyline_check(&s) == FM_OK);
    CHECK(fm_skyline_select(&s, 3.0, 2.0, &m, &c) == FM_OK && m == 1 && c == 3.0);
    CHECK(fm_skyline_select(&s, 2.5, 2.0, &m, &c) == FM_OK && m == 0 && c == 0.0);
    CHECK(fm_skyline_select(&s, 14.0, 2.0, &m, &c) == FM_OK && m == 3 && c == 14.0);
    CHECK(fm_skyline_select(&s, 11.0, 20.0, &m, &c) == FM_OK && m == 2 && c == 11.0);
    CHECK(fm_skyline_select(&s, 31.9, 20.0, &m, &c) == FM_OK && m == 2);
    CHECK(fm_skyline_select(&s, 32.0, 20.0, &m, &c) == FM_OK && m == 3 && c == 32.0);
    CHECK(fm_skyline_select(&s, 11.0, 10.0, &m, &c) == FM_OK && m == 2);
    /* below the first break: range 0 */
    CHECK(fm_skyline_select(&s, 0.6, -0.5, &m, &c) == FM_OK && m == 1 && c == 0.5);
    CHECK(fm_skyline_model_cost(&s, 3, 2.0) == 14.0);
}

static void test_nothing_fits(void)
{
    fm_skyline s = make_index();
    uint32_t m = 7;
    double c = 5.0;
    CHECK(fm_skyline_select(&s, -1.0, 2.0, &m, &c) == FM_E_BUDGET && m == UINT32_MAX && c == 0.0);
    s.sky_ptr = sky_ptr;
    {
        static const uint32_t empty_ptr[] = {0, 0, 0};
        s.sky_ptr = empty_ptr;
        CHECK(fm_skyline_check(&s) == FM_OK);
        CHECK(fm_skyline_select(&s, 1e300, 2.0, &m, &c) == FM_E_BUDGET);
    }
}

static void test_bad_arguments_and_tables(void)
{
    fm_skyline s = make_index();
    uint32_t m;
    double c;
    double zero = 0.0;
    double nan = zero / zero;
    double inf = 1.0 / zero;
    CHECK(fm_skyline_select(NULL, 1.0, 1.0, &m, &c) == FM_E_ARG);
    CHECK(fm_skyline_select(&s, 1.0, 1.0, NULL, &c) == FM_E_ARG);
    CHECK(fm_skyline_select(&s, nan, 1.0, &m, &c) == FM_E_ARG);
    CHECK(fm_skyline_select(&s, 1.0, nan, &m, &c) == FM_E_ARG);
    CHECK(fm_skyline_select(&s, 1.0, inf, &m, &c) == FM_E_ARG);
    CHECK(fm_skyline_select(&s, inf, 1.0, &m, &c) == FM_OK && m == 3);
    CHECK(fm_skyline_check(NULL) == FM_E_ARG);
    {
        static const uint32_t bad_model[] = {0, 1, 4, 0, 2, 3};
        s = make_index();
        s.sky_model = bad_model;
        CHECK(fm_skyline_check(&s) == FM_E_MODEL);
    }
    {
        static const double bad_breaks[] = {10.0, 0.0};
        s = make_index();
        s.breaks = bad_breaks;
        CHECK(fm_skyline_check(&s) == FM_E_MODEL);
    }
    {
        static const uint32_t bad_feat[] = {0, 1, 1, 0};
        s = make_index();
        s.feat_idx = bad_feat;
        CHECK(fm_skyline_check(&s) == FM_E_MODEL);
    }
    {
        static const double bad_coef[] = {0, 0, 0, 1, -1, 0, 11, 0, 0, 12, 1, 0};
        s = make_index();
        s.model_coef = bad_coef;
        CHECK(fm_skyline_check(&s) == FM_E_MODEL);
    }
    s = make_index();
    s.n_ranges = 0;
    CHECK(fm_skyline_check(&s) == FM_E_MODEL);
}

int main(void)
{
    test_known_answers();
    test_nothing_fits();
    test_bad_arguments_and_tables();
    return fm_check_done("test_skyline");
}
