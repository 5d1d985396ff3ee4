"""Command-line options several kinds share (the tree shape of miser, cascade, the gated trainers and
cstc; the lambda sweep) and the one source of the tree kinds' defaults.

``MISER_DEFAULTS`` and ``CASCADE_DEFAULTS`` are read by the CLI (the trainers' ``opts.get`` and the
help texts below), by the estimators' signatures (compiler.trees.miser, compiler.trees.cscc,
compiler.trees.cascade) and by docs/miser_cascade.md; tests/test_rooms.py checks they agree.
The family-only options (``--leaves``, ``--stages`` ...) are in compiler.trees.options."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from compiler.header import NUMERICS, TARGETS
from pyruntime.cli_errors import NumberRange

LOSSES = ("squared", "logistic", "multiclass-log")


def numeric_option(help: str = "Numeric type of the tables (default: from --target, else float32).",
                   ) -> dict[str, Any]:
    """The settings of --numeric (export-c, eval, predict, inspect, train nb-stop): the table numeric types."""
    return {"type": click.Choice(list(NUMERICS)), "default": None, "help": help}


def target_option(help: str = "Device the tables are for: picks the numeric type (cortex-m0/m3: q15).",
                  ) -> dict[str, Any]:
    """The settings of --target: the devices the tables are built and counted for."""
    return {"type": click.Choice(sorted(TARGETS)), "default": None, "help": help}


DEFAULT_GRID = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
SWEEP_TOLERANCE = 0.01
# a --sweep whose validation part has fewer rows than CV_BELOW (one row is more than half a point) judges its grid
# by CV_FOLDS-fold cross-validation on the train and validation parts pooled (skyline's cv / cv_below, the same rule)
CV_BELOW = 200
CV_FOLDS = 5
TREE_FRACTIONS = (1.0, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1)  # --sweep-trees: shares of the iterations


def auto_folds(n_validation: int, y_pooled: object, folds: int | None) -> int:
    """The folds a --sweep judges its grid by (0: the validation part alone). ``folds`` as given (--folds K;
    1 means the validation part whatever its size); None: CV_FOLDS when the validation part has fewer than
    CV_BELOW rows and every class has CV_FOLDS rows in ``y_pooled`` (the train and validation labels), else 0."""
    import numpy as np  # noqa: PLC0415

    if folds is not None:
        return int(folds) if int(folds) >= 2 else 0
    if n_validation >= CV_BELOW:
        return 0
    counts = np.unique(np.asarray(y_pooled), return_counts=True)[1]
    return CV_FOLDS if counts.size and int(counts.min()) >= CV_FOLDS else 0

def stratified_folds(y: object, k: int, seed: int, classes: Sequence[str] | None = None,
                     option: str = "--folds") -> list[tuple[object, object]]:
    """Stratified K folds (train, test index arrays) of the pooled rows, shuffled by the split's seed; every class
    needs K rows (a one-line error names the class: its label text when ``classes`` is given, y holding indices
    into it, and ``option``)."""
    import numpy as np  # noqa: PLC0415
    from sklearn.model_selection import StratifiedKFold  # noqa: PLC0415 - scikit-learn only when training

    y = np.asarray(y)
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < k:
        small = labels[np.argmin(counts)].item()
        name = classes[int(small)] if classes is not None else small
        raise ValueError(f"{option} {k}: class {name!r} has {int(counts.min())} rows in the "
                         f"train and validation parts, fewer than the folds: lower {option}")
    return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(y.size), y))


def sweep_folds(n_validation: int, y_pooled: object, given: int | None, seed: int,
                classes: Sequence[str] | None = None) -> tuple[int, list[Any]]:
    """A --sweep's folds by the small-set rule (:func:`auto_folds`) and, when it cross-validates, its stratified
    parts of the pooled rows (:func:`stratified_folds`): (0, []) for the validation part alone. A class with fewer
    rows than the folds is a usage error (one line)."""
    folds = auto_folds(n_validation, y_pooled, given)
    if not folds:
        return 0, []
    try:
        return folds, stratified_folds(y_pooled, folds, seed, classes)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def folds_option(judged: str, how: str, refit: str, kinds: str) -> click.Option:
    """The ``--folds K`` option of a kind's --sweep (miser, the gated kinds, cstc): one help text for the
    small-set rule. ``judged``: what each fold judges (e.g. "lambda"); ``how``: what a fold fits and scores;
    ``refit``: what happens to the kept point; ``kinds``: the bracket's kinds."""
    return click.Option(
        ["--folds"], type=click.IntRange(min=1), default=None,
        help=f"With --sweep: judge each {judged} by stratified K-fold cross-validation on the train and validation "
             f"parts pooled ({how}) instead of on the validation part alone; {refit}. For small sets, where one "
             f"validation row is several points; K times the fits; 1: the validation part alone [{kinds}; default "
             f"{CV_FOLDS} when the validation part has fewer than {CV_BELOW} rows, else 1].")


def cheapest_within(curve: list[dict[str, float]], tolerance: float, key: str, reference: float | None = None) -> int:
    """The sweeps' rule: index of the cheapest curve point whose ``KEY_accuracy`` is within ``tolerance`` of
    ``reference`` (None: point 0's, lambda = 0); ties: the more accurate."""
    ref = curve[0][f"{key}_accuracy"] if reference is None else reference
    ok = [i for i, p in enumerate(curve) if p[f"{key}_accuracy"] >= ref - tolerance]
    return min(ok, key=lambda i: (curve[i][f"{key}_cost"], -curve[i][f"{key}_accuracy"]))


MISER_DEFAULTS = {"lambda": 1.0, "trees": 1000, "leaves": 8, "step": 0.1, "tree_cost": 0.0, "charge": "model",
                  "class_trees": "separate"}
CASCADE_DEFAULTS = {"trees": 100, "depth": 3, "step": 0.1, "tree_cost": 0.0, "stages": 3,
                    "pool_lambdas": (0.0, 3.0, 30.0), "rho": 1e-3, "early_exit_lambda": 0.0,
                    "min_agreement": 0.9975, "class_trees": "shared"}


def floats_text(values: tuple[float, ...]) -> str:
    """A float tuple as the comma-separated text the CLI takes (e.g. ``0,3,30``)."""
    return ",".join(f"{v:g}" for v in values)


GATED_TREE_DEFAULTS = {"trees": 50, "depth": 3, "step": 0.1, "l2": 1.0}  # adapt-gbrt's gate and f1 (l2: f1's only)
_M, _C = MISER_DEFAULTS, CASCADE_DEFAULTS
TREE_OPTIONS = [
    click.Option(["--lambda"], type=NumberRange(min=0, finite=True), default=None,
                 help=f"Feature-cost penalty lambda [miser: default {_M['lambda']:g}; cascade: CSCC's "
                      "accuracy/cost trade-off (given, it trains CSCC instead of the default frontier), default: the "
                      "cheapest on validation of 0.1, 1, 10; "
                      f"cascade --early-exit-every: the ensemble's, default {_C['early_exit_lambda']:g}]."),
    click.Option(["--trees"], type=click.IntRange(min=1), default=None,
                 help="Boosting iterations [miser: at most, chosen on validation with early stopping, default "
                      f"{_M['trees']}; cascade: of each ensemble (CSCC: trees of the boosting trick per --pool-lambdas "
                      f"entry), default {_C['trees']}; adapt-gbrt: of the gate and of f1, default "
                      f"{GATED_TREE_DEFAULTS['trees']}]."),
    click.Option(["--depth"], type=click.IntRange(1, 16), default=None,
                 help=f"Tree depth [cascade: default {_C['depth']}; miser: depth-wise trees of this depth (the "
                      f"paper's), default: leaf-wise trees of --leaves leaves; adapt-gbrt: default "
                      f"{GATED_TREE_DEFAULTS['depth']}]."),
    click.Option(["--step"], type=NumberRange(0, 1, min_open=True), default=None,
                 help=f"Learning rate [miser, cascade, adapt-gbrt; default {_M['step']:g}]."),
    click.Option(["--loss"], type=click.Choice(list(LOSSES)), default=None,
                 help="Boosting loss [miser: default logistic (two classes) or multiclass-log, squared = the paper's "
                      "stage-wise regression; cascade: with --early-exit-every, or the exits judged by "
                      "cross-validation (a validation part under 200 rows), default logistic (two classes) or "
                      "multiclass-log; refused with the default frontier]."),
    click.Option(["--tree-cost"], type=NumberRange(min=0, finite=True), default=None,
                 help="Evaluation cost e per tree, added to the feature cost in the test-time cost "
                      f"[miser, cascade; default {_M['tree_cost']:g}]."),
]

SWEEP_OPTIONS = [
    click.Option(["--sweep"], is_flag=True, default=False,
                 help="Fit a grid, print validation accuracy vs test-time cost, keep the cheapest model within "
                      "--tolerance of the reference [miser: the --lambda-grid, reference lambda = 0; adapt-gbrt, "
                      "adapt-lin, l1-gate: --pfull-grid x --gamma-grid, reference f0]."),
    click.Option(["--tolerance"], type=NumberRange(0, 1), default=None,
                 help=f"Accuracy the --sweep may give up, absolute [miser, adapt-gbrt, adapt-lin, l1-gate; default "
                      f"{SWEEP_TOLERANCE:g}]."),
    click.Option(["--lambda-grid"], default=None,
                 help=f"Comma-separated lambdas of --sweep (0 is always added) [miser; default "
                      f"{floats_text(DEFAULT_GRID)}]."),
]


class OutputFile(click.Path):
    """A file the command writes: refused at once (exit 2, before any training) when its folder is missing or
    cannot be written (a file is created there and removed), instead of an OSError naming a temporary file
    after the work is done."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        text = os.fsdecode(path)
        if not text or text.endswith(("/", os.sep)) or Path(text).name in ("", ".", ".."):
            self.fail(f"{text!r} names a folder, not a file: name the file to write", param, ctx)
        if text == "-":  # not standard output: a file named "-" appeared in the working folder
            self.fail("'-' is not a file name here: name the file to write (/dev/stdout for standard output)", param,
                      ctx)
        folder = Path(os.fsdecode(path)).parent
        if not folder.is_dir():
            self.fail(f"folder {str(folder)!r} does not exist", param, ctx)
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            self.fail(f"cannot write into folder {str(folder)!r} ({exc.strerror or exc})", param, ctx)
        return path


def refuse_overwriting_input(output: str | None, /, flag: str = "-o", **inputs: str | None) -> None:
    """Exit 2 when the file to write (given by option ``flag``) is one of the inputs (e.g. `predict M D.csv -o
    D.csv`, `eval M.png D --plot M.png`): the input would be destroyed. ``inputs``: what each input is called in
    the message -> its path or data spec."""
    if output is None:
        return
    out = Path(output).resolve()
    for what, spec in inputs.items():
        if spec is not None and Path(spec).is_file() and (Path(spec).resolve() == out or (
                out.is_file() and os.path.samefile(spec, out))):  # a hard link is the same file too
            raise click.UsageError(f"{flag} {output} is the {what.replace('_', ' ')}: writing it would destroy the "
                                   "input; choose another output file")
