"""What the tree benchmarks (cegb.py, cscc_keel.py, miser_cascade.py, cstc.py) share: the Yahoo-like
feature costs and a dumped LightGBM tree as flat arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from compiler.costs import FeatureCosts

YAHOO_COSTS = np.array([1, 5, 10, 20, 50, 100, 150, 200], dtype=float)


def yahoo_costs(n_features: int, seed: int = 0) -> FeatureCosts:
    """Constant costs drawn (the generator's seed: ``seed``) from YAHOO_COSTS, one per feature."""
    return FeatureCosts.constant(np.random.default_rng(seed).choice(YAHOO_COSTS, size=n_features))


def register_tree_kinds() -> None:
    """Import the tree kinds' modules (they register miser, cascade and cstc with the kind registry)."""
    import compiler.cstc.kind  # noqa: F401, PLC0415
    import compiler.trees.kind_cascade  # noqa: F401, PLC0415
    import compiler.trees.kind_miser  # noqa: F401, PLC0415


def flat_lgbm_tree(root: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A dumped LightGBM tree (``dump_model()["tree_info"][i]["tree_structure"]``) as arrays in depth-first
    order: feature (-1 at leaves), threshold (float64, as dumped), left, right, leaf value. Only ``<=``
    splits (x <= threshold goes left)."""
    feat: list[int] = []
    thr: list[float] = []
    left: list[int] = []
    right: list[int] = []
    val: list[float] = []
    stack = [(root, -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        i = len(feat)
        if parent >= 0:
            (right if is_right else left)[parent] = i
        split = "split_feature" in node
        if split and node.get("decision_type", "<=") != "<=":
            raise ValueError("unsupported LightGBM split")
        feat.append(int(node["split_feature"]) if split else -1)
        thr.append(float(node["threshold"]) if split else 0.0)
        val.append(0.0 if split else float(node["leaf_value"]))
        left.append(-1)
        right.append(-1)
        if split:
            stack += [(node["right_child"], i, True), (node["left_child"], i, False)]
    return np.asarray(feat), np.asarray(thr), np.asarray(left), np.asarray(right), np.asarray(val)


def keel_task(name: str, seed: int) -> tuple[Any, FeatureCosts]:
    """The split task of a KEEL data set (one-vs-rest on the last label when it has more than two) and its
    Yahoo-like costs; the tree kinds registered."""
    from compiler.tasks import prepare  # noqa: PLC0415 - scikit-learn
    from pyruntime.data import load_dataset  # noqa: PLC0415

    register_tree_kinds()
    labels = sorted(set(np.asarray(load_dataset(f"keel:{name}").y).tolist()))
    task = prepare(f"keel:{name}", None if len(labels) == 2 else labels[-1], None, seed)
    return task, yahoo_costs(task.n_features)
