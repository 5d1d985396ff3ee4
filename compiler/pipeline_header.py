"""The pipeline section of a C header: a model trained on windows gets its extraction plan (fm_plan, fm_window.h)
and ``NAME_predict_window``, one call from a raw window to an fm_result, the features computed lazily as the model
reads them (or, eager = 1, every planned feature first: the eager baseline with the same model code).

Generic names (firmware examples, ``frugalml bench``)::

    FM_PLAN_CHANNELS, FM_PLAN_MIN_LEN, FM_PLAN_FEATURES   channels, shortest window, planned features
    FM_WINDOW_SCRATCH_SIZE(len)          bytes of caller scratch (uint64_t-aligned) for windows of len samples
    FM_PREDICT_WINDOW(x, c, len, scratch, size, eager, out)   status (FM_OK or an fm_status)

Lazy kinds: those whose tables are fm_cascade (miser, cascade), fm_nb (nb-static, nb-stop) and fm_nbk (their
K-class forms), float32 and q15 tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pyruntime.features.groups import scratch_bound
from pyruntime.features.plan import FeaturePlan

if TYPE_CHECKING:
    from compiler.header import CTables

# struct type -> (lazy predict call on reader r with model m, whether it needs the memo/scores scratch)
LAZY_CALLS = {
    "fm_cascade": ("fm_cascade_predict(&{m}, r, &memo, scores, out)", "fm_cascade"),
    "fm_cascade_q15": ("fm_cascade_q15_predict(&{m}, r, &memo, scores, out)", "fm_cascade_q15"),
    "fm_nb": ("fm_nb_predict(&{m}, r, out)", None),
    "fm_nb_q15": ("fm_nb_q15_predict(&{m}, r, out)", None),
    "fm_nbk": ("fm_nbk_predict(&{m}, r, out)", None),
    "fm_nbk_q15": ("fm_nbk_q15_predict(&{m}, r, out)", None),
}

PIPELINE_KINDS = "miser, cascade, nb-static and nb-stop"  # the kinds whose tables are in LAZY_CALLS


def has_pipeline(meta: dict[str, Any], tables: CTables) -> bool:
    return "feature_plan" in meta and tables.struct_type in LAZY_CALLS


def pipeline_section(meta: dict[str, Any], tables: CTables, name: str) -> list[str]:
    """Header lines after the model's struct (empty when the model has no plan or its kind reads eagerly)."""
    if not has_pipeline(meta, tables):
        return []
    plan = FeaturePlan.from_meta(meta["feature_plan"])
    call, scratch_family = LAZY_CALLS[tables.struct_type]
    n = len(plan.features)
    p = name
    if scratch_family:
        model_scratch = f"{scratch_family}_scratch_size(&{p})"
        score_t = "int32_t" if tables.struct_type.endswith("_q15") else "float"
        model_body = f"""    fm_memo memo;
    {score_t} *scores;
    int rc = {scratch_family}_scratch_init(&{p}, scratch, size, &memo, &scores);
    if (rc != FM_OK) {{
        return rc;
    }}
    return {call.format(m=p)};"""
    else:
        model_scratch = "0u"
        model_body = f"""    (void)scratch;
    (void)size;
    return {call.format(m=p)};"""
    specs = "\n".join(f"    {f.c_init()}, /* {f.name} */"
                      for f in plan.features)
    text = f"""
/* The extraction plan: column j of the model is feature j of a raw window (fm_window.h). */
#include "fm_batch.h"
#include "fm_window.h"
static const fm_feat_spec {p}_features[{n}] = {{
{specs}
}};
static const fm_plan {p}_plan = {{{p}_features, {n}u, {plan.n_channels}u, {plan.min_len}u}};

static inline size_t {p}_align8(size_t n)
{{
    return (n + 7u) & ~(size_t)7u;
}}

/* The model's lazy predict through reader r (its memo and scores in scratch[size], 8-byte aligned). */
static inline size_t {p}_model_scratch_size(void)
{{
    return {model_scratch};
}}

static inline int {p}_model_read(const fm_reader *r, void *scratch, size_t size, fm_result *out)
{{
{model_body}
}}

/* Bytes of caller scratch (aligned for uint64_t) of {p}_predict_window for windows of len samples: the
 * model's memo and scores, the eager values, then the feature context (0: len over the library's bounds).
 * Windows of several lengths: the largest over them (past FM_FEAT_MAX_FFT samples a longer window can need
 * less, having no spectrum of its own). */
static inline size_t {p}_window_scratch_size(uint32_t len)
{{
    size_t f = fm_window_scratch_size(&{p}_plan, len);
    return f == 0u ? 0u : {p}_align8({p}_model_scratch_size()) + {p}_align8({n}u * sizeof(float)) + f;
}}

/* Label, features read and cost of a raw window x[channel * len + t] (float32 samples): the features computed
 * as the model asks for them (eager = 0), or every planned feature first (eager = 1: the eager baseline, the
 * same model code). Status: FM_OK; FM_E_CHANNEL (n_channels other than the plan's), FM_E_WINDOW (too short, or
 * too long for a spectrum), FM_E_SAMPLE (a NaN or infinite sample in a channel read), FM_E_VALUE, FM_E_ARG
 * (NULL, scratch too small). fm_window_begin checks the channels, the length and the feature context's scratch
 * (whose layout it computes once). */
static inline int {p}_predict_window(const float *x, uint32_t n_channels, uint32_t len, void *scratch,
                                     size_t size, int eager, fm_result *out)
{{
    fm_window w;
    fm_vector v;
    fm_reader r;
    unsigned char *buf = (unsigned char *)scratch;
    const size_t model = {p}_align8({p}_model_scratch_size()), head = model + {p}_align8({n}u * sizeof(float));
    float *values;
    int rc;
    if (scratch == NULL || out == NULL) {{
        return FM_E_ARG;
    }}
    rc = fm_window_begin(&w, &{p}_plan, x, n_channels, len, buf + head, size < head ? 0u : size - head);
    if (rc != FM_OK) {{
        return rc;
    }}
    if (!eager) {{
        r = fm_window_reader(&w);
        return fm_window_status(&w, {p}_model_read(&r, buf, model, out));
    }}
    values = (float *)(void *)(buf + model);
    rc = fm_window_eager(&w, values);
    if (rc != FM_OK) {{
        return rc;
    }}
    r = fm_vector_reader(&v, values, {n}u);
    return {p}_model_read(&r, buf, model, out);
}}

#define FM_PLAN {p}_plan
#define FM_PLAN_CHANNELS {plan.n_channels}u
#define FM_PLAN_MIN_LEN {plan.min_len}u
#define FM_PLAN_FEATURES {n}u
#define FM_WINDOW_SCRATCH_SIZE(len) {p}_window_scratch_size(len)
#define FM_PREDICT_WINDOW(x, c, len, scratch, size, eager, out) \\
    {p}_predict_window((x), (c), (len), (scratch), (size), (eager), (out))
#define FM_MODEL_SCRATCH_SIZE() {p}_model_scratch_size()
#define FM_MODEL_READ(r, scratch, size, out) {p}_model_read((r), (scratch), (size), (out))"""
    return text.split("\n")


def scratch_words(plan: FeaturePlan, length: int, n_outputs: int) -> int:
    """A bound of FM_WINDOW_SCRATCH_SIZE(length) in 8-byte words (the feature context: its channel records, the
    spectra and the FFT's work (groups.scratch_bound); the eager values, the memo and scores)."""
    feat = scratch_bound(plan.n_channels, length)
    model = len(plan.features) * 8 + n_outputs * 4 + 64
    return (feat + len(plan.features) * 4 + model) // 8 + 8


def window_rows(windows: list[np.ndarray], name: str, meta: dict[str, Any], n_outputs: int) -> list[str]:
    """Raw windows (each channels x length float32, all of one length) as const test inputs:
    FM_N_WINDOWS, FM_WINDOW_LEN, FM_WINDOWS[i] (channel-major, x[c * len + t]), and FM_WINDOW_SCRATCH_WORDS (a
    bound of FM_WINDOW_SCRATCH_SIZE(FM_WINDOW_LEN) in uint64_t words: a stack array's length)."""
    from compiler.header import c_float

    if not windows or "feature_plan" not in meta:
        return []
    plan = FeaturePlan.from_meta(meta["feature_plan"])
    length = int(windows[0].shape[1])
    cols = int(windows[0].size)
    out = ["", f"/* {len(windows)} raw windows of {length} samples for self-tests */",
           f"#define FM_N_WINDOWS {len(windows)}u", f"#define FM_WINDOW_LEN {length}u",
           f"#define FM_WINDOW_SCRATCH_WORDS {scratch_words(plan, length, n_outputs)}u",
           f"static const float {name}_windows[{len(windows)}][{cols}] = {{"]
    for w in windows:
        out.append("    {" + ", ".join(c_float(v) for v in np.asarray(w, np.float32).ravel()) + "},")
    out += ["};", f"#define FM_WINDOWS {name}_windows"]
    return out
