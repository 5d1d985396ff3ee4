"""Registry of trainable model kinds.

Each kind lives in a module ``compiler/<family>/kind*.py`` that calls
``register(KindSpec(...))`` at import. A kind declares its own click options
(shown by ``frugalml train KIND --help``; an option given for a kind that does
not declare it is a usage error), a trainer, a C-header emitter
(``compiler.header.register_emitter``) and, optionally, extra figures for
``eval --json``.

The modules are imported when a kind is used, not all at start-up:
:data:`KIND_MODULES` names each kind's module and :data:`FILE_KIND_MODULES`
the module of each model-file kind (its eval figures, budget index and C
emitter), so ``frugalml train nb-stop`` or ``eval`` of an NB file loads the NB
family alone. What a run loads is what a doc figure records as the code that
made it (benchmarks/common/figures.py), so a change to one family's module
restales only the figures that ran that family. A new kind adds its module and
its rows here; tests/test_kinds_lazy.py checks the tables against every kind
module's registrations (:func:`load_kind_modules` imports them all).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click
import numpy as np

from compiler.costs import FeatureCosts
from pyruntime.format import ModelFile
from pyruntime.result import Predictions


@dataclass
class KindSpec:
    name: str
    help: str
    train: Callable[[str, Any, dict[str, Any], FeatureCosts | None], ModelFile]
    options: list[click.Option] = field(default_factory=list)
    # extra eval figures: (model, X, y, predictions, numeric) -> dict
    extra_metrics: Callable[[ModelFile, np.ndarray, np.ndarray, Predictions, str], dict[str, Any]] | None = None
    # trains K > 2 classes (else such data needs --positive LABEL: one-vs-rest)
    multiclass: bool = False

    @property
    def option_names(self) -> set[str]:
        return {o.name for o in self.options if o.name}


# every kind accepts --allow-trivial (the trainers call compiler.tasks.check_not_trivial)
ALLOW_TRIVIAL = click.Option(
    ["--allow-trivial"], is_flag=True, default=False,
    help="Write the model even when it is trivial (on validation, accuracy not above the majority class's and "
         "balanced accuracy not above 1/K, or it reads no feature while f0 / the full model is 5 points better) "
         "[every kind].")

KINDS: dict[str, KindSpec] = {}
# eval extras by the kind written in the model file (a trainer may write another kind, e.g. adapt-lin -> gated)
FILE_METRICS: dict[str, Callable[[ModelFile, np.ndarray, np.ndarray, Predictions, str], dict[str, Any]]] = {}


def register(spec: KindSpec) -> None:
    if "allow_trivial" not in spec.option_names:
        spec.options = [*spec.options, ALLOW_TRIVIAL]
    KINDS[spec.name] = spec
    if spec.extra_metrics is not None:
        FILE_METRICS.setdefault(spec.name, spec.extra_metrics)


@dataclass(frozen=True)
class BudgetEval:
    """`eval --budget/--size/--budget-sweep/--plot` of a file kind with a per-call budget index.

    at(model, budget, size) -> the model whose stored default budget and size are those (None: keep the
    stored one); `eval` then computes every figure of its report from that model's predictions.
    ValueError on a budget or size the index cannot take.
    sweep(model, X, y, sweep, plot, numeric) -> extra report figures (the accuracy-vs-budget curve)."""

    at: Callable[[ModelFile, float | None, float | None], ModelFile]
    sweep: Callable[..., dict[str, Any]]


BUDGET_EVAL: dict[str, BudgetEval] = {}


def register_budget_eval(file_kind: str, budget_eval: BudgetEval) -> None:
    """Per-call budget evaluation for model files of file_kind (kinds with a budget index)."""
    BUDGET_EVAL[file_kind] = budget_eval


@dataclass(frozen=True)
class ExtraCommand:
    """A CLI command a family adds: its name, "module:attribute" of the click command (imported only when
    the command runs, so that its imports do not slow down every other command) and its one-line help."""

    name: str
    ref: str
    short_help: str


EXTRA_COMMANDS: tuple[ExtraCommand, ...] = (
    ExtraCommand("profile-costs", "compiler.skyline.profile_costs:profile_costs_command",
                 "Time feature functions over item sizes and fit cost polynomials (a --costs CSV)."),
)

# each kind's module (imported when the kind is trained)
KIND_MODULES: dict[str, str] = {
    "adapt-gbrt": "compiler.gated.kind",
    "adapt-lin": "compiler.gated.kind",
    "cascade": "compiler.trees.kind_cascade",
    "cstc": "compiler.cstc.kind",
    "l1-gate": "compiler.gated.kind",
    "miser": "compiler.trees.kind_miser",
    "nb-static": "compiler.nb.kind",
    "nb-stop": "compiler.nb.kind",
    "skyline": "compiler.skyline.kind",
}
# each model-file kind's module: its C emitter, eval figures and budget index (imported when a file is read)
FILE_KIND_MODULES: dict[str, str] = {
    "cascade": "compiler.trees.kind_cascade",
    "cstc": "compiler.cstc.kind",
    "gated": "compiler.gated.kind",
    "miser": "compiler.trees.kind_miser",
    "nb-static": "compiler.nb.kind",
    "nb-stop": "compiler.nb.kind",
    "skyline": "compiler.skyline.kind",
}
BUDGET_FILE_KINDS = ("skyline",)  # the file kinds with a per-call budget index (eval --budget's message)


def kind_spec(name: str) -> KindSpec:
    """The registered kind ``name``, its module imported first. KeyError for a name not in KIND_MODULES."""
    importlib.import_module(KIND_MODULES[name])
    return KINDS[name]


def load_file_kind(file_kind: str) -> None:
    """Import the module of a model-file kind (its emitter, eval figures and budget index register); a kind
    without one (a pipeline's, a file from a newer frugalml) loads nothing."""
    module = FILE_KIND_MODULES.get(file_kind)
    if module is not None:
        importlib.import_module(module)


def register_file_metrics(file_kind: str,
                          fn: Callable[[ModelFile, np.ndarray, np.ndarray, Predictions, str], dict[str, Any]]) -> None:
    """Extra `eval --json` figures for model files of file_kind."""
    FILE_METRICS[file_kind] = fn


def kind_modules(package: str, path: list[str]) -> list[str]:
    """The kind modules of a package's family folders: ``<package>.<family>.kind`` and
    ``<package>.<family>.kind_*``, in name order."""
    found = []
    for fam in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if not fam.ispkg:
            continue
        sub = importlib.import_module(f"{package}.{fam.name}")
        for info in sorted(pkgutil.iter_modules(sub.__path__), key=lambda i: i.name):
            if info.name == "kind" or info.name.startswith("kind_"):
                found.append(f"{package}.{fam.name}.{info.name}")
    return found


def load_kind_modules() -> dict[str, KindSpec]:
    """Import every family's kind modules (each registers its kinds): what `frugalml train --help` lists and
    what the tests check the tables above against."""
    from compiler import __path__ as pkg_path

    for name in kind_modules("compiler", list(pkg_path)):
        importlib.import_module(name)
    return KINDS
