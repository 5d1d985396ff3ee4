"""Search for the models of a budget index: PolyDom's lattice search, Greedy, brute force.

Feature sets are bit masks over at most ~24 features. The cost of a set for
an item of size n is the sum of its features' polynomials c0 + c1*n + c2*n^2
(a polynomial in n); its accuracy comes from an :class:`AccuracyOracle`.

PolyDom (from "Indexing Cost Sensitive Prediction") walks the lattice of
feature sets from both ends, one level at a time (bottom: empty set, sets of
1 feature, ...; top: all features, all but one, ...), and skips a set G
without training a model on it when G cannot be on the skyline at any size:

* the assumption: adding features hurts accuracy by at most ``epsilon``,
  a(F) <= a(H) + epsilon whenever F is a subset of H (epsilon = 0 is plain
  monotonicity; epsilon > 0 is the relaxed variant for when more features
  can hurt);
* sandwich: if F < G < H with F and H evaluated and a(F) >= a(H) + epsilon,
  then a(G) <= a(H) + epsilon <= a(F); F reads a subset of G's features, so
  it costs no more at every size and G is dominated;
* covering: the special case H = all features: once some F reaches
  a(all) + epsilon, no superset of F can be on the skyline.

* approximate mode (``approx`` = alpha > 0, the paper's epsilon-of-best relaxation, Property 3.9):
  G is skipped already when a(F) >= a(H) - alpha (with epsilon: a(F) >= a(H) + epsilon - alpha).
  Under the assumption a(G) <= a(H) + epsilon <= a(F) + alpha: the cheaper evaluated F is at most
  alpha less accurate than any skipped G, so for every budget and size the kept skyline loses at
  most alpha of accuracy against brute force, and fewer sets are trained. The two parameters
  pull in opposite directions: ``epsilon`` (anti-monotonicity tolerance, Axiom 3.10) makes the
  test stricter and keeps the search exact when accuracies are not monotone; ``approx`` makes it
  looser and trades at most alpha accuracy for fewer trained models. The nodes trained for
  approx alpha are a superset of those for alpha' > alpha.

Each level is tested against the best evaluated subset and the worst
evaluated superset (sum-over-subsets dynamic programming over all masks),
so the pruning is exact under the assumption: the skyline equals the brute
force skyline whenever the oracle satisfies it.

Candidate pruning then drops evaluated sets that can never be on the
skyline in the size range: subset dominance (an evaluated subset is at
least as accurate) and polynomial dominance (another candidate is at least
as accurate and never costlier over the whole range).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone

from compiler.parallel import run_map
from compiler.standardize import NarrowColumnError
from pyruntime.progress import Progress

MAX_LATTICE_FEATURES = 24


def popcount(mask: int) -> int:
    return int(mask).bit_count()


def tie_keys(masks: list[int]) -> np.ndarray:
    """Tie-break rank of feature sets (fewer features first, then the smaller mask), as int64."""
    order = sorted(range(len(masks)), key=lambda i: (popcount(masks[i]), masks[i]))
    rank = np.empty(len(masks), dtype=np.int64)
    rank[order] = np.arange(len(masks), dtype=np.int64)
    return rank


def mask_features(mask: int) -> list[int]:
    """Feature indices of a mask, ascending."""
    return [j for j in range(int(mask).bit_length()) if (mask >> j) & 1]


def set_coef(feature_coef: np.ndarray, mask: int) -> np.ndarray:
    """Cost polynomial of a feature set: per-feature coefficients summed in ascending feature order."""
    out = np.zeros(3, dtype=np.float64)
    for j in mask_features(mask):
        out = out + feature_coef[j]
    return out


def cv_folds(y: np.ndarray, k: int, random_state: int | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) row indices of k shuffled folds, stratified when every class has k rows (k <= rows)."""
    from sklearn.model_selection import KFold, StratifiedKFold  # noqa: PLC0415

    k = min(int(k), len(y))
    if k < 2:
        return []
    strat = np.min(np.unique(y, return_counts=True)[1]) >= k
    split = (StratifiedKFold if strat else KFold)(n_splits=k, shuffle=True, random_state=random_state)
    return list(split.split(np.zeros((len(y), 1)), y))


def _fit(base: object, X: np.ndarray, y: np.ndarray, cols: list[int]) -> Any:
    """A clone of base fitted on the columns ``cols`` of X; a column too narrow for a linear model's float32
    weight is named by its place in X, not in the set."""
    try:
        return clone(base).fit(X[:, cols], y)
    except NarrowColumnError as exc:
        raise exc.in_data(cols) from None


def _n_correct(base: object, mask: int, X_tr: np.ndarray, y_tr: np.ndarray, X_te: np.ndarray, y_te: np.ndarray,
               majority: object = None) -> int:
    """Rows of (X_te, y_te) a base model fitted on the set's features of (X_tr, y_tr) gets right (the empty
    set: the majority class of y_tr)."""
    cols = mask_features(mask)
    with np.errstate(all="ignore"):  # GaussianNB on all-constant columns: nan scores, not a crash
        if not cols:
            if majority is None:
                values, counts = np.unique(y_tr, return_counts=True)
                majority = values[int(np.argmax(counts))]
            pred = np.full(y_te.shape, majority)
        else:
            pred = _fit(base, X_tr, y_tr, cols).predict(X_te[:, cols])
    return int(np.count_nonzero(pred == y_te))


class AccuracyOracle:
    """Validation accuracy of a base model trained on a feature set, cached per mask.

    The empty set predicts the most frequent training class. ``n_evaluated``
    counts distinct feature sets trained (the paper's expanded nodes).

    ``cv`` >= 2: the accuracy is instead the ``cv``-fold cross-validated accuracy over the training
    and validation rows pooled (stratified folds when every class has ``cv`` rows, shuffled with
    ``random_state``; correct rows over all rows, the empty set predicting each fold's majority
    class). Steadier than a small validation part (on 36 rows one row is 2.8 points), ``cv`` times
    the training. ``fit_model`` still fits on the training rows only.
    """

    def __init__(self, base: object, X_train: np.ndarray, y_train: np.ndarray, X_val: np.ndarray,
                 y_val: np.ndarray, cv: int = 0, random_state: int | None = 0) -> None:
        self.base = base
        self.X_train = np.asarray(X_train)
        self.y_train = np.asarray(y_train)
        self.X_val = np.asarray(X_val)
        self.y_val = np.asarray(y_val)
        self.cache: dict[int, float] = {}
        values, counts = np.unique(self.y_train, return_counts=True)
        self.majority = values[int(np.argmax(counts))]
        self.folds: list[tuple[np.ndarray, np.ndarray]] = []
        if int(cv) >= 2:
            self.X_all = np.concatenate([self.X_train, self.X_val])
            self.y_all = np.concatenate([self.y_train, self.y_val])
            self.folds = cv_folds(self.y_all, int(cv), random_state)

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])

    @property
    def n_evaluated(self) -> int:
        return len(self.cache)

    def fit_model(self, mask: int) -> object | None:
        """A base model fitted on the set's features (None for the empty set)."""
        cols = mask_features(mask)
        if not cols:
            return None
        return _fit(self.base, self.X_train, self.y_train, cols)

    def seconds_per_set(self, mask: int) -> float:
        """Wall seconds of scoring one feature set as the search scores it (each fold's fit when
        cross-validated, the training part's otherwise), measured on ``mask`` without caching: the
        time ``method="auto"`` budgets by."""
        t0 = time.perf_counter()
        self._score(int(mask))
        return time.perf_counter() - t0

    def __call__(self, mask: int) -> float:
        mask = int(mask)
        hit = self.cache.get(mask)
        if hit is not None:
            return hit
        acc = self._score(mask)
        self.cache[mask] = acc
        return acc

    def _score(self, mask: int) -> float:
        if self.folds:
            correct = sum(_n_correct(self.base, mask, self.X_all[tr], self.y_all[tr], self.X_all[te], self.y_all[te])
                          for tr, te in self.folds)
            return float(correct) / max(len(self.y_all), 1)
        return float(_n_correct(self.base, mask, self.X_train, self.y_train, self.X_val, self.y_val,
                                self.majority)) / max(len(self.y_val), 1)

    def evaluate_many(self, masks: list[int], jobs: int | None = None, scheduler: str | None = None) -> list[float]:
        """Accuracies of masks; the ones not cached yet are trained through compiler.parallel.run_map
        (the oracle, with its data, goes to the workers)."""
        todo = list(dict.fromkeys(int(m) for m in masks if int(m) not in self.cache))
        if todo:
            for m, a in zip(todo, run_map(self._score, todo, jobs, scheduler), strict=True):
                self.cache[m] = a
        return [self.cache[int(m)] for m in masks]


class TableOracle:
    """An oracle over a fixed accuracy table (tests, paper examples): acc[mask]."""

    def __init__(self, acc: np.ndarray) -> None:
        self.acc = np.asarray(acc, dtype=np.float64)
        self.cache: dict[int, float] = {}

    @property
    def n_features(self) -> int:
        return int(self.acc.shape[0]).bit_length() - 1

    @property
    def n_evaluated(self) -> int:
        return len(self.cache)

    def __call__(self, mask: int) -> float:
        v = float(self.acc[int(mask)])
        self.cache[int(mask)] = v
        return v


Oracle = Callable[[int], float]


def evaluate_many(oracle: Oracle, masks: list[int], jobs: int | None = None,
                  scheduler: str | None = None) -> list[float]:
    """oracle(m) for each mask, in parallel when the oracle supports it (AccuracyOracle.evaluate_many)."""
    many = getattr(oracle, "evaluate_many", None)
    if many is not None and (jobs not in (None, 1) or scheduler is not None):
        return list(many(masks, jobs, scheduler))
    return [oracle(int(m)) for m in masks]


@dataclass
class SearchResult:
    """Evaluated feature sets and the candidates left after pruning."""

    accuracy: dict[int, float]  # every evaluated mask -> accuracy
    candidates: list[int]  # masks that may be on the skyline somewhere in the size range
    n_lattice: int  # 2^d, the brute-force count
    pruned_sandwich: int = 0  # sets never trained thanks to the sandwich property
    pruned_covering: int = 0  # ... of which the covering property (bound from the full set) sufficed
    pruned_subset: int = 0  # evaluated sets dropped by subset dominance
    pruned_poly: int = 0  # evaluated sets dropped by polynomial dominance over the size range
    complete: bool = True  # False when max_sets stopped the search early
    orders: list[list[int]] = field(default_factory=list)  # Greedy: recorded feature orders

    @property
    def n_evaluated(self) -> int:
        return len(self.accuracy)


# -- sum over subsets / supersets ----------------------------------------------------
def _over_bits(v: np.ndarray, d: int, op: np.ufunc, into: int) -> np.ndarray:
    """v (indexed by d-bit feature sets) folded with ``op`` across every bit: each set with the bit
    ``into`` (1: from the set without it, so over subsets; 0: from the set with it, over supersets)."""
    out = v.copy()
    for j in range(d):
        w = out.reshape(-1, 2, 1 << j)
        op(w[:, into, :], w[:, 1 - into, :], out=w[:, into, :])
    return out


def _max_over_subsets(v: np.ndarray, d: int) -> np.ndarray:
    return _over_bits(v, d, np.maximum, 1)


def _min_over_supersets(v: np.ndarray, d: int) -> np.ndarray:
    return _over_bits(v, d, np.minimum, 0)


def _popcounts(d: int) -> np.ndarray:
    pc = np.zeros(1 << d, dtype=np.int64)
    for j in range(d):
        pc[1 << j : 1 << (j + 1)] = pc[: 1 << j] + 1
    return pc


# -- PolyDom lattice search ----------------------------------------------------------------
def polydom_search(oracle: Oracle, d: int, epsilon: float = 0.0, max_sets: int | None = None,
                   approx: float = 0.0, jobs: int | None = None, scheduler: str | None = None) -> SearchResult:
    """Bidirectional lattice walk with sandwich and covering pruning (see the module doc).

    ``epsilon``: tolerated monotonicity violation (exact search, more sets trained); ``approx``:
    accuracy that may be lost against the exact skyline (fewer sets trained). The sets of one level
    left after pruning are trained together (in parallel with ``jobs``/``scheduler``; same result).
    """
    if d > MAX_LATTICE_FEATURES:
        raise ValueError(f"polydom walks the lattice of 2^d feature sets; d={d} > {MAX_LATTICE_FEATURES}: "
                         "use method greedy-acc or greedy-cost")
    if epsilon < 0:
        raise ValueError("epsilon must be >= 0")
    if not approx >= 0:
        raise ValueError("approx must be >= 0")
    margin = float(epsilon) - float(approx)
    size = 1 << d
    full = size - 1
    acc = np.full(size, np.nan)
    pc = _popcounts(d)
    levels = [np.flatnonzero(pc == k) for k in range(d + 1)]
    order: list[int] = []
    lo, hi = 0, d
    while lo <= hi:
        order.append(lo)
        if hi != lo:
            order.append(hi)
        lo += 1
        hi -= 1
    result = SearchResult(accuracy={}, candidates=[], n_lattice=size)
    budget = max_sets if max_sets is not None else size
    with Progress("skyline polydom search", total=len(order), unit="level") as progress:
        for level in order:
            _polydom_level(oracle, d, margin, budget, acc, levels[level], full, result, jobs, scheduler)
            progress.update()
            progress.note(f"{result.n_evaluated} sets trained")
    return result


def _polydom_level(oracle: Oracle, d: int, epsilon: float, budget: int, acc: np.ndarray, nodes: np.ndarray,
                   full: int, result: SearchResult, jobs: int | None, scheduler: str | None) -> None:
    """One level of polydom_search: prune, then train what is left (fills acc and result)."""
    evaluated = ~np.isnan(acc)
    if evaluated.any():
        best_sub = _max_over_subsets(np.where(evaluated, acc, -np.inf), d)
        worst_sup = _min_over_supersets(np.where(evaluated, acc, np.inf), d)
        pruned = worst_sup[nodes] + epsilon <= best_sub[nodes]
        if not np.isnan(acc[full]):
            covering = pruned & (acc[full] + epsilon <= best_sub[nodes])
            result.pruned_covering += int(np.count_nonzero(covering))
        result.pruned_sandwich += int(np.count_nonzero(pruned))
        nodes = nodes[~pruned]
    room = max(budget - result.n_evaluated, 0)
    if len(nodes) > room:
        result.complete = False
        nodes = nodes[:room]
    for m, a in zip(nodes, evaluate_many(oracle, [int(m) for m in nodes], jobs, scheduler), strict=True):
        acc[m] = a
        result.accuracy[int(m)] = a


def brute_force_search(oracle: Oracle, d: int, jobs: int | None = None, scheduler: str | None = None) -> SearchResult:
    """Evaluate every feature set (the exactness reference)."""
    size = 1 << d
    accs = evaluate_many(oracle, list(range(size)), jobs, scheduler)
    return SearchResult(accuracy=dict(zip(range(size), accs)), candidates=[], n_lattice=size)


# -- Greedy ------------------------------------------------------------------------------
DEFAULT_WEIGHTS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)


# greedy runs stop after this many additions in a row without a rise in validation accuracy (SkylineClassifier's
# patience; None: the whole forward selection). On digits (64 features, split seed 0) the NB base's run stopped at
# 16 features, its best model 1.4 points under NB on every feature; run to the end it kept 45 at +2.2 (docs/skyline.md)
PATIENCE = 3


def greedy_search(oracle: Oracle, feature_coef: np.ndarray, ref_size: float, method: str = "greedy-acc",
                  weights: tuple[float, ...] = DEFAULT_WEIGHTS, max_sets: int | None = None,
                  patience: int | None = PATIENCE, jobs: int | None = None, scheduler: str | None = None
                  ) -> SearchResult:
    """Greedy forward selection, once per trade-off weight; every prefix of every run is a model.

    greedy-acc scores a candidate feature by  gain_acc - w * gain_cost,
    greedy-cost by  w * gain_acc - gain_cost  (cost first), with gain_cost the
    feature's cost at ``ref_size`` divided by the cost of all features there.
    A run stops when all features are in, or after ``patience`` additions in
    a row that did not raise the accuracy (more features only cost more; None: never, the whole forward
    selection, d (d + 1) / 2 sets per run).
    The candidates of one step are trained together (in parallel with ``jobs``/``scheduler``).
    """
    if method not in ("greedy-acc", "greedy-cost"):
        raise ValueError(f"unknown greedy method {method!r}")
    d = int(feature_coef.shape[0])
    fcost = feature_coef[:, 0] + feature_coef[:, 1] * ref_size + feature_coef[:, 2] * ref_size * ref_size
    total = float(fcost.sum())
    ncost = fcost / total if total > 0 else np.zeros(d)
    budget = max_sets if max_sets is not None else np.inf
    result = SearchResult(accuracy={}, candidates=[], n_lattice=1 << d)

    def evaluate(mask: int) -> float | None:
        if mask not in result.accuracy:
            if result.n_evaluated >= budget:
                result.complete = False
                return None
            result.accuracy[mask] = oracle(mask)
        return result.accuracy[mask]

    with Progress(f"skyline {method} search", total=len(weights), unit="weight") as progress:
        for w in weights:
            mask = 0
            base = evaluate(0)
            if base is None:
                break
            run: list[int] = []
            stalled = 0
            while len(run) < d:
                best: tuple[float, float, int] | None = None
                fresh = [mask | (1 << j) for j in range(d)
                         if not (mask >> j) & 1 and mask | (1 << j) not in result.accuracy]
                fresh = fresh[: max(int(min(budget, 1 << d)) - result.n_evaluated, 0)]
                for m, a in zip(fresh, evaluate_many(oracle, fresh, jobs, scheduler), strict=True):
                    result.accuracy[m] = a  # what evaluate() below would compute, in the same order
                for j in range(d):
                    if (mask >> j) & 1:
                        continue
                    a = evaluate(mask | (1 << j))
                    if a is None:
                        continue
                    gain = a - base
                    score = gain - w * ncost[j] if method == "greedy-acc" else w * gain - ncost[j]
                    key = (score, gain if method == "greedy-acc" else -ncost[j], -j)
                    if best is None or key > best:
                        best = key
                if best is None:
                    break
                j = -best[2]
                mask |= 1 << j
                stalled = stalled + 1 if result.accuracy[mask] <= base else 0
                base = result.accuracy[mask]
                run.append(j)
                if patience is not None and stalled >= patience:
                    break
            result.orders.append(run)
            progress.update()
    return result


# -- candidate pruning ------------------------------------------------------------------------
def _quad_min(c: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Min over [lo, hi] (hi may be inf) of the quadratics c0 + c1 n + c2 n^2 (rows of c), and argmin."""
    c0, c1, c2 = c[:, 0], c[:, 1], c[:, 2]
    pts = [np.full(c0.shape, lo)]
    if np.isfinite(hi):
        pts.append(np.full(c0.shape, hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(c2 > 0, -c1 / (2 * c2), lo)
    pts.append(np.clip(vertex, lo, hi if np.isfinite(hi) else np.inf))
    vals = np.stack([c0 + c1 * p + c2 * p * p for p in pts])
    at = np.stack(pts)
    if not np.isfinite(hi):
        # unbounded range: a negative leading term (or a zero one with negative slope) goes to -inf
        down = (c2 < 0) | ((c2 == 0) & (c1 < 0))
        vals[:, down] = -np.inf
    k = np.argmin(vals, axis=0)
    idx = np.arange(c0.shape[0])
    return vals[k, idx], at[k, idx]


def prune_candidates(accuracy: dict[int, float], feature_coef: np.ndarray, lo: float, hi: float,
                     result: SearchResult | None = None) -> list[int]:
    """Evaluated sets that may be on the skyline somewhere in [lo, hi] (see the module doc)."""
    masks = sorted(accuracy)
    acc = {m: accuracy[m] for m in masks}
    # subset dominance: an evaluated strict subset at least as accurate
    keep: list[int] = []
    d = int(feature_coef.shape[0])
    n_sub = 0
    if d <= MAX_LATTICE_FEATURES:
        size = 1 << d
        arr = np.full(size, -np.inf)
        arr[masks] = [acc[m] for m in masks]
        best = _max_over_subsets(arr, d)
        for m in masks:
            strict = max((best[m ^ (1 << j)] for j in mask_features(m)), default=-np.inf)
            if strict >= acc[m]:
                n_sub += 1
            else:
                keep.append(m)
    elif d <= 64:
        bits = np.array(masks, dtype=np.uint64)
        accs = np.array([acc[m] for m in masks])
        for i, m in enumerate(masks):
            sub = ((bits & bits[i]) == bits) & (bits != bits[i]) & (accs >= accs[i])
            if sub.any():
                n_sub += 1
            else:
                keep.append(m)
    else:
        for m in masks:
            if any((s & m) == s and s != m and acc[s] >= acc[m] for s in masks):
                n_sub += 1
            else:
                keep.append(m)
    # polynomial dominance over the size range
    coef = np.array([set_coef(feature_coef, m) for m in keep]).reshape(-1, 3)
    a = np.array([acc[m] for m in keep])
    tie = tie_keys(keep)
    survivors: list[int] = []
    n_poly = 0
    for i, m in enumerate(keep):
        # a rival at least as accurate that never costs more on the range (strictly less when it would
        # lose the tie-break at equal cost) precedes m in the skyline scan at every size
        first = (a > a[i]) | ((a == a[i]) & (tie < tie[i]))
        later = (a == a[i]) & (tie > tie[i])
        rivals = first | later
        if not rivals.any():
            survivors.append(m)
            continue
        diff = coef[i] - coef[rivals]
        coefwise = np.all(diff >= 0, axis=1)
        dmin, at = _quad_min(diff, lo, hi)
        scale = np.abs(coef[i, 0]) + np.abs(coef[i, 1] * at) + np.abs(coef[i, 2] * at * at) + 1.0
        strict = dmin > 1e-9 * scale
        if np.any((first[rivals] & (coefwise | strict)) | (later[rivals] & strict)):
            n_poly += 1
        else:
            survivors.append(m)
    if result is not None:
        result.pruned_subset = n_sub
        result.pruned_poly = n_poly
        result.candidates = survivors
    return survivors
