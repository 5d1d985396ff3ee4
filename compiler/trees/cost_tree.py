"""Tree ensembles in the model IR (a plain dict of flat arrays) and their numpy evaluation.

The trees themselves are grown by the neutral boosting core (:mod:`compiler.boosting`): binned
features, cost-aware splits (Greedy Miser, ADAPT-GBRT); its names are re-exported here for the
tree families. Every threshold is a float32 value with this property: for every float32 ``x``,
``x <= threshold`` holds exactly when the sample's bin is on the left of the split, so the float32
runtime reproduces the training partition exactly.
"""

from __future__ import annotations

import numpy as np

from compiler.boosting.binning import MAX_BINS_LIMIT, Binner, as_float32_matrix
from compiler.boosting.grow import CostTreeFitter, leaf_ratio
from compiler.boosting.tree import CostTree, TreeFit

__all__ = [
    "MAX_BINS_LIMIT", "Binner", "CostTree", "CostTreeFitter", "TreeFit", "as_float32_matrix", "ensemble_to_ir",
    "ir_decide", "ir_leaves", "ir_scores", "ir_staged_scores", "ir_tree_features", "leaf_ratio",
]

# ---------------------------------------------------------------------------
# Tree ensembles in the model IR (a plain dict of flat arrays)
# ---------------------------------------------------------------------------


def ensemble_to_ir(
    trees: list[CostTree],
    tree_output: list[int],
    base_score: np.ndarray,
    n_features: int,
    costs: np.ndarray,
    decision_threshold: float = 0.0,
) -> dict:
    """Concatenate trees (leaf values already float32-ready) into the flat IR dict.

    Keys: n_features, n_outputs, feature (int32, -1 = leaf), threshold (float32,
    go left iff x <= thr), left, right (int32 absolute indices, -1 at leaves),
    value (float32 leaf values, learning rate folded in), roots, tree_output,
    base_score (float32[n_outputs]), decision_threshold, costs (float32).
    """
    base = np.asarray(base_score, dtype=np.float32).ravel()
    feats, thrs, lefts, rights, vals, roots = [], [], [], [], [], []
    offset = 0
    for t in trees:
        roots.append(offset)
        feats.append(t.feature.astype(np.int32))
        thrs.append(t.threshold.astype(np.float32))
        inner = t.feature >= 0
        lefts.append(np.where(inner, t.left + offset, -1).astype(np.int32))
        rights.append(np.where(inner, t.right + offset, -1).astype(np.int32))
        vals.append(np.where(inner, 0.0, t.value).astype(np.float32))
        offset += t.n_nodes

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return {
        "n_features": int(n_features),
        "n_outputs": int(base.size),
        "feature": cat(feats, np.int32),
        "threshold": cat(thrs, np.float32),
        "left": cat(lefts, np.int32),
        "right": cat(rights, np.int32),
        "value": cat(vals, np.float32),
        "roots": np.asarray(roots, dtype=np.int32),
        "tree_output": np.asarray(tree_output, dtype=np.int32),
        "base_score": base,
        "decision_threshold": float(decision_threshold),
        "costs": np.asarray(costs, dtype=np.float32).ravel(),
    }


def _walk(ir: dict, X32: np.ndarray, root: int, read: np.ndarray | None = None) -> np.ndarray:
    """Leaf node (absolute index) every row of X32 reaches in the tree at ``root``; with ``read`` (bool n x d),
    marks there the features each row reads on its way."""
    feature, threshold = ir["feature"], ir["threshold"]
    left, right = ir["left"], ir["right"]
    rows = np.arange(X32.shape[0])
    node = np.full(X32.shape[0], int(root), dtype=np.int64)
    while True:
        f = feature[node]
        inner = f >= 0
        if not inner.any():
            break
        r, nd, fi = rows[inner], node[inner], f[inner]
        if read is not None:
            read[r, fi] = True
        go_left = X32[r, fi] <= threshold[nd]
        node[inner] = np.where(go_left, left[nd], right[nd])
    return node


def ir_leaves(ir: dict, X: np.ndarray) -> np.ndarray:
    """Leaf node (absolute index) reached by every row in every tree: int64 (n, T)."""
    X32 = as_float32_matrix(X)
    out = np.empty((X32.shape[0], ir["roots"].size), dtype=np.int64)
    for t, root in enumerate(ir["roots"]):
        out[:, t] = _walk(ir, X32, root)
    return out


def ir_tree_features(ir: dict, X: np.ndarray) -> list[np.ndarray]:
    """For every tree, a bool (n, d) matrix of the features each row reads in it."""
    X32 = as_float32_matrix(X)
    result = []
    for root in ir["roots"]:
        read = np.zeros(X32.shape, dtype=bool)
        _walk(ir, X32, root, read)
        result.append(read)
    return result


def ir_staged_scores(ir: dict, X: np.ndarray, stops: list[int] | None = None) -> np.ndarray:
    """Float32 scores after the first ``s`` trees for each s in ``stops``: (len(stops), n, n_outputs).

    Scores accumulate exactly like the C runtime: base_score, then each tree's
    leaf value added in float32, in tree order.
    """
    T = int(ir["roots"].size)
    stops = [T] if stops is None else [int(s) for s in stops]
    leaves = ir_leaves(ir, X)
    n = leaves.shape[0]
    K = int(ir["n_outputs"])
    vals = ir["value"][leaves]  # float32 (n, T)
    score = np.tile(ir["base_score"].astype(np.float32), (n, 1))
    out = np.empty((len(stops), n, K), dtype=np.float32)
    order = sorted(range(len(stops)), key=lambda i: stops[i])
    t = 0
    outputs = ir["tree_output"]
    for i in order:
        s = stops[i]
        if not 0 <= s <= T:
            raise ValueError(f"stop {s} out of range 0..{T}")
        while t < s:
            k = outputs[t]
            score[:, k] = score[:, k] + vals[:, t]  # float32 + float32 -> float32
            t += 1
        out[i] = score
    return out


def ir_scores(ir: dict, X: np.ndarray, n_trees: int | None = None) -> np.ndarray:
    T = int(ir["roots"].size) if n_trees is None else n_trees
    return ir_staged_scores(ir, X, [T])[0]


def ir_decide(ir: dict, scores: np.ndarray) -> np.ndarray:
    """Class index: one output -> 1 iff score > decision_threshold; several -> first argmax."""
    if scores.shape[1] == 1:
        return (scores[:, 0] > np.float32(ir["decision_threshold"])).astype(np.int64)
    return np.argmax(scores, axis=1).astype(np.int64)
