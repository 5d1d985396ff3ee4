"""Training of static top-k and dynamic early-stopping naive Bayes
(Verachtert, Blockeel, Davis, IJCAI 2016) into pyruntime.nb.model.NBModel tables.

Every decision made here on validation data is made on the float32 scores the
runtime computes (NBModel.entries + sequential float32 sums), so stop points
and thresholds behave on the device exactly as they did in training.

Weighted accuracy gives a negative error cost 1 and a positive error cost
f(0)/f(1) (class frequencies of the validation set). It is computed on
integers: weight n1 for a negative row, n0 for a positive row.

The small-set rule (compiler.options.auto_folds; ``folds``): with fewer than
200 validation rows, one row is half a point and the safe criterion's
rule-of-three term cannot pass on either side (it needs 150 stopped rows), so
nb-stop judges its stop cuts and threshold on out-of-fold scores of the train
and validation rows pooled (each fold's tables fitted on the other folds, the
weights from the pooled class counts), with the rule-of-three term left out as
for K classes; the budget, order and tables stay those of today's path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from compiler.costs import FeatureCosts
from compiler.estimators import check_eval_set, check_X, encode_classes, fit_classes, seed_of
from compiler.header import check_numeric
from compiler.nb.discretize import Bins, fit_bins, parse_bins
from compiler.nb.likelihood import check_likelihood, log_likelihoods
from compiler.nb.orderings import ORDERINGS, fcbf, rank
from compiler.nb.pooled import pooled_folds
from compiler.nb.stop_cost import DEFAULT_STOP_COST, default_stop_cost
from compiler.options import CV_BELOW, auto_folds, stratified_folds
from compiler.parallel import run_map
from compiler.params import check_flag, check_n_jobs, check_number, check_text
from compiler.tasks import class_weights, weighted_accuracy
from pyruntime.nb.model import NBModel
from pyruntime.nb.multi import NBMultiModel
from pyruntime.progress import Progress, track

CRITERIA = ("agree", "paper", "relerr", "safe")
BUDGET_GRID = (5, 10, 25, 50, 100, 200, 500, 1000, 2000, 5000)
AGREEMENT = Fraction(9975, 10000)


# ---------------------------------------------------------------- metrics ----
def float32_between(lo: np.float32, hi: np.float32) -> np.float32:
    """A float32 t with lo <= t < hi (so 'score > t' keeps hi and drops lo)."""
    t = np.float32((np.float64(lo) + np.float64(hi)) / 2)
    return t if lo <= t < hi else np.float32(lo)


def best_threshold(scores: np.ndarray, y01: np.ndarray, weights: tuple[int, int]) -> np.float32:
    """float32 t maximizing weighted accuracy of 'score > t' (middle of the best plateau)."""
    s = np.asarray(scores, dtype=np.float32)
    if s.size == 0:
        return np.float32(0.0)
    order = np.argsort(s, kind="stable")
    ss, yy = s[order], y01[order]
    w = np.where(yy == 1, weights[1], weights[0]).astype(np.int64)
    # predicting positive for rows [m:] : correct = negatives below m + positives from m
    neg_below = np.concatenate([[0], np.cumsum(np.where(yy == 0, w, 0))])
    pos_from = np.concatenate([np.cumsum(np.where(yy == 1, w, 0)[::-1])[::-1], [0]])
    correct = neg_below + pos_from
    # only cut where the value changes (or at the ends)
    valid = np.ones(s.size + 1, dtype=bool)
    valid[1:-1] = ss[1:] != ss[:-1]
    correct = np.where(valid, correct, -1)
    best = np.flatnonzero(correct == correct.max())
    m = int(best[best.size // 2])
    if m == 0:
        return np.float32(np.nextafter(ss[0], np.float32(-np.inf)))
    if m == s.size:
        return ss[-1]
    return float32_between(ss[m - 1], ss[m])


# ------------------------------------------------------------ NB tables ----
@dataclass
class NBTables:
    """Log-likelihood differences for every feature (before choosing the order)."""

    bins: Bins
    d: list[np.ndarray]  # float32 per feature: l(x|1) - l(x|0) per bin
    d0: np.float32

    def model(self, order: np.ndarray, threshold: float, n_features: int,
              costs: np.ndarray | None = None) -> NBModel:
        order = np.asarray(order, dtype=np.int64)
        zero = self.bins.zero_bin[order]
        edges = [self.bins.edges[j] for j in order]
        tables = [self.d[j] for j in order]
        return NBModel(
            n_features=n_features, order=order, zero_bin=zero,
            edge_start=np.concatenate([[0], np.cumsum([e.size for e in edges])]),
            edges=np.concatenate(edges) if edges else np.zeros(0, np.float32),
            table_start=np.concatenate([[0], np.cumsum([t.size for t in tables])]),
            d=np.concatenate(tables) if tables else np.zeros(0, np.float32),
            d0=self.d0, threshold=threshold, costs=costs,
        )


def fit_tables(B: np.ndarray, y01: np.ndarray, bins: Bins, alpha: float = 1.0, likelihood: str = "counts",
               X: np.ndarray | None = None) -> tuple[NBTables, np.ndarray]:
    """Laplace-smoothed NB from binned training data (the entries from the class-bin counts, or from
    a per-class Gaussian of the raw rows X: compiler.nb.likelihood); also returns class-bin counts."""
    ll, counts = log_likelihoods(B, y01, 2, bins, alpha, likelihood, X)
    d_list = [(t[:, 1] - t[:, 0]).astype(np.float32) for t in ll]
    n1 = float(np.sum(y01 == 1))
    n0 = float(y01.size - n1)
    d0 = np.float32(np.log((n1 + alpha) / (n0 + alpha)))
    return NBTables(bins=bins, d=d_list, d0=d0), counts


def partial_scores(model: NBModel, X: np.ndarray) -> np.ndarray:
    """float32 scores after 0..k features, exactly as the runtime sums them: [rows, k+1]."""
    entries = model.entries(np.asarray(X, dtype=np.float32))
    out = np.empty((entries.shape[0], entries.shape[1] + 1), dtype=np.float32)
    out[:, 0] = np.float32(model.d0)
    acc = out[:, 0].copy()
    for i in range(entries.shape[1]):
        acc = (acc + entries[:, i]).astype(np.float32)
        out[:, i + 1] = acc
    return out


def pooled_binary_scores(bins: Bins, X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                         order: np.ndarray, alpha: float, likelihood: str,
                         folds: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold float32 partial scores [rows, k+1] of the train and validation rows pooled and their labels
    (fold after fold): per fold, two-class tables fitted on the other folds with the final bins, read in the
    final order (the binary stop cuts' small-set rule; compiler.nb.multi_train.out_of_fold_parts for K)."""
    parts = pooled_folds(X, y, X_val, y_val, folds,
                         lambda Xf, yf: fit_tables(bins.transform(Xf), yf, bins, alpha, likelihood, Xf)[0])
    return (np.concatenate([partial_scores(t.model(order, 0.0, X.shape[1]), Xf) for t, Xf, _ in parts]),
            np.concatenate([yf for _, _, yf in parts]))


# --------------------------------------------------------- stop points ----
DISAGREEMENT = 0.02  # the safe criterion's rule-of-three bound, two classes (the binary default since round 2)
DISAGREEMENT_K = 0.01  # K > 2 classes (round 45): the bound the project's sweeps give accuracy (--tolerance 0.01)


def default_disagreement(n_classes: int) -> float:
    """The safe criterion's default bound on (disagreements + 3) / stopped rows: 0.02 for two classes, 0.01 for
    K > 2 (docs/nb_stop.md, "K classes: the stop's bound")."""
    return DISAGREEMENT if n_classes <= 2 else DISAGREEMENT_K


def rule_of_three_rows(disagreement: float) -> int:
    """The fewest stopped rows on which the safe criterion's rule-of-three term, (disagreements + 3) / stopped
    <= disagreement, can pass: ceil(3 / disagreement) (150 at 0.02, 300 at 0.01), computed exactly."""
    need = Fraction(3) / Fraction(str(disagreement))
    return int(-(-need.numerator // need.denominator))


def stop_cut_folds(n_validation: int, y_pooled: np.ndarray, folds: int | None, criterion: str,
                   disagreement: float) -> int:
    """The folds nb-stop judges its stop cuts by (0: the validation part). The small-set rule
    (compiler.options.auto_folds), and, with ``folds`` not given and the safe criterion, CV_FOLDS also where the
    validation part has fewer rows than its rule-of-three term needs (``rule_of_three_rows``): there no judged
    cut could ever pass and the model would stop only at the exact overtake bounds (K classes at the 0.01 bound
    with 200-299 validation rows; two classes' 150 rows at 0.02 lie under the small-set rule's 200)."""
    judged = auto_folds(n_validation, y_pooled, folds)
    if judged or folds is not None or criterion != "safe" or n_validation >= rule_of_three_rows(disagreement):
        return judged
    return auto_folds(0, y_pooled, None)


@dataclass
class StopRule:
    criterion: str = "safe"
    support: float = 0.05
    performance: float = 0.05
    disagreement: float = DISAGREEMENT
    stop_cost: float = DEFAULT_STOP_COST  # what one stop check costs, in feature reads (the pay rule)

    def pooled(self) -> StopRule:
        """The rule for cuts judged out of fold on the pooled rows (the small-set rule): the safe criterion's
        rule-of-three term off, its disagreement bound the only one (docs/nb_stop.md)."""
        return replace(self, disagreement=1.0) if self.criterion == "safe" else self


def _scaled(a: np.ndarray, frac: Fraction, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a * den, b * num) for exact comparisons of a with frac * b (int64 when safe)."""
    big = max(int(np.max(np.abs(a), initial=0)), int(np.max(np.abs(b), initial=0)))
    if big * max(abs(frac.numerator), frac.denominator) >= 2**62:
        a, b = a.astype(object), b.astype(object)
    return a * frac.denominator, b * frac.numerator


def _accepted(early: np.ndarray, full: np.ndarray, agree: np.ndarray, wsum: np.ndarray,
              full_acc: Fraction, full_err: Fraction, rule: StopRule, n0: int = 0) -> np.ndarray:
    """Which prefixes (stopped sets) meet the criterion; arrays are cumulative sums (int). n0: rows
    already in the stopped set before the prefix (the sums include them; 0 for two classes)."""
    r1 = early > full  # strict: stopping must beat the full model on the stopped rows
    p = Fraction(str(rule.performance))
    n = np.arange(1, early.size + 1, dtype=np.int64) + n0
    if rule.criterion == "safe":
        # no loss on the stopped rows (ties allowed) and >= 99.75% agreement with the full model
        # (disagreements + 3) / stopped rows -- the rule of three: a 95% upper bound on the
        # disagreement rate when none were seen -- at most rule.disagreement; agreement >= 99.75%
        lhs, rhs = _scaled(agree.astype(np.int64), AGREEMENT, n)
        dis = n - agree.astype(np.int64)
        lhs2, rhs2 = _scaled(dis + 3, Fraction(str(rule.disagreement)), n)
        return (early >= full) & np.asarray(lhs >= rhs, dtype=bool) & np.asarray(lhs2 <= rhs2, dtype=bool)
    if rule.criterion == "relerr":
        # weighted error of the stopped rows at most (1-p) times the full model's overall error
        lhs, rhs = _scaled(wsum - early, (1 - p) * full_err, wsum)
        return r1 & np.asarray(lhs <= rhs, dtype=bool)
    lhs, rhs = _scaled(early, (1 + p) * full_acc, wsum)
    r2 = np.asarray(lhs >= rhs, dtype=bool)
    if rule.criterion == "paper":
        return r1 & r2
    lhs, rhs = _scaled(agree.astype(np.int64), AGREEMENT, n)
    return r1 & (r2 | np.asarray(lhs >= rhs, dtype=bool))


def _pick_side(s: np.ndarray, y: np.ndarray, fpred: np.ndarray, w: np.ndarray, label: int,
               full_acc: Fraction, full_err: Fraction, rule: StopRule) -> tuple[int, np.float32 | None]:
    """Largest stopped set answering `label` that meets the criterion.

    Returns (rows stopped, bound): label 1 stops rows with score > bound,
    label 0 rows with score < bound. (0, None) when no set qualifies."""
    if s.size == 0:
        return 0, None
    order = np.argsort(-s if label == 1 else s, kind="stable")
    ss, yy, ff, ww = s[order], y[order], fpred[order], w[order]
    early = np.cumsum(np.where(yy == label, ww, 0))
    full = np.cumsum(np.where(ff == yy, ww, 0))
    agree = np.cumsum(ff == label)
    wsum = np.cumsum(ww)
    ok = _accepted(early, full, agree, wsum, full_acc, full_err, rule)
    # a cut is only possible where the next score differs
    ok[:-1] &= ss[1:] != ss[:-1]
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return 0, None
    m = int(idx[-1]) + 1
    last = ss[m - 1]
    if m == ss.size:
        bound = np.float32(np.nextafter(last, np.float32(-np.inf if label == 1 else np.inf)))
    elif label == 1:
        bound = float32_between(ss[m], last)
    else:
        lo = float32_between(last, ss[m])
        # need last < bound <= ss[m]: move up one ulp from a bound equal to 'last'
        bound = lo if lo > last else np.float32(np.nextafter(lo, np.float32(np.inf)))
    return m, bound


def learn_stop_points(P: np.ndarray, y: np.ndarray, threshold: np.float32, weights: tuple[int, int],
                      rule: StopRule) -> tuple[list[tuple[int, float, float]], np.ndarray]:
    """Stop points (position, u, l) from validation partial scores P [rows, k+1].

    Returns the stop points and the mask of validation rows still running at the end."""
    k = P.shape[1] - 1
    w = np.where(y == 1, weights[1], weights[0]).astype(np.int64)
    fpred = (P[:, k] > threshold).astype(np.int64)
    total = int(w.sum())
    correct = int(w[fpred == y].sum())
    full_acc = Fraction(correct, total)
    full_err = 1 - full_acc
    running = np.ones(P.shape[0], dtype=bool)
    stops: list[tuple[int, float, float]] = []
    with Progress("nb stop points", total=max(k - 1, 0), unit="position") as progress:
        _stop_points(P, y, fpred, w, full_acc, full_err, rule, running, stops, progress)
    return stops, running


def _stop_points(P: np.ndarray, y: np.ndarray, fpred: np.ndarray, w: np.ndarray, full_acc: Fraction,
                 full_err: Fraction, rule: StopRule, running: np.ndarray, stops: list[tuple[int, float, float]],
                 progress: Progress) -> None:
    """The loop of learn_stop_points (fills running and stops in place)."""
    k = P.shape[1] - 1
    for i in range(1, k):
        progress.update()
        idx = np.flatnonzero(running)
        if idx.size == 0:
            break
        s = P[idx, i]
        m_hi, u = _pick_side(s, y[idx], fpred[idx], w[idx], 1, full_acc, full_err, rule)
        hi_mask = s > u if u is not None else np.zeros(idx.size, dtype=bool)
        rest = ~hi_mask
        m_lo, lo = _pick_side(s[rest], y[idx][rest], fpred[idx][rest], w[idx][rest], 0, full_acc, full_err,
                              rule)
        lo_mask = np.zeros(idx.size, dtype=bool)
        if lo is not None:
            lo_mask[rest] = s[rest] < lo
        stopped = int(hi_mask.sum() + lo_mask.sum())
        if stopped == 0 or stopped < rule.support * idx.size:
            continue
        # The pay rule: the features the stopped rows skip must outweigh the check every running row pays
        # (on validation). Without it a late stop point that stops few rows makes the model slower than
        # static NB at the same budget (KEEL magic: 3 stop points saved 0.49 of 5 reads, cost 1.2x).
        if stopped * (k - i) < rule.stop_cost * idx.size:
            continue
        u_val = float(u) if u is not None else float("inf")
        l_val = float(lo) if lo is not None else float("-inf")
        stops.append((i, u_val, l_val))
        running[idx[hi_mask | lo_mask]] = False


def _budget_accuracy(y_val: np.ndarray, weights: tuple[int, int], scores: np.ndarray) -> float:
    """Validation weighted accuracy of the static model whose scores are given, at its best threshold."""
    t = best_threshold(scores, y_val, weights)
    return weighted_accuracy(y_val, (scores > t).astype(int), weights)


def default_bins(n_classes: int) -> str:
    """The bins when none are given: the paper's mean-std for two classes (and the runtime's two-edge walk),
    'auto' (judged, compiler.nb.table_form) for K > 2, whose tables the runtime walks by fixed-stride edges
    whatever the bins (docs/nb_stop.md, "Judged table forms")."""
    return "auto" if n_classes > 2 else "mean-std"


# ------------------------------------------------------------ estimator ----
class NaiveBayesBudget(ClassifierMixin, BaseEstimator):
    """Naive Bayes over the top-k features of an ordering, static or with stop points.

    Parameters follow the CLI: budget (k, None = chosen on validation: for two
    classes the grid value with the best static validation weighted accuracy,
    for K > 2 the fewest features within ``tolerance`` of the best accuracy),
    ordering (auto, ig, chi2, dcp, greedy, fcbf; auto = greedy for K > 2
    classes, judged on the validation rows, or under 200 of them on out-of-fold
    scores of the train and validation rows pooled; ig for two classes or a
    class of fewer than 5 pooled rows), tolerance (None = 0.01 for K > 2
    classes with the greedy order, where every budget up to 100 is judged, on
    the same rows as the order; else 0, the best of the coarse grid), bins
    ('mean-std', 'quantile:N' or 'auto'; auto: the paper's mean-std, quantile:8 or quantile:32 with Gaussian
    entries, whichever naive Bayes on every feature is most accurate cross-validated on the pooled rows, the
    paper's unless another beats it by more than a standard error: compiler.nb.table_form; None, the default:
    'mean-std' for two classes, 'auto' for K > 2; fitted ``bins_``, ``likelihood_``, ``table_forms_``),
    early_stopping (learn stop
    points), support and performance (the paper's s and p), criterion:
    'safe' (default: no loss on the stopped validation rows, ties allowed,
    >= 99.75% agreement with the full model and a rule-of-three bound
    (disagreements + 3) / stopped <= disagreement; disagreement None, the default: 0.02 for two classes, 0.01
    for K > 2, ``disagreement_``), 'paper' (R1 strict and
    R2), 'agree' (R1 strict and [R2 or >= 99.75% agreement]), 'relerr' (R1
    strict and stopped error <= (1 - p) x full error); stop_cost (what one stop
    check costs in feature reads: a stop point is kept only if the reads its
    stopped validation rows skip are at least stop_cost x the running rows,
    so stopping never costs more than it saves; 0 turns the rule off; None:
    the measured default of ``numeric``: compiler.nb.stop_cost, kept as
    ``stop_cost_``); alpha
    (Laplace smoothing); likelihood (None: counts, or the form bins='auto' keeps;
    'counts', the paper's: the entries from the class-bin counts; 'gaussian':
    from a Gaussian per class and feature integrated over each bin, zero-inflated
    where a feature has a zero bin: compiler.nb.likelihood; with fine quantile
    bins it approaches GaussianNB), validation_fraction (used when fit gets no eval_set); costs (per-feature
    acquisition costs, an array or a compiler.costs.FeatureCosts with groups, reported per prediction; None =
    1 each); cost_aware (K > 2 classes, the greedy order: with costs that differ, each step adds the feature
    with the largest rise in log-probability per unit of what it adds to the cost, groups paid once;
    False: the largest rise, costs only reported); folds (the small-set rule: None = CV_FOLDS when the
    validation part has fewer than 200 rows and every class has CV_FOLDS rows pooled, else 1; 1 = the validation
    part alone; K >= 2: K folds whatever its size): with folds, the stop cuts and the binary threshold of nb-stop
    are judged on out-of-fold scores of the train and validation rows pooled (the binary tables stay the train
    part's: ``cut_folds_``), and for K > 2 classes the greedy order and the budget too, the final tables then
    refitted on the pooled rows (``refit_folds_``; 0 when not).

    y may hold any K >= 2 labels (``classes_``; for two, the second is the
    positive class). K > 2 classes train K-class tables with margin stop points
    (compiler.nb.multi_train; ordering 'greedy' there adds the feature that most
    raises the validation rows' log-probability of their class). Validation data,
    which picks the budget and the stop points, comes as
    ``fit(X, y, eval_set=(X_val, y_val))``, as for every frugalml estimator.
    n_jobs and scheduler run the budget search in parallel (compiler.parallel.run_map; same result).
    numeric ('float32' or 'q15'): the numeric type the tables will be exported as, whose walk the stop points are
    kept for (a two-class q15 check costs more feature reads).
    """

    def __init__(self, budget: int | None = None, ordering: str = "auto", bins: str | None = None,
                 early_stopping: bool = True, support: float = 0.05, performance: float = 0.05,
                 criterion: str = "safe", disagreement: float | None = None, stop_cost: float | None = None,
                 alpha: float = 1.0, likelihood: str | None = None, tolerance: float | None = None,
                 validation_fraction: float = 0.25, random_state: int = 0, costs: Any = None,
                 cost_aware: bool = True, folds: int | None = None, n_jobs: int | None = None,
                 scheduler: str | None = None, numeric: str = "float32") -> None:
        self.budget = budget
        self.ordering = ordering
        self.bins = bins
        self.early_stopping = early_stopping
        self.support = support
        self.performance = performance
        self.criterion = criterion
        self.disagreement = disagreement
        self.stop_cost = stop_cost
        self.alpha = alpha
        self.likelihood = likelihood
        self.tolerance = tolerance
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.costs = costs
        self.cost_aware = cost_aware
        self.folds = folds
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self.numeric = numeric

    def _check_params(self) -> None:
        if self.ordering not in ORDERINGS:
            raise ValueError(f"ordering must be one of {', '.join(ORDERINGS)}, got {self.ordering!r}")
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {self.criterion!r}")
        if self.bins not in (None, "auto"):
            parse_bins(self.bins)
        if self.likelihood is not None:
            check_likelihood(self.likelihood)
        check_number("budget", self.budget, low=1, integer=True, none_ok=True)
        check_number("support", self.support, low=0, high=1, high_open=True)
        check_number("performance", self.performance, low=0, high=1, high_open=True)
        check_number("disagreement", self.disagreement, low=0, high=1, low_open=True, none_ok=True)
        check_number("stop_cost", self.stop_cost, low=0, none_ok=True)
        check_numeric(self.numeric)
        check_number("alpha", self.alpha, low=0, low_open=True)
        check_number("validation_fraction", self.validation_fraction, low=0, high=1, high_open=True)
        check_n_jobs(self.n_jobs)
        check_text("scheduler", self.scheduler, none_ok=True)
        check_number("tolerance", self.tolerance, low=0, high=1, none_ok=True)
        check_number("folds", self.folds, low=1, integer=True, none_ok=True)
        check_flag("early_stopping", self.early_stopping)
        check_flag("cost_aware", self.cost_aware)

    def fit(self, X: Any, y: Any, eval_set: tuple[Any, Any] | None = None) -> NaiveBayesBudget:
        """Fit on (X, y); eval_set=(X_val, y_val) picks the budget and stop points (default: a
        validation_fraction split of the training data)."""
        self._check_params()
        X, y = fit_classes(self, X, y)
        seed = seed_of(self.random_state)
        if eval_set is None:
            from pyruntime.data import Split

            tr, va, _ = Split(seed=seed, train=1 - self.validation_fraction,
                              validation=self.validation_fraction).indices(y)
            if va.size == 0:
                raise ValueError(f"validation data is empty: the {y.size} rows given to naive Bayes's fit leave none "
                                 f"for its validation part (validation_fraction {self.validation_fraction}); "
                                 "give more rows or an eval_set")
            X, y, X_val, y_val = X[tr], y[tr], X[va], y[va]
        else:
            X_val, y_val = check_eval_set(eval_set)
            X_val = check_X(self, X_val, "classes_")
            y_val = encode_classes(self, y_val, "validation data")
        if X_val.shape[0] == 0:
            raise ValueError("validation data is empty")
        group_costs = self.costs if isinstance(self.costs, FeatureCosts) else None
        costs = (None if self.costs is None
                 else np.asarray(self.costs.at(0.0) if group_costs is not None else self.costs, dtype=np.float32))
        if costs is not None and costs.shape != (X.shape[1],):
            raise ValueError(f"costs must have one entry per feature ({X.shape[1]}), got {costs.shape}")
        if costs is not None and not (np.all(np.isfinite(costs)) and np.all(costs >= 0)):
            raise ValueError("costs must be finite and >= 0")
        self._choose_form(X, y, X_val, y_val, seed)
        self.stop_cost_ = (default_stop_cost(self.numeric, int(self.classes_.size)) if self.stop_cost is None
                           else float(self.stop_cost))
        self.disagreement_ = (default_disagreement(int(self.classes_.size)) if self.disagreement is None
                              else float(self.disagreement))
        if self.classes_.size > 2:
            return self._fit_multi(X, y, X_val, y_val, costs, group_costs, seed)
        bins = fit_bins(X, self.bins_)
        B = bins.transform(X)
        tables, counts = fit_tables(B, y, bins, self.alpha, self.likelihood_, X)
        self.weights_ = class_weights(y_val)
        order = self._order(tables, counts, B, X_val, y_val)
        self.ordering_ = order
        self.budget_, self.static_curve_ = self._choose_budget(tables, order, X_val, y_val)
        k = self.budget_
        static = tables.model(order[:k], 0.0, X.shape[1], costs)
        P, y_stop, w_stop = partial_scores(static, X_val), y_val, self.weights_
        rule = StopRule(self.criterion, self.support, self.performance, self.disagreement_, self.stop_cost_)
        self.refit_folds_, self.cut_folds_ = 0, 0
        if self.early_stopping and k > 1:
            y_pool = np.concatenate([y, y_val])
            folds = stop_cut_folds(X_val.shape[0], y_pool, self.folds, self.criterion, self.disagreement_)
            if folds:  # a small validation part: the stop cuts and the threshold judged out of fold on the train
                # and validation rows pooled, as for K classes (module docstring); the tables stay the train part's
                split = stratified_folds(y_pool, folds, seed, self.classes_.tolist())
                P, y_stop = pooled_binary_scores(bins, X, y, X_val, y_val, order[:k], self.alpha, self.likelihood_,
                                                 split)
                w_stop, self.cut_folds_, rule = class_weights(y_stop), folds, rule.pooled()
        t_static = best_threshold(P[:, k], y_stop, w_stop)
        stops: list[tuple[int, float, float]] = []
        t = t_static
        if self.early_stopping and k > 1:
            stops, running = learn_stop_points(P, y_stop, t_static, w_stop, rule)
            if stops and running.any():
                t = best_threshold(P[running, k], y_stop[running], w_stop)
        model = tables.model(order[:k], t, X.shape[1], costs)
        if stops:
            model = NBModel(**{**model.to_dict(), "stop_at": [s[0] for s in stops],
                               "stop_hi": [s[1] for s in stops], "stop_lo": [s[2] for s in stops]})
        self.model_ = model
        self.static_threshold_ = float(t_static)
        return self

    def _choose_form(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, seed: int) -> None:
        """bins_, likelihood_ and table_forms_: as given, or judged (bins='auto', the default for K > 2 classes:
        compiler.nb.table_form)."""
        self.table_forms_: list[dict[str, object]] = []
        bins = default_bins(int(self.classes_.size)) if self.bins is None else str(self.bins)
        if bins != "auto":
            self.bins_, self.likelihood_ = bins, self.likelihood or "counts"
            return
        from compiler.nb.table_form import choose_table_form  # noqa: PLC0415 - imports the orderings

        self.bins_, self.likelihood_, self.table_forms_ = choose_table_form(
            X, y, X_val, y_val, int(self.classes_.size), seed, self.alpha, self.likelihood)

    def _fit_multi(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                   costs: np.ndarray | None, group_costs: FeatureCosts | None, seed: int) -> NaiveBayesBudget:
        """K > 2 classes: K-class tables, the fewest features within the tolerance of the best validation
        accuracy, margin stop points (compiler.nb.multi_train)."""
        from compiler.nb.multi_train import (  # noqa: PLC0415 - imports this module
            budget_candidates,
            choose_budget,
            choose_budget_parts,
            fit_multi_tables,
            greedy_order,
            greedy_order_parts,
            learn_margin_stops,
            out_of_fold_parts,
            overtake_bounds,
            pooled_partial_scores,
        )

        bins = fit_bins(X, self.bins_)
        B = bins.transform(X)
        tables, counts = fit_multi_tables(B, y, int(self.classes_.size), bins, self.alpha, self.likelihood_, X)
        # the wrapper and the fine budget search judge on the validation rows; with fewer than CV_BELOW (the
        # sweeps' small-set rule) and CV_FOLDS rows of every class, on out-of-fold scores of the train and
        # validation rows pooled (the stop cuts' folds, below; round 34); without the folds, the filter order and
        # the coarse grid's best budget, as before round 22
        fine = X_val.shape[0] >= CV_BELOW
        y_pool = np.concatenate([y, y_val])
        folds = auto_folds(X_val.shape[0], y_pool, self.folds)
        # the stop cuts' folds: these, or CV_FOLDS where the validation part is too small for the bound alone
        # (stop_cut_folds; the order and the budget are then judged on the validation part)
        cut_folds = (stop_cut_folds(X_val.shape[0], y_pool, self.folds, self.criterion, self.disagreement_)
                     if self.early_stopping else 0)
        oof = None  # the folds' parts, fitted once for the greedy order, the budget and the stop cuts
        if (folds and (self.ordering in ("auto", "greedy") or self.early_stopping)) or cut_folds:
            split = stratified_folds(y_pool, folds or cut_folds, seed, self.classes_.tolist())
            oof = out_of_fold_parts(bins, X, y, X_val, y_val, int(self.classes_.size), self.alpha,
                                    self.likelihood_, split)
        parts = oof if folds and self.ordering in ("auto", "greedy") else None
        ordering = ("greedy" if fine or parts else "ig") if self.ordering == "auto" else self.ordering
        if ordering == "fcbf":
            order = fcbf(counts, B, counts.shape[1])
        elif ordering == "greedy":
            d = X.shape[1]
            limit = min(d, self.budget or min(d, 100))
            step = self._step_costs(costs, group_costs)
            order = (greedy_order(tables, X_val, y_val, limit, rank("ig", counts), step) if parts is None
                     else greedy_order_parts(parts, limit, rank("ig", counts), step))
        else:
            order = rank(ordering, counts)
        self.ordering_ = order
        if self.budget is not None:
            self.budget_, self.static_curve_ = min(int(self.budget), order.size), {}
        elif parts is not None and ordering == "greedy":
            self.budget_, self.static_curve_ = choose_budget_parts(
                parts, order, budget_candidates(order.size, BUDGET_GRID, every=100), X.shape[1],
                0.01 if self.tolerance is None else float(self.tolerance))
        else:
            self.budget_, self.static_curve_ = choose_budget(
                tables, order, X_val, y_val,
                budget_candidates(order.size, BUDGET_GRID, every=100 if fine else 0), X.shape[1],
                (0.01 if fine else 0.0) if self.tolerance is None else float(self.tolerance))
        self.refit_folds_, self.cut_folds_ = 0, 0
        if oof is not None:  # the choices were made on the pooled rows: the final tables learn from all of them,
            # as miser --sweep and cstc refit after cross-validation (the train part's bins, the folds' bins)
            self.refit_folds_ = folds or cut_folds
            self.cut_folds_ = self.refit_folds_ if self.early_stopping and self.budget_ > 1 else 0
            X_pool = np.concatenate([X, np.asarray(X_val, dtype=X.dtype)])
            tables, _ = fit_multi_tables(bins.transform(X_pool), y_pool, int(self.classes_.size), bins, self.alpha,
                                         self.likelihood_, X_pool)
        static = tables.model(order[: self.budget_], X.shape[1], costs)
        stops: list[tuple[int, float]] = []
        if self.early_stopping and self.budget_ > 1:
            rule = StopRule(self.criterion, self.support, self.performance, self.disagreement_, self.stop_cost_)
            P, y_stop = static.partial_scores(X_val), y_val
            if oof is not None:  # a small validation part: the cuts judged out of fold on the pooled rows (module
                # docstring)
                (P, y_stop), rule = pooled_partial_scores(oof, order[: self.budget_], X.shape[1]), rule.pooled()
            bounds = overtake_bounds(static)
            stops = learn_margin_stops(P, y_stop, bounds, rule)
            if oof is not None:  # the fold models' cuts, checked on the refitted model's scores of the same rows
                stops = learn_margin_stops(static.partial_scores(X_pool), y_pool, bounds, rule, floor=stops)
        self.model_ = tables.model(order[: self.budget_], X.shape[1], costs, stops)
        self.static_threshold_ = None
        return self

    def _step_costs(self, costs: np.ndarray | None, group_costs: FeatureCosts | None
                    ) -> Callable[[list[int]], np.ndarray] | None:
        """The K-class greedy order's cost of adding each feature to those chosen (multi_train.greedy_order_parts),
        or None: cost_aware off, no costs, or every feature costing the same with no groups (the cost-aware step
        would pick as the plain one does)."""
        if not self.cost_aware or costs is None:
            return None
        if group_costs is not None and group_costs.has_groups:
            return group_costs.marginal
        flat = FeatureCosts.constant(costs)  # the float32 costs the model reports, as the step weighs them
        return None if flat.is_uniform else flat.marginal

    def _order(self, tables: NBTables, counts: np.ndarray, B: np.ndarray, X_val: np.ndarray,
               y_val: np.ndarray) -> np.ndarray:
        if self.ordering == "auto":
            return rank("ig", counts)
        if self.ordering in ("ig", "chi2", "dcp"):
            return rank(self.ordering, counts)
        if self.ordering == "fcbf":
            return fcbf(counts, B, counts.shape[1])
        return self._greedy(tables, counts, X_val, y_val)

    def _greedy(self, tables: NBTables, counts: np.ndarray, X_val: np.ndarray, y_val: np.ndarray) -> np.ndarray:
        """Forward selection on validation weighted accuracy (ties broken by IG rank)."""
        d = X_val.shape[1]
        limit = min(d, self.budget or min(d, 100))
        ig_rank = rank("ig", counts)
        full = tables.model(np.arange(d), 0.0, d)
        E = full.entries(X_val.astype(np.float32)).astype(np.float64)
        score = np.full(X_val.shape[0], float(tables.d0))
        chosen: list[int] = []
        left = [int(j) for j in ig_rank]
        for _ in track(range(limit), "nb greedy ordering", unit="feature"):
            best_j, best_acc = left[0], -1.0
            for j in left:
                s = score + E[:, j]
                t = best_threshold(s.astype(np.float32), y_val, self.weights_)
                acc = weighted_accuracy(y_val, (s.astype(np.float32) > t).astype(int), self.weights_)
                if acc > best_acc:
                    best_j, best_acc = j, acc
            chosen.append(best_j)
            left.remove(best_j)
            score = score + E[:, best_j]
        return np.array(chosen + left, dtype=np.int64)

    def _choose_budget(self, tables: NBTables, order: np.ndarray, X_val: np.ndarray,
                       y_val: np.ndarray) -> tuple[int, dict[int, float]]:
        d = order.size
        if self.budget is not None:
            return min(int(self.budget), d), {}
        grid = sorted({min(k, d) for k in BUDGET_GRID})
        P = partial_scores(tables.model(order[: grid[-1]], 0.0, d), X_val)
        accs = run_map(partial(_budget_accuracy, y_val, self.weights_), [P[:, k] for k in grid], self.n_jobs,
                       self.scheduler, desc="nb budget search")
        curve = dict(zip(grid, accs))
        best = max(curve.values())
        return min(k for k, v in curve.items() if v >= best - (self.tolerance or 0.0)), curve

    # ------------------------------------------------------------ predict --
    def _check_fitted(self, X: Any) -> tuple[NBModel | NBMultiModel, np.ndarray]:
        X = check_X(self, X, "model_")
        return self.model_, X

    def predict(self, X: Any) -> np.ndarray:
        model, X = self._check_fitted(X)
        return self.classes_[model.predict_reference(X).label.astype(np.int64)]

    def decision_function(self, X: Any) -> np.ndarray:
        """Two classes: the signed margin of the decision: score minus the bound that decided (the stop
        point's upper bound for an early 1, its lower bound for an early 0, else the threshold); > 0 iff
        the positive class. K classes: the class scores [n, K] where the prediction stopped (argmax = the
        prediction)."""
        model, X = self._check_fitted(X)
        if isinstance(model, NBMultiModel):
            n_read = model.predict_reference(X).n_read.astype(np.int64)
            P = model.partial_scores(X)
            return P[np.arange(P.shape[0]), n_read].astype(np.float64)
        p = model.predict_reference(X)
        score = p.score.astype(np.float64)
        bound = np.full(score.shape, float(model.threshold))
        early = p.stage > 0
        s = p.stage[early].astype(np.int64) - 1
        bound[early] = np.where(p.label[early] == 1, np.asarray(model.stop_hi, np.float64)[s],
                                np.asarray(model.stop_lo, np.float64)[s])
        margin = score - bound
        return np.where(p.label == 1, np.maximum(margin, np.nextafter(0.0, 1.0)), np.minimum(margin, 0.0))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Logistic of the decision margin (log-odds units; K classes: softmax of the class scores); argmax
        agrees with predict."""
        f = self.decision_function(X)
        if f.ndim == 2:
            e = np.exp(f - f.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        p1 = 1.0 / (1.0 + np.exp(-f))
        return np.column_stack([1 - p1, p1])

    def features_read(self, X: Any) -> np.ndarray:
        model, X = self._check_fitted(X)
        return model.predict_reference(X).n_read.astype(np.int64)
