/* frugalml runtime: gated low-cost / high-cost prediction (see fm_gated.h).
 * The float32 and q15 variants are one body, fm_gated_impl.h, included
 * twice. */
#include "fm_gated.h"
#include "fm_batch.h"
#include "fm_fixed.h"

static uint32_t fm_gated_max3(uint32_t a, uint32_t b, uint32_t c)
{
    const uint32_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* ---- float32 ------------------------------------------------------------ */
#define G_MODEL fm_gated
#define G_PART fm_gated_part
#define G_SCORE float
#define G_FN(n) fm_gated_##n
#define G_LIN_FN(n) fm_linear_##n
#define G_TR_FN(n) fm_trees_##n
#define G_BIAS(l) ((l).bias)
#define G_THR(l) ((l).decision_threshold)
#define G_SET_SCORE(out, acc) ((out)->score = (acc))
#define G_SAME_SCALE(a, b) 1
#define G_MARGIN float
#define G_WIDE(s) (s)
#define G_MARGIN_SCORE(out, mg) ((out)->score = (mg))
#define G_THR_OK(l) (!fm_bits_nonfinite(fm_float_bits((l).decision_threshold)))
#define G_Q 0
#include "fm_gated_impl.h"
#undef G_MODEL
#undef G_PART
#undef G_SCORE
#undef G_FN
#undef G_LIN_FN
#undef G_TR_FN
#undef G_BIAS
#undef G_THR
#undef G_SET_SCORE
#undef G_SAME_SCALE
#undef G_MARGIN
#undef G_WIDE
#undef G_MARGIN_SCORE
#undef G_THR_OK
#undef G_Q

/* ---- q15 ---------------------------------------------------------------- */
#define G_MODEL fm_gated_q15
#define G_PART fm_gated_part_q15
#define G_SCORE int32_t
#define G_FN(n) fm_gated_q15_##n
#define G_LIN_FN(n) fm_linear_q15_##n
#define G_TR_FN(n) fm_trees_q15_##n
#define G_BIAS(l) ((l).bias_q)
#define G_THR(l) ((l).decision_threshold_q)
#define G_SET_SCORE(out, acc) ((out)->score_q = (acc))
#define G_SAME_SCALE(a, b) ((a)->in_shift == (b)->in_shift && (a)->w_shift == (b)->w_shift)
#define G_MARGIN int64_t
#define G_WIDE(s) ((int64_t)(s))
/* a hard margin is 0 .. the threshold <= INT32_MAX: the saturation is a guard that never changes it */
#define G_MARGIN_SCORE(out, mg) ((out)->score_q = fm_sat32(mg))
#define G_THR_OK(l) ((void)(l), 1)
#define G_Q 1
#include "fm_gated_impl.h"
