/* frugalml runtime: the feature memo and fm_float_to_fixed (see fm_memo.h). */
#include "fm_memo.h"

void fm_memo_init(fm_memo *memo, float *values, uint8_t *seen, uint32_t n)
{
    memo->values = values;
    memo->seen = seen;
    memo->n = n;
    memo->epoch = 1u; /* stamps are 0 = never read: usable before fm_memo_start */
    memo->keys = NULL;
    if (n > 0u) {
        memset(seen, 0, n);
    }
}

size_t fm_scratch_size(uint32_t n_features, uint32_t n_scores, int with_keys)
{
    size_t f = (size_t)n_features, per = with_keys ? 7u : 5u, total;
    if (f > ((size_t)-1 - 8u) / 16u || (size_t)n_scores > ((size_t)-1 - 8u) / 16u - f) {
        return (size_t)-1;
    }
    total = (size_t)n_scores * 4u + f * per;
    return (total + 3u) & ~(size_t)3u;
}

int fm_scratch_split(void *buf, size_t size, uint32_t n_features, uint32_t n_scores, int with_keys,
                     fm_memo *memo, void **scores)
{
    size_t need = fm_scratch_size(n_features, n_scores, with_keys);
    unsigned char *p = (unsigned char *)buf;
    float *values;
    int16_t *keys = NULL;
    if (memo == NULL || need == (size_t)-1 || size < need || (buf == NULL && need > 0u) ||
        ((uintptr_t)buf & 3u) != 0u) {
        return FM_E_ARG;
    }
    if (scores != NULL) {
        *scores = n_scores > 0u ? (void *)p : NULL;
    }
    if (need == 0u) { /* no features, no scores: nothing to point into */
        fm_memo_init(memo, NULL, NULL, 0u);
        return FM_OK;
    }
    p += (size_t)n_scores * 4u;
    values = (float *)(void *)p;
    p += (size_t)n_features * 4u;
    if (with_keys) {
        keys = (int16_t *)(void *)p;
        p += (size_t)n_features * 2u;
    }
    fm_memo_init(memo, values, (uint8_t *)p, n_features);
    fm_memo_set_keys(memo, keys);
    return FM_OK;
}

void fm_memo_set_keys(fm_memo *memo, int16_t *keys)
{
    memo->keys = keys;
}

void fm_memo_start(fm_memo *memo, fm_result *res)
{
    memo->epoch = (uint8_t)(memo->epoch + 1u);
    if (memo->epoch == 0u) {
        /* the stamps wrapped: forget every old stamp */
        if (memo->n > 0u) {
            memset(memo->seen, 0, memo->n);
        }
        memo->epoch = 1u;
    }
    if (res != NULL) {
        FM_RESULT_ZERO(res);
    }
}

int32_t fm_float_to_fixed(uint32_t bits, uint32_t shift)
{
    uint32_t e = (bits >> 23) & 0xffu;
    uint32_t m = bits & 0x7fffffu;
    int32_t k;
    uint32_t mag;
    if (e == 0u) {
        e = 1u; /* subnormal: m * 2^-149 */
    } else {
        m |= 0x800000u;
    }
    /* |x| * 2^shift = m * 2^k with m < 2^24 */
    k = (int32_t)e - 150 + (int32_t)shift;
    if (m == 0u) {
        mag = 0u;
    } else if (k >= 0) {
        /* m >= 2^23 here (subnormals never reach k >= 0 with shift <= 30) */
        mag = (k > 7) ? 0x7fffffffu : (m << k);
    } else {
        mag = (k <= -24) ? 0u : (m >> (uint32_t)(-k));
    }
    if (mag > 0x7fffffffu) {
        mag = 0x7fffffffu;
    }
    return (bits & 0x80000000u) ? -(int32_t)mag : (int32_t)mag;
}

int fm_costs_ok(const float *costs, uint32_t n)
{
    uint32_t j;
    if (costs == NULL) {
        return 1;
    }
    for (j = 0; j < n; ++j) {
        const uint32_t b = fm_float_bits(costs[j]);
        if (fm_bits_nonfinite(b) || ((b & 0x80000000u) && (b & 0x7fffffffu) != 0u)) {
            return 0;
        }
    }
    return 1;
}
