"""Cost-ordered evaluation of a boosted ensemble for an early-exit cascade.

A boosted ensemble's score is a sum: its iterations may be evaluated in any order, and the whole ensemble's score
changes only by float32 rounding. An exit test between stages, though, sees the partial sum of the iterations
before it, and a row that exits has paid for the features of those iterations alone. In boosting order the first
iterations split on whichever features reduce the loss most, dear or cheap; a row then pays for dear features
before its first exit test. :func:`cost_order` puts the iterations in the order of their worth per unit of new
feature cost (greedy, as a knapsack by ratio):

1. every iteration whose trees read only features already paid for (or free ones) comes next, in boosting order;
2. otherwise the iteration of the largest importance / new cost, where importance is the mean absolute leaf
   value its trees give the rows (the reference rows' average contribution to the score) and new cost the cost
   of the features its trees split on that no earlier iteration reads (feature groups: each group charged once).

The cascade's exits are then learned on the reordered ensemble with the usual rule (its early decisions agree
with the whole ensemble on >= min_agreement of the validation rows), so the order changes the cost, not the rule
that holds the accuracy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compiler.trees.cost_tree import ir_leaves


def tree_nodes(ir: dict, t: int) -> np.ndarray:
    """Absolute node indices of tree ``t`` (the IR keeps every tree's nodes contiguous, in root order)."""
    roots = ir["roots"]
    end = int(roots[t + 1]) if t + 1 < roots.size else int(ir["feature"].size)
    return np.arange(int(roots[t]), end)


def iteration_features(ir: dict) -> np.ndarray:
    """Bool (I, d): the features the K trees of each boosting iteration split on."""
    K, T, d = int(ir["n_outputs"]), int(ir["roots"].size), int(ir["n_features"])
    mask = np.zeros((T // K, d), dtype=bool)
    for t in range(T):
        f = ir["feature"][tree_nodes(ir, t)]
        mask[t // K, f[f >= 0]] = True
    return mask


def iteration_importance(ir: dict, X: np.ndarray) -> np.ndarray:
    """(I,) float64: per iteration, the mean over the rows of X of the absolute leaf values its K trees give."""
    K = int(ir["n_outputs"])
    per_tree = np.abs(ir["value"][ir_leaves(ir, X)].astype(np.float64)).mean(axis=0)  # (T,)
    return per_tree.reshape(-1, K).sum(axis=1)


def cost_order(features: np.ndarray, importance: np.ndarray, cost_of: Any) -> np.ndarray:
    """The greedy order of the iterations (module docstring). ``features``: bool (I, d); ``importance``: (I,);
    ``cost_of(read)``: the cost of each row of a bool (m, d) read mask (feature groups charged once)."""
    n_iter, d = features.shape
    seen = np.zeros(d, dtype=bool)
    left = np.arange(n_iter)
    order: list[int] = []
    paid = float(cost_of(seen[None, :])[0])
    while left.size:
        new = np.asarray(cost_of(features[left] | seen), dtype=np.float64) - paid
        free = new <= 0.0
        if free.any():  # nothing new to pay: these come next, in boosting order
            order += left[free].tolist()
            left = left[~free]
            continue
        pick = int(np.argmax(importance[left] / new))  # ties: the earliest
        i = int(left[pick])
        order.append(i)
        seen |= features[i]
        paid = float(cost_of(seen[None, :])[0])
        left = np.delete(left, pick)
    return np.asarray(order, dtype=np.int64)


def reorder_iterations(ir: dict, order: np.ndarray) -> dict:
    """The IR with its boosting iterations in ``order`` (a permutation of 0..I-1): the same trees, each kept whole
    (K trees per iteration, outputs as before), nodes renumbered so every tree stays contiguous."""
    K, T = int(ir["n_outputs"]), int(ir["roots"].size)
    order = np.asarray(order, dtype=np.int64)
    if sorted(order.tolist()) != list(range(T // K)):
        raise ValueError(f"order must be a permutation of the {T // K} iterations")
    trees = (order[:, None] * K + np.arange(K)[None, :]).ravel()
    nodes = [tree_nodes(ir, int(t)) for t in trees]
    sizes = np.asarray([n.size for n in nodes], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    index = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - np.asarray([n[0] if n.size else 0 for n in nodes]), sizes)
    out = dict(ir)
    for key in ("feature", "threshold", "value"):
        out[key] = ir[key][index].copy()
    for key in ("left", "right"):
        child = ir[key][index].astype(np.int64)
        out[key] = np.where(child >= 0, child + shift, -1).astype(ir[key].dtype)
    out["roots"] = starts.astype(ir["roots"].dtype)
    out["tree_output"] = ir["tree_output"][trees].copy()
    return out


def cost_ordered(ir: dict, X: np.ndarray, cost_of: Any) -> tuple[dict, np.ndarray]:
    """(the IR in cost order, the order): :func:`cost_order` with importances measured on the rows of X."""
    order = cost_order(iteration_features(ir), iteration_importance(ir, X), cost_of)
    return reorder_iterations(ir, order), order
