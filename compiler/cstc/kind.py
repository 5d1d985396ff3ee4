"""Kind ``cstc``: the Cost-Sensitive Tree of Classifiers (Xu et al., JMLR 2014, section 3), trained by
compiler.cstc.train.CSTCClassifier on the raw features and compiled to pyruntime.cstc.model.CSTCModel
(fm_cstc.h): each input walks one path of sparse linear classifiers and reads only their features.

``--sweep`` fits one tree per lambda of ``--lambda-grid``, prints validation accuracy against
validation cost (of the compiled tables) and keeps the cheapest tree within ``--tolerance``
(absolute) of the best validation accuracy. A validation part of fewer than CV_BELOW (200) rows judges
each lambda by CV_FOLDS (5)-fold cross-validation on the train and validation parts pooled instead
(the project's small-set rule, compiler.options.auto_folds; ``--folds K`` / ``--folds 1``), and the kept
lambda is then refitted on both parts without pruning (as miser and the gated kinds refit after cross-validation:
pruning on a small validation part collapsed the tree to one path; docs/cstc.md). A tree no better than the
majority class on validation (its cross-validated accuracy when refitted) is refused unless ``--allow-trivial``.

K >= 3 classes train without a flag (docs/cstc.md, "K classes"): the internal nodes stay binary routers,
every leaf holds K class scorers and answers the largest score's class.
"""

from __future__ import annotations

from typing import Any

import click
import numpy as np

from compiler.costs import FeatureCosts, cost_vector
from compiler.cstc.header import cstc_tables
from compiler.header import register_emitter
from compiler.kinds import KindSpec, register
from compiler.options import SWEEP_OPTIONS, TREE_OPTIONS, cheapest_within, folds_option, sweep_folds
from compiler.tasks import (
    balanced_validation_accuracy,
    majority_accuracy,
    parse_floats,
    split,
)
from compiler.train_cli import BRACKET
from pyruntime.cli_errors import NumberRange
from pyruntime.cstc.model import CSTCModel
from pyruntime.format import ModelFile
from pyruntime.progress import Progress
from pyruntime.result import Predictions

DEFAULTS = {"lambda": 1.5, "depth": 3, "rho": 1e-3, "max_iter": 10, "internal_loss": 0.1, "routing_scale": 4.0}
DEFAULT_GRID = (0.3, 1.0, 1.5, 3.0, 10.0)


def _shared(name: str, options: list[click.Option], extra: str) -> click.Option:
    """An option other kinds also declare (same name and type), its help extended for cstc."""
    orig = next(o for o in options if o.name == name)
    return click.Option(orig.opts, type=orig.type, is_flag=orig.is_flag, default=orig.default,
                        help=f"{BRACKET.sub('', orig.help or '')}. [cstc: {extra}]")


CSTC_OPTIONS = [
    _shared("lambda", TREE_OPTIONS, f"weight of the expected path cost, default {DEFAULTS['lambda']:g}"),
    click.Option(["--depth"], type=click.IntRange(1, 10), default=None,
                 help=f"Levels of classifier nodes [cstc; default {DEFAULTS['depth']}]."),
    click.Option(["--sweep"], is_flag=True, default=False,
                 help="Fit the --lambda-grid, print validation accuracy vs test-time cost, keep the cheapest model "
                      "within --tolerance of the most accurate [cstc]."),
    _shared("tolerance", SWEEP_OPTIONS, "default 0.01"),
    click.Option(["--lambda-grid"], default=None,
                 help="Comma-separated lambdas of --sweep [cstc; default "
                      + ",".join(f"{v:g}" for v in DEFAULT_GRID) + "]."),
    folds_option("lambda", "each fold's tree pruned on its held-out rows",
                 "the kept lambda is then refitted on both parts, unpruned", "cstc"),
    click.Option(["--rho"], type=NumberRange(min=0, finite=True), default=None,
                 help=f"l1 weight of every node's classifier [cstc; default {DEFAULTS['rho']:g}]."),
    click.Option(["--max-iter"], type=click.IntRange(min=0), default=None,
                 help=f"Sweeps of block coordinate descent over the nodes [cstc; default {DEFAULTS['max_iter']}]."),
    click.Option(["--internal-loss"], type=NumberRange(min=0, finite=True), default=None,
                 help="Weight of the internal nodes' own loss (the paper: 1) "
                      f"[cstc; default {DEFAULTS['internal_loss']:g}]."),
    click.Option(["--routing-scale"], type=NumberRange(min=0, min_open=True, finite=True), default=None,
                 help="Slope of the soft-traversal sigmoids in training "
                      f"[cstc; default {DEFAULTS['routing_scale']:g}]."),
    click.Option(["--no-prune"], is_flag=True, default=False,
                 help="Keep the full tree (no validation pruning) [cstc]."),
    click.Option(["--allow-trivial"], is_flag=True, default=False,
                 help="Write the model even when it is no better than the majority class on validation [cstc]."),
]


def cstc_estimator(lam: float, opts: dict[str, Any], costs: np.ndarray, seed: int) -> Any:
    from compiler.cstc.train import CSTCClassifier  # noqa: PLC0415 - keeps scikit-learn out of CLI start-up

    def get(name: str) -> Any:
        return opts.get(name, DEFAULTS[name])

    return CSTCClassifier(depth=int(get("depth")), lam=lam, rho=float(get("rho")), costs=costs,
                          max_iter=int(get("max_iter")), internal_loss=float(get("internal_loss")),
                          routing_scale=float(get("routing_scale")), prune=not opts.get("no_prune", False),
                          random_state=seed)


def validation_report(tables: CSTCModel, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Validation figures of the tables themselves (numpy reference, float32)."""
    p = tables.predict_reference(X)
    K = tables.n_classes
    return {
        "validation_accuracy": float(np.mean(p.label == y)),
        "validation_weighted_accuracy": balanced_validation_accuracy(y, p.label, K),
        "validation_mean_cost": float(np.mean(p.cost)),
        "validation_mean_features": float(np.mean(p.n_read)),
        "validation_majority": (float(max(np.mean(y), 1.0 - np.mean(y))) if K == 2 else majority_accuracy(y)),
    }


def train_cstc(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    c = cost_vector(costs, task.n_features)
    Xtr, ytr, Xva, yva = split(task)
    record: dict[str, Any] = {"kind": kind, **{k: v for k, v in opts.items() if v is not None}}
    seed = task.split.seed
    cv_acc: float | None = None  # a cross-validated sweep's kept accuracy: its refit saw the validation rows too
    if opts.get("sweep"):
        if "lambda" in opts:
            raise click.UsageError("--lambda does not apply with --sweep (use --lambda-grid)")
        grid = sorted(set(parse_floats(opts["lambda_grid"], "--lambda-grid") if "lambda_grid" in opts
                          else DEFAULT_GRID))
        y = np.concatenate([ytr, yva])
        folds, parts = sweep_folds(yva.size, y, opts.get("folds"), seed, task.classes)
        if folds:
            curve = _cross_validated_curve(grid, opts, c, seed, np.concatenate([Xtr, Xva]), y, parts)
        else:
            curve, fitted = _validation_curve(grid, opts, c, seed, Xtr, ytr, Xva, yva)
        judged = "cv" if folds else "validation"
        pick = cheapest_within(curve, float(opts.get("tolerance", 0.01)), judged,
                               reference=max(p[f"{judged}_accuracy"] for p in curve))
        head = "cv" if folds else "val"
        click.echo(f"{'lambda':>8} {head + ' acc':>8} {head + ' cost':>10} {'nodes':>6}", err=True)
        for i, p in enumerate(curve):
            click.echo(f"{p['lambda']:>8g} {p[f'{judged}_accuracy']:>8.4f} {p[f'{judged}_cost']:>10.2f} "
                       f"{p['nodes']:>6.3g}{'  <- kept' if i == pick else ''}", err=True)
        curve[pick]["kept"] = True
        if folds:  # the kept lambda refitted on the pooled rows, unpruned (miser and the gated kinds refit too)
            cv_acc = float(curve[pick]["cv_accuracy"])
            Xfit = np.concatenate([Xtr, Xva])
            model = cstc_estimator(curve[pick]["lambda"], {**opts, "no_prune": True}, c, seed).fit(Xfit, y)
        else:
            model = fitted[pick]
        record["sweep_folds"] = folds
        if folds:
            record["refit_folds"] = int(folds)
        record["sweep_curve"] = curve
    else:
        for name in ("tolerance", "lambda_grid", "folds"):
            if name in opts:
                raise click.UsageError(f"--{name.replace('_', '-')} needs --sweep")
        model = cstc_estimator(float(opts.get("lambda", DEFAULTS["lambda"])), opts, c, seed)
        model.fit(Xtr, ytr, eval_set=(Xva, yva))
    tables = cstc_model_tables(model.to_ir(), Xtr if cv_acc is None else np.concatenate([Xtr, Xva]))
    rep = validation_report(tables, Xva, yva)
    # judged on rows it was not fitted on: the kept point's cross-validated accuracy when refitted on the pooled rows
    judged_acc = rep["validation_accuracy"] if cv_acc is None else cv_acc
    if judged_acc <= rep["validation_majority"] and not opts.get("allow_trivial"):
        raise ValueError(
            f"the trained CSTC tree is trivial: {'validation' if cv_acc is None else 'cross-validated'} accuracy "
            f"{judged_acc:.4f} is not better than the majority class ({rep['validation_majority']:.4f}); lower "
            "--lambda or --rho, or pass --allow-trivial to write it anyway")
    record.update({"lambda_chosen": float(model.lam), "nodes": tables.n_nodes,
                   "features_used": np.unique(tables.feature).tolist()})
    record.update(rep)
    return task.model_file(kind, tables, record)


def _validation_curve(grid: list[float], opts: dict[str, Any], costs: np.ndarray, seed: int, Xtr: np.ndarray,
                      ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray) -> tuple[list[dict[str, Any]], list[Any]]:
    """One tree per lambda fitted on the train part (pruned and its start chosen on validation), judged by its
    compiled tables on the validation part; the curve and the fitted trees."""
    fitted, curve = [], []
    with Progress("cstc lambda sweep", total=len(grid)) as progress:
        for lam in grid:
            m = cstc_estimator(lam, opts, costs, seed).fit(Xtr, ytr, eval_set=(Xva, yva))
            rep = validation_report(cstc_model_tables(m.to_ir(), Xtr), Xva, yva)
            fitted.append(m)
            curve.append({"lambda": lam, "validation_accuracy": rep["validation_accuracy"],
                          "validation_cost": rep["validation_mean_cost"], "nodes": len(m._reachable())})
            progress.update()
    return curve, fitted


def _cross_validated_curve(grid: list[float], opts: dict[str, Any], costs: np.ndarray, seed: int, X: np.ndarray,
                           y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]]) -> list[dict[str, Any]]:
    """Each lambda judged by K-fold cross-validation on the pooled rows: every fold's tree fitted on the other
    folds (pruned and its start chosen on its own held-out rows, as the validation part does without folds), its
    compiled tables scored on the held-out rows; accuracy over every held-out row, mean cost and nodes."""
    curve = []
    with Progress(f"cstc lambda sweep, {len(folds)}-fold", total=len(grid) * len(folds)) as progress:
        for lam in grid:
            sums = np.zeros(3)
            for tr, te in folds:
                m = cstc_estimator(lam, opts, costs, seed).fit(X[tr], y[tr], eval_set=(X[te], y[te]))
                rep = validation_report(cstc_model_tables(m.to_ir(), X[tr]), X[te], y[te])
                sums += te.size * np.array([rep["validation_accuracy"], rep["validation_mean_cost"],
                                            len(m._reachable())])
                progress.update()
            acc, cost, nodes = sums / y.size
            curve.append({"lambda": lam, "cv_accuracy": float(acc), "cv_cost": float(cost), "nodes": float(nodes)})
    return curve


def cstc_model_tables(ir: dict[str, Any], X: np.ndarray) -> CSTCModel:
    """The float32 tables of a trained tree; input_absmax (the q15 input shift) over the features it reads only:
    a large column the tree never reads must not cost the others their fixed-point resolution."""
    used = np.unique(np.asarray(ir["feature"], dtype=np.intp))
    return CSTCModel(**ir, input_absmax=float(np.max(np.abs(X[:, used]), initial=0.0)))


def cstc_metrics(model: ModelFile, X: np.ndarray, y: np.ndarray, pred: Predictions, numeric: str) -> dict[str, Any]:
    t: CSTCModel = model.tables
    leaves = [k for k in range(t.n_nodes) if t.is_leaf(k)]
    hist = np.bincount(pred.stage.astype(np.int64), minlength=t.n_nodes) if len(pred) else np.zeros(t.n_nodes)
    return {"n_nodes": t.n_nodes, "n_leaves": len(leaves), "features_used": t.n_used,
            "leaf_histogram": {str(k): int(hist[k]) for k in leaves}}


register_emitter("cstc", cstc_tables)
register(KindSpec("cstc", "Cost-sensitive tree of linear classifiers (xu2014 CSTC): each input reads its path only",
                  train_cstc, CSTC_OPTIONS, cstc_metrics, multiclass=True))
