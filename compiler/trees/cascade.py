"""Cascades over one boosted tree ensemble with exits between stages: the shared evaluation
(:class:`ExitingEnsemble`), and the "exit every N trees" baseline (Cambazoglu et al., WSDM 2010)
:class:`EarlyExitEnsemble` over a fitted Greedy Miser model. CSCC itself (Xu et al., JMLR 2014)
is :mod:`compiler.trees.cscc`.

The baseline's exit thresholds are learned on validation data with the criterion of the
early-stopping NB stop points: among the validation inputs that would exit at a stage, the
early decision's (class-weighted) accuracy is not below the full model's on them, and the early
decision agrees with the full model on at least ``min_agreement`` (99.75%) of them. The largest
such exit set is kept, on both sides (score above an upper or below a lower threshold; for
several classes when the margin between the two best partial scores exceeds the upper one).
Consequently on the validation data the cascade's weighted accuracy is never below the full
ensemble's and it agrees with it on >= ``min_agreement``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from compiler.estimators import encode_classes
from compiler.options import CASCADE_DEFAULTS
from compiler.trees.cost_tree import as_float32_matrix, ir_staged_scores, ir_tree_features
from compiler.trees.miser import GreedyMiserClassifier, decide, proba_of_scores
from compiler.trees.options import TREE_ORDERS
from compiler.trees.tree_order import cost_ordered

F32_INF = np.float32(np.inf)


def balanced_weights(y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """w_i = n / (K * n_{y_i}): every class carries the same total weight."""
    counts = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
    per_class = np.divide(len(y_idx), n_classes * counts, out=np.zeros(n_classes), where=counts > 0)
    return per_class[y_idx]


def margin(scores: np.ndarray) -> np.ndarray:
    """Best minus second-best score (float32) per row."""
    part = np.sort(scores, axis=1)
    return (part[:, -1] - part[:, -2]).astype(np.float32)


def _largest_valid_prefix(
    order: np.ndarray, key: np.ndarray, early: np.ndarray, full: np.ndarray, y: np.ndarray,
    w: np.ndarray, min_agreement: float,
) -> int:
    """Length m of the longest prefix of ``order`` (cut only between distinct keys) whose
    early decisions are at least as accurate (weighted) as the full model's and agree
    with it on >= min_agreement of the prefix. 0 if none."""
    e, f, yy, ww, kk = early[order], full[order], y[order], w[order], key[order]
    early_ok = np.cumsum(ww * (e == yy))
    full_ok = np.cumsum(ww * (f == yy))
    agree = np.cumsum(e == f)
    m = np.arange(1, len(order) + 1)
    valid = (early_ok >= full_ok - 1e-9 * np.maximum(1.0, full_ok)) & (agree >= min_agreement * m)
    # a cut after position m-1 is realisable only if key changes there (strict comparisons)
    cut_ok = np.ones(len(order), dtype=bool)
    cut_ok[:-1] = kk[:-1] != kk[1:]
    ok = np.flatnonzero(valid & cut_ok)
    return int(ok[-1] + 1) if ok.size else 0


def learn_exit_thresholds(
    stage_scores: list[np.ndarray], full_pred: np.ndarray, y_idx: np.ndarray, weight: np.ndarray,
    min_agreement: float = 0.9975,
) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower float32 exit thresholds for every stage (the last never exits early).

    ``stage_scores[s]`` is the (n, K) float32 partial score after stage s. For
    K = 1 an input exits positive if score > upper, negative if score < lower;
    for K > 1 it exits with the argmax if margin > upper (lower is -inf; upper >= 0: tied best scores
    never exit).
    """
    S = len(stage_scores)
    upper = np.full(S, F32_INF, dtype=np.float32)
    lower = np.full(S, -F32_INF, dtype=np.float32)
    remaining = np.ones(len(y_idx), dtype=bool)
    for s in range(S - 1):
        sc = stage_scores[s]
        rem = np.flatnonzero(remaining)
        if rem.size == 0:
            break
        if sc.shape[1] == 1:
            v = sc[:, 0]
            zero = np.float32(0.0)
            # upper side: positive partial scores, most confident first; early decision = class 1
            pos = rem[v[rem] > zero]
            order = pos[np.argsort(-v[pos], kind="stable")]
            m = _largest_valid_prefix(order, v, np.ones_like(y_idx), full_pred, y_idx, weight, min_agreement)
            if m > 0:
                upper[s] = v[order[m]] if m < order.size else zero
                remaining[order[:m]] = False
            # lower side: non-positive partial scores, most negative first; early decision = class 0
            neg = rem[v[rem] <= zero]
            order = neg[np.argsort(v[neg], kind="stable")]
            m = _largest_valid_prefix(order, v, np.zeros_like(y_idx), full_pred, y_idx, weight, min_agreement)
            if m > 0:
                lower[s] = v[order[m]] if m < order.size else np.nextafter(zero, F32_INF)
                remaining[order[:m]] = False
        else:
            mg = margin(sc)
            early = np.argmax(sc, axis=1)
            # a row whose two best partial scores tie (margin 0) has no early decision (its argmax is the first of
            # the tied classes, agreeing with the full model by chance): it never exits, so upper stays >= 0
            pos = rem[mg[rem] > 0]
            order = pos[np.argsort(-mg[pos], kind="stable")]
            m = _largest_valid_prefix(order, mg, early, full_pred, y_idx, weight, min_agreement)
            if m > 0:
                upper[s] = mg[order[m]] if m < order.size else np.nextafter(mg[order[-1]], np.float32(0))
                remaining[order[:m]] = False
    return upper, lower


SHARED_GRID = 257  # candidate thresholds of learn_shared_threshold: quantiles of the statistic


def learn_shared_threshold(
    stage_scores: list[np.ndarray], full_pred: np.ndarray, y_idx: np.ndarray, weight: np.ndarray,
    min_agreement: float = 0.9975,
) -> tuple[np.ndarray, np.ndarray]:
    """One exit threshold t >= 0 for every stage but the last (Greedy Miser's early-exit baseline, its Figure 3: a
    row stops once its largest class probability passes one s): for K = 1 a row exits at the first stage whose
    partial score is above t or below -t (|log-odds| > t, probability past 1 / (1 + e^-t)), for K > 1 at the first
    stage whose top-2 margin is above t. Of the candidate t (SHARED_GRID quantiles of the |score| or margin the
    validation rows reach before the last stage), the smallest whose exits keep the rule of
    :func:`learn_exit_thresholds` on all exited rows together: their early decisions at least as accurate
    (weighted) as the full model's, and agreeing with it on >= ``min_agreement``. One parameter instead of one or
    two per stage, so the validation rows are not fitted stage by stage. Returns (upper, lower) as
    :func:`learn_exit_thresholds`; no valid t: no exit."""
    S = len(stage_scores)
    upper = np.full(S, F32_INF, dtype=np.float32)
    lower = np.full(S, -F32_INF, dtype=np.float32)
    if S < 2 or len(y_idx) == 0:
        return upper, lower
    binary = stage_scores[0].shape[1] == 1
    # per stage and row: the exit statistic and the early decision
    stat = np.stack([np.abs(sc[:, 0]) if binary else margin(sc) for sc in stage_scores[:-1]])  # (S-1, n) float32
    early = np.stack([(sc[:, 0] > 0).astype(np.int64) if binary else np.argmax(sc, axis=1)
                      for sc in stage_scores[:-1]])
    # a row exits at the first stage whose statistic is above t: its exit is decided by the running maximum
    best = np.maximum.accumulate(stat, axis=0)  # (S-1, n): exits by stage s iff best[s] > t
    grid = np.unique(np.quantile(stat, np.linspace(0.0, 1.0, SHARED_GRID), method="lower")).astype(np.float32)
    for t in grid:  # from the smallest t (most exits) up; the first valid one is kept
        gone = best > t
        rows = np.flatnonzero(gone[-1])
        if rows.size == 0:
            break  # no row exits at this t nor at any larger one
        e = early[np.argmax(gone[:, rows], axis=0), rows]
        f, yy, ww = full_pred[rows], y_idx[rows], weight[rows]
        early_ok, full_ok = float(np.sum(ww * (e == yy))), float(np.sum(ww * (f == yy)))
        if early_ok >= full_ok - 1e-9 * max(1.0, full_ok) and np.sum(e == f) >= min_agreement * rows.size:
            upper[:-1] = t
            if binary:
                lower[:-1] = -t
            break
    return upper, lower


class ExitingEnsemble(ClassifierMixin, BaseEstimator):
    """Evaluation shared by cascades: needs ir_, stage_end_, upper_, lower_, classes_, costs_."""

    tree_eval_cost: float
    loss_: str  # the trees' loss, for predict_proba (set when fitted)
    thresholds: str = "per-stage"  # how _learn_exits learns them (EarlyExitEnsemble's parameter)

    def _exit_stage(self, stage_scores: np.ndarray, exits: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> np.ndarray:
        """Exit stage of every row of ``stage_scores`` (S, n, K) under this cascade's thresholds (or ``exits``:
        upper, lower)."""
        upper, lower = (self.upper_, self.lower_) if exits is None else exits
        S = len(self.stage_end_)
        n = stage_scores.shape[1]
        stage = np.full(n, S - 1, dtype=np.int64)
        open_ = np.ones(n, dtype=bool)
        for s in range(S - 1):
            sc = stage_scores[s]
            if sc.shape[1] == 1:
                out = (sc[:, 0] > upper[s]) | (sc[:, 0] < lower[s])
            else:
                out = margin(sc) > upper[s]
            now = open_ & out
            stage[now] = s
            open_ &= ~now
        return stage

    def predict_detailed(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Per input: label, score (at exit), exit_stage, trees_evaluated, features_read, cost."""
        check_is_fitted(self, "ir_")
        X32 = validate_data(self, X, dtype=np.float32, reset=False)
        stage_scores = ir_staged_scores(self.ir_, X32, list(self.stage_end_))
        stage = self._exit_stage(stage_scores)
        n = X32.shape[0]
        rows = np.arange(n)
        scores = stage_scores[stage, rows]  # (n, K)
        label_idx = decide(scores, self.ir_["decision_threshold"])
        trees = self.stage_end_[stage]
        per_tree = ir_tree_features(self.ir_, X32)
        read = np.zeros(X32.shape, dtype=bool)
        read_at_exit = np.zeros(X32.shape, dtype=bool)
        start = 0
        for s, end in enumerate(self.stage_end_):
            for t in range(start, end):
                read |= per_tree[t]
            read_at_exit[stage == s] = read[stage == s]
            start = end
        feat = self._cost_of_reads(read_at_exit)
        cost = feat + self.tree_eval_cost * trees
        return {
            "label": self.classes_[label_idx],
            "score": scores[:, 0] if scores.shape[1] == 1 else scores,
            "exit_stage": stage,
            "trees_evaluated": trees.astype(np.int64),
            "features_read": read_at_exit.sum(axis=1).astype(np.int64),
            "cost": cost,
        }

    def _cost_of_reads(self, read: np.ndarray) -> np.ndarray:
        """Per row of a bool (n, d) read mask: the features' costs, each feature group charged once."""
        groups = getattr(self, "groups_", None)
        return read @ self.costs_ if groups is None else groups.cost_of_rows(read)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.predict_detailed(X)["label"]

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The score at each row's exit: (n,) for two classes, (n, K) otherwise."""
        return self.predict_detailed(X)["score"]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities of the scores at each row's exit (:func:`proba_of_scores` with the trees' loss:
        the miser model's for EarlyExitEnsemble, the squared loss for CSCC); the largest is the predicted class."""
        s = np.asarray(self.predict_detailed(X)["score"], dtype=np.float64)
        return proba_of_scores(s.reshape(s.shape[0], -1), self.loss_, self.ir_["decision_threshold"])

    def predict_full(self, X: np.ndarray) -> np.ndarray:
        """Labels of the whole ensemble without exits."""
        check_is_fitted(self, "ir_")
        X32 = validate_data(self, X, dtype=np.float32, reset=False)
        s = ir_staged_scores(self.ir_, X32)[0]
        return self.classes_[decide(s, self.ir_["decision_threshold"])]

    def exit_histogram(self, X: np.ndarray) -> np.ndarray:
        """Number of inputs exiting at each stage."""
        return np.bincount(self.predict_detailed(X)["exit_stage"], minlength=len(self.stage_end_))

    def mean_cost(self, X: np.ndarray) -> float:
        return float(np.mean(self.predict_detailed(X)["cost"]))

    def to_tree_ensemble(self) -> dict:
        """Model IR of the ensemble plus stage boundaries and exit thresholds.

        Extra keys: stage_end (int32[S], exclusive tree index where each stage
        ends, last = n_trees), exit_upper / exit_lower (float32[S]; the last
        stage's are +inf / -inf), exit_rule ("score": exit if score > upper
        (positive) or score < lower (negative); "margin": exit with the argmax
        if best - second-best score > upper), tree_eval_cost (float).
        """
        check_is_fitted(self, "ir_")
        ir = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.ir_.items()}
        ir["stage_end"] = np.asarray(self.stage_end_, dtype=np.int32)
        ir["exit_upper"] = np.asarray(self.upper_, dtype=np.float32)
        ir["exit_lower"] = np.asarray(self.lower_, dtype=np.float32)
        ir["exit_rule"] = "score" if ir["n_outputs"] == 1 else "margin"
        ir["tree_eval_cost"] = float(self.tree_eval_cost)
        return ir

    def _learn_exits(self, X_val: np.ndarray, y_val_idx: np.ndarray) -> None:
        stage_scores = ir_staged_scores(self.ir_, X_val, list(self.stage_end_))
        full = decide(stage_scores[-1], self.ir_["decision_threshold"])
        w = balanced_weights(y_val_idx, self.classes_.size)
        self.upper_, self.lower_ = self._learner()(list(stage_scores), full, y_val_idx, w, self.min_agreement)

    def _learner(self) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
        """How the exit thresholds are learned: per stage, or one shared by every stage (``thresholds``)."""
        return learn_shared_threshold if self.thresholds == "shared" else learn_exit_thresholds


class EarlyExitEnsemble(ExitingEnsemble):
    """Cambazoglu et al.'s baseline: a fitted miser ensemble with an exit test every N iterations.

    ``tree_order``: "boosting" (the baseline: the iterations in the order they were boosted), "cost" (the
    iterations reordered cheapest-worth-first on the rows fit sees, :mod:`compiler.trees.tree_order`, before the
    exits are learned; the whole ensemble's score changes by float32 rounding only) or "auto" (both, each with its
    own exits; the one of lower mean cost on the rows the exits are learned on is kept -- held out with
    ``fit_folds`` -- ties to "boosting"). Fitted: ``tree_order_``, the boosting iteration evaluated at each
    position, and ``tree_order_used_`` ("boosting" or "cost").

    ``model`` is already fitted and ``fit(X_val, y_val)`` learns only the exits, so ``sklearn.base.clone`` (which
    clones ``model`` unfitted) gives an estimator whose fit raises NotFittedError: it cannot go into
    ``cross_val_score`` or ``GridSearchCV`` (``fit_folds`` learns the exits by cross-validation instead)."""

    def __init__(self, model: GreedyMiserClassifier, every: int = 10,
                 min_agreement: float = CASCADE_DEFAULTS["min_agreement"], thresholds: str = "per-stage",
                 tree_order: str = "boosting") -> None:
        self.model = model
        self.every = every
        self.min_agreement = min_agreement
        self.thresholds = thresholds  # "per-stage" (learn_exit_thresholds) or "shared" (learn_shared_threshold)
        self.tree_order = tree_order

    def fit(self, X_val: np.ndarray, y_val: np.ndarray) -> EarlyExitEnsemble:
        """Learn the exit thresholds on validation data (the model is already trained): the rows
        given here are the validation rows (the miser model was fitted with its own eval_set)."""
        self._set_model()
        Xva = as_float32_matrix(validate_data(self, X_val, dtype=np.float32, reset=False))
        if self.tree_order == "auto":
            return self._cheaper([copy.copy(self).set_params(tree_order=order).fit(Xva, y_val)
                                  for order in ("boosting", "cost")], lambda e: e.mean_cost(Xva))
        yva = encode_classes(self, y_val, "validation data")
        self.ir_, self.tree_order_ = self._ordered(self.ir_, Xva)
        self.tree_order_used_ = self.tree_order
        self._learn_exits(Xva, yva)
        return self

    def _cheaper(self, fitted: list[EarlyExitEnsemble], cost: Callable[[EarlyExitEnsemble], float]
                 ) -> EarlyExitEnsemble:
        """tree_order="auto": this estimator becomes the fitted one of ``fitted`` (the boosting order first) of the
        lowest ``cost``, the first on ties."""
        best = min(fitted, key=cost)
        self.__dict__.update({k: v for k, v in vars(best).items() if k.endswith("_") and not k.startswith("_")})
        return self

    def fit_folds(self, X: np.ndarray, y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]],
                  fold_model: Callable[[np.ndarray, np.ndarray], GreedyMiserClassifier]) -> EarlyExitEnsemble:
        """Learn the exit thresholds by cross-validation instead (``self.model`` was refitted on every row of
        X): ``fold_model(X_tr, y_tr)`` fits the same ensemble (lambda, iterations, shape) on a fold's other rows;
        the thresholds are learned, with the rule of :meth:`fit`, on the out-of-fold partial scores of every row
        at this ensemble's stage boundaries, the full decision being the fold model's whole ensemble. Records
        ``cv_`` figures of the cascade held out twice: each fold's rows scored by a model fitted without them and
        exiting by thresholds learned on the other folds' rows alone (accuracy, agreement with the full fold
        models, mean cost, features, trees, exit histogram)."""
        self._set_model()
        X32 = as_float32_matrix(X)
        if self.tree_order == "auto":
            return self._cheaper([copy.copy(self).set_params(tree_order=order).fit_folds(X32, y, folds, fold_model)
                                  for order in ("boosting", "cost")], lambda e: e.cv_["cv_cost"])
        y_idx = np.searchsorted(self.classes_, np.asarray(y))
        self.tree_order_used_ = self.tree_order
        S, K = len(self.stage_end_), int(self.ir_["n_outputs"])
        staged = np.zeros((S, len(y_idx), K), dtype=np.float32)
        read_at = np.zeros((S, *X32.shape), dtype=bool)  # features read by the end of each stage
        self.ir_, self.tree_order_ = self._ordered(self.ir_, X32)
        for tr, te in folds:
            ir = self._ordered(fold_model(X32[tr], np.asarray(y)[tr]).to_tree_ensemble(), X32)[0]
            if int(ir["roots"].size) != int(self.stage_end_[-1]):
                raise ValueError(f"a fold model has {ir['roots'].size} trees, the ensemble {self.stage_end_[-1]}")
            staged[:, te] = ir_staged_scores(ir, X32[te], list(self.stage_end_))
            read = np.zeros((te.size, X32.shape[1]), dtype=bool)
            for s, in_stage in enumerate(_stage_reads(ir, X32[te], self.stage_end_)):
                read |= in_stage
                read_at[s, te] = read
        full = decide(staged[-1], self.ir_["decision_threshold"])
        n_classes = self.classes_.size
        self.upper_, self.lower_ = self._learner()(list(staged), full, y_idx, balanced_weights(y_idx, n_classes),
                                                   self.min_agreement)
        # held out: each fold's rows exit by thresholds learned on the other folds' out-of-fold scores
        stage = np.zeros(len(y_idx), dtype=np.int64)
        for tr, te in folds:
            exits = self._learner()(list(staged[:, tr]), full[tr], y_idx[tr],
                                    balanced_weights(y_idx[tr], n_classes), self.min_agreement)
            stage[te] = self._exit_stage(staged[:, te], exits)
        rows = np.arange(len(y_idx))
        label = decide(staged[stage, rows], self.ir_["decision_threshold"])
        read = read_at[stage, rows]
        feat = self._cost_of_reads(read)
        trees = self.stage_end_[stage]
        self.cv_ = {"cv_accuracy": float(np.mean(label == y_idx)), "cv_full_accuracy": float(np.mean(full == y_idx)),
                    "cv_agreement": float(np.mean(label == full)),
                    "cv_cost": float(np.mean(feat + self.tree_eval_cost * trees)),
                    "cv_features": float(np.mean(read.sum(axis=1))), "cv_trees": float(np.mean(trees)),
                    "cv_exit_histogram": np.bincount(stage, minlength=S).tolist()}
        return self

    def _ordered(self, ir: dict, X: np.ndarray) -> tuple[dict, np.ndarray]:
        """``ir`` in this cascade's tree order (importances of the "cost" order measured on the rows of X) and the
        order of its iterations."""
        if self.tree_order != "cost":
            return ir, np.arange(int(ir["roots"].size) // int(ir["n_outputs"]))
        return cost_ordered(ir, X, self._cost_of_reads)

    def _set_model(self) -> None:
        """Everything but the exits from the fitted miser model: classes, tables, costs, stage boundaries."""
        check_is_fitted(self.model, "ir_")
        if int(self.every) < 1:
            raise ValueError("every must be >= 1")
        if self.tree_order not in TREE_ORDERS:
            raise ValueError(f"tree_order must be one of {', '.join(TREE_ORDERS)}, got {self.tree_order!r}")
        self.classes_ = self.model.classes_
        self.loss_ = self.model.loss_
        self.ir_ = self.model.to_tree_ensemble()
        self.costs_ = self.model.costs_
        self.groups_ = self.model.groups_  # feature groups: each charged once per prediction
        self.tree_eval_cost = self.model.tree_eval_cost
        self.n_features_in_ = self.model.n_features_in_
        K = int(self.ir_["n_outputs"])
        T = int(self.ir_["roots"].size)
        step = int(self.every) * K  # stage boundaries fall on whole boosting iterations
        ends = list(range(step, T, step)) + [T]
        self.stage_end_ = np.asarray(ends, dtype=np.int64)


def _stage_reads(ir: dict, X: np.ndarray, stage_end: np.ndarray) -> list[np.ndarray]:
    """Per stage, the bool (n, d) features its trees read on each row of X."""
    per_tree = ir_tree_features(ir, X)
    out, start = [], 0
    for end in stage_end:
        read = np.zeros(X.shape, dtype=bool)
        for t in range(start, int(end)):
            read |= per_tree[t]
        out.append(read)
        start = int(end)
    return out
