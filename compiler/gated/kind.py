"""Train kinds ``adapt-gbrt``, ``adapt-lin`` and ``l1-gate``: gated low-cost / high-cost models
(Nan & Saligrama, NIPS 2017), all written as model files of kind ``gated``
(pyruntime.gated.model.GatedModel, fm_gated.h).

- ``adapt-gbrt``: gate g and f1 cost-aware boosted trees (compiler.gated.adapt_gbrt.AdaptGbrtClassifier);
- ``adapt-lin``: g and f1 linear with a cost-weighted group-sparse penalty (compiler.gated.adapt_lin);
- ``l1-gate``: the L1 baseline (compiler.gated.l1_gate).

f0 (``--hpc rf|gbrt|svm-rbf|MODEL.pkl``) is trained for accuracy alone and compiled to a tree ensemble
when it is one (forests, gradient boosting). An f0 that is not (an RBF-SVM, most pickles) cannot run on
the device: ``--hpc-remote`` declares f0 off-device (the runtime answers DEFER for hard inputs), else
training stops with an error. ``--hpc-remote`` also works with a tree f0.

``--sweep`` fits a grid of ``--pfull-grid`` x ``--gamma-grid`` with one shared f0, prints the
validation accuracy/cost curve of the compiled tables and keeps the most accurate model whose mean
validation cost is <= ``--cost-budget`` (float; ``--budget`` is the NB kinds' integer feature count),
or without a budget the cheapest within ``--tolerance`` (absolute, default 0.01) of f0's validation
accuracy. ``--sweep`` and ``--tolerance`` are the same options as miser's, and so is the small-set rule:
a validation part of fewer than CV_BELOW (200) rows judges every point by CV_FOLDS (5)-fold
cross-validation on the train and validation parts pooled (f0 and the point fitted on the other folds,
the compiled tables scored on the held-out one; ``--folds K`` sets K, ``--folds 1`` keeps the validation
part), and the kept point is refitted, with f0, on both parts: on sklearn:wine's 36 validation rows one
row is 2.8 points and f0 scores 1.0.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import click
import numpy as np

from compiler.costs import FeatureCosts, cost_vector
from compiler.gated.f0_spec import F0Error, f0_spec
from compiler.gated.header import gated_c_tables
from compiler.grid_refine import thirds_between
from compiler.header import register_emitter
from compiler.kinds import KindSpec, register, register_file_metrics
from compiler.options import GATED_TREE_DEFAULTS, SWEEP_OPTIONS, TREE_OPTIONS, folds_option, sweep_folds
from compiler.parallel import PARALLEL_OPTIONS, from_options, recorded, reject_without, run_map
from compiler.tasks import balanced_validation_accuracy, check_not_trivial, parse_floats, split
from compiler.trees.options import CLASS_TREES_OPTIONS
from pyruntime.cli_errors import NumberRange
from pyruntime.format import ModelFile
from pyruntime.gated.model import CGated, GatedModel, MarginGate, for_numeric, predict_with_fallback
from pyruntime.linear import LinearScorer
from pyruntime.multilinear import MultiLinear
from pyruntime.progress import Progress
from pyruntime.result import Predictions
from pyruntime.trees.ensemble import TreeEnsemble

if TYPE_CHECKING:  # the trainers import scikit-learn: only when training (CLI start-up stays light)
    from compiler.gated.common import SweepPoint

TRAINERS = ("adapt-gbrt", "adapt-lin", "l1-gate")
DEFAULT_P_GRID = (0.1, 0.2, 0.3, 0.5, 0.6, 0.65, 0.7)  # fine where f0 takes most inputs: see docs/gated.md
DEFAULT_GAMMA_GRID = {"adapt-gbrt": (0.01, 0.03, 0.1, 0.3), "adapt-lin": (0.001, 0.01, 0.03, 0.1, 0.3)}
# ADAPT-GBRT behind f1's margin (K > 2 classes) reaches further: with no gate trees every feature it buys serves f1,
# and on digits (seed 0) gamma 3 kept 14 features of f1 at 0.956 alone, 0.978 with the P 0.1 share to f0 (17.1
# features read), where gamma 0.3, the old grid's end, read 29 (docs/gated.md)
MARGIN_GAMMA_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
# l1-gate's default gammas are shares of the data's own gamma_max (compiler.gated.l1_gate.GAMMA_SHARES)
GATED_REFINE = 1  # --refine default: rounds of two gammas between the kept one and the next larger (docs/gated.md)
DEFAULT_GAMMA = {"adapt-gbrt": 0.1, "adapt-lin": 0.01, "l1-gate": 0.01}


def _check_hpc(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--hpc checked before any work: a malformed NAME:TREES[:DEPTH] is a usage error (a pickle path is checked
    when it is loaded)."""
    try:
        f0_spec(value)
    except F0Error as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return value


GATED_OPTIONS = [
    click.Option(["--hpc"], default=None, metavar="rf|gbrt|svm-rbf|MODEL.pkl", callback=_check_hpc,
                 help="High-cost model f0: random forest (100 trees, unbounded depth), gradient boosting (100 "
                      "trees of depth 3), either sized as rf:TREES[:DEPTH] (e.g. rf:30:8, for a "
                      "microcontroller's flash), RBF-SVM or a pickled scikit-learn estimator "
                      "[adapt-gbrt, adapt-lin, l1-gate; default rf]."),
    click.Option(["--pfull"], type=NumberRange(0, 1), default=None,
                 help="Largest share of training inputs sent to f0 [adapt-gbrt, adapt-lin, l1-gate; default 0.3]."),
    click.Option(["--gamma"], type=NumberRange(min=0, finite=True), default=None,
                 help="Feature-cost penalty [adapt-gbrt: default 0.1; adapt-lin, l1-gate: default 0.01]."),
    click.Option(["--hpc-remote"], is_flag=True, default=False,
                 help="f0 runs off-device: the runtime answers DEFER (-1) for hard inputs "
                      "[adapt-gbrt, adapt-lin, l1-gate; required for svm-rbf]."),
    click.Option(["--cost-budget"], type=NumberRange(min=0), default=None,
                 help="With --sweep: keep the most accurate model whose mean validation cost fits this "
                      "[adapt-gbrt, adapt-lin, l1-gate]."),
    click.Option(["--pfull-grid"], default=None,
                 help="Comma-separated P values of --sweep [adapt-gbrt, adapt-lin, l1-gate; default "
                      + ",".join(f"{v:g}" for v in DEFAULT_P_GRID) + "]."),
    folds_option("(P, gamma) point", "f0 and the point fitted on K-1 folds, the compiled tables scored on the "
                 "held-out fold", "the kept point is then refitted, with f0, on both parts",
                 "adapt-gbrt, adapt-lin, l1-gate"),
    click.Option(["--gamma-grid"], default=None,
                 help="Comma-separated gamma values of --sweep [adapt-gbrt: 0.01,0.03,0.1,0.3, and 1,3 behind f1's "
                      "margin (K > 2 classes); adapt-lin: "
                      "0.001,0.01,0.03,0.1,0.3; l1-gate: 0 and 0.03,0.1,0.2,0.35,0.5,0.7 of gamma_max, the smallest "
                      "gamma at which f1 keeps no feature, on the rows the sweep fits]."),
]
REFINE_OPTION = click.Option(
    ["--refine"], type=click.IntRange(min=0), default=None,
    help="With --sweep: R more rounds, each fitting two gammas between the kept point's and the next larger of the "
         "grid (geometrically), at every P of the grid, then keeping again: the grid's factor of 3 between gammas "
         f"narrowed where the kept point is, 2 R x (P values) more fits [adapt-gbrt, adapt-lin, l1-gate; default "
         f"{GATED_REFINE}].")
GATE_OPTION = click.Option(
    ["--gate"], type=click.Choice(["auto", "linear", "trees", "margin"]), default=None,
    help="The gate: the paper's learned one, or margin (K > 2 classes): f1's own confidence, its largest class score "
         "minus the second largest, above a threshold that sends the share of training rows the alternation gives f0 "
         "there; it reads no feature of its own [adapt-lin, l1-gate; linear: the paper's learned scorer g, or the L1 "
         "baseline's regression of f1's correctness; default auto: margin for K > 2 classes, linear for two; "
         "adapt-gbrt; trees: the paper's boosted gate g; default auto: margin for K > 2 classes, trees for two].")
GATES = {"adapt-gbrt": ("trees", "margin"), "adapt-lin": ("linear", "margin"), "l1-gate": ("linear", "margin")}


def resolve_gate(kind: str, gate: str | None, n_classes: int) -> str:
    """The gate a trainer fits: --gate as given, auto (or none) margin for K > 2 classes, else the kind's own."""
    if gate in (None, "auto"):
        return "margin" if n_classes > 2 else GATES[kind][0]
    if gate not in GATES[kind]:
        raise click.UsageError(f"--gate {gate} does not apply to {kind} (choose from auto, {', '.join(GATES[kind])})")
    if gate == "margin" and n_classes <= 2:
        raise click.UsageError(f"--gate margin needs K > 2 classes (f1 of K class scores); two classes use the "
                               f"{GATES[kind][0]} gate")
    return gate


L2_OPTION = click.Option(
    ["--l2"], type=NumberRange(min=0, finite=True), default=None,
    help="L2 penalty on f1's leaf values, -G/(H + l2) as XGBoost's lambda: without it a leaf of a few or of "
         "confidently fitted rows takes a full Newton step and f1's margins (the K-class gate) stop ordering rows by "
         f"confidence [adapt-gbrt; default {GATED_TREE_DEFAULTS['l2']:g}; 0: the unregularised Newton step of rounds "
         "before 47].")
_TREE = [o for o in TREE_OPTIONS if o.name in ("trees", "depth", "step")] + CLASS_TREES_OPTIONS + [L2_OPTION]
# f1's trees for K > 2 classes (--class-trees): shared, as the cascade's. With separate trees f1 fits its training
# rows (K trees per iteration), its in-sample loss in the q step falls below f0's out-of-fold loss on nearly every
# row, and the gate sent 0-3% of digits' rows to f0 at every P; shared trees read about 18 features at gamma 1
# and the gate follows P (docs/gated.md, "K classes").
ADAPT_GBRT_CLASS_TREES = "shared"


# ----------------------------------------------------------------- the parts ----
def linear_part(sl: Any, d: int) -> LinearScorer:
    """A compiler.gated.common.SparseLinear as a runtime LinearScorer (same float32 arithmetic)."""
    return LinearScorer(n_features=d, feature=sl.feature, weight=sl.weight, bias=float(sl.bias),
                        decision_threshold=float(sl.threshold))


def trees_part(ir: dict[str, Any]) -> TreeEnsemble:
    names = ("n_features", "n_outputs", "feature", "threshold", "left", "right", "value", "roots",
             "tree_output", "base_score", "decision_threshold", "costs")
    return TreeEnsemble(**{n: ir.get(n) for n in names})


def f0_tables(estimator: Any, costs: np.ndarray, hpc: str, remote: bool) -> TreeEnsemble | None:
    """f0 as a tree ensemble, None when remote; ValueError when it cannot run on the device."""
    from compiler.gated.adapt_gbrt import sklearn_to_tree_ensemble  # noqa: PLC0415 - scikit-learn

    if remote:
        return None
    ir = sklearn_to_tree_ensemble(estimator, costs)
    if ir is None:
        raise ValueError(f"f0 ({hpc}: {type(estimator).__name__}) is not a tree ensemble and cannot be "
                         "compiled for the C runtime; give --hpc-remote to declare it off-device")
    return trees_part(ir)


def gated_tables(model: Any, f0: TreeEnsemble | None, costs: np.ndarray, absmax: float | np.ndarray,
                 hpc: str) -> GatedModel:
    """The runtime tables of a fitted ADAPT-GBRT / ADAPT-LIN / L1 estimator with the given f0 tables. ``absmax``:
    the largest |x| of the training rows, or per feature (then the linear parts' q15 input shift is set by the
    features they read only: a large column they never read must not cost the others their resolution)."""
    from compiler.gated.adapt_gbrt import AdaptGbrtClassifier  # noqa: PLC0415 - scikit-learn

    if isinstance(model, AdaptGbrtClassifier):
        ir = model.to_tree_ensemble()
        f1 = trees_part(ir["f1"])
        d = f1.n_features
        if ir["gate"] is None:  # f1's own top-2 margin (FM_PART_MARGIN)
            gate, above = MarginGate(n_features=d, threshold=float(ir["margin_threshold"])), "f1"
        else:
            gate, above = trees_part(ir["gate"]), "f0"
    else:  # linear gate: score > threshold means "easy, answer with f1"; K > 2: K class scorers
        d = int(model.n_features_in_)
        gate, above = linear_part(model.gate_, d), "f1"
        if model.margin_threshold_ is not None:  # f1's own top-2 margin (FM_PART_MARGIN)
            gate = MarginGate(n_features=d, threshold=float(model.margin_threshold_))
        f1 = MultiLinear(tuple(linear_part(s, d) for s in model.f1_k_)) if model.f1_k_ else linear_part(model.f1_, d)
        if np.ndim(absmax):
            parts = [model.gate_, *(model.f1_k_ or [model.f1_])]
            read = np.unique(np.concatenate([np.asarray(p.feature, dtype=np.intp) for p in parts]))
            absmax = np.asarray(absmax)[read]
    absmax = float(np.max(absmax, initial=0.0))
    return GatedModel(n_features=d, gate=gate, f1=f1, f0=f0, gate_above=above, costs=costs.astype(np.float32),
                      input_absmax=absmax, f0_kind=hpc)


# ----------------------------------------------------------------- training ----
class _Fitter:
    """Fits one trainer at (P, gamma) with one shared f0."""

    def __init__(self, kind: str, opts: dict[str, Any], costs: np.ndarray, seed: int, Xtr: np.ndarray,
                 ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray) -> None:
        """Fits on (Xtr, ytr) and validates on (Xva, yva): the task's parts, or a fold's."""
        self.kind, self.opts, self.costs, self.seed = kind, opts, costs, int(seed)
        self.Xtr, self.ytr, self.Xva, self.yva = Xtr, ytr, Xva, yva
        self.hpc = str(opts.get("hpc", "rf"))
        self.remote = bool(opts.get("hpc_remote", False))
        self.class_trees = str(opts.get("class_trees") or ADAPT_GBRT_CLASS_TREES)
        self.l2 = float(opts.get("l2", GATED_TREE_DEFAULTS["l2"]))  # adapt-gbrt f1 leaf penalty (fit, record)
        if self.hpc == "svm-rbf" and not self.remote:
            raise ValueError("f0 svm-rbf cannot be compiled for the C runtime; give --hpc-remote to declare it "
                             "off-device")
        self.absmax = np.max(np.abs(self.Xtr), axis=0, initial=0.0)  # per feature (gated_tables)
        self._f0: Any = None
        self._f0_proba: np.ndarray | None = None
        self._l1_by_gamma: dict[float, Any] = {}  # l1-gate: f1 depends on gamma only; other P values re-gate it
        self.f0_estimator: Any = None
        self.f0: TreeEnsemble | None = None

    def fit(self, p: float, gamma: float) -> Any:
        from compiler.gated.adapt_gbrt import AdaptGbrtClassifier  # noqa: PLC0415 - scikit-learn
        from compiler.gated.adapt_lin import AdaptLinClassifier  # noqa: PLC0415
        from compiler.gated.common import fit_f0  # noqa: PLC0415
        from compiler.gated.l1_gate import L1GateClassifier  # noqa: PLC0415

        Xtr, ytr = self.Xtr.astype(np.float64), self.ytr
        if self.kind == "adapt-gbrt":
            m = AdaptGbrtClassifier(hpc=self._f0 if self._f0 is not None else self.hpc, p_full=p, gamma=gamma,
                                    n_trees=int(self.opts.get("trees", GATED_TREE_DEFAULTS["trees"])),
                                    max_depth=int(self.opts.get("depth", GATED_TREE_DEFAULTS["depth"])),
                                    step=float(self.opts.get("step", GATED_TREE_DEFAULTS["step"])), costs=self.costs,
                                    class_trees=self.class_trees, gate=str(self.opts.get("gate") or "auto"),
                                    l2=self.l2, random_state=self.seed)
            m.fit(self.Xtr, ytr, f0_proba=self._f0_proba)
            if self._f0 is None:
                self._f0, self._f0_proba = m.f0_, m.f0_proba_
            est = m.f0_
        else:
            if self._f0 is None:
                k = max(2, int(np.max(ytr)) + 1)
                self._f0 = fit_f0(self.hpc, Xtr, ytr.astype(np.int64), np.arange(k), self.seed)
            cls = AdaptLinClassifier if self.kind == "adapt-lin" else L1GateClassifier
            fitted = self._l1_by_gamma.get(gamma) if cls is L1GateClassifier else None
            if fitted is not None:
                m = fitted.with_p_full(Xtr, ytr, p)
            else:
                m = cls(hpc=self._f0, p_full=p, gamma=gamma, costs=self.costs,
                        gate=str(self.opts.get("gate", "auto")), random_state=self.seed).fit(Xtr, ytr)
                if cls is L1GateClassifier:
                    self._l1_by_gamma[gamma] = m
            est = self._f0.estimator
        if self.f0_estimator is None:
            self.f0_estimator = est
            self.f0 = f0_tables(est, self.costs, self.hpc, self.remote)
        return m

    def tables(self, model: Any) -> GatedModel:
        return gated_tables(model, self.f0, self.costs, self.absmax, self.hpc)

    def validate(self, tables: GatedModel) -> dict[str, Any]:
        """Validation figures of the compiled tables (deferred rows answered by the f0 estimator)."""
        p = predict_with_fallback(CGated(tables), self.Xva, self.f0_estimator)
        y = self.yva
        return {"validation_accuracy": float(np.mean(p.label == y)),
                "validation_weighted_accuracy": balanced_validation_accuracy(
                    y, p.label, int(max(np.max(self.ytr, initial=0), np.max(y, initial=0))) + 1),
                "validation_mean_cost": float(np.mean(p.cost)),
                "validation_mean_features": float(np.mean(p.n_read)),
                "validation_hpc_fraction": float(np.mean(p.stage == 1))}

    def hpc_validation(self) -> dict[str, float]:
        if self.f0 is not None:
            p = self.f0.predict_reference(self.Xva)
            return {"hpc_validation_accuracy": float(np.mean(p.label == self.yva)),
                    "hpc_validation_mean_cost": float(np.mean(p.cost))}
        acc = float(np.mean(np.asarray(self.f0_estimator.predict(self.Xva)) == self.yva))
        return {"hpc_validation_accuracy": acc, "hpc_validation_mean_cost": float(np.sum(self.costs))}


def _grid(opts: dict[str, Any], name: str, default: tuple[float, ...]) -> list[float]:
    return parse_floats(opts[name], f"--{name.replace('_', '-')}") if name in opts else list(default)


def _pfull_grid(opts: dict[str, Any]) -> list[float]:
    """--pfull-grid as given or the default; its values are shares, checked in [0, 1] naming the option."""
    values = _grid(opts, "pfull_grid", DEFAULT_P_GRID)
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"--pfull-grid: every value is a share of the inputs sent to f0, in [0, 1]; got "
                         f"{opts['pfull_grid']!r}")
    return values


def _gamma_grid(kind: str, opts: dict[str, Any], costs: np.ndarray, rows: tuple[np.ndarray, np.ndarray]) -> list[float]:
    """--sweep's gammas: --gamma-grid as given; l1-gate's default the shares GAMMA_SHARES of gamma_max on the rows
    the points are fitted on (the pooled parts when cross-validated); the others' default grids."""
    if "gamma_grid" in opts or kind != "l1-gate":
        margin = kind == "adapt-gbrt" and opts.get("gate") == "margin"
        return _grid(opts, "gamma_grid", MARGIN_GAMMA_GRID if margin else DEFAULT_GAMMA_GRID.get(kind, ()))
    from compiler.gated.l1_gate import gamma_grid  # noqa: PLC0415 - scikit-learn

    return gamma_grid(rows[0], rows[1], costs)


def refine_gammas(gammas: list[float], kept: SweepPoint) -> list[float]:
    """--refine's two gammas between the kept point's and the next larger fitted one, at a third and two thirds of
    the way (geometrically; from a ninth of it when the kept gamma is 0), rounded to 4 digits; none when the kept
    gamma is the largest. A larger gamma buys fewer f1 features with more rows sent to f0 (at 0.3 digits' f1 is
    empty and every row goes to f0), so unlike miser's lambdas the next gamma need not be cheaper: the grid's
    factor of 3 between neighbours is what is refined."""
    larger = [g for g in gammas if g > kept.gamma]
    if not larger:
        return []
    return thirds_between(kept.gamma, min(larger), gammas)


def print_curve(points: list[SweepPoint], chosen: SweepPoint, f0_accuracy: float, f0_cost: float,
                judged: str = "val") -> None:
    """The sweep's points on stderr, cheapest first, the kept one marked; ``judged``: "val" (the validation part)
    or "cv" (cross-validated)."""
    click.echo(f"{'P':>6} {'gamma':>8} {judged + ' acc':>8} {judged + ' cost':>9} {'to f0':>6}", err=True)
    for pt in sorted(points, key=lambda q: (q.val_mean_cost, -q.val_accuracy)):
        mark = "  <- kept" if pt is chosen else ""
        click.echo(f"{pt.p_full:>6g} {pt.gamma:>8g} {pt.val_accuracy:>8.4f} {pt.val_mean_cost:>9.3f} "
                   f"{pt.val_hpc_fraction:>6.2f}{mark}", err=True)
    click.echo(f"f0 alone: {judged} acc {f0_accuracy:.4f}, {judged} cost {f0_cost:.3f}", err=True)


def _sweep_point(fitter: _Fitter, pg: tuple[float, float]) -> SweepPoint:
    """Fit and validate one grid point of --sweep (the first also fits f0 into the fitter)."""
    from compiler.gated.common import SweepPoint  # noqa: PLC0415 - scikit-learn

    p, g = pg
    m = fitter.fit(p, g)
    tables = fitter.tables(m)
    v = fitter.validate(tables)
    return SweepPoint(p, g, v["validation_accuracy"], v["validation_mean_cost"], v["validation_hpc_fraction"],
                      (m, tables))


def _grid_points(fitter: _Fitter, grid: list[tuple[float, float]], par: dict[str, Any],
                 progress: Progress) -> list[SweepPoint]:
    """Every grid point fitted on the fitter's rows and validated on its held-out rows; the first point fits f0,
    the rest share it (in parallel if asked)."""
    first = _sweep_point(fitter, grid[0])
    progress.update()
    return [first, *run_map(partial(_sweep_point, fitter), grid[1:], **par, progress=progress)]


def _cross_validated_sweep(fold_fitters: list[_Fitter], y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]],
                           grid: list[tuple[float, float]], par: dict[str, Any],
                           desc: str) -> tuple[list[SweepPoint], float, float]:
    """Every grid point judged by K-fold cross-validation on the pooled rows ``y``: each fold's fitter (on the
    other folds; it fits f0 at its first point and keeps it for later rounds) fits every point and validates the
    compiled tables on the fold's own rows. Returns the points (accuracy and share sent to f0 over every held-out
    row, mean cost; no models) and f0's cross-validated accuracy and cost."""
    from compiler.gated.common import SweepPoint  # noqa: PLC0415 - scikit-learn

    sums = np.zeros((len(grid), 3))
    f0_sums = np.zeros(2)
    with Progress(desc, total=len(folds) * len(grid)) as progress:
        for fitter, (_, te) in zip(fold_fitters, folds, strict=True):
            pts = _grid_points(fitter, grid, par, progress)
            sums += te.size * np.array([[q.val_accuracy, q.val_mean_cost, q.val_hpc_fraction] for q in pts])
            f0 = fitter.hpc_validation()
            f0_sums += te.size * np.array([f0["hpc_validation_accuracy"], f0["hpc_validation_mean_cost"]])
    mean, f0_mean = sums / y.size, f0_sums / y.size
    points = [SweepPoint(p, g, float(a), float(c), float(h), None) for (p, g), (a, c, h) in zip(grid, mean)]
    return points, float(f0_mean[0]), float(f0_mean[1])


def train_gated(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    from compiler.gated.common import choose_point  # noqa: PLC0415 - scikit-learn

    c = cost_vector(costs, task.n_features)
    if task.data.X.shape[1] == 0:
        raise ValueError("the data has no features")
    record: dict[str, Any] = {"kind": kind, **recorded(opts)}
    opts = {**opts, "gate": resolve_gate(kind, opts.get("gate"), task.n_classes)}
    seed = int(task.split.seed)
    Xtr, ytr, Xva, yva = split(task)
    if opts.get("sweep"):
        for name in ("pfull", "gamma"):
            if name in opts:
                raise click.UsageError(f"--{name} does not apply with --sweep (use --{name}-grid)")
        par = from_options(opts)
        X, y = np.concatenate([Xtr, Xva]), np.concatenate([ytr, yva])
        folds, parts = sweep_folds(yva.size, y, opts.get("folds"), seed, task.classes)
        gammas = _gamma_grid(kind, opts, c, (X, y) if folds else (Xtr, ytr))
        grid = [(p, g) for p in _pfull_grid(opts) for g in gammas]
        tolerance = float(opts.get("tolerance", 0.01))
        # a small validation part: every point judged by cross-validation on the pooled parts, one fitter per fold
        # kept for the refinement rounds (its f0 fitted once); else one fitter on the train and validation parts
        fold_fitters = [_Fitter(kind, opts, c, seed, X[tr], y[tr], X[te], y[te]) for tr, te in parts]
        val_fitter = None if folds else _Fitter(kind, opts, c, seed, Xtr, ytr, Xva, yva)

        def judge(grid: list[tuple[float, float]], desc: str) -> tuple[list[SweepPoint], float, float]:
            if val_fitter is None:
                return _cross_validated_sweep(fold_fitters, y, parts, grid, par, f"{desc}, {folds}-fold")
            with Progress(desc, total=len(grid)) as progress:
                pts = _grid_points(val_fitter, grid, par, progress)
            f0 = val_fitter.hpc_validation()
            return pts, f0["hpc_validation_accuracy"], f0["hpc_validation_mean_cost"]

        budget = opts.get("cost_budget")
        points, f0_acc, f0_cost = judge(grid, f"{kind} sweep")
        chosen = choose_point(points, f0_acc, budget, tolerance)
        for _ in range(int(opts.get("refine", GATED_REFINE))):
            news = refine_gammas(sorted({q.gamma for q in points}), chosen) if chosen is not None else []
            if not news:
                break
            points += judge([(p, g) for p in sorted({q.p_full for q in points}) for g in news],
                            f"{kind} sweep, refining")[0]
            chosen = choose_point(points, f0_acc, budget, tolerance)
        if chosen is None and budget is not None:
            cheapest = min(pt.val_mean_cost for pt in points)
            raise ValueError(f"no model of the sweep fits --cost-budget {budget:g} (cheapest: {cheapest:.4g})")
        record["tolerance_met"] = chosen is not None or budget is not None
        if chosen is None:  # nothing within tolerance of f0: the most accurate
            chosen = max(points, key=lambda q: (q.val_accuracy, -q.val_mean_cost))
        judged = "cv" if folds else "validation"
        print_curve(points, chosen, f0_acc, f0_cost, "cv" if folds else "val")
        if not record["tolerance_met"]:
            click.echo(f"{kind} --sweep: no point is within --tolerance {tolerance:g} of f0's "
                       f"{judged} accuracy {f0_acc:.4f}; kept the most accurate, {chosen.val_accuracy:.4f} (raise "
                       "--pfull-grid toward 1 to send more inputs to f0, or lower the --gamma-grid)", err=True)
        record["sweep_folds"] = folds
        if folds:
            record["refit_folds"] = int(folds)
        record["sweep_curve"] = [{"pfull": q.p_full, "gamma": q.gamma, f"{judged}_accuracy": q.val_accuracy,
                                  f"{judged}_cost": q.val_mean_cost, "hpc_fraction": q.val_hpc_fraction}
                                 for q in points]
        p_full, gamma = chosen.p_full, chosen.gamma
        if val_fitter is None:  # the kept point refitted, with f0, on both parts (its validation figures: rows it was
            # fitted on)
            record.update({"hpc_cv_accuracy": f0_acc, "hpc_cv_mean_cost": f0_cost})
            fitter = _Fitter(kind, opts, c, seed, X, y, Xva, yva)
            tables = fitter.tables(fitter.fit(p_full, gamma))
        else:
            fitter, tables = val_fitter, chosen.model[1]
    else:
        for name in ("tolerance", "cost_budget", "pfull_grid", "gamma_grid", "folds", "refine"):
            if name in opts:
                raise click.UsageError(f"--{name.replace('_', '-')} needs --sweep")
        reject_without(opts, "--sweep")
        p_full, gamma = float(opts.get("pfull", 0.3)), float(opts.get("gamma", DEFAULT_GAMMA[kind]))
        fitter = _Fitter(kind, opts, c, seed, Xtr, ytr, Xva, yva)
        tables = fitter.tables(fitter.fit(p_full, gamma))
    hpc = fitter.hpc_validation()
    record.update({"algorithm": kind, "pfull_chosen": p_full, "gamma_chosen": gamma, "hpc": fitter.hpc,
                   "hpc_remote": tables.remote})
    if kind == "adapt-gbrt":
        record["l2"] = fitter.l2
        if task.n_classes > 2:
            record["class_trees"] = fitter.class_trees
    record["gate"] = "margin" if isinstance(tables.gate, MarginGate) else GATES[kind][0]
    record.update(fitter.validate(tables))
    record.update(hpc)
    p = predict_with_fallback(CGated(tables), fitter.Xva, fitter.f0_estimator)
    record.update(check_not_trivial(kind, fitter.yva, p.label, p.n_read, opts,
                                    "lower the --gamma-grid or raise the --pfull-grid" if opts.get("sweep") else
                                    "lower --gamma or raise --pfull (or use --sweep)",
                                    ("f0", float(hpc["hpc_validation_accuracy"]))))
    return task.model_file("gated", tables, record)


# --------------------------------------------------------------- eval extras ----
def gated_metrics(model: ModelFile, X: np.ndarray, y: np.ndarray, pred: Predictions, numeric: str) -> dict[str, Any]:
    t = for_numeric(model.tables, numeric)
    n = len(pred)
    out: dict[str, Any] = {
        "mean_cost": float(np.mean(pred.cost)) if n else 0.0,
        "hpc_fraction": float(np.mean(pred.stage == 1)) if n else 0.0,
        "deferred_fraction": float(np.mean(pred.label == -1)) if n else 0.0,
        "hpc_remote": bool(t.remote), "hpc_accuracy": None, "hpc_mean_cost": None,
    }
    if t.f0 is not None and n:
        p0 = t.f0.predict_reference(X)
        out["hpc_accuracy"] = float(np.mean(p0.label == y))
        out["hpc_mean_cost"] = float(np.mean(p0.cost))
    return out


# ---------------------------------------------------------------- C header ----
_HELP = {
    "adapt-gbrt": "ADAPT-GBRT: boosted-tree gate g (K > 2 classes: f1's own margin) and low-cost f1 before a "
                  "high-cost f0 (file kind gated)",
    "adapt-lin": "ADAPT-LIN: linear gate g and low-cost f1 (group-sparse) before a high-cost f0 (kind gated)",
    "l1-gate": "L1 baseline: L1-picked features for f1, gate from f1's correctness, f0 (kind gated)",
}
_COMMON = [*SWEEP_OPTIONS[:2], *GATED_OPTIONS, REFINE_OPTION, *PARALLEL_OPTIONS]
register_emitter("gated", gated_c_tables)
for _kind in TRAINERS:
    register(KindSpec(_kind, _HELP[_kind], train_gated,
                      _COMMON + (_TREE if _kind == "adapt-gbrt" else []) + [GATE_OPTION], gated_metrics,
                      multiclass=True))


register_file_metrics("gated", gated_metrics)


__all__ = ["gated_c_tables", "gated_metrics", "gated_tables", "train_gated"]
