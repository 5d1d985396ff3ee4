"""Training of K-class naive Bayes (K > 2) into pyruntime NBMultiModel tables: the class log-likelihood
tables, the budget and the generalised stop rule.

The stop rule: at a stop point after i features, a row stops with the leader's answer when the leader's
float32 margin over the runner-up is larger than the stop point's margin. The margin is learned on the
validation rows still running, as the binary rule learns its bounds: the rows sorted by margin, the largest
set above a cut that meets the criterion (``compiler.nb.train._accepted``: the early answers are at least as
accurate as the full model's on those rows, and agree with it) -- and it is never above the bound past
which no class can overtake the leader (the sum over the remaining positions of each position's largest
spread between two classes' entries), so rows past that bound stop whatever validation says. A stop point
is kept only when it stops enough rows (support) and pays for its check (the pay rule).

A validation part of fewer than CV_BELOW (200) rows cannot meet the default criterion ('safe' bounds the
disagreement rate by the rule of three, (disagreements + 3) / stopped <= 1% for K > 2: 300 stopped rows at least), so
such a model never stopped before its last feature. There the cuts are learned on out-of-fold partial scores
of the train and validation rows pooled (CV_FOLDS folds, the final bins and order: pooled_partial_scores), and
'safe' keeps its other two terms, no loss on the stopped rows and 99.75% agreement with the full model (on
fewer than 400 pooled rows: no stopped row whose early answer differs from its fold model's full answer),
without the rule-of-three term no small set can meet. The exact overtake bound still caps every cut. Since
every choice is then made on the pooled rows, the final tables are refitted on all of them (with the train
part's bins), as miser --sweep and cstc refit after cross-validation, and the cuts are checked on the refitted
model's own scores of those rows (learn_margin_stops with floor: each raised to what the criterion picks there).

Every decision is made on the float32 sums the runtime computes (NBMultiModel.partial_scores). Accuracy is
plain (every validation row weighs 1); `eval` reports balanced accuracy beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from compiler.nb.discretize import Bins
from compiler.nb.likelihood import log_likelihoods
from compiler.nb.pooled import pooled_folds
from compiler.nb.train import StopRule, _accepted, float32_between
from pyruntime.nb.multi import NBMultiModel, leader_margin
from pyruntime.progress import track


@dataclass
class NBMultiTables:
    """Class log-likelihoods of every feature (before choosing the order)."""

    bins: Bins
    ll: list[np.ndarray]  # float32 [n_bins_j, K] per feature: l(x | c)
    d0: np.ndarray  # float32 [K]: l(c)

    @property
    def n_classes(self) -> int:
        return int(self.d0.shape[0])

    def model(self, order: np.ndarray, n_features: int, costs: np.ndarray | None = None,
              stops: list[tuple[int, float]] | None = None) -> NBMultiModel:
        order = np.asarray(order, dtype=np.int64)
        edges = [self.bins.edges[j] for j in order]
        tables = [self.ll[j] for j in order]
        stops = stops or []
        return NBMultiModel(
            n_features=n_features, n_classes=self.n_classes, order=order, zero_bin=self.bins.zero_bin[order],
            edge_start=np.concatenate([[0], np.cumsum([e.size for e in edges])]),
            edges=np.concatenate(edges) if edges else np.zeros(0, np.float32),
            table_start=np.concatenate([[0], np.cumsum([t.shape[0] for t in tables])]),
            d=np.concatenate(tables) if tables else np.zeros((0, self.n_classes), np.float32),
            d0=self.d0, stop_at=[s[0] for s in stops], stop_margin=[s[1] for s in stops], costs=costs,
        )


def fit_multi_tables(B: np.ndarray, y: np.ndarray, n_classes: int, bins: Bins, alpha: float = 1.0,
                     likelihood: str = "counts", X: np.ndarray | None = None) -> tuple[NBMultiTables, np.ndarray]:
    """Laplace-smoothed K-class NB from binned training data (the entries from the class-bin counts, or
    from a per-class Gaussian of the raw rows X: compiler.nb.likelihood); also returns the class-bin counts."""
    ll64, counts = log_likelihoods(B, y, n_classes, bins, alpha, likelihood, X)
    ll = [t.astype(np.float32) for t in ll64]
    return NBMultiTables(bins=bins, ll=ll, d0=log_prior(y, n_classes, alpha).astype(np.float32)), counts


def log_prior(y: np.ndarray, n_classes: int, alpha: float = 1.0) -> np.ndarray:
    """The runtime's Laplace-smoothed log prior of each class, float64: log((n_c + alpha) / (n + alpha K))."""
    prior = np.bincount(y, minlength=n_classes).astype(np.float64)
    return np.log((prior + alpha) / (prior.sum() + alpha * n_classes))


def overtake_bounds(model: NBMultiModel) -> np.ndarray:
    """bound[i] (i = 0 .. n_used): the most any class can gain on any other over positions i .. n_used-1
    (per position the largest spread between two classes' entries of one bin), rounded up into float32.
    A leader whose margin after i features is larger keeps the lead to the end."""
    spread = np.zeros(model.n_used, dtype=np.float64)
    for i in range(model.n_used):
        t = model.d[model.table_start[i]:model.table_start[i + 1]].astype(np.float64)
        spread[i] = float(np.max(t.max(axis=1) - t.min(axis=1), initial=0.0))
    rest = np.concatenate([np.cumsum(spread[::-1])[::-1], [0.0]])
    # float32 sums round: leave a relative and an absolute slack on top of the exact bound
    return (rest * (1 + 1e-5) + 1e-4).astype(np.float32)


@dataclass
class Stopped:
    """Counts over the validation rows stopped at earlier stop points: rows, early answers right, full
    model's answers right, early answers equal to the full model's."""

    n: int = 0
    early_ok: int = 0
    full_ok: int = 0
    agree: int = 0

    def add(self, early: np.ndarray, full: np.ndarray, y: np.ndarray) -> None:
        self.n += int(early.size)
        self.early_ok += int(np.count_nonzero(early == y))
        self.full_ok += int(np.count_nonzero(full == y))
        self.agree += int(np.count_nonzero(early == full))


def _pick_margin(margin: np.ndarray, early: np.ndarray, full: np.ndarray, y: np.ndarray,
                 rule: StopRule, before: Stopped | None = None) -> np.float32 | None:
    """The smallest margin cut whose stopped set (margin > cut) meets the criterion, or None. With
    ``before`` the criterion holds on the union of that set and the rows stopped earlier (the early
    answers of the whole model so far); without it, on the set alone."""
    if margin.size == 0:
        return None
    b = before or Stopped()
    order = np.argsort(-margin, kind="stable")
    mm, ee, ff, yy = margin[order], early[order], full[order], y[order]
    ones = np.ones(mm.size, dtype=np.int64)
    e_ok = np.cumsum((ee == yy).astype(np.int64)) + b.early_ok
    f_ok = np.cumsum((ff == yy).astype(np.int64)) + b.full_ok
    agree = np.cumsum((ee == ff).astype(np.int64)) + b.agree
    wsum = np.cumsum(ones) + b.n
    full_acc = Fraction(int(f_ok[-1]), int(wsum[-1]))
    ok = _accepted(e_ok, f_ok, agree, wsum, full_acc, 1 - full_acc, rule, b.n)
    ok[:-1] &= mm[1:] != mm[:-1]
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return None
    m = int(idx[-1]) + 1
    if m == mm.size:
        return np.float32(np.nextafter(mm[-1], np.float32(-np.inf)))
    return float32_between(mm[m], mm[m - 1])


def learn_margin_stops(P: np.ndarray, y: np.ndarray, bounds: np.ndarray, rule: StopRule,
                       cumulative: bool = True, floor: list[tuple[int, float]] | None = None
                       ) -> list[tuple[int, float]]:
    """Stop points (position, margin) from partial class scores P [rows, k+1, K] and labels y. cumulative: each
    stop point's cut is judged on all rows stopped so far (the criterion's counts pooled over the stop points),
    else on its own rows only.

    floor: the refit check of out-of-fold cuts. Only the given stop points are walked, each cut the larger of the
    given one and the one the criterion picks on these rows (the refitted model's own scores of the pooled rows),
    and a point that then fails the support or pay rule is dropped. The fold models are each fitted on four
    fifths of the rows; the refitted model's margins are not theirs, and a fold model's cut can stop a pooled row
    the refitted model itself answers otherwise at the end (sklearn:wine, split seed 3: one such row at the stop
    point after 2 features, whose cut then stopped 3 of the 35 test rows against the full answer)."""
    k = P.shape[1] - 1
    full, _ = leader_margin(P[:, k])
    running = np.ones(P.shape[0], dtype=bool)
    stops: list[tuple[int, float]] = []
    before = Stopped() if cumulative else None
    low = dict(floor) if floor is not None else {}
    for i in range(1, k) if floor is None else sorted(low):
        idx = np.flatnonzero(running)
        if idx.size == 0:
            break
        lead, margin = leader_margin(P[idx, i])
        cut = _pick_margin(margin, lead, full[idx], y[idx], rule, before)
        cut = bounds[i] if cut is None else np.float32(min(cut, bounds[i]))
        if i in low:
            cut = max(cut, np.float32(low[i]))
        stopped = margin > cut
        n_stop = int(stopped.sum())
        if n_stop == 0 or n_stop < rule.support * idx.size or n_stop * (k - i) < rule.stop_cost * idx.size:
            continue
        stops.append((i, float(cut)))
        running[idx[stopped]] = False
        if before is not None:
            before.add(lead[stopped], full[idx][stopped], y[idx][stopped])
    return stops


def pooled_partial_scores(parts: list[tuple[NBMultiTables, np.ndarray, np.ndarray]], order: np.ndarray,
                          n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold partial class scores [rows, k+1, K] of the train and validation rows pooled, and their labels
    (rows in fold order): each fold's rows scored by the tables fitted on the other folds (``parts``:
    out_of_fold_parts, the final model's bins), with the final model's order (``order``: its k positions), so a
    stop point's cut is judged on every labelled row a small set has instead of its few validation rows alone."""
    scores = [tables.model(order, n_features).partial_scores(X) for tables, X, _ in parts]
    return np.concatenate(scores), np.concatenate([y for _, _, y in parts])


GREEDY_BLOCK = 4_000_000  # entries of one block of the greedy ordering's products (32 MB of float64)


def greedy_order(tables: NBMultiTables, X_val: np.ndarray, y_val: np.ndarray, limit: int,
                 tie_order: np.ndarray, step_costs: Callable[[list[int]], np.ndarray] | None = None) -> np.ndarray:
    """Forward selection: each step adds the feature that most raises the validation rows' mean
    log-probability of their true class (the softmax of the class sums, float64 from the float32 tables),
    ``limit`` steps; the features left follow in ``tie_order`` (which also breaks ties: the first wins).

    The log-probability, not the accuracy the binary wrapper counts: with K classes the argmax of a few
    features moves on few rows per step, so accuracy ties over many candidates, while the likelihood
    ranks every candidate (digits: 0.93 test accuracy at 20 of 64 features, against 0.86 for the
    information-gain order; docs/multiclass.md)."""
    return greedy_order_parts([(tables, X_val, y_val)], limit, tie_order, step_costs)


class _GreedyPart:
    """One scored part of the greedy ordering: its rows' bins, labels and running class sums under one
    set of tables."""

    def __init__(self, tables: NBMultiTables, X: np.ndarray, y: np.ndarray) -> None:
        self.tables = tables
        self.B = tables.bins.transform(np.asarray(X, dtype=np.float32))  # int8/int16: one byte or two per entry
        self.y = np.asarray(y, dtype=np.intp)
        self.rows = np.arange(self.B.shape[0])
        self.offset = np.concatenate([[0], np.cumsum([t.shape[0] for t in tables.ll])])
        self.width = np.diff(self.offset)
        self.LL = np.concatenate([t.astype(np.float64) for t in tables.ll])  # [all bins, K]
        self.W = np.exp(self.LL.T)  # [K, all bins]
        self.score = np.tile(tables.d0.astype(np.float64), (self.B.shape[0], 1))

    def gains(self, cand: np.ndarray) -> tuple[np.ndarray, float]:
        """The rows' mean log-probability of their class with each candidate feature added, and with the
        features added so far (the cost-aware step's baseline)."""
        # log p(class) = S[y] + l_j(x_j | y) - logsumexp_c(S[c] + l_j(x_j | c)). A feature's entries depend
        # only on its bin, so sum_c exp(S[c] - max S) exp(l_j(b | c)) for every bin b of every feature is one
        # product A @ W (W: the exp of every feature's table, its bins as columns); no exp per row and candidate.
        n, rows, y, offset = self.B.shape[0], self.rows, self.y, self.offset
        top = self.score.max(axis=1)
        A = np.exp(self.score - top[:, None])
        gains = np.empty(cand.size)
        a = 0
        while a < cand.size:  # blocks of at most GREEDY_BLOCK entries of M, at least one feature
            e = a + max(1, int(np.searchsorted(np.cumsum(self.width[cand[a:]]), GREEDY_BLOCK // max(1, n),
                                               "right")))
            js = cand[a:e]
            lo, hi = int(offset[js[0]]), int(offset[js[-1] + 1])
            col = offset[js][None, :] + self.B[:, js]  # [n, block]: the column of row r's bin of feature j
            M = A @ self.W[:, lo:hi]  # [n, the bins of features js[0] .. js[-1]]
            gains[a:e] = (self.LL[col, y[:, None]] - np.log(M[rows[:, None], col - lo])).mean(axis=0)
            a = e
        now = float((self.score[rows, y] - (top + np.log(A.sum(axis=1)))).mean())
        return gains + (self.score[rows, y] - top).mean(), now  # the shift: the same for every candidate

    def add(self, j: int) -> None:
        self.score += self.tables.ll[j][self.B[:, j]]


def cost_aware_pick(gain: np.ndarray, cost: np.ndarray) -> int:
    """The index of the candidate with the largest gain per unit of cost among those whose gain is positive
    (a free candidate with a gain first, the largest gain among them); no positive gain: the largest gain.
    Ties: the first."""
    pos = gain > 0
    if not pos.any():
        return int(np.argmax(gain))
    free = pos & (cost <= 0)
    if free.any():
        return int(np.argmax(np.where(free, gain, -np.inf)))
    return int(np.argmax(np.where(pos, gain / np.where(pos, cost, 1.0), -np.inf)))


def greedy_order_parts(parts: list[tuple[NBMultiTables, np.ndarray, np.ndarray]], limit: int,
                       tie_order: np.ndarray,
                       step_costs: Callable[[list[int]], np.ndarray] | None = None) -> np.ndarray:
    """greedy_order over several scored parts, each (tables, rows, labels): a step's gain is the mean
    log-probability over all the parts' rows (the folds of a small set: each fold's rows scored by the
    tables fitted on the other folds, out_of_fold_parts). One part: greedy_order.

    ``step_costs`` (the cost-aware step): given the features chosen so far, what adding each feature would
    cost (its own cost and the groups not yet paid: FeatureCosts.marginal). Each step then adds the feature
    with the largest rise in the mean log-probability per unit of that cost (cost_aware_pick), so a cheap
    feature that tells almost as much comes before a dear one; None: the largest rise."""
    scored = [_GreedyPart(t, X, y) for t, X, y in parts]
    n_rows = np.array([p.B.shape[0] for p in scored], dtype=np.float64)
    d = scored[0].B.shape[1]
    left = [int(j) for j in tie_order]
    chosen: list[int] = []
    for _ in track(range(min(limit, len(left))), "nb greedy ordering", unit="feature"):
        cand = np.sort(np.asarray(left, dtype=np.intp))  # blocks of neighbouring features share W's columns
        steps = [p.gains(cand) for p in scored]
        if len(scored) == 1:  # one part: its own mean, so greedy_order's sums stay bit-identical to before parts
            gains, now = steps[0]
        else:
            gains = sum(n * g for n, (g, _) in zip(n_rows, steps)) / n_rows.sum()
            now = sum(n * v for n, (_, v) in zip(n_rows, steps)) / n_rows.sum()
        by_feature = np.empty(d)
        by_feature[cand] = gains
        if step_costs is None:
            at = int(np.argmax(by_feature[left]))  # ties: the first in tie_order
        else:
            at = cost_aware_pick(by_feature[left] - now, np.asarray(step_costs(chosen), dtype=np.float64)[left])
        j = left.pop(at)
        chosen.append(j)
        for p in scored:
            p.add(j)
    return np.array(chosen + left, dtype=np.int64)


def out_of_fold_parts(bins: Bins, X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                      n_classes: int, alpha: float, likelihood: str, folds: list[tuple[np.ndarray, np.ndarray]]
                      ) -> list[tuple[NBMultiTables, np.ndarray, np.ndarray]]:
    """The train and validation rows pooled, split by ``folds``: per fold (the tables fitted on the other
    folds with the final bins, the fold's rows, their labels)."""
    return pooled_folds(X, y, X_val, y_val, folds, lambda Xf, yf: fit_multi_tables(
        bins.transform(Xf), yf, n_classes, bins, alpha, likelihood, Xf)[0])


def budget_candidates(d: int, grid: tuple[int, ...], every: int = 100) -> list[int]:
    """Budgets the K-class search judges: every k up to ``every`` (0: none), then the grid's values, capped
    at d."""
    return sorted(set(range(1, min(d, every) + 1)) | {min(k, d) for k in grid})


def choose_budget(tables: NBMultiTables, order: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                  ks: list[int], n_features: int, tolerance: float) -> tuple[int, dict[int, float]]:
    """The fewest features whose validation accuracy is within ``tolerance`` of the best budget's (the
    sweeps' rule, compiler.options.cheapest_within; 0: the best, the smallest on ties) and the curve."""
    return choose_budget_parts([(tables, X_val, y_val)], order, ks, n_features, tolerance)


def choose_budget_parts(parts: list[tuple[NBMultiTables, np.ndarray, np.ndarray]], order: np.ndarray,
                        ks: list[int], n_features: int, tolerance: float) -> tuple[int, dict[int, float]]:
    """choose_budget with the accuracy of each budget counted over several scored parts (the folds of a
    small set, out_of_fold_parts)."""
    right = dict.fromkeys(ks, 0)
    n = 0
    for tables, X, y in parts:
        P = tables.model(order[: ks[-1]], n_features).partial_scores(X)
        for k in ks:
            right[k] += int(np.count_nonzero(np.argmax(P[:, k], axis=1) == y))
        n += int(y.shape[0])
    curve = {k: right[k] / n for k in ks}
    best = max(curve.values())
    return min(k for k, v in curve.items() if v >= best - tolerance), curve
