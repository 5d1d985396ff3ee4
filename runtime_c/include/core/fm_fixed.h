/* frugalml runtime: the fixed-point helpers every q15 family shares (one source for each): saturating
 * int32 addition and narrowing, and the saturating uint32 cost sum. Internal to the runtime's sources. */
#ifndef FM_FIXED_H
#define FM_FIXED_H

#include "frugalml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a + b clamped to [INT32_MIN, INT32_MAX] */
static inline int32_t fm_add_sat32(int32_t a, int32_t b)
{
    if (b > 0 && a > INT32_MAX - b) {
        return INT32_MAX;
    }
    if (b < 0 && a < INT32_MIN - b) {
        return INT32_MIN;
    }
    return a + b;
}

/* v clamped to [INT32_MIN, INT32_MAX] */
static inline int32_t fm_sat32(int64_t v)
{
    if (v > (int64_t)INT32_MAX) {
        return INT32_MAX;
    }
    if (v < (int64_t)INT32_MIN) {
        return INT32_MIN;
    }
    return (int32_t)v;
}

/* cost + c, saturating at 0xffffffff (the integer cost of a q15 prediction, res->cost_q) */
static inline uint32_t fm_cost_add_sat(uint32_t cost, uint32_t c)
{
    return (cost > 0xffffffffu - c) ? 0xffffffffu : cost + c;
}

#ifdef __cplusplus
}
#endif

#endif /* FM_FIXED_H */
