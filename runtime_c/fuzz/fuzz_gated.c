/* libFuzzer harness: gated low-cost / high-cost models (fm_gated.h), float32 and q15. */
#include "fuzz_build.h"
#include "fm_gated.h"

#define FZ_K 4u /* class scorers of a K-linear part: 1 (refused) .. FZ_K */

typedef struct {
    fz_linear_arrays lin[3];
    fz_trees_arrays trees[3];
    fz_linear_arrays klin[3][FZ_K];
    fm_linear kf[3][FZ_K];
    fm_linear_q15 kq[3][FZ_K];
} gated_arrays;

#define OUTPUTS_FIT(m) fz_require(fm_gated_max_outputs(m) <= FZ_MAX_OUTPUTS)
#define OUTPUTS_FIT_Q15(m) fz_require(fm_gated_q15_max_outputs(m) <= FZ_MAX_OUTPUTS)
FZ_SCRATCH_ADAPTERS(f32, fm_gated, fm_gated, float, OUTPUTS_FIT)
FZ_SCRATCH_ADAPTERS(q15, fm_gated_q15, fm_gated_q15, int32_t, OUTPUTS_FIT_Q15)
FZ_CHECK_ADAPTER(f32, fm_gated, fm_gated)
FZ_CHECK_ADAPTER(q15, fm_gated_q15, fm_gated_q15)

#define PART_PTRS(T, L, TR, at) L(T, at.linear.), TR(T, at.trees.)
static const size_t gated_ptrs[] = {PART_PTRS(fm_gated, FZ_LINEAR_PTRS, FZ_TREES_PTRS, gate),
                                    PART_PTRS(fm_gated, FZ_LINEAR_PTRS, FZ_TREES_PTRS, f1),
                                    PART_PTRS(fm_gated, FZ_LINEAR_PTRS, FZ_TREES_PTRS, f0)};
static const size_t gated_q15_ptrs[] = {PART_PTRS(fm_gated_q15, FZ_LINEAR_Q15_PTRS, FZ_TREES_Q15_PTRS, gate),
                                        PART_PTRS(fm_gated_q15, FZ_LINEAR_Q15_PTRS, FZ_TREES_Q15_PTRS, f1),
                                        PART_PTRS(fm_gated_q15, FZ_LINEAR_Q15_PTRS, FZ_TREES_Q15_PTRS, f0)};

/* A K-linear part's scale flag and its use: q15 reads a byte (most models have one scale: the check refuses
 * the others) and gives scorer c > 0 the shifts of scorer 0; float32 reads nothing. */
#define fz_f32_same(in) ((void)(in), 0)
#define fz_q15_same(in) ((int)(fz_byte(in) & 1u))
#define fz_f32_same_scale(k, c, same) ((void)(k), (void)(c), (void)(same))
static void fz_q15_same_scale(fm_linear_q15 *k, uint32_t c, int same)
{
    if (same && c > 0u) {
        k[c].in_shift = k[0].in_shift;
        k[c].w_shift = k[0].w_shift;
    }
}

/* part_SFX: a part (struct P, costs of type TC): its type byte (0 linear, 1 trees, 2 remote, 3 K-linear,
 * 4 margin, 5 invalid), then the chosen block (LIN, TREES); a margin part: a whole linear block too, whose
 * decision threshold is the margin threshold (the rest, tables included, must go unread: null-each); a
 * K-linear part: the scale flag (fz_SFX_same), a count byte (1 + count % FZ_K scorers), then each scorer into
 * a->KS. */
#define GATED_PART(SFX, P, TC, LIN, TREES, KS)                                                                \
    static void part_##SFX(fz_in *in, gated_arrays *a, unsigned i, P *p, uint32_t nf, const TC *costs)        \
    {                                                                                                         \
        uint32_t c;                                                                                           \
        memset(p, 0, sizeof *p);                                                                              \
        p->type = fz_byte(in) % 6u;                                                                           \
        if (p->type == FM_PART_LINEAR || p->type == FM_PART_MARGIN) {                                         \
            LIN(in, &a->lin[i], &p->linear, nf, costs);                                                       \
        } else if (p->type == FM_PART_TREES) {                                                                \
            TREES(in, &a->trees[i], &p->trees, nf, costs);                                                    \
        } else if (p->type == FM_PART_LINEAR_K) {                                                             \
            const int same = fz_##SFX##_same(in);                                                             \
            p->n_classes = 1u + fz_byte(in) % FZ_K;                                                           \
            for (c = 0u; c < p->n_classes; ++c) {                                                             \
                LIN(in, &a->klin[i][c], &a->KS[i][c], nf, costs);                                             \
                fz_##SFX##_same_scale(a->KS[i], c, same);                                                     \
            }                                                                                                 \
            p->classes = a->KS[i];                                                                            \
        }                                                                                                     \
    }

GATED_PART(f32, fm_gated_part, float, fz_linear, fz_trees, kf)
GATED_PART(q15, fm_gated_part_q15, uint16_t, fz_linear_q15, fz_trees_q15, kq)

/* Builds gated model m (struct T; costs of type TC read by FC into buf) part by part (part_SFX) and runs
 * the accepted model through fz_run. */
#define GATED_RUN(T, SFX, PTRS, TC, FC, buf)                                                                  \
    do {                                                                                                      \
        T m;                                                                                                  \
        const fz_nulls nulls = FZ_NULLS(&m, PTRS, check_##SFX, eager_##SFX);                                  \
        const TC *costs = FZ_OPTIONAL(&in, FC, buf, nf);                                                      \
        m.n_features = nf;                                                                                    \
        m.gate_above = above;                                                                                 \
        part_##SFX(&in, &a, 0, &m.gate, nf, costs);                                                           \
        part_##SFX(&in, &a, 1, &m.f1, nf, costs);                                                             \
        part_##SFX(&in, &a, 2, &m.f0, nf, costs);                                                             \
        if (check_##SFX(&m) == FM_OK) {                                                                       \
            fz_run(&in, &m, nf, eager_##SFX, lazy_##SFX, batch_##SFX, FZ_TREE_NULLS(&nulls), FM_LABEL_DEFER,  \
                   FZ_MAX_OUTPUTS);                                                                           \
        }                                                                                                     \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    gated_arrays a;
    float costs_f[FZ_MAX_FEATURES];
    uint16_t costs_u[FZ_MAX_FEATURES];
    int q = fz_byte(&in) & 1u;
    uint32_t nf = fz_dim(&in, FZ_MAX_FEATURES), above = fz_byte(&in) % 3u;
    if (!q) {
        GATED_RUN(fm_gated, f32, gated_ptrs, float, fz_floats, costs_f);
    } else {
        GATED_RUN(fm_gated_q15, q15, gated_q15_ptrs, uint16_t, fz_u16s, costs_u);
    }
    return 0;
}
