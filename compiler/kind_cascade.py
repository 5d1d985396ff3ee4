"""Kind ``cascade``: CSCC-style cascades of cost-aware boosted stages with
early exits (compiler.cascade.CsccCascadeClassifier), or with
``--early-exit-every N`` the "exit every N trees" baseline over one Greedy
Miser ensemble (compiler.cascade.EarlyExitEnsemble).

Also holds what ``miser`` shares with it: the tree options, the C-header
emitter of pyruntime.cascade.TreeCascade tables (fm_cascade.h) and the extra
``eval --json`` figures (mean_trees, exit_histogram).
"""

from __future__ import annotations

from typing import Any

import click
import numpy as np

from pyruntime.cascade import TreeCascade
from pyruntime.format import ModelFile
from pyruntime.nb import Predictions

from .cascade import CsccCascadeClassifier, EarlyExitEnsemble
from .costs import FeatureCosts
from .export_c import CArray, CTables, c_float, register_emitter
from .kinds import KindSpec, register
from .miser import LOSSES, GreedyMiserClassifier
from .nb_train import class_weights, weighted_accuracy

# ------------------------------------------------------------------ options ----
TREE_OPTIONS = [
    click.Option(["--lambda"], type=click.FloatRange(min=0), default=None,
                 help="Feature-cost penalty lambda [miser: default 1; cascade: stage 0's, default 10, stage s "
                      "gets lambda*10^-s; cascade --early-exit-every: the ensemble's, default 0]."),
    click.Option(["--trees"], type=click.IntRange(min=1), default=None,
                 help="Boosting iterations [miser: at most, chosen on validation, default 100; cascade: in all "
                      "stages, default 90]."),
    click.Option(["--depth"], type=click.IntRange(1, 16), default=None, help="Tree depth [miser, cascade; default 3]."),
    click.Option(["--step"], type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Learning rate [miser, cascade; default 0.1]."),
    click.Option(["--loss"], type=click.Choice(list(LOSSES)), default=None,
                 help="Boosting loss [miser: default squared; cascade: default logistic]."),
    click.Option(["--tree-cost"], type=click.FloatRange(min=0), default=None,
                 help="Evaluation cost e per tree, added to the feature cost in the test-time cost "
                      "[miser, cascade; default 0]."),
]
CASCADE_OPTIONS = [
    click.Option(["--stages"], type=click.IntRange(min=1), default=None,
                 help="Number of cascade stages K [cascade; default 3]."),
    click.Option(["--stage-lambdas"], default=None,
                 help="Comma-separated lambda of every stage, e.g. 30,3,0.3 [cascade; overrides --lambda]."),
    click.Option(["--early-exit-every"], type=click.IntRange(min=1), default=None,
                 help="Baseline instead of CSCC: one miser ensemble with an exit test every N iterations "
                      "[cascade]."),
    click.Option(["--min-agreement"], type=click.FloatRange(0, 1, min_open=True), default=None,
                 help="Share of validation exits that must agree with the full ensemble [cascade; "
                      "default 0.9975]."),
]


def parse_floats(text: str, option: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{option} must be comma-separated numbers, got {text!r}") from None
    if not vals or any(not np.isfinite(v) or v < 0 for v in vals):
        raise ValueError(f"{option} needs finite numbers >= 0, got {text!r}")
    return vals


def cost_vector(task: Any, costs: FeatureCosts | None) -> np.ndarray:
    d = task.data.X.shape[1]
    return np.ones(d) if costs is None else costs.at(0.0).astype(np.float64)


def split(task: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X, y = task.data.X.astype(np.float32), task.y
    return X[task.train], y[task.train], X[task.validation], y[task.validation]


def validation_report(tables: TreeCascade, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Validation figures of the tables themselves (numpy reference, float32)."""
    p = tables.predict_reference(X)
    trees = tables.trees_at(p.stage)
    return {
        "validation_accuracy": float(np.mean(p.label == y)),
        "validation_weighted_accuracy": weighted_accuracy(y, p.label, class_weights(y)),
        "validation_mean_cost": float(np.mean(p.cost.astype(np.float64) + tables.tree_eval_cost * trees)),
        "validation_mean_features": float(np.mean(p.n_read)),
        "validation_mean_trees": float(np.mean(trees)),
        "validation_exit_histogram": np.bincount(p.stage.astype(np.int64), minlength=tables.n_stages).tolist(),
    }


# ----------------------------------------------------------------- training ----
def train_cascade(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    c = cost_vector(task, costs)
    Xtr, ytr, Xva, yva = split(task)
    tree_cost = float(opts.get("tree_cost", 0.0))
    min_agreement = float(opts.get("min_agreement", 0.9975))
    record: dict[str, Any] = {"kind": kind, **{k: v for k, v in opts.items() if v is not None}}
    every = opts.get("early_exit_every")
    if every is not None:
        for bad in ("stages", "stage_lambdas"):
            if bad in opts:
                raise click.UsageError(f"--{bad.replace('_', '-')} does not apply with --early-exit-every")
        base = GreedyMiserClassifier(
            lambda_=float(opts.get("lambda", 0.0)), n_trees=int(opts.get("trees", 100)),
            max_depth=int(opts.get("depth", 3)), step=float(opts.get("step", 0.1)),
            loss=opts.get("loss", "logistic"), costs=c, tree_eval_cost=tree_cost, random_state=task.split.seed,
        ).fit(Xtr, ytr, eval_set=(Xva, yva))
        est: Any = EarlyExitEnsemble(base, every=int(every), min_agreement=min_agreement).fit(Xva, yva)
        record["method"] = "early-exit"
    else:
        lams = opts.get("stage_lambdas")
        est = CsccCascadeClassifier(
            n_stages=int(opts.get("stages", 3)), n_trees=int(opts.get("trees", 90)),
            lambdas=parse_floats(lams, "--stage-lambdas") if lams is not None else None,
            lambda_=float(opts.get("lambda", 10.0)), max_depth=int(opts.get("depth", 3)),
            step=float(opts.get("step", 0.1)), loss=opts.get("loss", "logistic"), costs=c,
            tree_eval_cost=tree_cost, min_agreement=min_agreement, random_state=task.split.seed,
        )
        if int(est.n_stages) > int(est.n_trees):
            raise ValueError(f"--stages {est.n_stages} needs at least as many --trees (got {est.n_trees})")
        est.fit(Xtr, ytr, eval_set=(Xva, yva))
        record["method"] = "cscc"
        record["stage_lambdas"] = est.stage_lambdas()
    tables = TreeCascade.from_ir(est.to_tree_ensemble())
    record["stage_end"] = tables.stage_end.tolist()
    record.update(validation_report(tables, Xva, yva))
    meta = task.meta()
    meta["training"] = record
    return ModelFile(kind=kind, tables=tables, meta=meta)


# --------------------------------------------------------------- eval extras ----
def cascade_metrics(model: ModelFile, X: np.ndarray, y: np.ndarray, pred: Predictions,
                    numeric: str) -> dict[str, Any]:
    t: TreeCascade = model.tables
    n = len(pred)
    trees = t.trees_at(pred.stage) if n else np.zeros(0, np.int64)
    return {
        "n_stages": t.n_stages,
        "mean_trees": float(np.mean(trees)) if n else 0.0,
        "exit_histogram": np.bincount(pred.stage.astype(np.int64), minlength=t.n_stages).tolist(),
        "tree_eval_cost": t.tree_eval_cost,
        "mean_test_time_cost": float(np.mean(pred.cost + t.tree_eval_cost * trees)) if n else 0.0,
    }


# ---------------------------------------------------------------- C header ----
def _int(v: int) -> str:
    return "INT32_MIN" if int(v) == -(2**31) else str(int(v))


def cascade_tables(tables: Any, numeric: str, p: str) -> CTables:
    """fm_cascade / fm_cascade_q15 initializer (fm_cascade.h) of TreeCascade tables."""
    m: TreeCascade = tables
    t = m.trees
    common = [CArray(f"{p}_feature", "int32_t", t.feature), CArray(f"{p}_left", "int32_t", t.left),
              CArray(f"{p}_right", "int32_t", t.right), CArray(f"{p}_roots", "int32_t", t.roots),
              CArray(f"{p}_tree_output", "int32_t", t.tree_output),
              CArray(f"{p}_stage_end", "uint32_t", m.stage_end)]
    head = [f"{t.n_features}u", f"{t.n_outputs}u", f"{t.n_nodes}u", f"{t.n_trees}u", f"{p}_feature"]
    rule = "FM_EXIT_SCORE" if m.exit_rule == "score" else "FM_EXIT_MARGIN"
    if numeric == "float32":
        arrays = common + [CArray(f"{p}_threshold", "float", t.threshold), CArray(f"{p}_value", "float", t.value),
                           CArray(f"{p}_base_score", "float", t.base_score),
                           CArray(f"{p}_exit_upper", "float", m.exit_upper),
                           CArray(f"{p}_exit_lower", "float", m.exit_lower)]
        if t.costs is not None:
            arrays.append(CArray(f"{p}_costs", "float", t.costs))
        inner = head + [f"{p}_threshold", f"{p}_left", f"{p}_right", f"{p}_value", f"{p}_roots",
                        f"{p}_tree_output", f"{p}_base_score", f"{p}_costs" if t.costs is not None else "NULL",
                        c_float(t.decision_threshold)]
        fields = [("trees", "{ " + ", ".join(inner) + " }"), ("n_stages", f"{m.n_stages}u"),
                  ("stage_end", f"{p}_stage_end"), ("exit_upper", f"{p}_exit_upper"),
                  ("exit_lower", f"{p}_exit_lower"), ("exit_rule", rule)]
        return CTables(arrays=arrays, struct_type="fm_cascade", fields=fields,
                       predict_vec="fm_cascade_predict_vec", header="fm_cascade.h")
    q = m.q15()
    tq = q.trees
    arrays = common + [CArray(f"{p}_threshold_key", "int32_t", tq.threshold_key),
                       CArray(f"{p}_value_q", "int16_t", tq.value_q), CArray(f"{p}_base_q", "int32_t", tq.base_q),
                       CArray(f"{p}_exit_upper_q", "int32_t", q.exit_upper_q),
                       CArray(f"{p}_exit_lower_q", "int32_t", q.exit_lower_q)]
    if tq.costs is not None:
        arrays.append(CArray(f"{p}_costs", "uint16_t", tq.costs))
    inner = head + [f"{p}_threshold_key", f"{p}_left", f"{p}_right", f"{p}_value_q", f"{p}_roots",
                    f"{p}_tree_output", f"{p}_base_q", f"{p}_costs" if tq.costs is not None else "NULL",
                    _int(tq.decision_threshold_q), f"{tq.shift}u"]
    fields = [("trees", "{ " + ", ".join(inner) + " }"), ("n_stages", f"{q.n_stages}u"),
              ("stage_end", f"{p}_stage_end"), ("exit_upper_q", f"{p}_exit_upper_q"),
              ("exit_lower_q", f"{p}_exit_lower_q"), ("exit_rule", rule)]
    return CTables(arrays=arrays, struct_type="fm_cascade_q15", fields=fields,
                   predict_vec="fm_cascade_q15_predict_vec", header="fm_cascade.h")


register_emitter("cascade", cascade_tables)
register(KindSpec("cascade", "CSCC cascade of cost-aware boosted stages with early exits (or --early-exit-every)",
                  train_cascade, TREE_OPTIONS + CASCADE_OPTIONS, cascade_metrics))
