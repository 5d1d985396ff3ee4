"""Kind ``miser``: Greedy Miser cost-aware boosted trees (compiler.trees.miser),
compiled to a one-stage cascade (pyruntime.trees.cascade.TreeCascade, fm_cascade.h).

``--sweep`` fits one model per lambda of a grid on the task's train part,
traces validation accuracy against validation test-time cost (feature cost
plus ``--tree-cost`` per tree), prints the curve and keeps the cheapest model
whose validation accuracy is within ``--tolerance`` (absolute) of the
lambda = 0 model's. With ``--folds K`` each lambda is judged instead by
stratified K-fold cross-validation on the train and validation parts pooled
(accuracy over every held-out row, mean test-time cost; each fold's fit
early-stopped on its held-out part); the kept lambda is then refitted on the
pooled rows with the folds' mean number of trees (its validation figures are
then on rows it was fitted on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
import numpy as np

from compiler.costs import FeatureCosts, cost_vector
from compiler.header import register_emitter
from compiler.kinds import KindSpec, register
from compiler.options import DEFAULT_GRID, MISER_DEFAULTS, SWEEP_OPTIONS, SWEEP_TOLERANCE, TREE_OPTIONS
from compiler.parallel import PARALLEL_OPTIONS, from_options, recorded, reject_without, run_map
from compiler.tasks import check_not_trivial, parse_floats, split
from compiler.trees.header import cascade_tables
from compiler.trees.kind_cascade import cascade_metrics, tree_code_hints, validation_report
from compiler.trees.options import MISER_OPTIONS
from pyruntime.format import ModelFile
from pyruntime.trees.cascade import TreeCascade

if TYPE_CHECKING:  # the trainer imports scikit-learn: only when training (CLI start-up stays light)
    from compiler.trees.miser import GreedyMiserClassifier


def miser_estimator(lam: float, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, seed: int
                    ) -> GreedyMiserClassifier:
    """The estimator of one lambda; the loss ("auto") is logistic for two classes and the paper's
    multi-class log-loss (K trees per iteration, softmax) for K > 2. ``costs``: a FeatureCosts with
    groups charges each group once in the split gain."""
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415 - scikit-learn

    depth = opts.get("depth")
    leaves = opts.get("leaves")
    d = MISER_DEFAULTS
    return GreedyMiserClassifier(
        lam=lam, n_trees=int(opts.get("trees", d["trees"])), max_depth=None if depth is None else int(depth),
        max_leaves=None if leaves is None else int(leaves), step=float(opts.get("step", d["step"])),
        loss=opts.get("loss", "auto"), costs=costs, tree_eval_cost=float(opts.get("tree_cost", d["tree_cost"])),
        random_state=seed,
    )


class _FitLambda:
    """Fits the miser model of one lambda and its curve point (sent to the workers of a parallel sweep)."""

    def __init__(self, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, seed: int, Xtr: np.ndarray,
                 ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray) -> None:
        self.opts = recorded(opts)
        self.costs, self.seed = costs, seed
        self.n_classes = int(np.unique(ytr).size)
        self.Xtr, self.ytr, self.Xva, self.yva = Xtr, ytr, Xva, yva

    def __call__(self, lam: float) -> tuple[GreedyMiserClassifier, dict[str, float]]:
        m = miser_estimator(lam, self.opts, self.costs, self.seed).fit(self.Xtr, self.ytr,
                                                                       eval_set=(self.Xva, self.yva))
        return m, {"lambda": lam, "validation_accuracy": float(m.validation_accuracy_),
                   "validation_cost": float(np.mean(m.test_time_cost(self.Xva))), "trees": m.n_trees_,
                   "features_used": int(m.features_used_.size)}


class _CrossValidateLambda:
    """The K-fold curve point of one lambda: every fold's fit early-stopped on its held-out part; accuracy over
    every held-out row, mean test-time cost (sent to the workers of a parallel sweep)."""

    def __init__(self, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, seed: int, X: np.ndarray,
                 y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.opts = recorded(opts)
        self.costs, self.seed = costs, seed
        self.X, self.y, self.folds = X, y, folds

    def __call__(self, lam: float) -> dict[str, float]:
        correct, cost, trees, iterations, used = 0, 0.0, [], [], []
        for tr, te in self.folds:
            m = miser_estimator(lam, self.opts, self.costs, self.seed).fit(
                self.X[tr], self.y[tr], eval_set=(self.X[te], self.y[te]))
            correct += int(np.sum(m.predict(self.X[te]) == self.y[te]))
            cost += float(np.sum(m.test_time_cost(self.X[te])))
            trees.append(m.n_trees_)
            iterations.append(m.n_iter_)
            used.append(m.features_used_.size)
        n = self.y.size
        return {"lambda": lam, "cv_accuracy": correct / n, "cv_cost": cost / n,
                "trees": float(np.mean(trees)), "iterations": float(np.mean(iterations)),
                "features_used": float(np.mean(used))}


def cv_folds(y: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified K folds of the pooled rows (shuffled by the split's seed); every class needs K rows."""
    from sklearn.model_selection import StratifiedKFold  # noqa: PLC0415 - scikit-learn only when training

    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < k:
        raise ValueError(f"--folds {k}: class {labels[np.argmin(counts)]!r} has {int(counts.min())} rows in the "
                         f"train and validation parts, fewer than the folds: lower --folds")
    return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(y.size), y))


def cheapest_within(curve: list[dict[str, float]], tolerance: float, key: str) -> int:
    """Index of the cheapest curve point whose ``KEY_accuracy`` is within ``tolerance`` of point 0's (lambda = 0);
    ties: the more accurate."""
    ref = curve[0][f"{key}_accuracy"]
    ok = [i for i, p in enumerate(curve) if p[f"{key}_accuracy"] >= ref - tolerance]
    return min(ok, key=lambda i: (curve[i][f"{key}_cost"], -curve[i][f"{key}_accuracy"]))


def sweep_tolerance(task: Any, opts: dict[str, Any], curve: list[dict[str, float]], tolerance: float) -> float:
    """The accuracy the sweep may give up: ``tolerance``, or with ``--one-se`` one standard error of lambda 0's
    accuracy when larger (Breiman's one-standard-error rule): sqrt(p (1 - p) / n) over the n rows it was judged on
    (the validation part, or every pooled row with --folds), p = (correct + 1) / (n + 2) so that a perfect score
    keeps a nonzero error."""
    if not opts.get("one_se"):
        return tolerance
    n = task.validation.size + (task.train.size if opts.get("folds") else 0)
    acc = curve[0]["cv_accuracy" if opts.get("folds") else "validation_accuracy"]
    p = (acc * n + 1) / (n + 2)
    return max(tolerance, float(np.sqrt(p * (1 - p) / n)))


def sweep_curve(task: Any, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, grid: list[float],
                tolerance: float, with_models: bool = False) -> Any:
    """Fit every lambda of the grid (0 first; in parallel with --jobs/--scheduler); return the chosen
    model and the curve (and every fitted model, in curve order, with ``with_models``). With
    ``opts["folds"]`` the curve is the K-fold one (``cv_*`` keys) and only the chosen lambda is fitted."""
    par = from_options(opts)
    Xtr, ytr, Xva, yva = split(task)
    lams = sorted({0.0, *grid})
    if opts.get("folds"):
        if with_models:
            raise ValueError("--folds keeps only the chosen lambda's model: no per-lambda models to return")
        X, y = np.concatenate([Xtr, Xva]), np.concatenate([ytr, yva])
        cv = _CrossValidateLambda(opts, costs, task.split.seed, X, y, cv_folds(y, int(opts["folds"]),
                                                                                task.split.seed))
        curve = run_map(cv, lams, **par, desc=f"miser lambda sweep, {int(opts['folds'])}-fold")
        kept = curve[cheapest_within(curve, sweep_tolerance(task, opts, curve, tolerance), "cv")]
        # refit as the folds fitted: on the pooled rows, their mean number of iterations (no part left to stop on)
        model = miser_estimator(kept["lambda"], {**opts, "trees": max(1, round(kept["iterations"]))}, costs,
                                task.split.seed)
        return model.set_params(validation_fraction=0.0).fit(X, y), curve
    fits = run_map(_FitLambda(opts, costs, task.split.seed, Xtr, ytr, Xva, yva), lams, **par,
                   desc="miser lambda sweep")
    fitted = [m for m, _ in fits]
    curve = [p for _, p in fits]
    best = cheapest_within(curve, sweep_tolerance(task, opts, curve, tolerance), "validation")
    return (fitted[best], curve, fitted) if with_models else (fitted[best], curve)


def print_curve(curve: list[dict[str, float]], chosen: float, tolerance: float) -> None:
    key = "cv" if "cv_accuracy" in curve[0] else "validation"
    head = "cv" if key == "cv" else "val"
    click.echo(f"{'lambda':>8} {head + ' acc':>8} {head + ' cost':>10} {'trees':>6} {'features':>9}", err=True)
    ref_cost = curve[0][f"{key}_cost"] or 1.0
    for p in curve:
        mark = "  <- kept" if p["lambda"] == chosen else ""
        click.echo(f"{p['lambda']:>8g} {p[f'{key}_accuracy']:>8.4f} {p[f'{key}_cost']:>10.2f} "
                   f"{p['trees']:>6g} {p['features_used']:>9g}{mark}", err=True)
    kept = next(p for p in curve if p["lambda"] == chosen)
    what = "cross-validated" if key == "cv" else "validation"
    click.echo(f"kept lambda={chosen:g}: cheapest within {tolerance:g} of lambda=0 {what} accuracy, "
               f"cost 1/{ref_cost / max(kept[f'{key}_cost'], 1e-12):.1f} of lambda=0", err=True)


def train_miser(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    vec = cost_vector(costs, task.n_features)
    c = costs if costs is not None and costs.has_groups else vec  # groups: each charged once in the gain
    record: dict[str, Any] = {"kind": kind, **recorded(opts)}
    if opts.get("sweep"):
        if "lambda" in opts:
            raise click.UsageError("--lambda does not apply with --sweep (use --lambda-grid)")
        grid = parse_floats(opts["lambda_grid"], "--lambda-grid") if "lambda_grid" in opts else list(DEFAULT_GRID)
        tolerance = float(opts.get("tolerance", SWEEP_TOLERANCE))
        model, curve = sweep_curve(task, opts, c, grid, tolerance)
        tolerance = sweep_tolerance(task, opts, curve, tolerance)
        print_curve(curve, model.lam, tolerance)
        record["sweep_tolerance"] = tolerance
        record["sweep_curve"] = curve
    else:
        for name in ("tolerance", "lambda_grid", "folds", "one_se"):
            if name in opts:
                raise click.UsageError(f"--{name.replace('_', '-')} needs --sweep")
        reject_without(opts, "--sweep")
        Xtr, ytr, Xva, yva = split(task)
        model = miser_estimator(float(opts.get("lambda", MISER_DEFAULTS["lambda"])), opts, c, task.split.seed)
        model.fit(Xtr, ytr, eval_set=(Xva, yva))
    ir = model.to_tree_ensemble()
    ir["tree_eval_cost"] = float(model.tree_eval_cost)
    tables = TreeCascade.from_ir(ir)
    Xtr, _, Xva, yva = split(task)
    record["code_hints"] = tree_code_hints(tables, Xtr)
    record.update({"lambda_chosen": float(model.lam), "trees_chosen": int(model.n_trees_),
                   "features_used": model.features_used_.tolist()})
    record.update(validation_report(tables, Xva, yva))
    ref = None
    if opts.get("sweep"):
        first = record["sweep_curve"][0]
        ref = ("the lambda = 0 model", float(first.get("cv_accuracy", first.get("validation_accuracy"))))
    pred = tables.predict_reference(Xva)
    record.update(check_not_trivial(kind, yva, pred.label, pred.n_read, opts,
                                    "lower --lambda (or use --sweep), or raise --trees", ref))
    meta = task.meta()
    meta["training"] = record
    return ModelFile(kind=kind, tables=tables, meta=meta)


register_emitter("miser", cascade_tables)
register(KindSpec("miser", "Greedy Miser: cost-aware boosted trees, lazy feature reads (--sweep over lambda)",
                  train_miser, TREE_OPTIONS + MISER_OPTIONS + SWEEP_OPTIONS + PARALLEL_OPTIONS, cascade_metrics,
                  multiclass=True))
