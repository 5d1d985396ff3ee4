"""Strict JSON out of the tools: NaN and infinities as null (JSON has no such numbers; Python's json writes
``Infinity``, which JavaScript's JSON.parse, jq and most other readers refuse), numpy arrays and scalars as lists
and numbers. Every ``--json`` of frugalml and power_bench prints through json_text."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def clean_json(obj: Any) -> Any:
    """obj with NaN and infinities as None (null), numpy arrays as lists and numpy scalars as Python numbers."""
    if isinstance(obj, np.ndarray):
        return clean_json(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_json(v) for v in obj]
    return obj


def json_text(obj: Any, indent: int | None = None) -> str:
    """Strict JSON of obj (clean_json); other objects as their str()."""
    return json.dumps(clean_json(obj), indent=indent, allow_nan=False, default=str)
