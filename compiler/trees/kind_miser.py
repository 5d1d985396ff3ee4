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
then on rows it was fitted on). Without ``--folds`` that is what a validation
part of fewer than CV_BELOW (200) rows gets, with CV_FOLDS (5) folds
(compiler.options.auto_folds; ``--folds 1`` keeps the validation part):
on sklearn:wine's 36 validation rows one row is 2.8 points and many lambdas
tie at the top.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
import numpy as np

from compiler.costs import FeatureCosts, cost_vector
from compiler.grid_refine import thirds_between
from compiler.header import register_emitter
from compiler.kinds import KindSpec, register
from compiler.options import (
    DEFAULT_GRID,
    MISER_DEFAULTS,
    SWEEP_OPTIONS,
    SWEEP_TOLERANCE,
    TREE_FRACTIONS,
    TREE_OPTIONS,
    auto_folds,
    cheapest_within,
    stratified_folds,
)
from compiler.parallel import PARALLEL_OPTIONS, from_options, recorded, reject_without, run_map
from compiler.tasks import check_not_trivial, parse_floats, split
from compiler.trees.fold_stops import early_stopped_fits, refit_length
from compiler.trees.header import cascade_tables
from compiler.trees.kind_cascade import cascade_metrics, tree_code_hints, validation_report
from compiler.trees.options import CLASS_TREES_OPTIONS, MISER_OPTIONS, MISER_REFINE
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
        random_state=seed, charge=str(opts.get("charge") or d["charge"]),
        class_trees=str(opts.get("class_trees") or d["class_trees"]),
    )


class _FitLambda:
    """Fits the miser model of one lambda and its curve point (sent to the workers of a parallel sweep)."""

    def __init__(self, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, seed: int, Xtr: np.ndarray,
                 ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray) -> None:
        self.opts = recorded(opts)
        self.costs, self.seed = costs, seed
        self.n_classes = int(np.unique(ytr).size)
        self.Xtr, self.ytr, self.Xva, self.yva = Xtr, ytr, Xva, yva

    def __call__(self, lam: float) -> tuple[GreedyMiserClassifier, list[dict[str, float]]]:
        m = miser_estimator(lam, self.opts, self.costs, self.seed).fit(self.Xtr, self.ytr,
                                                                       eval_set=(self.Xva, self.yva))
        fractions, iters = [], []
        for f in tree_fractions(self.opts):  # shares that keep the same iterations as a larger one: one point
            t = truncation(m.n_iter_, f)
            if t not in iters:
                fractions.append(f)
                iters.append(t)
        staged = m.staged_points(self.Xva, self.yva, iters)
        K = m.trees_per_iteration_
        return m, [{"lambda": lam, "fraction": f, "iterations": float(t), "validation_accuracy": acc,
                    "validation_cost": cost, "trees": t * K,
                    "features_used": int(m.features_used_at(t).size)}
                   for f, t, (acc, cost) in zip(fractions, iters, staged)]


class _CrossValidateLambda:
    """The K-fold curve point of one lambda: every fold's fit early-stopped on its held-out part; accuracy over
    every held-out row, mean test-time cost (sent to the workers of a parallel sweep)."""

    def __init__(self, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, seed: int, X: np.ndarray,
                 y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.opts = recorded(opts)
        self.costs, self.seed = costs, seed
        self.X, self.y, self.folds = X, y, folds

    def __call__(self, lam: float) -> list[dict[str, float]]:
        fractions = tree_fractions(self.opts)
        correct, cost = np.zeros(len(fractions)), np.zeros(len(fractions))
        trees, iterations, used = [[] for _ in fractions], [[] for _ in fractions], [[] for _ in fractions]
        for m, te in early_stopped_fits(lambda: miser_estimator(lam, self.opts, self.costs, self.seed), self.X,
                                        self.y, self.folds):
            K = m.trees_per_iteration_
            iters = [truncation(m.n_iter_, f) for f in fractions]
            for i, (t, (acc, c)) in enumerate(zip(iters, m.staged_points(self.X[te], self.y[te], iters))):
                correct[i] += acc * te.size
                cost[i] += c * te.size
                trees[i].append(t * K)
                iterations[i].append(t)
                used[i].append(m.features_used_at(t).size)
        n = self.y.size
        return [{"lambda": lam, "fraction": f, "cv_accuracy": float(correct[i] / n), "cv_cost": float(cost[i] / n),
                 "trees": float(np.mean(trees[i])), "iterations": float(np.mean(iterations[i])),
                 "features_used": float(np.mean(used[i]))} for i, f in enumerate(fractions)]


def tree_fractions(opts: dict[str, Any]) -> list[float]:
    """The shares of each lambda's early-stopped iterations the sweep judges: 1 alone, or with --sweep-trees
    TREE_FRACTIONS (largest first, so that a lambda's first point is its whole model)."""
    return list(TREE_FRACTIONS) if opts.get("sweep_trees") else [1.0]


def truncation(n_iter: int, fraction: float) -> int:
    """Iterations kept of an early-stopped ``n_iter`` at ``fraction`` (at least one)."""
    return max(1, min(n_iter, round(fraction * n_iter)))


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


@dataclass
class Sweep:
    """What :func:`sweep_curve` gives: the kept model, the curve (the kept point has ``kept``), the accuracy the
    rule gave up (``--tolerance`` or one standard error) and, with ``with_models``, every lambda's model in curve
    order."""

    model: GreedyMiserClassifier
    curve: list[dict[str, float]]
    tolerance: float
    models: list[GreedyMiserClassifier] | None = None
    folds: int = 0  # the folds the curve was judged by (0: the validation part)


def refine_between(curve: list[dict[str, float]], kept: int, key: str) -> list[float]:
    """Where the frontier is worth a closer look: ``hi``, the smallest lambda whose whole model is cheaper than the
    kept point (so it lost too much accuracy), and ``lo``, the largest lambda fitted below it (from a ninth of
    ``hi`` when that is 0). Two lambdas at a third and two thirds of the way (geometrically); none when no lambda
    is cheaper."""
    cost = curve[kept][f"{key}_cost"]
    lams = sorted({p["lambda"] for p in curve})
    cheaper = [p["lambda"] for p in curve if p["fraction"] == 1.0 and p["lambda"] > curve[kept]["lambda"]
               and p[f"{key}_cost"] < cost]
    if not cheaper:
        return []
    hi = min(cheaper)
    return thirds_between(max(lam for lam in lams if lam < hi), hi, lams)


def sweep_rounds(judge: Any, lams: list[float], refine: int, par: dict[str, Any], desc: str, key: str,
                 tolerance_of: Callable[[list[dict[str, float]]], float]
                 ) -> tuple[list[dict[str, float]], dict[float, GreedyMiserClassifier], int, float]:
    """The sweep's rounds: every lambda judged (in parallel with ``par``), the cheapest point within the tolerance
    kept (``tolerance_of(curve)`` after the first round, which holds lambda 0), then up to ``refine`` rounds of two
    lambdas between it and the next larger (:func:`refine_between`). Returns the curve (the kept point marked
    ``kept``), the fitted models by lambda (none when the judge cross-validates), the kept index and the
    tolerance."""
    fitted: dict[float, GreedyMiserClassifier] = {}
    curve: list[dict[str, float]] = []
    todo, tolerance, best = lams, 0.0, 0
    for round_ in range(1 + refine):
        for lam, out in zip(todo, run_map(judge, todo, **par, desc=desc if round_ == 0 else f"{desc}, refining"),
                            strict=True):
            if key == "cv":
                curve += out
            else:
                fitted[lam] = out[0]
                curve += out[1]
        curve.sort(key=lambda p: (p["lambda"], -p["fraction"]))  # lambda 0's whole model stays the reference
        if round_ == 0:  # lambda 0's whole model, the reference of the tolerance, is fitted in the first round
            tolerance = tolerance_of(curve)
        best = cheapest_within(curve, tolerance, key)
        todo = refine_between(curve, best, key)
        if not todo:
            break
    curve[best]["kept"] = True
    return curve, fitted, best, tolerance


def sweep_on_split(opts: dict[str, Any], costs: np.ndarray | FeatureCosts, seed: int, Xtr: np.ndarray,
                   ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray, grid: list[float],
                   tolerance_of: Callable[[list[dict[str, float]]], float], with_models: bool = False) -> Sweep:
    """The sweep judged on given train and validation rows (no cross-validation): :func:`sweep_curve`'s path for
    a validation part, and what the default cascade's frontier (compiler.trees.frontier) starts from."""
    judge = _FitLambda(opts, costs, seed, Xtr, ytr, Xva, yva)
    curve, fitted, best, tolerance = sweep_rounds(judge, sorted({0.0, *grid}), int(opts.get("refine", MISER_REFINE)),
                                                  from_options(opts), "miser lambda sweep", "validation",
                                                  tolerance_of)
    kept = curve[best]
    model = fitted[kept["lambda"]]
    if kept["fraction"] != 1.0:
        model = model.truncated(int(kept["iterations"]))
    return Sweep(model, curve, tolerance, [fitted[p["lambda"]] for p in curve] if with_models else None)


def sweep_curve(task: Any, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, grid: list[float],
                tolerance: float, with_models: bool = False) -> Sweep:
    """Fit every lambda of the grid (0 first; in parallel with --jobs/--scheduler) and keep the cheapest
    point within the tolerance (:class:`Sweep`); with ``opts["refine"]`` = R, R more rounds each fit two lambdas
    between the kept one and the next larger (:func:`refine_between`) and keep again. With ``opts["folds"]`` the
    curve is the K-fold one (``cv_*`` keys) and only the chosen lambda is fitted."""
    Xtr, ytr, Xva, yva = split(task)
    given = opts.get("folds")
    if with_models and ((given is not None and int(given) >= 2) or opts.get("sweep_trees")):
        raise ValueError("--folds and --sweep-trees keep only the chosen model: no per-lambda models to return")
    # a small validation part: judged by cross-validation (not when every lambda's model is asked for)
    folds = auto_folds(yva.size, np.concatenate([ytr, yva]), 1 if with_models and given is None else given)
    opts = {**opts, "folds": folds or None}
    asked = tolerance
    if not folds:
        return sweep_on_split(opts, costs, task.split.seed, Xtr, ytr, Xva, yva, grid,
                              lambda c: sweep_tolerance(task, opts, c, asked), with_models)
    X, y = np.concatenate([Xtr, Xva]), np.concatenate([ytr, yva])
    parts = stratified_folds(y, int(folds), task.split.seed, task.classes)
    judge = _CrossValidateLambda(opts, costs, task.split.seed, X, y, parts)
    curve, _, best, tolerance = sweep_rounds(judge, sorted({0.0, *grid}), int(opts.get("refine", MISER_REFINE)),
                                             from_options(opts), f"miser lambda sweep, {int(folds)}-fold", "cv",
                                             lambda c: sweep_tolerance(task, opts, c, asked))
    kept = curve[best]
    # refit as the folds fitted: on the pooled rows, their mean number of iterations (no part left to stop on)
    model = miser_estimator(kept["lambda"], {**opts, "trees": refit_length(kept["iterations"])}, costs,
                            task.split.seed)
    return Sweep(model.set_params(validation_fraction=0.0).fit(X, y), curve, tolerance, folds=folds)


def print_curve(curve: list[dict[str, float]], tolerance: float) -> None:
    """The sweep's curve on stderr, the kept point marked (with --sweep-trees, one line per lambda and share of
    its iterations)."""
    key = "cv" if "cv_accuracy" in curve[0] else "validation"
    head = "cv" if key == "cv" else "val"
    shares = any(p["fraction"] != 1.0 for p in curve)
    share_head = f" {'share':>6}" if shares else ""
    click.echo(f"{'lambda':>8}{share_head} {head + ' acc':>8} {head + ' cost':>10} {'trees':>6} {'features':>9}",
               err=True)
    ref_cost = curve[0][f"{key}_cost"] or 1.0
    for p in curve:
        mark = "  <- kept" if p.get("kept") else ""
        share = f" {p['fraction']:>6g}" if shares else ""
        click.echo(f"{p['lambda']:>8g}{share} {p[f'{key}_accuracy']:>8.4f} {p[f'{key}_cost']:>10.2f} "
                   f"{p['trees']:>6g} {p['features_used']:>9g}{mark}", err=True)
    kept = next(p for p in curve if p.get("kept"))
    what = "cross-validated" if key == "cv" else "validation"
    at = f" at {kept['fraction']:g} of its iterations" if shares else ""
    ratio = (f"cost 1/{ref_cost / kept[f'{key}_cost']:.1f} of lambda=0" if kept[f"{key}_cost"] > 0 else
             "reading no feature")
    click.echo(f"kept lambda={kept['lambda']:g}{at}: cheapest within {tolerance:g} of lambda=0 {what} accuracy, "
               f"{ratio}", err=True)


def train_miser(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    vec = cost_vector(costs, task.n_features)
    c = costs if costs is not None and costs.has_groups else vec  # groups: each charged once in the gain
    record: dict[str, Any] = {"kind": kind, **recorded(opts)}
    if opts.get("charge") == "row" and c is costs:
        raise click.UsageError("--charge row does not take feature groups (the costs file has groups; "
                               "use --charge model)")
    if opts.get("sweep"):
        if "lambda" in opts:
            raise click.UsageError("--lambda does not apply with --sweep (use --lambda-grid)")
        grid = parse_floats(opts["lambda_grid"], "--lambda-grid") if "lambda_grid" in opts else list(DEFAULT_GRID)
        sweep = sweep_curve(task, opts, c, grid, float(opts.get("tolerance", SWEEP_TOLERANCE)))
        model = sweep.model
        print_curve(sweep.curve, sweep.tolerance)
        record["sweep_tolerance"] = sweep.tolerance
        record["sweep_folds"] = sweep.folds
        if sweep.folds:  # refitted on train + validation after cross-validation
            record["refit_folds"] = int(sweep.folds)
        record["sweep_curve"] = sweep.curve
    else:
        for name in ("tolerance", "lambda_grid", "folds", "one_se", "sweep_trees", "refine"):
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
                                    "lower the --lambda-grid, or raise --trees" if opts.get("sweep") else
                                    "lower --lambda (or use --sweep), or raise --trees", ref))
    return task.model_file(kind, tables, record)


register_emitter("miser", cascade_tables)
register(KindSpec("miser", "Greedy Miser: cost-aware boosted trees, lazy feature reads (--sweep over lambda)",
                  train_miser, TREE_OPTIONS + MISER_OPTIONS + CLASS_TREES_OPTIONS + SWEEP_OPTIONS + PARALLEL_OPTIONS,
                  cascade_metrics, multiclass=True))
