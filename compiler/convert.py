"""From a fitted estimator to what the CLI writes, in one call: ``convert(est, X_train).save("m.msgpack")`` or
``.save("model.h")``.

The CLI trains through the same estimators and builds the same tables (each kind's module); this is the path for
a scikit-learn user who fitted an estimator in Python (in a Pipeline's last step, after a GridSearchCV, ...):

    from compiler.convert import convert
    est = GreedyMiserClassifier(lam=1.0).fit(X_train, y_train)
    c = convert(est, X_train, feature_names=names)
    c.save("m.msgpack")                 # a model file: frugalml eval / predict / inspect / export-c read it
    c.save("model.h", numeric="q15")    # a C header of const tables (or form="code")
    c.predict(X_test)                   # the C runtime's answers (labels as class indices), costs, features read

``X_train`` is needed where the tables take a figure of the training rows: the q15 input scale of the linear and
CSTC parts (the largest |x| of the features they read) and the branch layout hints of the tree code form. The
model file's labels are ``est.classes_`` as text; a model file written here has no data set fingerprint, so
``frugalml eval`` reports on every row of the data it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from pyruntime import format as fmt
from pyruntime.data import label_text
from pyruntime.format import ModelFile
from pyruntime.outfiles import write_file
from pyruntime.result import Predictions


class ConvertError(ValueError):
    """The estimator cannot be converted (not fitted, a kind or part without runtime tables, missing rows)."""


@dataclass
class Converted:
    """A converted estimator: its model file (``model``) and the ways to write or run it."""

    model: ModelFile

    def save(self, path: str | Path, name: str = "model", numeric: str = "float32", form: str = "tables",
             target: str | None = None, rows: Any = None) -> int:
        """Write a model file, or a C header when ``path`` ends in .h (``name``: the C identifier prefix;
        ``numeric``: float32 or q15; ``form``: tables or code; ``rows``: test rows embedded as FM_ROWS, as
        `export-c --embed`). Returns the bytes written."""
        p = Path(path)
        if p.suffix.lower() not in (".h", ".hpp"):
            return fmt.save(self.model, p)
        if form not in ("tables", "code"):
            raise ConvertError(f"form must be tables or code, got {form!r}")
        from compiler.codegen import check_code_kind, render_code_header  # noqa: PLC0415 - the header writers
        from compiler.header import render_header  # noqa: PLC0415

        embed = None if rows is None else np.asarray(rows, dtype=np.float32)
        if form == "code":
            check_code_kind(self.model.kind)
            text = render_code_header(self.model, numeric, name, embed, target)
        else:
            text = render_header(self.model, numeric, name, embed, target)
        write_file(p, text)
        return len(text.encode())

    def predict(self, X: Any, numeric: str = "float32") -> Predictions:
        """The C runtime's predictions on X (label: the class index into ``model.classes``; -1 = deferred)."""
        from pyruntime.evaluators import c_evaluator  # noqa: PLC0415 - builds/loads the cffi runtime

        return c_evaluator(self.model, numeric).predict(np.asarray(X, dtype=np.float32))


def convert(est: Any, X_train: Any = None, feature_names: list[str] | None = None) -> Converted:
    """The model file of a fitted frugalml estimator (every kind the CLI trains). ``feature_names``: default the
    estimator's ``feature_names_in_`` (fitted on a DataFrame), else x0, x1, ..."""
    check_is_fitted(est)
    kind, tables = _tables(est, None if X_train is None else np.asarray(X_train, dtype=np.float32))
    d = int(tables.n_features)
    names = feature_names if feature_names is not None else getattr(est, "feature_names_in_", None)
    names = [str(n) for n in names] if names is not None else [f"x{j}" for j in range(d)]
    if len(names) != d:
        raise ConvertError(f"{len(names)} feature names for a model of {d} features")
    classes = [label_text(c) for c in est.classes_]  # 1.0 -> "1", as an NPZ of the same y reads
    meta = {"feature_names": names, "classes": classes, "labels": classes,
            "training": {"kind": kind, "converted_from": type(est).__name__}}
    return Converted(ModelFile(kind=kind, tables=tables, meta=meta))


def _rows(X: np.ndarray | None, est: Any) -> np.ndarray:
    if X is None:
        raise ConvertError(f"{type(est).__name__}: give the training rows (convert(est, X_train)): the q15 input "
                           "scale of its tables is taken from them")
    if X.ndim != 2 or X.shape[1] != int(est.n_features_in_):
        raise ConvertError(f"X_train has shape {X.shape}, the estimator was fitted on {est.n_features_in_} features")
    return X


def _tables(est: Any, X: np.ndarray | None) -> tuple[str, Any]:
    """(kind, runtime tables) of a fitted estimator."""
    from compiler.cstc.train import CSTCClassifier  # noqa: PLC0415 - the estimators load scikit-learn
    from compiler.gated.adapt_gbrt import AdaptGbrtClassifier  # noqa: PLC0415
    from compiler.gated.adapt_lin import GatedLinearBase  # noqa: PLC0415
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415
    from compiler.skyline.classifier import SkylineClassifier  # noqa: PLC0415
    from compiler.trees.cascade import ExitingEnsemble  # noqa: PLC0415
    from compiler.trees.frontier import CascadeFrontierClassifier  # noqa: PLC0415
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415
    from pyruntime.trees.cascade import TreeCascade  # noqa: PLC0415

    if isinstance(est, NaiveBayesBudget):
        return ("nb-stop" if est.early_stopping else "nb-static"), est.model_
    if isinstance(est, GreedyMiserClassifier):
        ir = est.to_tree_ensemble()
        ir["tree_eval_cost"] = float(est.tree_eval_cost)
        return "miser", TreeCascade.from_ir(ir)
    if isinstance(est, (ExitingEnsemble, CascadeFrontierClassifier)):
        return "cascade", TreeCascade.from_ir(est.to_tree_ensemble())
    if isinstance(est, CSTCClassifier):
        from compiler.cstc.kind import cstc_model_tables  # noqa: PLC0415

        return "cstc", cstc_model_tables(est.to_ir(), _rows(X, est))
    if isinstance(est, (AdaptGbrtClassifier, GatedLinearBase)):
        return "gated", _gated(est, X)
    if isinstance(est, SkylineClassifier):
        return "skyline", _skyline(est, X)
    raise ConvertError(f"{type(est).__name__} is not a frugalml estimator (NaiveBayesBudget, GreedyMiserClassifier, "
                       "EarlyExitEnsemble, CsccCascadeClassifier, CascadeFrontierClassifier, CSTCClassifier, "
                       "AdaptLinClassifier, L1GateClassifier, AdaptGbrtClassifier or SkylineClassifier)")


def _gated(est: Any, X: np.ndarray | None) -> Any:
    """A gated estimator's tables with its f0 compiled as a tree ensemble (a forest, gradient boosting or one
    decision tree)."""
    from compiler.gated.common import PrefitF0  # noqa: PLC0415
    from compiler.gated.kind import f0_tables, gated_tables  # noqa: PLC0415

    prefit = isinstance(est.f0_, PrefitF0)  # adapt-lin / l1-gate wrap f0; adapt-gbrt keeps the estimator
    f0 = est.f0_.estimator if prefit else est.f0_
    hpc = est.f0_.kind if prefit else type(f0).__name__
    costs = np.asarray(est.costs_, dtype=np.float64)
    try:
        f0_part = f0_tables(f0, costs, hpc, remote=False)
    except ValueError as exc:
        raise ConvertError(str(exc).replace("give --hpc-remote to declare it off-device",
                                            "use a forest, gradient boosting or a decision tree as hpc")) from None
    absmax = np.max(np.abs(_rows(X, est)), axis=0, initial=0.0)
    return gated_tables(est, f0_part, costs, absmax, hpc)


def _skyline(est: Any, X: np.ndarray | None) -> Any:
    """A skyline index over its feature sets' NB tables or linear scorers (the exportable bases)."""
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415
    from compiler.skyline.kind import runtime_tables  # noqa: PLC0415
    from compiler.skyline.linear_base import StandardLogistic  # noqa: PLC0415
    from compiler.skyline.search import mask_features  # noqa: PLC0415
    from pyruntime.skyline.model import SkylineModel  # noqa: PLC0415

    fitted = [m for m in est.models_ if m is not None]
    bases = {"nb" if isinstance(m, NaiveBayesBudget) else "linear" if isinstance(m, StandardLogistic) else
             type(m).__name__ for m in fitted}
    if not bases <= {"nb", "linear"} or len(bases) > 1:
        raise ConvertError(f"skyline base {', '.join(sorted(bases))} has no runtime tables: fit the skyline with "
                           "base=NaiveBayesBudget(budget=d, early_stopping=False) or StandardLogistic()")
    base = next(iter(bases), "nb")
    d, k = int(est.n_features_in_), int(est.classes_.size)
    majority = int(np.searchsorted(est.classes_, est.majority_))
    models = [runtime_tables(base, m, mask_features(mask), d, majority, k, classes=est.classes_)
              for m, mask in zip(est.models_, est.masks_, strict=True)]
    lo, _ = est.size_range_
    return SkylineModel(index=est.index_, base=base, models=models, default_budget=math.inf, default_size=float(lo),
                        input_absmax=float(np.max(np.abs(_rows(X, est)), initial=0.0)))
