"""Kind ``cascade``: CSCC (xu2014 sections 4-5, compiler.trees.cscc.CsccCascadeClassifier):
K stages of weights over pre-trained trees optimised jointly, early-reject exits; or with
``--early-exit-every N`` the "exit every N trees" baseline over one Greedy Miser ensemble
(compiler.trees.cascade.EarlyExitEnsemble).

Also holds what ``miser`` shares with it: the tree options, the C-header
emitter of pyruntime.trees.cascade.TreeCascade tables (fm_cascade.h) and the extra
``eval --json`` figures (mean_trees, exit_histogram).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
import numpy as np

from compiler.costs import FeatureCosts, cost_vector
from compiler.header import register_emitter
from compiler.kinds import KindSpec, register
from compiler.options import (
    CASCADE_DEFAULTS,
    CV_BELOW,
    DEFAULT_GRID,
    TREE_OPTIONS,
    auto_folds,
    floats_text,
    stratified_folds,
)
from compiler.report_text import counts_text
from compiler.tasks import balanced_validation_accuracy, check_not_trivial, parse_floats, split
from compiler.trees.code import left_percents
from compiler.trees.fold_stops import early_stopped_fits, refit_length
from compiler.trees.header import cascade_tables
from compiler.trees.options import (
    CASCADE_OPTIONS,
    CLASS_TREES_OPTIONS,
    DEFAULT_TREE_ORDER,
    EARLY_EXIT_TREE_ORDER,
    MISER_REFINE,
)
from pyruntime.format import ModelFile
from pyruntime.progress import Progress, track
from pyruntime.result import Predictions
from pyruntime.trees.cascade import TreeCascade

if TYPE_CHECKING:  # the trainer imports scikit-learn: only when training (CLI start-up stays light)
    from compiler.trees.cscc import CsccCascadeClassifier

# ------------------------------------------------------------------ options ----


def validation_report(tables: TreeCascade, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Validation figures of the tables themselves (numpy reference, float32): mean_cost the features' cost, as
    `eval` reports it; mean_test_time_cost with the trees' evaluation cost (--tree-cost), what the frontier weighs."""
    p = tables.predict_reference(X)
    trees = tables.trees_at(p.stage)
    return {
        "validation_accuracy": float(np.mean(p.label == y)),
        "validation_weighted_accuracy": balanced_validation_accuracy(y, p.label, int(np.max(y, initial=0)) + 1),
        "validation_mean_cost": float(np.mean(p.cost.astype(np.float64))),
        "validation_mean_test_time_cost": float(np.mean(p.cost.astype(np.float64) + tables.tree_eval_cost * trees)),
        "validation_mean_features": float(np.mean(p.n_read)),
        "validation_mean_trees": float(np.mean(trees)),
        "validation_exit_histogram": np.bincount(p.stage.astype(np.int64), minlength=tables.n_stages).tolist(),
    }


# ----------------------------------------------------------------- training ----
def train_cascade(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    from compiler.trees.cascade import EarlyExitEnsemble  # noqa: PLC0415 - scikit-learn only when training
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415

    c = cost_vector(costs, task.n_features)
    Xtr, ytr, Xva, yva = split(task)
    d = CASCADE_DEFAULTS
    tree_cost = float(opts.get("tree_cost", d["tree_cost"]))
    record: dict[str, Any] = {"kind": kind, **{k: v for k, v in opts.items() if v is not None}}
    class_trees = str(opts.get("class_trees") or d["class_trees"])  # the form of the miser trees (K outputs)
    if task.n_classes > 2:
        record["class_trees"] = class_trees
    every = opts.get("early_exit_every")
    cscc_given = [k for k in CSCC_ONLY if k in opts]
    if every is None and task.n_classes > 2 and cscc_given:
        raise click.UsageError(f"--{cscc_given[0].replace('_', '-')} is CSCC's, whose stages reject early for two "
                               f"classes; the target has {task.n_classes}: leave it out (the default cascade exits on "
                               "the top-2 class margin), give --early-exit-every N, or --positive LABEL")
    if opts.get("cheap_first") and (every is not None or cscc_given):
        given = "--early-exit-every" if every is not None else f"--{cscc_given[0].replace('_', '-')}"
        raise click.UsageError(f"--cheap-first adds candidates to the default frontier; {given} trains another "
                               "cascade: give one or the other")
    if every is None and not cscc_given:
        refuse_exit_options(opts)  # before the small-set re-route below, which sets its own
        folds = 0 if "exit_folds" in opts else auto_folds(yva.size, np.concatenate([ytr, yva]), None)
        if not folds:
            return train_frontier(kind, task, opts, costs, tree_cost, record, class_trees)
        if opts.get("cheap_first"):
            click.echo("cascade: --cheap-first left out: the cross-validated frontier of a small validation part "
                       "has no cheap-first starts", err=True)
        # a small validation part (one row is several tenths of a point): the same frontier judged held out
        click.echo(f"cascade: the validation part has {yva.size} rows (< {CV_BELOW}): the frontier's lambdas and exit "
                   f"tests judged by {folds}-fold cross-validation on the train and validation parts pooled", err=True)
        small = {k: v for k, v in opts.items() if k != "cheap_first"}
        return train_cascade(kind, task, {**small, "early_exit_every": EXIT_EVERY_GRID[0], "exit_folds": folds,
                                          "exit_lambdas": floats_text(DEFAULT_GRID),
                                          "exit_every_grid": ",".join(map(str, EXIT_EVERY_GRID)),
                                          "exit_thresholds": opts.get("exit_thresholds") or EXIT_THRESHOLDS,
                                          "tree_order": opts.get("tree_order") or DEFAULT_TREE_ORDER}, costs)
    if every is not None:
        for bad in ("stages", "pool_lambdas", "rho"):
            if bad in opts:
                raise click.UsageError(f"--{bad.replace('_', '-')} does not apply with --early-exit-every")
        lam0 = float(opts.get("lambda", d["early_exit_lambda"]))

        def base(lam: float = lam0) -> GreedyMiserClassifier:
            return GreedyMiserClassifier(
                lam=lam, n_trees=int(opts.get("trees", d["trees"])),
                max_depth=int(opts.get("depth", d["depth"])), step=float(opts.get("step", d["step"])),
                loss=opts.get("loss", "logistic" if task.n_classes == 2 else "multiclass-log"),
                costs=costs if costs is not None and costs.has_groups else c,  # groups: each charged once
                tree_eval_cost=tree_cost, random_state=task.split.seed,
                class_trees=class_trees)

        agreement = float(opts.get("min_agreement", d["min_agreement"]))
        thresholds = str(opts.get("exit_thresholds") or "per-stage")
        order = str(opts.get("tree_order") or EARLY_EXIT_TREE_ORDER)
        if opts.get("exit_folds"):
            X, y = np.concatenate([Xtr, Xva]), np.concatenate([ytr, yva])
            try:
                folds = stratified_folds(y, int(opts["exit_folds"]), task.split.seed, task.classes, "--exit-folds")
            except ValueError as exc:
                raise click.UsageError(str(exc)) from None

            fits: dict[tuple[float, bytes], GreedyMiserClassifier] = {}  # one fit per lambda and rows, any N
            stopped: dict[float, int] = {}

            def iterations(lam: float) -> int:
                """A lambda's ensembles' length, as miser --sweep's cross-validation finds it: every fold's fit
                early-stopped on its held-out rows, their mean number of iterations (at most --trees). Fold models
                and the refit on every row then have that length: a fixed --trees over-fits a small noisy set."""
                if lam not in stopped:
                    n = [m.n_iter_ for m, _ in early_stopped_fits(lambda: base(lam), X, y, folds)]
                    stopped[lam] = refit_length(float(np.mean(n)))
                return stopped[lam]

            def cascade(lam: float, n: int) -> EarlyExitEnsemble:
                length = iterations(lam)

                def fold_model(Xf: np.ndarray, yf: np.ndarray) -> GreedyMiserClassifier:
                    key = (lam, Xf.tobytes())
                    if key not in fits:
                        fits[key] = base(lam).set_params(n_trees=length, validation_fraction=0.0).fit(Xf, yf)
                    return fits[key]

                return EarlyExitEnsemble(fold_model(X, y), every=n, min_agreement=agreement,
                                         thresholds=thresholds, tree_order=order).fit_folds(
                    X, y, folds, fold_model)

            if "exit_lambdas" in opts or "exit_every_grid" in opts:
                if "exit_lambdas" in opts and "lambda" in opts:
                    raise click.UsageError("--lambda does not apply with --exit-lambdas")
                grid = sorted({0.0, *parse_floats(opts["exit_lambdas"], "--exit-lambdas")}) \
                    if "exit_lambdas" in opts else [lam0]
                everys = [int(every)]
                if "exit_every_grid" in opts:
                    everys = sorted({int(v) for v in parse_floats(opts["exit_every_grid"], "--exit-every-grid")})
                    if min(everys) < 1 or any(float(v) != int(v) for v in
                                              parse_floats(opts["exit_every_grid"], "--exit-every-grid")):
                        raise click.UsageError("--exit-every-grid takes whole numbers of iterations >= 1")
                pairs = [(lam, n) for lam in grid for n in everys]
                fitted = {pair: cascade(*pair) for pair in track(pairs, "cascade exits by cross-validation",
                                                                 unit="ensemble")}
                curve = [{"lambda": lam, "every": n, **e.cv_} for (lam, n), e in fitted.items()]
                tol = one_se(curve[0]["cv_full_accuracy"], y.size)  # the first lambda's whole ensembles, no exit
                budget = None
                if "exit_budget" in opts:
                    budget = float(opts["exit_budget"]) * eager_cost(next(iter(fitted.values())))
                    record["exit_budget_cost"] = budget
                kept = held_out_choice(curve, tol, budget)
                record.update({"exit_lambda_curve": curve, "exit_lambda_tolerance": tol,
                               "lambda_chosen": kept["lambda"], "early_exit_every_chosen": kept["every"]})
                for p in curve:
                    mark = "  <- kept" if p is kept else ""
                    click.echo(f"cascade lambda={p['lambda']:g} every {p['every']}: held-out accuracy "
                               f"{p['cv_accuracy']:.4f}, mean cost {p['cv_cost']:.2f}{mark}", err=True)
                est: Any = fitted[(kept["lambda"], kept["every"])]
            else:
                if "exit_budget" in opts:
                    raise click.UsageError("--exit-budget needs --exit-lambdas or --exit-every-grid")
                with Progress("cascade exits by cross-validation", 1, unit="ensemble") as bar:
                    est = cascade(lam0, int(every))
                    bar.update()
            record.update(est.cv_)
            record["refit_folds"] = len(folds)  # the kept ensemble fitted on train + validation
            click.echo(f"cascade: exits by {len(folds)}-fold cross-validation: held-out accuracy "
                       f"{est.cv_['cv_accuracy']:.4f} (full ensembles {est.cv_['cv_full_accuracy']:.4f}), mean cost "
                       f"{est.cv_['cv_cost']:.2f}, {est.cv_['cv_features']:.2f} features, exits "
                       f"{counts_text(est.cv_['cv_exit_histogram'])}", err=True)
        else:
            for name in ("exit_lambdas", "exit_every_grid", "exit_budget"):
                if name in opts:
                    raise click.UsageError(f"--{name.replace('_', '-')} needs --exit-folds")
            est = EarlyExitEnsemble(base().fit(Xtr, ytr, eval_set=(Xva, yva)), every=int(every),
                                    min_agreement=agreement, thresholds=thresholds, tree_order=order).fit(Xva, yva)
        record["method"] = "early-exit"
        record["tree_order"] = order
        record["tree_order_used"] = est.tree_order_used_
        record["trees_chosen"] = int(est.stage_end_[-1])
        reference = None
    else:
        for bad in ("min_agreement", "loss", "exit_folds", "exit_lambdas", "exit_every_grid", "exit_budget",
                    "exit_thresholds"):
            if bad in opts:
                raise click.UsageError(f"--{bad.replace('_', '-')} applies to --early-exit-every only "
                                       "(CSCC uses the paper's squared loss)")
        if "tree_order" in opts:
            raise click.UsageError("--tree-order orders the iterations of an exit cascade (the default one or "
                                   "--early-exit-every); CSCC's stages are trained in their own order")
        est = cscc_cascade(task, opts, c, tree_cost)
        record["method"] = "cscc"
        record["validation_objective"] = est.validation_objective_.tolist()
        record["lambda_chosen"] = float(est.lambda_chosen_)
        record["lambda_curve"] = est.lambda_curve_
        reference = ("the full ensemble of its trees", float(est.full_validation_accuracy_))
    return finish(kind, task, opts, est.to_tree_ensemble(), record, reference)


CSCC_ONLY = ("lambda", "pool_lambdas", "stages", "rho")  # any of them: CSCC alone, not the default frontier


def cscc_estimator(opts: dict[str, Any], costs: np.ndarray, tree_cost: float, seed: int) -> CsccCascadeClassifier:
    """The unfitted CSCC cascade of the options (CASCADE_DEFAULTS where not given): ``costs`` per feature,
    ``tree_cost`` per tree walked, ``seed`` its random_state."""
    from compiler.trees.cscc import CsccCascadeClassifier  # noqa: PLC0415 - scikit-learn only when training

    d = CASCADE_DEFAULTS
    pool = opts.get("pool_lambdas")
    return CsccCascadeClassifier(
        n_stages=int(opts.get("stages", d["stages"])), n_trees=int(opts.get("trees", d["trees"])),
        lam=float(opts["lambda"]) if "lambda" in opts else None, rho=float(opts.get("rho", d["rho"])),
        pool_lambdas=tuple(parse_floats(pool, "--pool-lambdas")) if pool is not None else d["pool_lambdas"],
        max_depth=int(opts.get("depth", d["depth"])), step=float(opts.get("step", d["step"])), costs=costs,
        tree_eval_cost=tree_cost, random_state=seed,
    )


def cscc_cascade(task: Any, opts: dict[str, Any], costs: np.ndarray, tree_cost: float) -> Any:
    """The CSCC cascade of the options (:func:`cscc_estimator`) fitted on the task's train part, its validation
    part as eval_set."""
    Xtr, ytr, Xva, yva = split(task)
    return cscc_estimator(opts, costs, tree_cost, task.split.seed).fit(Xtr, ytr, eval_set=(Xva, yva))


def finish(kind: str, task: Any, opts: dict[str, Any], ir: dict, record: dict[str, Any],
           reference: tuple[str, float] | None) -> ModelFile:
    """The model file of a cascade's IR: tables, code hints, validation figures, the trivial-model check."""
    Xtr, _, Xva, yva = split(task)
    tables = TreeCascade.from_ir(ir)
    record["stage_end"] = tables.stage_end.tolist()
    record["code_hints"] = tree_code_hints(tables, Xtr)
    record.update(validation_report(tables, Xva, yva))
    pred = tables.predict_reference(Xva)
    record.update(check_not_trivial(kind, yva, pred.label, pred.n_read, opts,
                                    "lower --lambda or raise --trees", reference))
    return task.model_file(kind, tables, record)


def tree_code_hints(tables: TreeCascade, Xtr: np.ndarray) -> dict[str, Any]:
    """What the generated code form may take from the training rows (export-c passes it to the generator):
    per node the percentage of rows that went left, for its branch layout (compiler/trees/code.py)."""
    return {"left_percent": left_percents(tables, Xtr)}


FRONTIER_TOLERANCE = 0.01  # miser --sweep's default rule


def eager_cost(est: Any) -> float:
    """The cost of a prediction that reads every feature (each group once) and walks every tree of ``est`` (an
    exiting ensemble): the eager pipeline in the costs' unit."""
    every = np.ones((1, int(est.n_features_in_)), dtype=bool)
    feat = float((every @ est.costs_)[0]) if est.groups_ is None else float(est.groups_.cost_of_rows(every)[0])
    return feat + float(est.tree_eval_cost) * int(est.stage_end_[-1])


def held_out_choice(curve: list[dict[str, Any]], tolerance: float, budget: float | None) -> dict[str, Any]:
    """The kept point of a cascade's held-out curve (point 0: lambda 0, whose whole ensembles' accuracy is the
    reference): the cheapest whose held-out accuracy is within ``tolerance`` of the reference; with a ``budget``,
    among those whose held-out cost is within it, the most accurate (ties: the smallest lambda -- the least bent by
    the costs --, then the cheapest). None within the tolerance: the most accurate (ties: the cheapest)."""
    ref = curve[0]["cv_full_accuracy"]
    ok = [p for p in curve if p["cv_accuracy"] >= ref - tolerance - 1e-12]
    if not ok:
        return max(curve, key=lambda p: (p["cv_accuracy"], -p["cv_cost"]))
    under = [p for p in ok if budget is not None and p["cv_cost"] <= budget]
    if under:
        return min(under, key=lambda p: (-p["cv_accuracy"], p["lambda"], p["cv_cost"]))
    return min(ok, key=lambda p: (p["cv_cost"], -p["cv_accuracy"]))


def one_se(accuracy: float, n: int) -> float:
    """miser --sweep --one-se's tolerance: one standard error sqrt(p (1 - p) / n) of an accuracy over n rows,
    p = (correct + 1) / (n + 2), at least FRONTIER_TOLERANCE."""
    p = (accuracy * n + 1) / (n + 2)
    return max(FRONTIER_TOLERANCE, float(np.sqrt(p * (1 - p) / n)))


def refuse_exit_options(opts: dict[str, Any]) -> None:
    """UsageError for an option of the exit-every cascade given to the default one (no --early-exit-every)."""
    for bad in ("loss", "exit_folds", "exit_lambdas", "exit_every_grid", "exit_budget"):
        if bad in opts:
            raise click.UsageError(f"--{bad.replace('_', '-')} applies with --early-exit-every only")


def train_frontier(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None, tree_cost: float,
                   record: dict[str, Any], class_trees: str = CASCADE_DEFAULTS["class_trees"]) -> ModelFile:
    """The default cascade (none of --early-exit-every, --lambda, --pool-lambdas, --stages, --rho):
    :class:`compiler.trees.frontier.CascadeFrontierClassifier` fitted on the task's train part, its validation part
    as eval_set -- the cheapest on validation, within FRONTIER_TOLERANCE of the miser lambda = 0 model's validation
    accuracy (the sweep's rule), of
    - every model of the miser sweep (same --depth, --step, --trees; the default grid refined once,
      FRONTIER_REFINE), written as a one-stage cascade,
    - each of them with an exit test every N iterations (N in EXIT_EVERY_GRID; exits learned on validation with
      :class:`EarlyExitEnsemble`'s rule, --min-agreement): rows whose partial score (two classes) or top-2 class
      margin (K classes) is already decided stop reading features,
    - for two classes, the CSCC cascade (xu2014) with its defaults,
    - with --cheap-first, cheap-first starts, each with exits.
    Records the candidates (``frontier``) and the choice (``frontier_choice``)."""
    from compiler.trees.frontier import CascadeFrontierClassifier  # noqa: PLC0415 - it imports this module

    refuse_exit_options(opts)
    Xtr, ytr, Xva, yva = split(task)
    est = CascadeFrontierClassifier(
        costs=costs, tree_eval_cost=tree_cost, n_trees=opts.get("trees"), max_depth=opts.get("depth"),
        step=opts.get("step"), thresholds=str(opts.get("exit_thresholds") or EXIT_THRESHOLDS),
        cheap_first=bool(opts.get("cheap_first")), random_state=task.split.seed,
        class_trees=class_trees, tree_order=str(opts.get("tree_order") or DEFAULT_TREE_ORDER),
        **({"min_agreement": float(opts["min_agreement"])} if "min_agreement" in opts else {}),
    ).fit(Xtr, ytr, eval_set=(Xva, yva))
    name, val = est.best_name_, est.best_validation_
    record["method"] = "frontier"
    record["frontier"] = est.frontier_
    record["frontier_choice"] = name
    if hasattr(est.best_estimator_, "tree_order_"):  # an exit cascade: the order its iterations are evaluated in
        record["tree_order"] = est.tree_order
        record["tree_order_used"] = est.best_estimator_.tree_order_used_
    record["trees_chosen"] = int(np.asarray(est.ir_["roots"]).size)
    starts = ", cheap-first starts" if opts.get("cheap_first") else ""
    click.echo(f"cascade: kept {name} (validation accuracy {val['validation_accuracy']:.4f}, cost "
               f"{val['validation_mean_cost']:.2f}): the cheapest within {FRONTIER_TOLERANCE:g} of miser lambda=0 "
               f"({est.frontier_[0]['validation_accuracy']:.4f}) among {len(est.frontier_)} candidates (the miser "
               f"sweep, each lambda with exits every {'/'.join(map(str, EXIT_EVERY_GRID))} iterations{starts}"
               f"{', CSCC' if task.n_classes == 2 else ''})", err=True)
    reference = None if est.reference_ is None else ("the full ensemble of its trees", est.reference_)
    return finish(kind, task, opts, est.to_tree_ensemble(), record, reference)


FRONTIER_REFINE = MISER_REFINE  # the sweep refined once, as miser --sweep; two lambdas between the kept one and next
EXIT_EVERY_GRID = (1, 5)  # the default cascade's exit tests: every iteration, every fifth
EXIT_THRESHOLDS = "shared"  # the default cascade's exits: one threshold for every stage (learn_shared_threshold)


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
register_emitter("cascade", cascade_tables)
register(KindSpec("cascade", "CSCC: cost-sensitive cascade over boosted trees, early-reject exits "
                             "(or --early-exit-every)",
                  train_cascade, TREE_OPTIONS + CASCADE_OPTIONS + CLASS_TREES_OPTIONS, cascade_metrics,
                  multiclass=True))
