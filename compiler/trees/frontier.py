"""The default cascade as a scikit-learn estimator: the cheapest model on a validation frontier.

:class:`CascadeFrontierClassifier` is what ``frugalml train cascade DATA`` trains with none of
``--early-exit-every``, ``--lambda``, ``--pool-lambdas``, ``--stages`` or ``--rho``
(compiler/trees/kind_cascade.py ``train_frontier`` fits it on the task's train part, its validation part as
``eval_set``). It fits the miser lambda sweep (Greedy Miser, xu2012; the grid refined ``refine`` times), each
model with an exit test every N iterations (one shared threshold on |score| or the top-2 margin, Greedy Miser's
Figure 3 baseline), optionally cheap-first starts, and for two classes the CSCC cascade (xu2014); and keeps the
candidate of lowest mean validation cost whose validation accuracy is within ``tolerance`` of the miser
lambda = 0 model's, as a grid search would keep the best score. ``best_estimator_`` answers predict,
predict_proba and decision_function; ``to_tree_ensemble()`` is the model IR the runtime evaluates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from compiler.costs import FeatureCosts, cost_vector
from compiler.estimators import check_eval_set, check_split_classes, encode_classes, seed_of
from compiler.options import CASCADE_DEFAULTS, DEFAULT_GRID
from compiler.params import check_flag, check_number, check_numbers
from compiler.trees.cascade import EarlyExitEnsemble
from compiler.trees.cost_tree import as_float32_matrix
from compiler.trees.kind_cascade import (
    EXIT_EVERY_GRID,
    EXIT_THRESHOLDS,
    FRONTIER_REFINE,
    FRONTIER_TOLERANCE,
    cscc_estimator,
    validation_report,
)
from compiler.trees.kind_miser import miser_estimator, sweep_on_split
from compiler.trees.options import DEFAULT_TREE_ORDER, TREE_ORDERS
from pyruntime.trees.cascade import TreeCascade

CHEAP_FIRST_LAMBDAS = 3  # cheap-first starts from the sweep's next lambdas above the kept one
CHEAP_FIRST_SHARES = (0.3, 1.0)  # of the cheap lambda's own early-stopped iterations


class CascadeFrontierClassifier(ClassifierMixin, BaseEstimator):
    """The default cascade: the cheapest candidate on validation within ``tolerance`` of miser lambda = 0.

    Parameters: ``costs`` (per feature, or a FeatureCosts whose groups are charged once), ``tree_eval_cost``
    (the cost of walking one tree), the trees' ``n_trees``, ``max_depth`` and ``step`` (None: miser's defaults
    for the sweep, CASCADE_DEFAULTS for CSCC), the sweep's ``lambdas`` and ``refine``, the exits' ``exit_every``
    grid, ``thresholds`` and ``min_agreement``, ``cheap_first`` (also try cheap-first starts), ``with_cscc``
    (CSCC is a candidate for two classes), ``tree_order`` (the exits' candidates evaluate their iterations in "cost"
    or "boosting" order, :class:`compiler.trees.cascade.EarlyExitEnsemble`), ``class_trees`` (K > 2: the miser
    models' "separate" or "shared" trees,
    :class:`compiler.trees.miser.GreedyMiserClassifier`), ``validation_fraction`` (the validation part when fit gets no
    ``eval_set``) and ``random_state``.

    Fitted: ``classes_``, ``best_estimator_`` (a GreedyMiserClassifier, EarlyExitEnsemble or
    CsccCascadeClassifier), ``best_name_``, ``frontier_`` (every candidate's name, validation accuracy and
    cost, miser lambda = 0 first), ``sweep_`` (the lambda sweep), ``reference_`` (CSCC's whole-ensemble
    validation accuracy, or None), ``ir_`` (the kept model's IR)."""

    def __init__(
        self,
        costs: FeatureCosts | np.ndarray | None = None,
        tree_eval_cost: float = 0.0,
        n_trees: int | None = None,
        max_depth: int | None = None,
        step: float | None = None,
        lambdas: tuple[float, ...] = DEFAULT_GRID,
        refine: int = FRONTIER_REFINE,
        tolerance: float = FRONTIER_TOLERANCE,
        exit_every: tuple[int, ...] = EXIT_EVERY_GRID,
        thresholds: str = EXIT_THRESHOLDS,
        min_agreement: float = CASCADE_DEFAULTS["min_agreement"],
        cheap_first: bool = False,
        with_cscc: bool = True,
        validation_fraction: float = 0.2,
        random_state: int = 0,
        class_trees: str = CASCADE_DEFAULTS["class_trees"],
        tree_order: str = DEFAULT_TREE_ORDER,
    ) -> None:
        self.costs = costs
        self.tree_eval_cost = tree_eval_cost
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.step = step
        self.lambdas = lambdas
        self.refine = refine
        self.tolerance = tolerance
        self.exit_every = exit_every
        self.thresholds = thresholds
        self.min_agreement = min_agreement
        self.cheap_first = cheap_first
        self.with_cscc = with_cscc
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.class_trees = class_trees
        self.tree_order = tree_order

    def _check_params(self) -> None:
        if self.thresholds not in ("per-stage", "shared"):
            raise ValueError(f"thresholds must be 'per-stage' or 'shared', got {self.thresholds!r}")
        if self.tree_order not in TREE_ORDERS:
            raise ValueError(f"tree_order must be one of {', '.join(TREE_ORDERS)}, got {self.tree_order!r}")
        check_numbers("exit_every", self.exit_every)
        check_numbers("lambdas", self.lambdas)
        for every in self.exit_every:
            check_number("every exit_every value (iterations)", every, low=1, integer=True)
        for lam in self.lambdas:
            check_number("every lambdas value", lam, low=0)
        check_number("n_trees", self.n_trees, low=1, integer=True, none_ok=True)
        check_number("max_depth", self.max_depth, low=1, integer=True, none_ok=True)
        check_number("step", self.step, low=0, high=1, low_open=True, none_ok=True)
        check_number("tolerance", self.tolerance, low=0, high=1, high_open=True)
        check_number("refine", self.refine, low=0, integer=True)
        check_number("validation_fraction", self.validation_fraction, low=0, high=1, low_open=True, high_open=True)
        check_number("tree_eval_cost", self.tree_eval_cost, low=0)
        check_number("min_agreement", self.min_agreement, low=0, high=1, low_open=True, none_ok=True)
        check_flag("cheap_first", self.cheap_first)
        check_flag("with_cscc", self.with_cscc)

    def fit(self, X: np.ndarray, y: np.ndarray, eval_set: tuple[np.ndarray, np.ndarray] | None = None
            ) -> CascadeFrontierClassifier:
        """Fit every candidate on (X, y) and keep the cheapest admissible one on ``eval_set`` (or on a
        stratified ``validation_fraction`` of the rows)."""
        self._check_params()
        X32, y = validate_data(self, X, y, dtype=np.float32, ensure_min_samples=2)
        check_classification_targets(y)
        seed = seed_of(self.random_state)
        if eval_set is None:
            check_split_classes(y, "eval_set=(X_val, y_val) avoids that split (validation_fraction must be in "
                                   "(0, 1) here: the candidates are judged on a validation part)",
                                float(self.validation_fraction))
            tr, va = train_test_split(np.arange(len(y)), test_size=self.validation_fraction,
                                      random_state=seed, stratify=y)
            Xtr, ytr, Xva, yva = X32[tr], y[tr], X32[va], y[va]
        else:
            Xva, yva = check_eval_set(eval_set)
            Xva = as_float32_matrix(validate_data(self, Xva, dtype=np.float32, reset=False))
            Xtr, ytr, yva = X32, y, np.asarray(yva)
        self.classes_ = np.unique(ytr)
        if self.classes_.size < 2:
            raise ValueError("need at least two classes (1 class in the training rows)")
        yva_idx = encode_classes(self, yva, "validation data")
        c = cost_vector(self.costs, self.n_features_in_)
        fc = self.costs
        charged = fc if isinstance(fc, FeatureCosts) and fc.has_groups else c  # groups: each charged once
        opts: dict[str, Any] = {"tree_cost": float(self.tree_eval_cost), "refine": int(self.refine),
                                "class_trees": str(self.class_trees)}
        opts.update({k: v for k, v in (("trees", self.n_trees), ("depth", self.max_depth), ("step", self.step))
                     if v is not None})
        self.sweep_ = sweep_on_split(opts, charged, seed, Xtr, ytr, Xva, yva, list(self.lambdas),
                                     lambda _: float(self.tolerance), with_models=True)
        cands: list[tuple[str, Any, dict[str, Any]]] = []

        def add(name: str, est: Any) -> None:
            ir = est.to_tree_ensemble()
            ir.setdefault("tree_eval_cost", float(self.tree_eval_cost))
            cands.append((name, est, validation_report(TreeCascade.from_ir(ir), Xva, yva_idx)))

        def add_exits(name: str, model: Any) -> None:
            add(name, model)
            for n in self.exit_every:
                ee = EarlyExitEnsemble(model, every=int(n), min_agreement=self.min_agreement,
                                       thresholds=self.thresholds, tree_order=self.tree_order).fit(Xva, yva)
                if np.isfinite(ee.upper_[:-1]).any() or np.isfinite(ee.lower_[:-1]).any():  # some row may exit
                    add(f"{name}, exits every {n}", ee)

        models = self.sweep_.models or []
        for p, model in zip(self.sweep_.curve, models, strict=True):
            add_exits(f"miser lambda={p['lambda']:g}", model)
        if self.cheap_first:
            kept = next(p for p in self.sweep_.curve if p.get("kept"))["lambda"]
            iters = {float(p["lambda"]): m.n_iter_ for p, m in zip(self.sweep_.curve, models, strict=True)}
            for hi in cheap_first_lambdas(self.sweep_.curve, kept):
                for share in CHEAP_FIRST_SHARES:
                    est = miser_estimator(kept, opts, charged, seed)
                    est.set_params(first_lam=hi, first_iters=max(1, round(share * iters[hi])))
                    add_exits(f"miser lambda={hi:g} for {est.first_iters} iterations, then {kept:g}",
                              est.fit(Xtr, ytr, eval_set=(Xva, yva)))
        self.reference_ = None
        if self.with_cscc and self.classes_.size == 2:
            cscc = cscc_estimator(opts, c, float(self.tree_eval_cost), seed).fit(Xtr, ytr, eval_set=(Xva, yva))
            add("cscc", cscc)
            self.reference_ = float(cscc.full_validation_accuracy_)
        ref = cands[0][2]["validation_accuracy"]  # miser lambda = 0, no exits
        ok = [cd for cd in cands if cd[2]["validation_accuracy"] >= ref - float(self.tolerance) - 1e-12]
        name, best, val = min(ok, key=lambda cd: (cd[2]["validation_mean_test_time_cost"],
                                                  -cd[2]["validation_accuracy"],
                                                  len(getattr(cd[1], "stage_end_", [0]))))
        self.best_name_, self.best_estimator_, self.best_validation_ = name, best, val
        self.frontier_ = [{"model": n, "validation_accuracy": v["validation_accuracy"],
                           "validation_cost": v["validation_mean_test_time_cost"]} for n, _, v in cands]
        self.ir_ = best.to_tree_ensemble()
        self.ir_.setdefault("tree_eval_cost", float(self.tree_eval_cost))
        return self

    def to_tree_ensemble(self) -> dict:
        """The kept model's IR (what pyruntime / the C runtime evaluate)."""
        check_is_fitted(self, "ir_")
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.ir_.items()}

    def _input(self, X: Any) -> np.ndarray:
        """X checked against fit's (number of features, feature names) before best_estimator_, fitted on arrays,
        sees it."""
        check_is_fitted(self, "best_estimator_")
        return validate_data(self, X, reset=False)

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = self._input(X)  # first: unfitted -> NotFittedError
        return self.best_estimator_.predict(X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        X = self._input(X)
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        X = self._input(X)
        return self.best_estimator_.decision_function(X)


def cheap_first_lambdas(curve: list[dict[str, Any]], kept: float) -> list[float]:
    """The lambdas of a cheap-first start: the sweep's CHEAP_FIRST_LAMBDAS next lambdas above the kept one (models
    cheaper than the kept one, rejected for their accuracy alone)."""
    above = sorted({float(p["lambda"]) for p in curve if p["lambda"] > kept})
    return above[:CHEAP_FIRST_LAMBDAS]
