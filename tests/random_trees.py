"""Random tree dictionaries (the model file's per-tree fields) for the runtime tests: each node draws its
value, then with probability 0.8 above ``depth`` becomes a split on a random feature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Draw = Callable[[np.random.Generator], float]


def random_tree(rng: np.random.Generator, n_features: int, depth: int, *, leaf: int = -1,
                value: Draw = lambda rng: float(rng.normal()),
                threshold: Draw = lambda rng: float(np.float32(rng.normal()))) -> dict[str, list[Any]]:
    """``feature`` / ``threshold`` / ``left`` / ``right`` / ``value`` lists, leaves marked ``leaf``."""
    feature: list[int] = []
    thresholds: list[float] = []
    left: list[int] = []
    right: list[int] = []
    values: list[float] = []

    def node(d: int) -> int:
        i = len(feature)
        feature.append(leaf)
        thresholds.append(0.0)
        left.append(-1)
        right.append(-1)
        values.append(value(rng))
        if d < depth and rng.random() < 0.8:
            feature[i] = int(rng.integers(0, n_features))
            thresholds[i] = threshold(rng)
            left[i] = node(d + 1)
            right[i] = node(d + 1)
        return i

    node(0)
    return {"feature": feature, "threshold": thresholds, "left": left, "right": right, "value": values}
