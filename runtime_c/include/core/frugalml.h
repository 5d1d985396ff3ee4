/*
 * frugalml runtime: common types shared by every model family.
 *
 * Rules for every family (see docs/runtime.md):
 *  - C99, no malloc, no global mutable state, no libm on the hot path;
 *  - tables are const (flash on an MCU);
 *  - features are read lazily through an fm_reader, each at most once per
 *    prediction; the eager form wraps a float vector (fm_vector + fm_vector_read);
 *  - every prediction fills an fm_result (label, score, features read, cost).
 */
#ifndef FRUGALML_H
#define FRUGALML_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model file format version this runtime's tables correspond to
 * (pyruntime/format.py FORMAT_VERSION). */
#define FM_FORMAT_VERSION 2

/* Status of every runtime call that can fail: FM_OK (0) or a negative
 * error. Functions return it as int; fm_strerror(status) gives its one-line
 * message (the same text as pyruntime/errors.py STATUS_MESSAGES). */
typedef enum {
    FM_OK = 0,
    FM_E_ARG = -1,    /* NULL pointer, wrong length, bad argument, model over a stack bound */
    FM_E_READ = -2,   /* the feature callback reported a failure */
    FM_E_VALUE = -3,  /* a feature value is NaN or infinite */
    FM_E_MODEL = -4,  /* the tables are inconsistent (see fm_*_check) */
    FM_E_BUDGET = -5, /* nothing fits the call's budget */
    FM_E_WINDOW = -6, /* features: the window is shorter than a feature needs (or too long for its FFT) */
    FM_E_SAMPLE = -7, /* features: a window sample is NaN or infinite */
    FM_E_CHANNEL = -8, /* features: a channel the window does not have (channel count other than the plan's) */
    FM_E_FEATURE = -9  /* features: unknown feature id or parameter */
} fm_status;

/* Whether a call's fm_result holds an answer to print: FM_OK, or FM_E_BUDGET
 * (a budget index: nothing fits the call's budget; the result is filled in
 * with label FM_LABEL_DEFER, nothing read, cost 0, as `frugalml predict`
 * prints it). Every other status is a failure and leaves the result unspecified. */
#define FM_ANSWERED(status) ((status) == FM_OK || (status) == FM_E_BUDGET)

/* Message of a status code; "unknown status code" for any other value.
 * Never NULL, a string literal (no state). */
const char *fm_strerror(int status);

/* Stack bounds of the eager convenience calls fm_<family>[_q15]_predict_vec
 * (FM_PREDICT_VEC), which keep their scratch on the stack (no malloc): the
 * model's n_features <= FM_VEC_MAX_FEATURES and its score outputs <=
 * FM_VEC_MAX_OUTPUTS, else the call returns FM_E_ARG. Stack use is about 5
 * bytes per feature (7 in q15 tree families) + 4 per output. Override with
 * -D when compiling the runtime. The reader-based and batch calls take
 * caller scratch (fm_<family>[_q15]_scratch_size) and have no bound. */
#ifndef FM_VEC_MAX_FEATURES
#define FM_VEC_MAX_FEATURES 512u
#endif
#ifndef FM_VEC_MAX_OUTPUTS
#define FM_VEC_MAX_OUTPUTS 64u
#endif
#if defined(FM_CASCADE_VEC_MAX_FEATURES) || defined(FM_CASCADE_VEC_MAX_OUTPUTS) || \
    defined(FM_GATED_VEC_MAX_FEATURES) || defined(FM_GATED_VEC_MAX_OUTPUTS) || \
    defined(FM_CSTC_VEC_MAX_FEATURES) || defined(FM_SKYMODEL_MAX_FEATURES) || \
    defined(FM_TREES_VEC_MAX_FEATURES) || defined(FM_TREES_VEC_MAX_OUTPUTS)
#error "the per-family stack bounds are now FM_VEC_MAX_FEATURES and FM_VEC_MAX_OUTPUTS (frugalml.h)"
#endif

/* A label that means "this input must be answered elsewhere". */
#define FM_LABEL_DEFER (-1)

/* Lazy feature access: write feature `index` to *value, return 0 on
 * success, non-zero on failure (the prediction then fails with FM_E_READ). */
typedef int (*fm_read_fn)(void *ctx, uint32_t index, float *value);

typedef struct {
    fm_read_fn read;
    void *ctx;
} fm_reader;

/* Outcome of one prediction. */
typedef struct {
    int32_t label;     /* class index (0 .. n_classes-1) or FM_LABEL_DEFER */
    float score;       /* float32 models: decision score */
    int32_t score_q;   /* fixed-point models: decision score in table units */
    uint32_t n_read;   /* distinct features read */
    float cost;        /* summed acquisition cost of the features read */
    uint32_t stage;    /* stop point / stage / model index it ended at */
    uint32_t cost_q;   /* fixed-point models: summed integer cost units */
} fm_result;

/* Eager reader over a dense float vector of length n. */
typedef struct {
    const float *x;
    uint32_t n;
} fm_vector;

int fm_vector_read(void *ctx, uint32_t index, float *value);

/* Order-preserving map of a float32's bits to int32: for finite a, b,
 * a < b  <=>  fm_key(a) < fm_key(b), and fm_key(-0.0f) == fm_key(0.0f).
 * Lets fixed-point builds compare raw float inputs with integer ops only. */
static inline int32_t fm_key_bits(uint32_t bits)
{
    return (bits & 0x80000000u) ? -(int32_t)(bits & 0x7fffffffu) : (int32_t)bits;
}

static inline uint32_t fm_float_bits(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

/* floor(fm_key_bits(bits) / 65536): the 16-bit key compact q15 tree
 * tables compare with (a threshold key T16 sends x left iff
 * fm_key16(x) <= T16, the same as fm_key_bits(x) <= T16 * 65536 + 65535). */
static inline int32_t fm_key16(uint32_t bits)
{
    return (int32_t)(((uint32_t)fm_key_bits(bits) ^ 0x80000000u) >> 16) - 32768;
}

/* fm_key16(bits) + 32768 in 0..65535 (unsigned order = fm_key16 order): the
 * biased keys of the q15 tree tables (fm_trees.h). */
static inline uint32_t fm_ukey16(uint32_t bits)
{
    return ((uint32_t)fm_key_bits(bits) ^ 0x80000000u) >> 16;
}

/* Non-zero when the float's bits are a NaN or an infinity. */
static inline int fm_bits_nonfinite(uint32_t bits)
{
    return (bits & 0x7f800000u) == 0x7f800000u;
}

#ifdef __cplusplus
}
#endif

#endif /* FRUGALML_H */
