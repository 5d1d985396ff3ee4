/* libFuzzer harness: budget-indexed models (fm_skymodel.h) over NB, linear or K-class linear bases: check,
 * then predictions under fuzzed budgets and sizes, eager and lazy. */
#include <math.h>

#include "fuzz_build.h"
#include "fuzz_skyline.h"
#include "fm_skymodel.h"

typedef struct {
    const fm_skymodel *m;
    double budget, size;
    int defaults; /* budget and size are the model's defaults: the eager call is fm_skymodel_predict_vec */
} ctx;

static int eager(const void *c, const float *x, uint32_t n, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    if (k->defaults) {
        return fm_skymodel_predict_vec(k->m, x, n, out);
    }
    return fm_skymodel_predict_vec_at(k->m, x, n, k->budget, k->size, out, NULL);
}

/* through the caller scratch of fm_skymodel_scratch_size / _init (0 bytes for the NB base) */
static int lazy(const void *c, const fm_reader *r, fm_result *out)
{
    const ctx *k = (const ctx *)c;
    fz_scratch buf;
    fm_memo memo;
    double spent = -1.0;
    const size_t size = fm_skymodel_scratch_size(k->m);
    int rc;
    fz_scratch_fits(size, size > 0u ? fm_skymodel_scratch_init(k->m, &buf, size - 4u, &memo) : FM_E_ARG);
    fz_require(fm_skymodel_scratch_init(k->m, &buf, size, &memo) == FM_OK);
    rc = fm_skymodel_predict(k->m, r, &memo, k->budget, k->size, out, &spent);
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
    return fm_skymodel_predict_batch(k->m, X, rows, cols, k->defaults ? NULL : budget, k->defaults ? NULL : size,
                                     out, spent, n_done);
}

static const size_t skymodel_ptrs[] = {FZ_SKYLINE_PTRS(fm_skymodel, index.), offsetof(fm_skymodel, nb),
                                        offsetof(fm_skymodel, linear), offsetof(fm_skymodel, lineark)};

#define FZ_SKY_MAX_CLASSES 4u /* K-class linear base: 2 .. 4 scorers per model */

static int check(const void *m)
{
    return fm_skymodel_check((const fm_skymodel *)m);
}

static int raw(const void *m, const float *x, uint32_t n, fm_result *out)
{
    return fm_skymodel_predict_vec((const fm_skymodel *)m, x, n, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_skyline_arrays sa;
    fz_nb_arrays nba[FZ_SKY_MAX_MODELS];
    fz_linear_arrays la[FZ_SKY_MAX_MODELS * FZ_SKY_MAX_CLASSES];
    fm_nb nb[FZ_SKY_MAX_MODELS];
    fm_linear lin[FZ_SKY_MAX_MODELS * FZ_SKY_MAX_CLASSES];
    float costs[FZ_MAX_FEATURES];
    fm_skymodel m;
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
            fz_nb(&in, &nba[i], &nb[i], nf);
        } else {
            fz_linear(&in, &la[i], &lin[i], nf, i == 0 ? FZ_OPTIONAL(&in, fz_floats, costs, nf) : lin[0].costs);
        }
    }
    m.nb = m.base == FM_SKY_NB ? nb : NULL;
    m.linear = m.base == FM_SKY_LINEAR ? lin : NULL;
    m.lineark = m.base == FM_SKY_LINEARK ? lin : NULL;
    m.default_budget = fz_double(&in);
    m.default_size = fz_double(&in);
    if (fm_skymodel_check(&m) != FM_OK) {
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
