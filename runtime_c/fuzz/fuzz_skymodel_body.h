/* The body of the skymodel harnesses, float32 (fuzz_skymodel.c) and q15 (fuzz_skymodel_q15.c): budget-indexed
 * models (fm_skymodel.h) over NB, linear or K-class linear bases: check, then predictions under fuzzed budgets
 * and sizes, eager and lazy. Not a public header: no include guard on purpose. The includer defines
 *   SKY_T, SKY_FN(n)      the model type and its calls (fm_skymodel or fm_skymodel_q15)
 *   SKY_NB_T, SKY_LIN_T   the NB and linear model types
 *   SKY_NB, SKY_LIN       the builders of fuzz_build.h (fz_nb[_q15], fz_linear[_q15])
 *   SKY_COST_T, SKY_COSTS the linear costs' type and reader (float / fz_floats, uint16_t / fz_u16s)
 *   SKY_SAME_SCALE(to, from)  make K-class scorer `to` share `from`'s scales (q15), or nothing
 */
#include <math.h>

#include "fuzz_build.h"
#include "fuzz_skyline.h"
#include "fm_skymodel.h"

typedef struct {
    const SKY_T *m;
    double budget, size;
    int defaults; /* budget and size are the model's defaults: the eager call is SKY_FN(predict_vec) */
} ctx;

static int eager(const void *c, const float *x, uint32_t n, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    if (k->defaults) {
        return SKY_FN(predict_vec)(k->m, x, n, out);
    }
    return SKY_FN(predict_vec_at)(k->m, x, n, k->budget, k->size, out, NULL);
}

/* through the caller scratch of SKY_FN(scratch_size) / _init (0 bytes for the NB base) */
static int lazy(const void *c, const fm_reader *r, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    fz_scratch buf;
    fm_memo memo;
    double spent = -1.0;
    const size_t size = SKY_FN(scratch_size)(k->m);
    int rc;
    fz_scratch_fits(size, size > 0u ? SKY_FN(scratch_init)(k->m, &buf, size - 4u, &memo) : FM_E_ARG);
    fz_require(SKY_FN(scratch_init)(k->m, &buf, size, &memo) == FM_OK);
    rc = SKY_FN(predict)(k->m, r, &memo, k->budget, k->size, out, &spent);
    /* the spent cost is the chosen model's (0 when nothing fits), within the budget */
    fz_require(rc != FM_OK || (spent <= k->budget && (float)spent == out->cost));
    fz_require(rc != FM_E_BUDGET || spent == 0.0);
    return rc;
}

/* one budget and size per row (NULL arrays: the defaults) */
static int batch(const void *c, const float *X, uint32_t rows, uint32_t cols, fm_result *out, uint32_t *n_done)
{
    const ctx *k = (const ctx *)c;
    double budget[FZ_ROWS], size[FZ_ROWS], spent[FZ_ROWS];
    uint32_t i;
    fz_require(rows <= FZ_ROWS);
    for (i = 0; i < rows; ++i) {
        budget[i] = k->budget;
        size[i] = k->size;
    }
    return SKY_FN(predict_batch)(k->m, X, rows, cols, k->defaults ? NULL : budget, k->defaults ? NULL : size,
                                     out, spent, n_done);
}

static const size_t skymodel_ptrs[] = {FZ_SKYLINE_PTRS(SKY_T, index.), offsetof(SKY_T, nb), offsetof(SKY_T, linear),
                                        offsetof(SKY_T, lineark)};

#define FZ_SKY_MAX_CLASSES 4u /* K-class linear base: 2 .. 4 scorers per model */

static int check(const void *m)
{
    return SKY_FN(check)((const SKY_T *)m);
}

static int raw(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return SKY_FN(predict_vec)((const SKY_T *)m, x, n, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_skyline_arrays sa;
    fz_nb_arrays nba[FZ_SKY_MAX_MODELS];
    fz_linear_arrays la[FZ_SKY_MAX_MODELS * FZ_SKY_MAX_CLASSES];
    SKY_NB_T nb[FZ_SKY_MAX_MODELS];
    SKY_LIN_T lin[FZ_SKY_MAX_MODELS * FZ_SKY_MAX_CLASSES];
    SKY_COST_T costs[FZ_MAX_FEATURES];
    SKY_T m;
    const fz_nulls nulls = FZ_NULLS(&m, skymodel_ptrs, check, raw);
    ctx k;
    uint32_t i, nf = fz_dim(&in, FZ_MAX_FEATURES);
    memset(&m, 0, sizeof m);
    if (!fz_skyline(&in, &sa, &m.index, nf)) {
        return 0;
    }
    {
        /* base byte % 3: 0 NB, 1 linear, 2 FM_SKY_NBK with no tables here (nbk NULL: refused when the index
         * has models), or FM_SKY_LINEARK when the byte's high bit is set, with 2 + (next byte % 3) classes */
        const uint32_t b = fz_byte(&in);
        m.base = (b % 3u == 2u && (b & 0x80u) != 0u) ? FM_SKY_LINEARK : b % 3u;
    }
    m.n_classes = m.base == FM_SKY_LINEARK ? 2u + fz_byte(&in) % (FZ_SKY_MAX_CLASSES - 1u) : 0u;
    for (i = 0; i < m.index.n_models * (m.base == FM_SKY_LINEARK ? m.n_classes : 1u); ++i) {
        if (m.base == FM_SKY_NB) {
            SKY_NB(&in, &nba[i], &nb[i], nf);
        } else {
            SKY_LIN(&in, &la[i], &lin[i], nf, i == 0 ? FZ_OPTIONAL(&in, SKY_COSTS, costs, nf) : lin[0].costs);
            if (m.base == FM_SKY_LINEARK && i % m.n_classes != 0u && (fz_byte(&in) & 1u) == 0u) {
                SKY_SAME_SCALE(&lin[i], &lin[i - i % m.n_classes]); /* q15: most K-class models keep one unit */
            }
        }
    }
    m.nb = m.base == FM_SKY_NB ? nb : NULL;
    m.linear = m.base == FM_SKY_LINEAR ? lin : NULL;
    m.lineark = m.base == FM_SKY_LINEARK ? lin : NULL;
    m.default_budget = fz_double(&in);
    m.default_size = fz_double(&in);
    if (SKY_FN(check)(&m) != FM_OK) {
        return 0;
    }
    k.m = &m;
    k.budget = fz_double(&in);
    k.size = fz_double(&in);
    k.defaults = isnan(k.budget) || !isfinite(k.size) || k.size < 0.0;
    if (k.defaults) {
        k.budget = m.default_budget;
        k.size = m.default_size;
    }
    fz_run(&in, &k, nf, eager, lazy, batch, &nulls, FM_LABEL_DEFER,
           m.base == FM_SKY_LINEARK ? (int32_t)m.n_classes - 1 : 1);
    return 0;
}
