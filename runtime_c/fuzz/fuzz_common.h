/*
 * Shared pieces of the libFuzzer harnesses (one per model family): the fuzz
 * input is read as a small header of dimensions followed by the table
 * arrays, then a few input rows. A harness builds the family's struct,
 * calls its check, and only when the tables pass runs predict on the rows,
 * eagerly and lazily, and checks that both agree.
 *
 * Encoding (everything little-endian, missing bytes read as 0):
 *   dimension      one byte, reduced modulo (max + 1)
 *   array          one mode byte, then the elements: mode bit 0 set means
 *                  raw (4 or 2 bytes each, so NaN/inf/huge indices occur),
 *                  clear means small (one signed byte each: an index in
 *                  -128..127, a float k/8) so that consistent tables are
 *                  common enough to reach predict
 *   optional array one flag byte: bit 0 clear means NULL
 *
 * Build: clang -fsanitize=fuzzer,address,undefined (see the Makefile's fuzz
 * targets). Not part of the runtime: harnesses may abort on a broken
 * invariant (that is what the fuzzer reports).
 */
#ifndef FM_FUZZ_COMMON_H
#define FM_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frugalml.h"

#define FZ_MAX_FEATURES 8u /* input vector length bound of every harness */
#define FZ_ROWS 3u         /* input rows predicted per accepted table */

typedef struct {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline uint8_t fz_byte(fz_in *in)
{
    uint8_t b = 0;
    if (in->n > 0) {
        b = *in->p++;
        --in->n;
    }
    return b;
}

static inline uint32_t fz_u32raw(fz_in *in)
{
    uint32_t v = 0;
    unsigned k;
    for (k = 0; k < 4; ++k) {
        v |= (uint32_t)fz_byte(in) << (8u * k);
    }
    return v;
}

/* A dimension in 0..max. */
static inline uint32_t fz_dim(fz_in *in, uint32_t max)
{
    return (uint32_t)fz_byte(in) % (max + 1u);
}

static inline float fz_bits_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline double fz_double(fz_in *in)
{
    uint8_t mode = fz_byte(in);
    if (mode & 1u) {
        uint64_t bits = (uint64_t)fz_u32raw(in) | ((uint64_t)fz_u32raw(in) << 32);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    return (double)(int8_t)fz_byte(in) / 4.0;
}

static inline float fz_float(fz_in *in, uint8_t mode)
{
    return (mode & 1u) ? fz_bits_float(fz_u32raw(in)) : (float)(int8_t)fz_byte(in) / 8.0f;
}

static inline void fz_floats(fz_in *in, float *a, uint32_t n)
{
    uint8_t mode = fz_byte(in);
    uint32_t i;
    for (i = 0; i < n; ++i) {
        a[i] = fz_float(in, mode);
    }
}

static inline void fz_doubles(fz_in *in, double *a, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; ++i) {
        a[i] = fz_double(in);
    }
}

static inline void fz_i32s(fz_in *in, int32_t *a, uint32_t n)
{
    uint8_t mode = fz_byte(in);
    uint32_t i;
    for (i = 0; i < n; ++i) {
        a[i] = (mode & 1u) ? (int32_t)fz_u32raw(in) : (int32_t)(int8_t)fz_byte(in);
    }
}

static inline void fz_u32s(fz_in *in, uint32_t *a, uint32_t n)
{
    uint8_t mode = fz_byte(in);
    uint32_t i;
    for (i = 0; i < n; ++i) {
        a[i] = (mode & 1u) ? fz_u32raw(in) : (uint32_t)fz_byte(in) % 16u;
    }
}

static inline void fz_i16s(fz_in *in, int16_t *a, uint32_t n)
{
    uint8_t mode = fz_byte(in);
    uint32_t i;
    for (i = 0; i < n; ++i) {
        uint32_t lo = fz_byte(in);
        a[i] = (mode & 1u) ? (int16_t)(uint16_t)(lo | ((uint32_t)fz_byte(in) << 8)) : (int16_t)(int8_t)lo;
    }
}

static inline void fz_u16s(fz_in *in, uint16_t *a, uint32_t n)
{
    uint8_t mode = fz_byte(in);
    uint32_t i;
    for (i = 0; i < n; ++i) {
        uint32_t lo = fz_byte(in);
        a[i] = (mode & 1u) ? (uint16_t)(lo | ((uint32_t)fz_byte(in) << 8)) : (uint16_t)lo;
    }
}

/* Optional arrays: NULL unless the flag byte's bit 0 is set. */
#define FZ_OPTIONAL(in, fill, arr, n) ((fz_byte(in) & 1u) ? (fill((in), (arr), (n)), (arr)) : NULL)

/* Lazy reader over a row; reading feature fail_at fails (UINT32_MAX: never). */
typedef struct {
    const float *x;
    uint32_t n;
    uint32_t fail_at;
} fz_row_reader;

static inline int fz_read(void *ctx, uint32_t index, float *value)
{
    const fz_row_reader *r = (const fz_row_reader *)ctx;
    if (index >= r->n || index == r->fail_at) {
        return 1;
    }
    *value = r->x[index];
    return 0;
}

static inline void fz_require(int ok)
{
    if (!ok) {
        abort();
    }
}

static inline int fz_same(const fm_result *a, const fm_result *b)
{
    return a->label == b->label && a->n_read == b->n_read && a->stage == b->stage && a->cost_q == b->cost_q &&
           fm_float_bits(a->cost) == fm_float_bits(b->cost) && a->score_q == b->score_q &&
           fm_float_bits(a->score) == fm_float_bits(b->score);
}

/* -DFZ_STATS: print how many inputs reached predict (accepted tables) and how many rows predicted OK. */
#ifdef FZ_STATS
#include <stdio.h>
static unsigned long fz_accepted, fz_predicted;
__attribute__((destructor)) static void fz_print_stats(void)
{
    fprintf(stderr, "fz_stats: accepted %lu tables, %lu rows predicted (skyline: lookups)\n", fz_accepted, fz_predicted);
}
#define FZ_COUNT(var) (++(var))
#else
#define FZ_COUNT(var) ((void)0)
#endif

/* One family's view for fz_run: eager and lazy prediction of one row, and optionally the batch form
 * over rows x cols (row-major; *n_done rows done). */
typedef int (*fz_eager_fn)(const void *model, const float *x, uint32_t n, fm_result *out);
typedef int (*fz_lazy_fn)(const void *model, const fm_reader *r, fm_result *out);
typedef int (*fz_batch_fn)(const void *model, const float *X, uint32_t rows, uint32_t cols, fm_result *out,
                           uint32_t *n_done);

/* Caller scratch of the batch and lazy forms (fm_<family>_scratch_size / _scratch_init): a 4-aligned
 * buffer of the harness; every model of the harnesses fits in it. */
#define FZ_SCRATCH_WORDS 64u
typedef struct {
    uint32_t w[FZ_SCRATCH_WORDS];
} fz_scratch;

/* A scratch size fits the buffer, and one word less is refused by init_rc. */
static inline void fz_scratch_fits(size_t size, int init_rc_smaller)
{
    fz_require(size <= sizeof(fz_scratch) && size % 4u == 0u);
    fz_require(size == 0u || init_rc_smaller == FM_E_ARG);
}

/* Null-each: every table pointer of an accepted model is set to NULL in turn; the family's check
 * must refuse the model, or the model predicts every row without reading through that pointer
 * (ASan / UBSan report a NULL read). This is how a check that accepts a table layout the
 * predictions do not support (the record layout's NULL order, issue 23) shows without any
 * input bytes: the tables come from the accepted model. */
typedef int (*fz_check_fn)(const void *model);
typedef struct {
    const void *model;     /* the family's struct (not a harness context) */
    size_t size;           /* sizeof that struct */
    const size_t *offsets; /* offsetof each of its pointer fields (nested members too) */
    size_t n_offsets;
    fz_check_fn check;
    fz_eager_fn predict;   /* eager prediction over the struct */
} fz_nulls;

typedef union {
    unsigned char bytes[1024];
    const void *p;
    double d;
    uint64_t u;
} fz_model_copy;

static inline void fz_null_each(const fz_nulls *nl, const float *X, uint32_t rows, uint32_t n_features)
{
    const void *const null = NULL;
    size_t i;
    uint32_t row;
    fz_require(nl->size <= sizeof(fz_model_copy));
    for (i = 0; i < nl->n_offsets; ++i) {
        fz_model_copy copy;
        fz_require(nl->offsets[i] + sizeof null <= nl->size);
        memcpy(copy.bytes, nl->model, nl->size);
        memcpy(copy.bytes + nl->offsets[i], &null, sizeof null);
        if (nl->check(copy.bytes) != FM_OK) {
            continue;
        }
        for (row = 0; row < rows; ++row) {
            fm_result out;
            const int rc = nl->predict(copy.bytes, X + row * n_features, n_features, &out);
            fz_require(rc == FM_OK || rc == FM_E_VALUE || rc == FM_E_BUDGET);
        }
    }
}

/* Predicts FZ_ROWS rows read from the input (n_features floats each):
 * eager and lazy agree on every field; a reader that fails on one feature
 * gives FM_E_READ or, when that feature is not needed, the same result;
 * a successful result reads at most n_features features and has a label in
 * [min_label, max_label]. Then the batch form (when not NULL) over all rows
 * gives the eager results of the rows before the first failing one and
 * that row's status (FM_E_BUDGET does not stop a batch: the row says so). Last, when nulls is not
 * NULL, fz_null_each over the rows. */
static inline void fz_run(fz_in *in, const void *model, uint32_t n_features, fz_eager_fn eager, fz_lazy_fn lazy,
                          fz_batch_fn batch, const fz_nulls *nulls, int32_t min_label, int32_t max_label)
{
    float X[FZ_ROWS * FZ_MAX_FEATURES + 1u];
    fm_result eager_out[FZ_ROWS];
    int eager_rc[FZ_ROWS];
    uint32_t row;
    fz_require(n_features <= FZ_MAX_FEATURES);
    FZ_COUNT(fz_accepted);
    for (row = 0; row < FZ_ROWS; ++row) {
        float *x = X + row * n_features;
        fm_result a, b, c;
        fz_row_reader rr = {x, n_features, UINT32_MAX};
        fm_reader r = {fz_read, &rr};
        int rc_a, rc_b, rc_c;
        fz_floats(in, x, n_features);
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        memset(&c, 0, sizeof c);
        rc_a = eager(model, x, n_features, &a);
        rc_b = lazy(model, &r, &b);
        eager_rc[row] = rc_a;
        eager_out[row] = a;
        fz_require(rc_a == rc_b);
        if (rc_a != FM_OK) {
            fz_require(rc_a == FM_E_VALUE || rc_a == FM_E_BUDGET);
            continue;
        }
        fz_require(fz_same(&a, &b));
        FZ_COUNT(fz_predicted);
        fz_require(a.n_read <= n_features);
        fz_require(a.label >= min_label && a.label <= max_label);
        rr.fail_at = n_features > 0 ? fz_byte(in) % n_features : 0u;
        rc_c = lazy(model, &r, &c);
        fz_require(rc_c == FM_OK || rc_c == FM_E_READ);
        if (rc_c == FM_OK) {
            fz_require(fz_same(&a, &c));
        }
        /* a wrong input length is refused */
        fz_require(eager(model, x, n_features + 1u, &c) == FM_E_ARG);
    }
    if (batch != NULL) {
        fm_result out[FZ_ROWS];
        uint32_t first = 0, done = UINT32_MAX;
        while (first < FZ_ROWS && (eager_rc[first] == FM_OK || eager_rc[first] == FM_E_BUDGET)) {
            ++first;
        }
        memset(out, 0, sizeof out);
        fz_require(batch(model, X, FZ_ROWS, n_features, out, &done) == (first < FZ_ROWS ? eager_rc[first] : FM_OK));
        fz_require(done == first);
        for (row = 0; row < first; ++row) {
            fz_require(fz_same(&out[row], &eager_out[row]));
        }
        /* a wrong row length is refused before any row (fm_nb*_predict_batch leave *n_done unset then) */
        done = UINT32_MAX;
        fz_require(batch(model, X, FZ_ROWS, n_features + 1u, out, &done) == FM_E_ARG);
        fz_require(done == 0u || done == UINT32_MAX);
    }
    if (nulls != NULL) {
        fz_null_each(nulls, X, FZ_ROWS, n_features);
    }
}

/* The fz_nulls of a model struct: FZ_NULLS(&m, offsets array, check, predict). */
#define FZ_NULLS(m, offs, check, predict) {(m), sizeof *(m), (offs), sizeof(offs) / sizeof(offs)[0], (check), (predict)}

#endif /* FM_FUZZ_COMMON_H */
