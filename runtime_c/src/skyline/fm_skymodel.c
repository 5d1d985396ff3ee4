#include <float.h>
#include <math.h>

/* FLT_MAX + 2^103 (half an ulp of FLT_MAX): the first double that rounds to inf in float32 (ties to even) */
#define FM_F32_INF_FROM 3.4028235677973366e38

#include "fm_skymodel.h"
#include "fm_batch.h"

/* Is feature j one of model k's indexed features (ascending list)? */
static int sky_has_feature(const fm_skyline *s, uint32_t k, uint32_t j)
{
    uint32_t lo = s->feat_ptr[k], hi = s->feat_ptr[k + 1u];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (s->feat_idx[mid] == j) {
            return 1;
        }
        if (s->feat_idx[mid] < j) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return 0;
}

#define S_MODEL fm_skymodel
#define S_NB fm_nb
#define S_NBK fm_nbk
#define S_LIN fm_linear
#define S_FN(n) fm_skymodel_##n
#define S_PRIV(n) sky_##n
#define S_NB_FN(n) fm_nb_##n
#define S_NBK_FN(n) fm_nbk_##n
#define S_LIN_FN(n) fm_linear_##n
/* fm_nb_check accepts either layout: the record layout keeps each position's feature in pos[i].feature and
 * may leave order NULL */
#define S_NB_FEATURE(nb, i) ((nb)->pos != NULL ? (nb)->pos[(i)].feature : (nb)->order[(i)])
#define S_SAME_SCALE(a, b) 1
#include "fm_skymodel_impl.h"
#undef S_MODEL
#undef S_NB
#undef S_NBK
#undef S_LIN
#undef S_FN
#undef S_PRIV
#undef S_NB_FN
#undef S_NBK_FN
#undef S_LIN_FN
#undef S_NB_FEATURE
#undef S_SAME_SCALE

#define S_MODEL fm_skymodel_q15
#define S_NB fm_nb_q15
#define S_NBK fm_nbk_q15
#define S_LIN fm_linear_q15
#define S_FN(n) fm_skymodel_q15_##n
#define S_PRIV(n) sky_q15_##n
#define S_NB_FN(n) fm_nb_q15_##n
#define S_NBK_FN(n) fm_nbk_q15_##n
#define S_LIN_FN(n) fm_linear_q15_##n
/* the q15 NB tables take three layouts: fixed stride (order), records (pos), steps (hot) */
#define S_NB_FEATURE(nb, i) \
    ((nb)->hot != NULL ? (nb)->hot[(i)].feature : (nb)->pos != NULL ? (nb)->pos[(i)].feature : (nb)->order[(i)])
#define S_SAME_SCALE(a, b) ((a)->in_shift == (b)->in_shift && (a)->w_shift == (b)->w_shift)
#include "fm_skymodel_impl.h"
