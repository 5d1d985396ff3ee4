"""Stage-wise cost-aware boosting state shared by miser, the cascades and ADAPT-GBRT.

One iteration grows one tree per output (K for the multi-class log-loss) on the gradient and
hessian of the loss (Newton steps), all K trees on the same row sample. Greedy Miser's cost of a
feature is charged once: the K trees of an iteration share it (each tree's gain is charged 1/K of
it, since each tree fits one class's share of the loss), and the first tree that splits on the
feature makes it free for every later tree (``used`` is shared by the K trees and, when passed in,
by other boosters: ADAPT-GBRT's gate and f1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from compiler.boosting.grow import BinnedData, TreeParams, grow_shared_trees, grow_tree
from compiler.boosting.losses import encode_targets, grad_hess, init_scores
from compiler.boosting.penalty import GroupedCosts
from compiler.boosting.tree import CostTree


@dataclass
class Booster:
    """Boosting state. ``F`` holds the training scores in float32, updated with the same float32 leaf
    values (learning rate folded in) that the model IR stores, so staged training and validation
    scores equal the runtime's scores exactly.

    ``subsample``: share of the rows drawn (without replacement) for each iteration;
    ``colsample``: share of the features each tree may split on; both seeded by ``seed``."""

    fitter: BinnedData
    Y: np.ndarray  # (n, K) encoded targets
    weight: np.ndarray  # (n,)
    loss: str
    costs: np.ndarray
    step: float
    max_depth: int
    min_samples_leaf: int = 1
    base_score: np.ndarray | None = None
    used: np.ndarray | None = None
    trees: list[CostTree] = field(default_factory=list)
    tree_output: list[int] = field(default_factory=list)
    F: np.ndarray | None = None
    X_val: np.ndarray | None = None
    F_val: np.ndarray | None = None
    l2: float = 0.0
    min_child_weight: float = 1e-3
    max_delta_step: float = 0.0  # > 0: every leaf's Newton step capped at +- this (TreeParams)
    max_leaves: int | None = None
    subsample: float = 1.0
    colsample: float = 1.0
    seed: int | None = 0
    codes_val: np.ndarray | None = None
    groups: GroupedCosts | None = None  # feature groups: used instead of ``costs`` in the penalty
    charge: str = "model"  # "model": a feature's cost once per model (the paper); "row": per row that reads it
    class_trees: str = "separate"  # K outputs: "separate" trees per output, or one structure "shared" by the K

    def __post_init__(self) -> None:
        self.weight = compact_weights(self.weight)
        if self.base_score is None:
            self.base_score = init_scores(self.Y, self.weight, self.loss)
        n, K = self.Y.shape
        if self.F is None:
            self.F = np.tile(self.base_score, (n, 1)).astype(np.float32)
        if self.used is None:
            self.used = np.zeros(self.fitter.n_features, dtype=bool)
        if self.X_val is not None and self.F_val is None:
            self.F_val = np.tile(self.base_score, (self.X_val.shape[0], 1)).astype(np.float32)
        if self.X_val is not None and self.codes_val is None:
            self.codes_val = self.fitter.binner.transform(self.X_val)
        if not 0 < self.subsample <= 1 or not 0 < self.colsample <= 1:
            raise ValueError("subsample and colsample must be in (0, 1]")
        self._rng = np.random.default_rng(self.seed)
        check_charge(self.charge, self.class_trees)
        if self.charge == "row" and self.groups is not None:
            raise ValueError("charge='row' does not take feature groups (charge='model' does)")
        # charge "row": which features each training row's path has read so far (shared by the K trees)
        self.read = (np.zeros((n, self.fitter.n_features), dtype=np.uint8) if self.charge == "row" else None)

    @property
    def n_outputs(self) -> int:
        return int(self.Y.shape[1])

    @property
    def params(self) -> TreeParams:
        return TreeParams(max_depth=int(self.max_depth), max_leaves=self.max_leaves, l2=float(self.l2),
                          min_child_weight=float(self.min_child_weight),
                          min_samples_leaf=int(self.min_samples_leaf), max_delta_step=float(self.max_delta_step))

    def _rows(self, w: np.ndarray) -> np.ndarray:
        rows = np.flatnonzero(w > 0)
        if self.subsample < 1.0 and rows.size > 1:
            k = max(1, int(round(self.subsample * rows.size)))
            rows = np.sort(self._rng.choice(rows, k, replace=False))
        return rows.astype(np.int32)

    def _allowed(self) -> np.ndarray | None:
        d = self.fitter.n_features
        if self.colsample >= 1.0 or d <= 1:
            return None
        mask = np.zeros(d, dtype=bool)
        mask[self._rng.choice(d, max(1, int(round(self.colsample * d))), replace=False)] = True
        return mask

    def iterate(self, penalty: float, target_weight: np.ndarray | None = None) -> None:
        """One boosting iteration: one tree per output. ``penalty`` multiplies the feature costs in the
        gain, which is the mean (per unit of weight) loss reduction of the split."""
        assert self.F is not None and self.used is not None
        w = np.asarray(self.weight if target_weight is None else target_weight, dtype=np.float64)
        G, H, factor = grad_hess(self.Y, self.F, self.loss)
        rows = self._rows(w)
        total_w = float(w[rows].sum())
        scale = factor / total_w if total_w > 0 else 0.0
        shared = self.class_trees == "shared" and self.n_outputs > 1
        share = 1 if shared else self.n_outputs  # a shared tree fits the whole loss: its feature pays in full
        pen: np.ndarray | GroupedCosts  # shared by the K trees
        if self.groups is not None:
            pen = self.groups.scaled(penalty / share)
        else:
            pen = penalty * np.asarray(self.costs, dtype=np.float64) / share
        unit = bool(np.all(w == 1.0))  # no weighted copies of g and h (memory)
        if shared:
            trees, used_after = grow_shared_trees(
                self.fitter, G if unit else w[:, None] * G, H if unit else w[:, None] * H, rows, self.params,
                penalty=pen, used=self.used, allowed=self._allowed(), gain_scale=scale, step=self.step,
                overwrite_rows=True)
            self.used[used_after] = True
            for k, tree in enumerate(trees):
                self._add(tree, k)
            return
        for k in range(self.n_outputs):
            gk, hk = (G[:, k], H[:, k]) if unit else (w * G[:, k], w * H[:, k])
            tree, used_after = grow_tree(self.fitter, gk, hk, rows, self.params, penalty=pen,
                                         used=self.used, allowed=self._allowed(), gain_scale=scale,
                                         step=self.step, read=self.read, overwrite_rows=k == self.n_outputs - 1)
            self.used[used_after] = True  # in place: the array may be shared with another booster
            self._add(tree, k)

    def _add(self, tree: CostTree, k: int) -> None:
        """Append output k's tree: leaf values rounded to float32 (the IR's), added to the training and validation
        scores."""
        assert self.F is not None
        tree.value = np.where(tree.feature >= 0, 0.0, tree.value).astype(np.float32).astype(np.float64)
        leaves = self.fitter.apply_add(tree, self.fitter.codes, self.F, k, want_leaves=self.read is not None)
        if self.read is not None and leaves is not None:  # every training row, the rows not grown on too
            mark_reads(self.read, tree, leaves)
        if self.codes_val is not None and self.F_val is not None:
            self.fitter.apply_add(tree, self.codes_val, self.F_val, k)
        self.trees.append(tree)
        self.tree_output.append(k)


def compact_weights(w: np.ndarray) -> np.ndarray:
    """``w`` as float64; where every weight is 1, a read-only broadcast 1.0 that takes no memory per row (the
    booster reads its weights, never writes them)."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 1 and bool(np.all(w == 1.0)):
        return np.broadcast_to(np.float64(1.0), w.shape)
    return w


CHARGES = ("model", "row")
CLASS_TREES = ("separate", "shared")


def check_charge(charge: str, class_trees: str) -> None:
    """ValueError unless ``charge`` and ``class_trees`` are known and go together."""
    if charge not in CHARGES:
        raise ValueError(f"charge must be one of {CHARGES}, got {charge!r}")
    if class_trees not in CLASS_TREES:
        raise ValueError(f"class_trees must be one of {CLASS_TREES}, got {class_trees!r}")
    if class_trees == "shared" and charge == "row":
        raise ValueError("class_trees='shared' does not take charge='row'")


def mark_reads(read: np.ndarray, tree: CostTree, leaves: np.ndarray) -> None:
    """Set read[i, j] for every feature j on the path of row i to its leaf ``leaves[i]`` in ``tree``."""
    paths = tree.path_reads()
    for leaf in np.flatnonzero(tree.feature < 0):
        feats = np.flatnonzero(paths[leaf])
        if feats.size:
            rows = np.flatnonzero(leaves == leaf)
            read[np.ix_(rows, feats)] = 1


def penalty_scale(costs: np.ndarray | GroupedCosts) -> float:
    """Factor turning lam into the fitter's penalty: 1 / (the cost of reading every feature; with groups,
    each group once)."""
    total = float(np.sum(costs.own) + np.sum(costs.group)) if isinstance(costs, GroupedCosts) else float(np.sum(costs))
    return 1.0 / total if total > 0 else 0.0


def make_booster(
    X: np.ndarray, y_idx: np.ndarray, w: np.ndarray, n_classes: int, loss: str, costs: np.ndarray,
    step: float, max_depth: int, max_bins: int = 255, min_samples_leaf: int = 1,
    X_val: np.ndarray | None = None, **tree_options: object,
) -> Booster:
    """A booster on X binned once (``tree_options``: l2, min_child_weight, max_leaves, subsample,
    colsample, seed, groups)."""
    fitter = BinnedData.from_data(X, max_bins)
    Y = encode_targets(y_idx, loss, n_classes)
    return Booster(fitter=fitter, Y=Y, weight=np.asarray(w, dtype=np.float64), loss=loss, costs=costs, step=step,
                   max_depth=max_depth, min_samples_leaf=min_samples_leaf, X_val=X_val,
                   **tree_options)  # type: ignore[arg-type]
