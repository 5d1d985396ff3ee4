/*
 * The COST column of the firmware examples: the same text `frugalml predict`
 * prints (pyruntime/costtext.py), with integer arithmetic only (no printf,
 * no libm): the float32 value rounded to 6 decimals, round half to even on
 * its exact binary value, without trailing zeros; "inf"/"-inf"/"nan"; values
 * of 2^64 or more as "M*2^E" (M the 24-bit significand).
 *
 * The value is FM_RESULT_COST(&result) from the generated header: the
 * float32 cost for float32 tables, (float)cost_q * FM_COST_UNIT for q15.
 */
#ifndef FM_COST_TEXT_H
#define FM_COST_TEXT_H

#include <stdint.h>

#include "frugalml.h"

#define FM_COST_TEXT_SIZE 48 /* enough for any value, with the NUL */

/* Decimal digits of u at the end of a buffer ending at end; returns the first digit. */
static inline char *fm_cost_utoa(char *end, uint64_t u)
{
    do {
        *--end = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u != 0u);
    return end;
}

static inline char *fm_cost_copy(char *dst, const char *s)
{
    while (*s != '\0') {
        *dst++ = *s++;
    }
    *dst = '\0';
    return dst;
}

/* Writes the text of v to buf[FM_COST_TEXT_SIZE]; returns buf. */
static inline char *fm_cost_text(char *buf, float v)
{
    char num[24];
    char *p = buf;
    uint32_t bits = fm_float_bits(v), ex = (bits >> 23) & 0xffu, m = bits & 0x7fffffu;
    uint64_t whole, frac = 0u;
    int e;
    num[sizeof num - 1] = '\0';
    if (ex == 0xffu) {
        (void)fm_cost_copy(buf, m != 0u ? "nan" : (bits >> 31) ? "-inf" : "inf");
        return buf;
    }
    if ((bits >> 31) && (bits & 0x7fffffffu) != 0u) {
        *p++ = '-';
    }
    if (ex == 0u) {
        e = -149;
    } else {
        m |= 0x800000u;
        e = (int)ex - 150;
    }
    if (e > 40) { /* 2^64 or more: M*2^E */
        p = fm_cost_copy(p, fm_cost_utoa(num + sizeof num - 1, m));
        p = fm_cost_copy(p, "*2^");
        (void)fm_cost_copy(p, fm_cost_utoa(num + sizeof num - 1, (uint64_t)e));
        return buf;
    }
    if (e >= 0) {
        whole = (uint64_t)m << e;
    } else {
        /* n = round(m * 10^6 / 2^k), k = -e, half to even; m * 10^6 < 2^44 */
        uint64_t n = (uint64_t)m * 1000000u, q = 0u;
        unsigned k = (unsigned)-e;
        if (k < 64u) {
            uint64_t rem = n & ((UINT64_C(1) << k) - 1u), half = UINT64_C(1) << (k - 1u);
            q = n >> k;
            if (rem > half || (rem == half && (q & 1u))) {
                ++q;
            }
        }
        whole = q / 1000000u;
        frac = q % 1000000u;
    }
    if (whole == 0u && frac == 0u) {
        (void)fm_cost_copy(buf, "0");
        return buf;
    }
    p = fm_cost_copy(p, fm_cost_utoa(num + sizeof num - 1, whole));
    if (frac != 0u) {
        char digits[7];
        int i, last = 5;
        for (i = 5; i >= 0; --i) {
            digits[i] = (char)('0' + (int)(frac % 10u));
            frac /= 10u;
        }
        while (digits[last] == '0') {
            --last;
        }
        *p++ = '.';
        for (i = 0; i <= last; ++i) {
            *p++ = digits[i];
        }
        *p = '\0';
    }
    return buf;
}

#endif /* FM_COST_TEXT_H */
