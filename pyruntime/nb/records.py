"""The record layout of NB tables (fm_nb_pos / fm_nb_q15_pos of runtime_c/include/nb/fm_nb.h) as numpy
records: what the header emitter (compiler/nb/header.py) writes and the cffi binding (pyruntime/nb/binding.py)
passes, without loading the C binding."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyruntime.fixedpoint import INT32_MAX
from pyruntime.nb.model import NBModel, nb_keys, q15_cannot_saturate

POS_F32 = np.dtype([("feature", "<u4"), ("edge", "<f4", (2,)), ("d", "<f4", (4,))])  # fm_nb_pos, 28 bytes
POS_Q15 = np.dtype([("feature", "<u4"), ("edge", "<i4", (2,)), ("d", "<i2", (4,))])  # fm_nb_q15_pos, 20 bytes
HOT_Q15 = np.dtype([("feature", "<u4"), ("above", "<u4", (2,)), ("d12", "<u4"), ("d30", "<u4"),
                    ("key", "<i4")])  # fm_nb_q15_hot, 24 bytes


def pos_records(model: NBModel, q15: Any = None) -> np.ndarray | None:
    """fm_nb_pos (float32) or fm_nb_q15_pos (q15, given the NBQ15 tables) records of a model with at most
    two edges per position, or None when the model needs the fixed-stride layout (more edges, or q15 sums
    that could saturate)."""
    if q15 is not None and not q15_cannot_saturate(q15.d0, model.n_used):
        return None
    got = model.records(None if q15 is None else q15.d)
    if got is None:
        return None
    feature, edges, entries = got
    rec = np.zeros(model.n_used, dtype=POS_F32 if q15 is None else POS_Q15)
    rec["feature"] = feature
    rec["edge"] = edges if q15 is None else nb_keys(edges).reshape(edges.shape)
    rec["d"] = entries
    return rec


def hot_steps(rec: np.ndarray, stop_at: np.ndarray) -> np.ndarray:
    """The q15 step layout (fm_nb_q15_hot, runtime_c/include/nb/fm_nb.h) of fm_nb_q15_pos records: step p of
    position p, then an end step. above[c] = edge key + 1 for a positive edge key, else 1 (raw-bit compares of
    positive finite values); key = edge 0's key when edge 0 < 0, else INT32_MAX; the entries as int16 pairs.
    A step leaves (above[1] = 0, above[0] = edge 0's key, key = edge 1's) where a stop point precedes the
    position, where both edges are < 0, and at the end."""
    keys = rec["edge"].astype(np.int64)
    d = rec["d"].astype(np.int64) & 0xFFFF
    steps = np.zeros(rec.shape[0] + 1, dtype=HOT_Q15)
    body = steps[:-1]
    body["feature"] = rec["feature"]
    body["above"] = np.where(keys > 0, keys + 1, 1).astype(np.uint32)
    body["d12"] = (d[:, 2] << 16 | d[:, 1]).astype(np.uint32)
    body["d30"] = (d[:, 3] << 16 | d[:, 0]).astype(np.uint32)
    body["key"] = np.where(keys[:, 0] < -1, keys[:, 0], INT32_MAX).astype(np.int32)
    leave = keys[:, 1] < -1  # both edges < 0 (a key of -1 is -0.0)
    leave[np.asarray(stop_at, dtype=np.int64)] = True
    body["above"][leave, 0] = keys[leave, 0].astype(np.int32).view(np.uint32)
    body["above"][leave, 1] = 0
    body["key"][leave] = keys[leave, 1]
    steps[:-1] = body
    return steps
