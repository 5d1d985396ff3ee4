"""Pieces of the ``describe()`` of every runtime tables class (what ``frugalml inspect`` shows per kind):
features with their costs, tree shapes. Family-neutral, numpy only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def feature_name(names: Sequence[str], j: int) -> str:
    return str(names[j]) if 0 <= j < len(names) else f"x{j}"


def features_with_costs(indices: Iterable[int], costs: np.ndarray | None, names: Sequence[str]) -> list[dict[str, Any]]:
    """[{"feature": name, "index": j, "cost": c}] in the given order (cost 1 when the tables have none)."""
    return [{"feature": feature_name(names, int(j)), "index": int(j),
             "cost": float(costs[int(j)]) if costs is not None else 1.0} for j in indices]


def tree_depths(feature: np.ndarray, left: np.ndarray, right: np.ndarray, roots: np.ndarray) -> list[int]:
    """Depth (decisions on the longest root-to-leaf path) of every tree; leaves have feature < 0."""
    return [tree_depth(feature, left, right, int(root)) for root in roots.tolist()]


def tree_depth(feature: np.ndarray, left: np.ndarray, right: np.ndarray, root: int) -> int:
    """Depth of the tree at ``root`` (decisions on its longest root-to-leaf path)."""
    depth, stack = 0, [(root, 0)]
    while stack:
        node, d = stack.pop()
        if feature[node] < 0:
            depth = max(depth, d)
        else:
            stack += [(int(left[node]), d + 1), (int(right[node]), d + 1)]
    return depth


def tree_summary(trees: Any, names: Sequence[str]) -> dict[str, Any]:
    """Shape of a tree ensemble (TreeEnsemble or TreeEnsembleQ15) and the features it branches on. n_walks:
    the tree walks of a full prediction in the C runtime (runs of K trees with equal splits, fm_trees.run,
    walk once)."""
    feat = np.asarray(trees.feature)
    depths = tree_depths(feat, np.asarray(trees.left), np.asarray(trees.right), np.asarray(trees.roots))
    used = np.unique(feat[feat >= 0])
    from pyruntime.trees.ensemble import compact_tables  # noqa: PLC0415 (ensemble imports this module)

    run = compact_tables(trees.to_dict())["run"] if trees.n_trees else 0
    return {"n_trees": int(trees.n_trees), "n_walks": int(trees.n_trees) // max(run, 1),
            "n_nodes": int(trees.n_nodes), "max_depth": max(depths, default=0),
            "n_outputs": int(trees.n_outputs), "features_used": features_with_costs(used, trees.costs, names)}


def jsonable(value: Any) -> Any:
    """Plain Python values (inf as None) for JSON output."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value
