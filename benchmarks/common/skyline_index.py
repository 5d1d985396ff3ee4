"""The budget index as the K-class benchmarks train it: one definition for benchmarks/multiclass.py's skyline rows
and benchmarks/skyline_cv.py, which measures the same index scored two ways."""

from __future__ import annotations

from typing import Any


def forward_selection_options(n_features: int, base: str) -> dict[str, Any]:
    """`frugalml train skyline`'s options for the index over the whole forward selection: greedy-acc, d (d + 1) / 2
    feature sets (every set the greedy order can reach), no early stop (``--patience 0``), on ``base`` (nb or
    linear). Costs are the task's (uniform when it has none)."""
    d = int(n_features)
    if d < 1:
        raise ValueError(f"the index needs at least one feature, got {n_features!r}")
    return {"method": "greedy-acc", "max_sets": d * (d + 1) // 2, "base": base, "patience": 0}
