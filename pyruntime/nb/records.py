"""The record layout of NB tables (fm_nb_pos / fm_nb_q15_pos of runtime_c/include/nb/fm_nb.h) as numpy
records: what the header emitter (compiler/nb/header.py) writes and the cffi binding (pyruntime/nb/binding.py)
passes, without loading the C binding."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyruntime.nb.model import NBModel, nb_keys, q15_cannot_saturate

POS_F32 = np.dtype([("feature", "<u4"), ("edge", "<f4", (2,)), ("d", "<f4", (4,))])  # fm_nb_pos, 28 bytes
POS_Q15 = np.dtype([("feature", "<u4"), ("edge", "<i4", (2,)), ("d", "<i2", (4,))])  # fm_nb_q15_pos, 20 bytes
HOT_Q15 = np.dtype([("feature", "<u4"), ("above", "<u4", (2,)), ("d", "<i4", (4,))])  # fm_nb_q15_hot, 28 bytes


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
    """The q15 step stream (fm_nb_q15_hot) of fm_nb_q15_pos records: step p of position p with above[c] = edge
    key + 1 for a positive edge key, else 1 (raw-bit compares of positive finite values), above[1] = 0 at a
    position a stop point precedes, and an end step (all zero)."""
    keys = rec["edge"].astype(np.int64)
    steps = np.zeros(rec.shape[0] + 1, dtype=HOT_Q15)
    steps["feature"][:-1] = rec["feature"]
    steps["above"][:-1] = np.where(keys > 0, keys + 1, 1).astype(np.uint32)
    steps["d"][:-1] = rec["d"]
    steps["above"][np.asarray(stop_at, dtype=np.int64), 1] = 0
    return steps
