"""Budget sweep for static and early-stopping NB that fits bins, tables and the
ordering once per split and derives every (budget, criterion) model from them.

It repeats NaiveBayesBudget.fit step by step (same functions, same order), so
the models are the estimator's; `same_as_estimator` checks that on one case.
Under the small-set rule (fewer than 200 validation rows: compiler.options.auto_folds)
the stop points and nb-stop's threshold come from out-of-fold scores of the train
and validation rows pooled, as the estimator's do (compiler.nb.train,
pooled_binary_scores); the static models keep the validation part's threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.nb.discretize import fit_bins
from compiler.nb.orderings import rank
from compiler.nb.train import (
    NaiveBayesBudget,
    NBTables,
    StopRule,
    best_threshold,
    fit_tables,
    learn_stop_points,
    partial_scores,
    pooled_binary_scores,
)
from compiler.options import auto_folds, stratified_folds
from compiler.tasks import class_weights, weighted_accuracy
from pyruntime.nb.model import NBModel


@dataclass
class Base:
    tables: NBTables
    order: np.ndarray
    P: np.ndarray  # validation partial scores up to the largest budget
    y_val: np.ndarray
    weights: tuple[int, int]
    n_features: int
    P_cut: np.ndarray | None = None  # the small-set rule: pooled out-of-fold partial scores the cuts learn from,
    y_cut: np.ndarray | None = None  # their labels
    w_cut: tuple[int, int] | None = None  # and the class weights of those labels


def fit_base(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, ordering: str,
             kmax: int, bins: str = "mean-std", seed: int = 0) -> Base:
    b = fit_bins(X, bins)
    tables, counts = fit_tables(b.transform(X), y, b, 1.0)
    order = rank(ordering, counts)
    kmax = min(kmax, order.size)
    P = partial_scores(tables.model(order[:kmax], 0.0, X.shape[1]), X_val)
    base = Base(tables, order, P, np.asarray(y_val, np.int64), class_weights(y_val), X.shape[1])
    y_pool = np.concatenate([y, y_val])
    folds = auto_folds(len(y_val), y_pool, None)
    if folds:  # a prefix of the scores is the scores of a smaller budget: one pass serves every k
        base.P_cut, base.y_cut = pooled_binary_scores(b, X, y, X_val, y_val, order[:kmax], 1.0, "counts",
                                                      stratified_folds(y_pool, folds, seed))
        base.w_cut = class_weights(base.y_cut)
    return base


def models_at(base: Base, k: int, criteria: tuple[str, ...]) -> tuple[dict[str, NBModel], float]:
    """{'static': ..., criterion: ...} at budget k, and the static validation weighted accuracy."""
    P = base.P[:, : k + 1]
    t_static = best_threshold(P[:, k], base.y_val, base.weights)
    static = base.tables.model(base.order[:k], t_static, base.n_features)
    val_wa = weighted_accuracy(base.y_val, (P[:, k] > t_static).astype(int), base.weights)
    out = {"static": static}
    Pc, yc, wc, t_cut = P, base.y_val, base.weights, t_static
    if base.P_cut is not None and k > 1:
        Pc, yc, wc = base.P_cut[:, : k + 1], base.y_cut, base.w_cut
        t_cut = best_threshold(Pc[:, k], yc, wc)
    for crit in criteria:
        stops: list[tuple[int, float, float]] = []
        t = t_cut
        rule = StopRule(crit) if base.P_cut is None else StopRule(crit).pooled()
        if k > 1:
            stops, running = learn_stop_points(Pc, yc, t_cut, wc, rule)
            if stops and running.any():
                t = best_threshold(Pc[running, k], yc[running], wc)
        m = base.tables.model(base.order[:k], t, base.n_features)
        if stops:
            m = NBModel(**{**m.to_dict(), "stop_at": [s[0] for s in stops],
                           "stop_hi": [s[1] for s in stops], "stop_lo": [s[2] for s in stops]})
        out[crit] = m
    return out, val_wa


def same_as_estimator(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, ordering: str,
                      k: int, criterion: str) -> bool:
    """True when models_at gives exactly NaiveBayesBudget(...).fit(...).model_."""
    mine = models_at(fit_base(X, y, X_val, y_val, ordering, k), k, (criterion,))[0][criterion].to_dict()
    est = NaiveBayesBudget(budget=k, ordering=ordering, criterion=criterion).fit(
        X, y, eval_set=(X_val, y_val))
    ref = est.model_.to_dict()
    return all(np.array_equal(np.asarray(mine[key]), np.asarray(ref[key]))
               for key in ref if ref[key] is not None)
