"""Memory budgets of the booster's fit, traced (tracemalloc sees every numpy array), so that they cannot creep.

Issue 22 asks for training memory within 3x the binned data. A fit holds the 1-byte codes (n x d), a pool of
histograms that does not grow with the rows (d x bins x 20 bytes each: gradient and hessian sums in float64, the
count in int32; one per leaf that may still split: at lambda 0 and best first, at most max_leaves / 2 + 1, and never
more than max_leaves - 2) and a few
arrays of one value per row: gradient and hessian (float64), targets and scores (float32), the row list (int32)
and one scratch buffer (the partition's int32 rows; the gradients are gathered a block of rows at a time).
docs/benchmarks.md has the peaks at 25k-400k rows (``benchmarks/cegb.py --rows``)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from compiler.boosting.binning import FIT_SAMPLE, Binner, as_float32_matrix
from compiler.costs import FeatureCosts, load_costs
from compiler.trees.miser import GreedyMiserClassifier

PER_ROW_BYTES = 36  # beyond the codes and the histogram pool; today about 34 for a binary fit
FIXED_BYTES = 128 * 1024  # thresholds, tree lists and the like: today about 100 KB


def traced_peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("lam", "max_depth", "held"), [(0.0, None, 8 // 2 + 1), (0.0, 3, 4), (1.0, None, 8 - 2)])
def test_binary_fit_peak_is_the_codes_the_histogram_pool_and_a_few_values_per_row(lam: float, max_depth: int | None,
                                                                                    held: int) -> None:
    """The default tree (8 leaves, best first) and the paper's depth-3 one (4 histograms at its deepest level) at
    lambda 0; the default tree at lambda 1 (the CLI's default), where a penalised leaf's bound is its penalty-free
    gain and the pruning keeps more leaves: before the tree's last split but one every other leaf is evaluated under
    the final penalties and releases its histogram, so at most 6 of 8 leaves' are held (7 before round 59: 3.15x the
    codes at 25,000 rows, over issue 22's 3x)."""
    n, d = 20_000, 50
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X[:, :10].sum(axis=1) + rng.normal(size=n) > 0).astype(np.int64)
    est = GreedyMiserClassifier(lam=lam, n_trees=3, max_depth=max_depth, validation_fraction=0.0,
                                n_iter_no_change=None)
    peak = traced_peak(lambda: est.fit(X, y))
    bins = 1 + max(t.size for t in Binner(255).fit(X).thresholds_)
    pool = held * d * bins * 20
    budget = n * d + pool + PER_ROW_BYTES * n + FIXED_BYTES
    assert peak <= budget, f"peak {peak} bytes > budget {budget} ({(peak - n * d - pool) / n:.1f} bytes per row)"


def test_binning_a_large_set_samples_one_column_at_a_time() -> None:
    X = np.random.default_rng(1).normal(size=(FIT_SAMPLE + 50_000, 16)).astype(np.float32)
    peak = traced_peak(lambda: Binner(255).fit(X))
    assert peak < 0.6 * X.nbytes  # a copy of the sampled rows alone would be 0.8x


def test_the_finiteness_check_allocates_no_mask() -> None:
    X = np.random.default_rng(2).normal(size=(100_000, 20)).astype(np.float32)
    assert traced_peak(lambda: as_float32_matrix(X)) < X.nbytes // 100


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e300])
def test_a_value_that_is_not_a_finite_float32_is_refused(bad: float) -> None:
    X = np.zeros((50, 3))
    X[17, 2] = bad  # 1e300 overflows to inf in float32
    with pytest.raises(ValueError, match="NaN or infinite"):
        as_float32_matrix(X)
    assert as_float32_matrix(np.zeros((0, 3))).shape == (0, 3)


def _pool_watch(monkeypatch: pytest.MonkeyPatch, prune: bool) -> list[int]:
    """After every split, the histograms the tree holds (its kept leaves' and the new child's); ``prune=False``:
    every open leaf's histogram kept, the old pool."""
    from compiler.boosting import grow  # noqa: PLC0415

    held: list[int] = []
    split = grow._Grower.split

    def watched(self: grow._Grower, *args: object, **kwargs: object) -> tuple[int, int]:
        out = split(self, *args, **kwargs)  # type: ignore[arg-type]
        held.append(sum(node.hist is not None for node in self.nodes))
        return out

    monkeypatch.setattr(grow._Grower, "split", watched)
    if not prune:  # the grower before round 57: every open leaf keeps its histogram and is evaluated at every step
        monkeypatch.setattr(grow._Grower, "_hopeless_dropped", lambda self, open_, gains, remaining: open_)
        monkeypatch.setattr(grow._Grower, "_settle", lambda self, open_, j: self._mark_used(j))
        monkeypatch.setattr(grow._Grower, "evaluate", lambda self, node: self.best_split(node))
    return held


@pytest.mark.parametrize(("lam", "charge", "K", "class_trees", "groups"), [
    (0.0, "model", 2, "separate", False), (0.3, "model", 2, "separate", False), (0.1, "row", 2, "separate", False),
    (0.0, "model", 3, "separate", False), (0.5, "model", 3, "separate", False), (0.0, "model", 3, "shared", False),
    (0.5, "model", 3, "shared", False), (0.05, "model", 2, "separate", True), (0.05, "model", 3, "shared", True)])
def test_a_leaf_wise_tree_keeps_only_the_histograms_of_leaves_that_may_still_split(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lam: float, charge: str, K: int, class_trees: str,
        groups: bool) -> None:
    """Best first with L splits to go, only the leaves that may be among them keep a histogram (at lambda 0 at most
    max_leaves / 2 + 1 at a time, 7 for 8 leaves before), an open leaf is evaluated again only when the penalties
    changed, and every tree is the one grown by the grower that kept every histogram and evaluated every leaf at
    every step. Feature groups change several penalties at once when a feature is bought."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 12)).astype(np.float32)
    y = np.argmax(X[:, :K] + 0.6 * rng.normal(size=(3000, K)), axis=1) if K > 2 else \
        (X[:, :4].sum(axis=1) + rng.normal(size=3000) > 0).astype(np.int64)
    costs: np.ndarray | FeatureCosts = np.linspace(1.0, 12.0, 12)
    if groups:  # three groups of four features (costs 20, 8, 2), each feature 1 of its own
        rows = [f"g{k},{c}," for k, c in enumerate((20, 8, 2))] + [f"f{j},1,g{j // 4}" for j in range(12)]
        (tmp_path / "costs.csv").write_text("feature,cost,group\n" + "\n".join(rows) + "\n")
        costs = load_costs(tmp_path / "costs.csv", [f"f{j}" for j in range(12)])
        assert costs.has_groups

    def fit(prune: bool) -> tuple[list[np.ndarray], list[int]]:
        with monkeypatch.context() as m:
            held = _pool_watch(m, prune)
            est = GreedyMiserClassifier(lam=lam, n_trees=8, costs=costs, charge=charge, class_trees=class_trees,
                                        validation_fraction=0.0, n_iter_no_change=None).fit(X, y)
        return [np.concatenate([t.feature, t.bin, t.value.view(np.int64)]) for t in est.trees_], held

    pruned, held = fit(True)
    kept, held_all = fit(False)
    assert len(pruned) == len(kept) and all(np.array_equal(a, b) for a, b in zip(pruned, kept, strict=True))
    # the last split but one settles the other leaves (the penalties are final) and releases their histograms
    assert max(held) <= 8 - 2 < max(held_all)  # 7 kept before
    if lam == 0:  # a penalised leaf is bounded by its gain without penalty: it may keep more
        assert max(held) <= 8 // 2 + 1 < max(held_all)
