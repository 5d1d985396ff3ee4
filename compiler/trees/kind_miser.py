"""Kind ``miser``: Greedy Miser cost-aware boosted trees (compiler.trees.miser),
compiled to a one-stage cascade (pyruntime.trees.cascade.TreeCascade, fm_cascade.h).

``--sweep`` fits one model per lambda of a grid on the task's train part,
traces validation accuracy against validation test-time cost (feature cost
plus ``--tree-cost`` per tree), prints the curve and keeps the cheapest model
whose validation accuracy is within ``--tolerance`` (absolute) of the
lambda = 0 model's.
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
from compiler.trees.kind_cascade import cascade_metrics, validation_report
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


def sweep_curve(task: Any, opts: dict[str, Any], costs: np.ndarray | FeatureCosts, grid: list[float],
                tolerance: float, with_models: bool = False) -> Any:
    """Fit every lambda of the grid (0 first; in parallel with --jobs/--scheduler); return the chosen
    model and the curve (and every fitted model, in curve order, with ``with_models``)."""
    par = from_options(opts)
    Xtr, ytr, Xva, yva = split(task)
    lams = sorted({0.0, *grid})
    fits = run_map(_FitLambda(opts, costs, task.split.seed, Xtr, ytr, Xva, yva), lams, **par,
                   desc="miser lambda sweep")
    fitted = [m for m, _ in fits]
    curve = [p for _, p in fits]
    ref = curve[0]["validation_accuracy"]
    ok = [i for i, p in enumerate(curve) if p["validation_accuracy"] >= ref - tolerance]
    best = min(ok, key=lambda i: (curve[i]["validation_cost"], -curve[i]["validation_accuracy"]))
    return (fitted[best], curve, fitted) if with_models else (fitted[best], curve)


def print_curve(curve: list[dict[str, float]], chosen: float, tolerance: float) -> None:
    click.echo(f"{'lambda':>8} {'val acc':>8} {'val cost':>10} {'trees':>6} {'features':>9}", err=True)
    ref_cost = curve[0]["validation_cost"] or 1.0
    for p in curve:
        mark = "  <- kept" if p["lambda"] == chosen else ""
        click.echo(f"{p['lambda']:>8g} {p['validation_accuracy']:>8.4f} {p['validation_cost']:>10.2f} "
                   f"{p['trees']:>6} {p['features_used']:>9}{mark}", err=True)
    kept = next(p for p in curve if p["lambda"] == chosen)
    click.echo(f"kept lambda={chosen:g}: cheapest within {tolerance:g} of lambda=0 validation accuracy, "
               f"cost 1/{ref_cost / max(kept['validation_cost'], 1e-12):.1f} of lambda=0", err=True)


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
        print_curve(curve, model.lam, tolerance)
        record["sweep_curve"] = curve
    else:
        for name in ("tolerance", "lambda_grid"):
            if name in opts:
                raise click.UsageError(f"--{name.replace('_', '-')} needs --sweep")
        reject_without(opts, "--sweep")
        Xtr, ytr, Xva, yva = split(task)
        model = miser_estimator(float(opts.get("lambda", MISER_DEFAULTS["lambda"])), opts, c, task.split.seed)
        model.fit(Xtr, ytr, eval_set=(Xva, yva))
    ir = model.to_tree_ensemble()
    ir["tree_eval_cost"] = float(model.tree_eval_cost)
    tables = TreeCascade.from_ir(ir)
    _, _, Xva, yva = split(task)
    record.update({"lambda_chosen": float(model.lam), "trees_chosen": int(model.n_trees_),
                   "features_used": model.features_used_.tolist()})
    record.update(validation_report(tables, Xva, yva))
    ref = None
    if opts.get("sweep"):
        ref = ("the lambda = 0 model", float(record["sweep_curve"][0]["validation_accuracy"]))
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
