"""The C feature library through cffi: each window's features in the given order, one context per window
(groups computed once per window), with each call's status and the number of groups it ran."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pyruntime.features.catalog import FeatureSpec


@dataclass
class CFeatures:
    values: np.ndarray  # (W, F) float32, 0 where status != 0
    status: np.ndarray  # (W, F) int32
    new_groups: np.ndarray  # (W, F) groups each call ran


def c_specs(specs: list[FeatureSpec] | tuple[FeatureSpec, ...]):  # noqa: ANN201 - cffi array
    from pyruntime._frugalml_c import ffi

    arr = ffi.new("fm_feat_spec[]", max(len(specs), 1))
    for i, f in enumerate(specs):
        arr[i].id, arr[i].channel, arr[i].channel2 = f.id, f.channel, f.channel2
        arr[i].param, arr[i].param2, arr[i].decimate = f.param, f.param2, f.decimate
    return arr


def run(x: np.ndarray, specs: list[FeatureSpec] | tuple[FeatureSpec, ...], q15: bool = False) -> CFeatures:
    """Features of windows x (W, C, L): float32 windows, or int16 with q15=True."""
    from pyruntime._frugalml_c import ffi, lib

    x = np.ascontiguousarray(x, dtype=np.int16 if q15 else np.float32)
    w, c, length = x.shape
    n = len(specs)
    out = CFeatures(np.zeros((w, n), np.float32), np.zeros((w, n), np.int32), np.zeros((w, n), np.int32))
    size = lib.fm_feat_scratch_size(c, length)
    scratch = ffi.new("uint64_t[]", max(size // 8 + 1, 1))
    cspecs = c_specs(specs)
    ctx = ffi.new("fm_feat_ctx *")
    value = ffi.new("float *")
    begin = lib.fm_feat_q15_begin if q15 else lib.fm_feat_begin
    call = lib.fm_feat_q15_value if q15 else lib.fm_feat_value
    ctype = "int16_t *" if q15 else "float *"
    for r in range(w):
        row = x[r]
        rc = begin(ctx, ffi.cast(ctype, ffi.from_buffer(row)), c, length, scratch, size)
        if rc != 0:
            out.status[r, :] = rc
            continue
        for j in range(n):
            rc = call(ctx, cspecs + j, value)
            out.status[r, j] = rc
            out.new_groups[r, j] = ctx.new_groups
            if rc == 0:
                out.values[r, j] = value[0]
    return out
