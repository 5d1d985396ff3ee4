/* frugalml runtime: every compiler- and target-specific construct of the runtime, in one header.
 *
 * The switch: compile with -DFM_PORTABLE and the whole runtime is plain C99 (no GNU attribute, builtin
 * or inline assembly): the path any C99 compiler takes. Without it, GCC and Clang get the inlining and
 * branch hints below, and on 32-bit Arm and x86 the tree walks (runtime_c/src/trees/fm_trees.c) use the
 * assembly primitives below. Both paths give the same results bit for bit (tests: `make -C runtime_c
 * test` runs the C unit tests under ASan and UBSan with and without FM_PORTABLE; tests/test_trees_runtime.py
 * and tests/test_every_kind_targets.py compare the portable build with the numpy reference on the host
 * and under QEMU on every target).
 *
 * Internal to the runtime's sources (no public header includes it). A primitive is defined here only
 * where the target has it; the source that uses it gives the plain C form under #ifndef, so a call site
 * is the same on every path.
 *
 *   FM_ALWAYS_INLINE    static inline, forced on GCC/Clang (the walks are generated per depth from it)
 *   FM_NOINLINE         keeps a cold function out of line
 *   FM_UNLIKELY(c)      branch hint
 *   FM_COMPILER_BARRIER()  empty statement the compiler may not move memory accesses across
 *
 * Tree-walk primitives (fm_trees.c documents their contracts):
 *   FM_HEAP_STEP(l, k, t), FM_HEAP_ROOT(l, k, t, one)   l = l + l + carry(k vs t): the 1-based heap
 *       step of the q15 walk (32-bit Arm cmp/adc, x86 cmp/adc); without it the 0-based walk
 *   FM_EKEY_SUB, FM_EKEY_RIGHT(k, t)                     the key bias the carry step needs, and the plain
 *       compare that goes right on those keys
 *   FM_F32_GT_ROOT / FM_F32_GT_STEP                      the float32 heap step (Thumb-2 with a
 *       single-precision FPU: vcmpe + adc; x86-64: comiss + adc)
 *   FM_EKEY(dst, bits, bad), FM_EKEY_BAD(bad), FM_NO_MERGE()   eager key of one float (32-bit Arm, 7
 *       instructions)
 *   FM_LOAD2(b0, b1, x)                                  two floats' bits with one ldrd (Thumb-2)
 *   FM_ANY_NONFINITE(x, n)                               a NaN or infinity among x[0..n) (a superset
 *       test: SSE2 float sums, x86)
 *
 * NB primitives (runtime_c/src/nb/fm_nb.c documents their contracts):
 *   FM_I16(v)                                            the low 16 bits of a uint32 as a signed value
 *       (GCC/Clang define the narrowing conversion as modulo: one sign-extending load or move)
 *   FM_NB_HOT_RUN(r, x, acc), FM_NB_HOT_PAST             the q15 step loop (Cortex-M Thumb-2: one ldm per
 *       step, 8 instructions for a middle interval, 9 for the last, 10 for the first and +0; Cortex-M0
 *       Thumb-1: 11, 15, 13, 14) and whether it leaves r at the step that left (0) or past it (1)
 *
 * Feature primitives (runtime_c/src/features/fm_feat_common.c documents their contracts):
 *   FM_SQRTF(x)                                          the FPU's square root of a normal positive float
 *       (Arm VFP single precision: vsqrt.f32; AArch64: fsqrt; x86-64 SSE: sqrtss), correctly rounded
 *   FM_CLZ32(v)                                          leading zeros of a nonzero uint32, defined only where
 *       the core also divides in one instruction (Arm with CLZ and IDIV, AArch64, x86-64): the two things
 *       the Newton integer root needs to beat the bit-by-bit one
 */
#ifndef FM_PORT_H
#define FM_PORT_H

#if defined(__GNUC__) && !defined(FM_PORTABLE)
#define FM_PORT_GNU 1
#endif

#if defined(FM_PORT_GNU)
#define FM_ALWAYS_INLINE static inline __attribute__((always_inline))
#define FM_NOINLINE __attribute__((noinline))
#define FM_UNLIKELY(c) __builtin_expect(!!(c), 0)
#define FM_COMPILER_BARRIER() __asm__("" ::: "memory")
#else
#define FM_ALWAYS_INLINE static inline
#define FM_NOINLINE
#define FM_UNLIKELY(c) (c)
#define FM_COMPILER_BARRIER() ((void)0)
#endif

/* 32-bit Arm in ARM or Thumb-2 state (not Thumb-1: Cortex-M0 has 8 low registers, where an add-with-carry
 * step costs register moves and the 0-based walk is shorter). */
#if defined(FM_PORT_GNU) && defined(__arm__) && (defined(__thumb2__) || !defined(__thumb__))
/* `cmp key, t` sets C iff key >= t: keys are fm_ukey16 - 1 (wrapping to 0xffff only for NaNs, which fail
 * the prediction anyway). */
#define FM_EKEY_SUB 1u
#define FM_EKEY_RIGHT(k, t) ((k) >= (t))
#define FM_HEAP_STEP(l, k, t) __asm__("cmp %1, %2\n\tadc %0, %0, %0" : "+r"(l) : "r"(k), "r"(t) : "cc")
#define FM_HEAP_ROOT(l, k, t, one) __asm__("cmp %1, %2\n\tadc %0, %3, %3" : "=r"(l) : "r"(k), "r"(t), "r"(one) : "cc")
/* The sign bit shifted out (lsls) is the + 1 of fm_key_bits, added with carry to the constant; the
 * exponent's carry out of (bits << 1) + 2^24 (cmn) counts the non-finite values into bad: 7 instructions. */
#define FM_EKEY(dst, bits, bad)                                                                               \
    do {                                                                                                      \
        uint32_t t_;                                                                                          \
        uint32_t n_;                                                                                          \
        __asm__("asr %[n], %[b], #31\n\t"                                                                     \
                "eor %[t], %[b], %[n], lsr #1\n\t"                                                            \
                "lsls %[n], %[b], #1\n\t"                                                                     \
                "adc %[t], %[t], %[c]\n\t"                                                                    \
                "cmn %[n], #16777216\n\t"                                                                     \
                "adc %[bad], %[bad], #0\n\t"                                                                  \
                "lsr %[t], %[t], #16"                                                                         \
                : [t] "=&r"(t_), [n] "=&r"(n_), [bad] "+r"(bad)                                               \
                : [b] "r"(bits), [c] "r"(FM_EKEY_C)                                                           \
                : "cc");                                                                                      \
        (dst) = (uint16_t)t_;                                                                                 \
    } while (0)
#define FM_EKEY_BAD(bad) (bad) /* the number of non-finite values */
#define FM_NO_MERGE() ((void)0)
#elif defined(FM_PORT_GNU) && (defined(__x86_64__) || defined(__i386__))
/* `cmp` sets CF iff t < key (keys fm_ukey16). */
#define FM_HEAP_STEP(l, k, t) __asm__("cmp %1, %2\n\tadc %0, %0" : "+r"(l) : "r"(k), "r"(t) : "cc")
#define FM_HEAP_ROOT(l, k, t, one) FM_ROOT_BY_STEP(FM_HEAP_STEP, l, k, t, one)
#endif

/* A root step made of a step (x86: no add-with-carry form that starts from a constant): l = one, then STEP. */
#define FM_ROOT_BY_STEP(STEP, l, a, b, one)                                                                   \
    do {                                                                                                      \
        (l) = (one);                                                                                          \
        STEP(l, a, b);                                                                                        \
    } while (0)

/* Thumb-2 with a single-precision FPU: `vcmpe t, x` leaves C = !(x > t) for ordered operands (a NaN
 * branches either way: the marked NaN fails the prediction), so l = (l + l + C) ^ 1. */
#if defined(FM_PORT_GNU) && defined(__arm__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4) &&       \
    !defined(__SOFTFP__)
#define FM_F32_GT_ROOT(l, xv, tv, one)                                                                        \
    __asm__("vcmpe.f32 %1, %2\n\tvmrs APSR_nzcv, FPSCR\n\tadc %0, %3, %3\n\teor %0, %0, #1"                  \
            : "=r"(l)                                                                                         \
            : "t"(tv), "t"(xv), "r"(one)                                                                      \
            : "cc")
#define FM_F32_GT_STEP(l, xv, tv)                                                                             \
    __asm__("vcmpe.f32 %1, %2\n\tvmrs APSR_nzcv, FPSCR\n\tadc %0, %0, %0\n\teor %0, %0, #1"                  \
            : "+r"(l)                                                                                         \
            : "t"(tv), "t"(xv)                                                                                \
            : "cc")
#endif

/* x86-64 (SSE): `comiss x, t` sets CF iff t < x, i.e. x > t for ordered operands (a NaN sets CF and goes
 * right: the marked NaN fails the prediction), so l = l + l + CF with x straight from memory: 5
 * instructions per node (feature, threshold, comiss, mark, adc) instead of 7 (seta + lea index). */
#if defined(FM_PORT_GNU) && defined(__x86_64__) && !defined(FM_F32_GT_STEP)
#define FM_F32_GT_STEP(l, xv, tv) __asm__("comiss %1, %2\n\tadc %0, %0" : "+r"(l) : "m"(xv), "x"(tv) : "cc")
#define FM_F32_GT_ROOT(l, xv, tv, one) FM_ROOT_BY_STEP(FM_F32_GT_STEP, l, xv, tv, one)
#endif

/* x86 with SSE2: FM_ANY_NONFINITE(x, n) is nonzero when some x[0..n) is NaN or infinite (and when a lane's
 * float sum overflows: a superset, for a caller that then tests exactly). Four floats a step, 2
 * instructions (movups, addps); the lanes' exponents tested as integers. */
#if defined(FM_PORT_GNU) && defined(__SSE2__)
#include <emmintrin.h>
#include <stdint.h>
#include <string.h>
static inline uint32_t fm_port_any_nonfinite(const float *x, uint32_t n)
{
    const float *const end4 = x + (n & ~3u);
    const float *const end = x + n;
    __m128 s = _mm_setzero_ps();
    __m128i e;
    uint32_t bad = 0u;
    for (; x != end4; x += 4) {
        s = _mm_add_ps(s, _mm_loadu_ps(x));
    }
    for (; x != end; ++x) {
        uint32_t b;
        memcpy(&b, x, sizeof b);
        bad |= ((b & 0x7f800000u) + 0x00800000u) & 0x80000000u;
    }
    e = _mm_castps_si128(s);
    e = _mm_cmpeq_epi8(_mm_add_epi32(e, e), _mm_set1_epi8(-1));
    return bad | (uint32_t)(_mm_movemask_epi8(e) & 0x8888);
}
#define FM_ANY_NONFINITE(x, n) fm_port_any_nonfinite(x, n)
#endif

/* Thumb-2: two floats' bits from x, x += 2, one ldrd with write-back (any two registers). */
#if defined(FM_PORT_GNU) && defined(__thumb2__)
#define FM_LOAD2(b0, b1, x) __asm__("ldrd %0, %1, [%2], #8" : "=r"(b0), "=r"(b1), "+r"(x) : "m"(*(const float(*)[2])(x)))
#endif

#if defined(FM_PORT_GNU)
#define FM_I16(v) ((int32_t)(int16_t)(v))
#endif

/* Cortex-M Thumb-2: FM_NBK_ADD(acc, e, nw), the K-class NB q15 adds of packed words acc[j] += e[j] for
 * j < nw (fm_nb.c nbk_q15_add; uint32, two class lanes a word), acc and e 4-byte aligned, nw >= 1. Per pair
 * of words (four classes): one ldm of the entries, one ldm and one stm of the sums, two adds, the loop: 7;
 * then a single word (nw & 1: 4). Four scratch registers, so the walk around it keeps its own. */
#if defined(FM_PORT_GNU) && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define FM_NBK_ADD(acc, e, nw)                                                                                  \
    do {                                                                                                        \
        uint32_t *a_ = (acc);                                                                                   \
        const uint32_t *e_ = (e);                                                                               \
        const uint32_t c_ = (nw);                                                                               \
        uint32_t n_ = c_;                                                                                       \
        __asm__ volatile("lsrs %[n], %[n], #1\n\t"                                                             \
                         "beq 2f\n"                                                                             \
                         "1:\tldmia %[ep]!, {r4, r5}\n\t"                                                       \
                         "ldm %[ap], {r6, r8}\n\t"                                                              \
                         "add r6, r6, r4\n\t"                                                                   \
                         "add r8, r8, r5\n\t"                                                                   \
                         "stmia %[ap]!, {r6, r8}\n\t"                                                           \
                         "subs %[n], %[n], #1\n\t"                                                              \
                         "bne 1b\n"                                                                             \
                         "2:\ttst %[cnt], #1\n\t"                                                              \
                         "beq 3f\n\t"                                                                          \
                         "ldr r4, [%[ep]]\n\t"                                                                 \
                         "ldr r6, [%[ap]]\n\t"                                                                 \
                         "add r6, r6, r4\n\t"                                                                   \
                         "str r6, [%[ap]]\n"                                                                   \
                         "3:\n"                                                                                 \
                         : [ap] "+&r"(a_), [ep] "+&r"(e_), [n] "+&r"(n_)                                         \
                         : [cnt] "r"(c_)                                                                         \
                         : "r4", "r5", "r6", "r8", "cc", "memory");                                             \
    } while (0)
#endif

/* Cortex-M Thumb-2: FM_NBK_SEG(o, ek, row, x, ctx), the K-class NB q15 two-edge walk over one segment
 * (fm_nb.c nbk_q15_vec2): for each position from o (order pointer) to ctx->end (o != end on entry), the
 * value's bits x[*o], a NaN or infinite one ending the walk with o = NULL, its key (fm_key_bits), the slot
 * (+0 and -0: 0, else 1 + the edges ek[0], ek[1] below the key, signed), then the nw = ctx->nwb / 4 packed
 * words of that slot's row added to ctx->acc (the odd word first, then pairs by ldm / stm); ek advances 2,
 * row 4 * nw words a position. The walk's state stays in registers: 46 instructions a position at nw = 5. */
#if defined(FM_PORT_GNU) && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define FM_NBK_SEG(o, ek, row, x, ctx)                                                                        \
    __asm__ volatile("1:\tldr r4, [%[op]], #4\n\t"                                                           \
                     "ldr r4, [%[xp], r4, lsl #2]\n\t"                                                      \
                     "and r5, r4, #0x7f800000\n\t"                                                           \
                     "cmp r5, #0x7f800000\n\t"                                                               \
                     "beq 9f\n\t"                                                                           \
                     "cmp r4, #0\n\t"                                                                       \
                     "itt lt\n\t"                                                                           \
                     "biclt r4, r4, #0x80000000\n\t"                                                         \
                     "neglt r4, r4\n\t"                                                                     \
                     "ldmia %[ep]!, {r5, r6}\n\t"                                                           \
                     "ldr r11, [%[cp], #8]\n\t"                                                             \
                     "mov r9, %[rp]\n\t"                                                                    \
                     "cbz r4, 2f\n\t"                                                                       \
                     "add r9, r9, r11\n\t"                                                                  \
                     "cmp r5, r4\n\t"                                                                       \
                     "it lt\n\t"                                                                            \
                     "addlt r9, r9, r11\n\t"                                                                \
                     "cmp r6, r4\n\t"                                                                       \
                     "it lt\n\t"                                                                            \
                     "addlt r9, r9, r11\n"                                                                   \
                     "2:\tadd %[rp], %[rp], r11, lsl #2\n\t"                                                 \
                     "ldr r10, [%[cp], #4]\n\t"                                                             \
                     "lsrs r11, r11, #3\n\t"                                                                \
                     "bcc 3f\n\t"                                                                           \
                     "ldr r4, [r9], #4\n\t"                                                                 \
                     "ldr r5, [r10]\n\t"                                                                    \
                     "add r5, r5, r4\n\t"                                                                   \
                     "str r5, [r10], #4\n"                                                                   \
                     "3:\tbeq 5f\n"                                                                          \
                     "4:\tldmia r9!, {r4, r5}\n\t"                                                           \
                     "ldm r10, {r6, r8}\n\t"                                                                \
                     "add r6, r6, r4\n\t"                                                                   \
                     "add r8, r8, r5\n\t"                                                                   \
                     "stmia r10!, {r6, r8}\n\t"                                                             \
                     "subs r11, r11, #1\n\t"                                                                \
                     "bne 4b\n"                                                                              \
                     "5:\tldr r4, [%[cp]]\n\t"                                                              \
                     "cmp %[op], r4\n\t"                                                                    \
                     "bne 1b\n\t"                                                                           \
                     "b 8f\n"                                                                                \
                     "9:\tmov %[op], #0\n"                                                                   \
                     "8:\n"                                                                                  \
                     : [op] "+r"(o), [ep] "+r"(ek), [rp] "+r"(row)                                            \
                     : [xp] "r"(x), [cp] "r"(ctx)                                                             \
                     : "r4", "r5", "r6", "r8", "r9", "r10", "r11", "cc", "memory")
#endif

/* Cortex-M (Thumb-2, M profile): the NB q15 step loop, nb_q15_hot_run's contract (fm_nb.c). One ldm loads a
 * step (feature, above[0], above[1], d12, d30, key into r4-r6, r8-r10; r7 stays free for a frame pointer),
 * the value's bits replace the feature, and the raw bits are compared unsigned: below above[1] and at or
 * above above[0] adds d[2] (d12 asr 16); below above[0] adds d[1] (sxth d12), or d[0] for +0 (sxth d30); at
 * or above above[1] adds d[3] (d30 asr 16) unless the step leaves (above[1] == 0) or the bits are those of
 * a negative, infinite or NaN value (>= 0x7f800000), which end the loop with r past that step. */
#if defined(FM_PORT_GNU) && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define FM_NB_HOT_PAST 1u /* the loop leaves r past the step that left (its ldm writes back) */
#define FM_NB_HOT_RUN(r, x, acc)                                                                                \
    __asm__ volatile("1:\tldmia %[rp]!, {r4, r5, r6, r8, r9, r10}\n\t"                                        \
                     "ldr r4, [%[xp], r4, lsl #2]\n\t"                                                        \
                     "cmp r4, r6\n\t"                                                                         \
                     "bhs 3f\n\t"                                                                             \
                     "cmp r4, r5\n\t"                                                                         \
                     "blo 2f\n\t"                                                                             \
                     "add %[a], %[a], r8, asr #16\n\t"                                                        \
                     "b 1b\n"                                                                                 \
                     "2:\tcbz r4, 4f\n\t"                                                                     \
                     "sxth r8, r8\n\t"                                                                        \
                     "add %[a], %[a], r8\n\t"                                                                 \
                     "b 1b\n"                                                                                 \
                     "4:\tsxth r9, r9\n\t"                                                                    \
                     "add %[a], %[a], r9\n\t"                                                                 \
                     "b 1b\n"                                                                                 \
                     "3:\tcbz r6, 5f\n\t"                                                                     \
                     "cmp r4, #0x7f800000\n\t"                                                                \
                     "bhs 5f\n\t"                                                                             \
                     "add %[a], %[a], r9, asr #16\n\t"                                                        \
                     "b 1b\n"                                                                                 \
                     "5:\n"                                                                                   \
                     : [rp] "+r"(r), [a] "+r"(acc)                                                            \
                     : [xp] "r"(x)                                                                            \
                     : "r4", "r5", "r6", "r8", "r9", "r10", "cc", "memory")
#endif

/* Cortex-M0/M0+ (Thumb-1, ARMv6-M): the same step loop in the eight low registers. One ldm loads feature,
 * above[0], above[1] and d12 into r3-r6 (the step's first 16 bytes; rp, acc and x take three of r0-r2 and r7,
 * so a frame pointer in r7 leaves room), d30 is loaded only for +0 and the last interval, and an exit moves r
 * back to the step that left (FM_NB_HOT_PAST 0, as the C loop: the walk then reads that step with no move).
 * Thumb-1 compares take no large immediate: the exponent test is (b >> 23) > 254, true for the bits of a
 * negative, infinite or NaN value. 11 instructions for a middle interval, 13 for the first, 14 for +0, 15 for
 * the last (GCC's Thumb-1 code of the C loop: 13, 16, 16, 15). */
#if defined(FM_PORT_GNU) && defined(__thumb__) && !defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) &&     \
    __ARM_ARCH_PROFILE == 'M'
#define FM_NB_HOT_PAST 0u
#define FM_NB_HOT_RUN(r, x, acc)                                                                                \
    __asm__ volatile(".syntax unified\n" /* GCC hands Thumb-1 inline asm the divided syntax */              \
                     "1:\tldmia %[rp]!, {r3, r4, r5, r6}\n\t"                                                 \
                     "lsls r3, r3, #2\n\t"                                                                   \
                     "ldr r3, [%[xp], r3]\n\t"                                                               \
                     "cmp r3, r5\n\t"                                                                        \
                     "bhs 3f\n\t"                                                                            \
                     "cmp r3, r4\n\t"                                                                        \
                     "blo 2f\n\t"                                                                            \
                     "asrs r6, r6, #16\n\t"                                                                  \
                     "adds %[rp], #8\n\t"                                                                    \
                     "adds %[a], %[a], r6\n\t"                                                               \
                     "b 1b\n"                                                                                 \
                     "2:\tcmp r3, #0\n\t"                                                                   \
                     "beq 4f\n\t"                                                                            \
                     "sxth r6, r6\n\t"                                                                       \
                     "adds %[rp], #8\n\t"                                                                    \
                     "adds %[a], %[a], r6\n\t"                                                               \
                     "b 1b\n"                                                                                 \
                     "4:\tldr r6, [%[rp]]\n\t"                                                              \
                     "sxth r6, r6\n\t"                                                                       \
                     "adds %[rp], #8\n\t"                                                                    \
                     "adds %[a], %[a], r6\n\t"                                                               \
                     "b 1b\n"                                                                                 \
                     "3:\tcmp r5, #0\n\t"                                                                   \
                     "beq 5f\n\t"                                                                            \
                     "lsrs r4, r3, #23\n\t"                                                                  \
                     "cmp r4, #254\n\t"                                                                      \
                     "bhi 5f\n\t"                                                                            \
                     "ldr r6, [%[rp]]\n\t"                                                                   \
                     "asrs r6, r6, #16\n\t"                                                                  \
                     "adds %[rp], #8\n\t"                                                                    \
                     "adds %[a], %[a], r6\n\t"                                                               \
                     "b 1b\n"                                                                                 \
                     "5:\tsubs %[rp], #16\n"                                                                 \
                     : [rp] "+l"(r), [a] "+l"(acc)                                                            \
                     : [xp] "l"(x)                                                                            \
                     : "r3", "r4", "r5", "r6", "cc", "memory")
#endif

/* Cortex-M0/M0+ (Thumb-1): FM_NBK_SEG, the Thumb-2 segment walk's contract in the eight low registers. The
 * walk's pointers are pinned (o, ek, row, x, ctx in r0-r4) and the segment's constants moved once into high
 * registers (x r8, the end r9, the sums r10, a row's bytes r11, a position's r12); ek waits on the stack while
 * r1 walks the slot's row. The key is the value's bits for a positive value, minus its magnitude for a negative
 * one; +0 and -0 (a zero magnitude) take slot 0 with no key; the edges are sorted (fm_nbk_q15_check), so a key
 * at or below ek[0] takes slot 1 with one test. The row is added a word at a time (Thumb-1 has no ldm without
 * write-back to load the sums in pairs) in a block of eight unrolled words entered part-way (lr: the entry,
 * computed once a segment, so that the first pass adds nw mod 8 words, or 8), with one end test a pass: 30 +
 * 4 nw instructions a position between the edges for nw <= 8 (50 at nw = 5), where GCC's Thumb-1 code of the C
 * loop keeps the walk's state on the stack (tests/test_nb_floor.py: digits nb-stop, 103.6 instructions a
 * feature read with it). r7 is not touched: a frame pointer there leaves room. */
#if defined(FM_PORT_GNU) && defined(__thumb__) && !defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) &&     \
    __ARM_ARCH_PROFILE == 'M'
#define FM_NBK_SEG(o, ek, row, x, ctx)                                                                        \
    do {                                                                                                      \
        register const uint32_t *fm_o_ __asm__("r0") = (o);                                                   \
        register const int32_t *fm_e_ __asm__("r1") = (ek);                                                   \
        register const uint32_t *fm_r_ __asm__("r2") = (row);                                                 \
        register const float *fm_x_ __asm__("r3") = (x);                                                      \
        register const nbk_seg *fm_c_ __asm__("r4") = (ctx);                                                  \
        __asm__ volatile(".syntax unified\n\t" /* GCC hands Thumb-1 inline asm the divided syntax */        \
                         "mov r8, r3\n\t"                                                                     \
                         "ldr r5, [r4]\n\t"                                                                   \
                         "mov r9, r5\n\t"                                                                     \
                         "ldr r5, [r4, #4]\n\t"                                                               \
                         "mov r10, r5\n\t"                                                                    \
                         "ldr r5, [r4, #8]\n\t"                                                               \
                         "mov r11, r5\n\t"                                                                    \
                         "lsls r6, r5, #2\n\t"                                                                \
                         "mov r12, r6\n\t"                                                                    \
                         "lsrs r6, r5, #2\n\t"       /* nw */                                                 \
                         "subs r6, r6, #1\n\t"                                                                \
                         "movs r4, #7\n\t"                                                                    \
                         "ands r6, r4\n\t"           /* (nw - 1) mod 8: the first pass adds 1 + that */       \
                         "lsls r6, r6, #3\n\t"       /* 8 bytes a word */                                     \
                         "adr r4, 5f\n\t"                                                                     \
                         "adds r4, #56\n\t"                                                                   \
                         "subs r4, r4, r6\n\t"                                                                \
                         "mov lr, r4\n"                                                                       \
                         "1:\tldmia r0!, {r4}\n\t"                                                            \
                         "lsls r4, r4, #2\n\t"                                                                \
                         "add r4, r8\n\t"                                                                     \
                         "ldr r4, [r4]\n\t"                                                                   \
                         "lsls r5, r4, #1\n\t"                                                                \
                         "beq 6f\n\t"                                                                         \
                         "lsrs r6, r5, #24\n\t"                                                               \
                         "cmp r6, #255\n\t"                                                                   \
                         "beq 9f\n\t"                                                                         \
                         "cmp r4, #0\n\t"                                                                     \
                         "bge 2f\n\t"                                                                         \
                         "lsrs r4, r5, #1\n\t"                                                                \
                         "rsbs r4, r4, #0\n"                                                                  \
                         "2:\tldmia r1!, {r5, r6}\n\t"                                                        \
                         "push {r1}\n\t"                                                                      \
                         "mov r1, r2\n\t"                                                                     \
                         "add r1, r11\n\t"                                                                    \
                         "cmp r5, r4\n\t"                                                                     \
                         "bge 4f\n\t"                                                                         \
                         "add r1, r11\n\t"                                                                    \
                         "cmp r6, r4\n\t"                                                                     \
                         "bge 4f\n\t"                                                                         \
                         "add r1, r11\n"                                                                      \
                         "4:\tmov r5, r10\n\t"                                                                \
                         "mov r6, r1\n\t"                                                                     \
                         "add r6, r11\n\t"                                                                    \
                         "mov pc, lr\n\t"                                                                     \
                         ".balign 4\n"                                                                        \
                         "5:\t"                                                                               \
                         ".rept 8\n\t" /* the block: eight words */                                           \
                         "ldmia r1!, {r3}\n\t"                                                                \
                         "ldr r4, [r5]\n\t"                                                                   \
                         "adds r4, r4, r3\n\t"                                                                \
                         "stmia r5!, {r4}\n\t"                                                                \
                         ".endr\n\t"                                                                          \
                         "cmp r1, r6\n\t"                                                                     \
                         "bne 5b\n\t"                                                                         \
                         "add r2, r12\n\t"                                                                    \
                         "pop {r1}\n\t"                                                                       \
                         "cmp r0, r9\n\t"                                                                     \
                         "bne 1b\n\t"                                                                         \
                         "b 8f\n"                                                                             \
                         "6:\tadds r1, #8\n\t"                                                                \
                         "push {r1}\n\t"                                                                      \
                         "mov r1, r2\n\t"                                                                     \
                         "b 4b\n"                                                                             \
                         "9:\tmovs r0, #0\n"                                                                  \
                         "8:\n"                                                                               \
                         : "+l"(fm_o_), "+l"(fm_e_), "+l"(fm_r_), "+l"(fm_x_), "+l"(fm_c_)                   \
                         :                                                                                    \
                         : "r5", "r6", "r8", "r9", "r10", "r11", "r12", "lr", "cc", "memory");               \
        (o) = fm_o_;                                                                                          \
        (ek) = fm_e_;                                                                                         \
        (row) = fm_r_;                                                                                        \
    } while (0)
#endif

/* The FPU's square root (IEEE 754: correctly rounded, the same bits as fm_feat_sqrtf's integer routine). */
#if defined(FM_PORT_GNU) && defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4)
static inline float fm_port_sqrtf(float x)
{
    float r;
    __asm__("vsqrt.f32 %0, %1" : "=t"(r) : "t"(x));
    return r;
}
#define FM_SQRTF(x) fm_port_sqrtf(x)
#elif defined(FM_PORT_GNU) && defined(__aarch64__)
static inline float fm_port_sqrtf(float x)
{
    float r;
    __asm__("fsqrt %s0, %s1" : "=w"(r) : "w"(x));
    return r;
}
#define FM_SQRTF(x) fm_port_sqrtf(x)
#elif defined(FM_PORT_GNU) && defined(__x86_64__) && defined(__SSE_MATH__)
static inline float fm_port_sqrtf(float x)
{
    float r;
    __asm__("sqrtss %1, %0" : "=x"(r) : "x"(x));
    return r;
}
#define FM_SQRTF(x) fm_port_sqrtf(x)
#endif

#if defined(FM_PORT_GNU) &&                                                                                    \
    ((defined(__ARM_FEATURE_CLZ) && defined(__ARM_FEATURE_IDIV)) || defined(__aarch64__) || defined(__x86_64__))
#define FM_CLZ32(v) ((uint32_t)__builtin_clz(v))
#endif

#endif /* FM_PORT_H */
