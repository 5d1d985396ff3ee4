"""What every family uses around training: prepare a task from DATA (split,
costs), the train/validation arrays, metrics, option parsing, evaluation rows
and the summary of predictions.

A model file's meta records what is needed to evaluate it again on the same
data without repeating options: the data set's fingerprint, the split, the
positive label, the target column and the validation class counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from compiler.costs import FeatureCosts, load_costs
from pyruntime.data import (
    NAMED_COLUMN_SUFFIXES,
    Dataset,
    Split,
    encode_labels,
    label_order,
    load_dataset,
    load_for_model,
)
from pyruntime.errors import DataError, FrugalmlError
from pyruntime.format import ModelFile
from pyruntime.numtext import is_number, parse_number
from pyruntime.result import Predictions


@dataclass
class Task:
    data: Dataset
    y: np.ndarray  # class index into classes (0/1 for a binary or one-vs-rest task)
    classes: list[str]
    positive: str | None
    target: str | None
    split: Split
    train: np.ndarray
    validation: np.ndarray
    test: np.ndarray

    @property
    def n_features(self) -> int:
        return int(self.data.X.shape[1])

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def meta(self) -> dict[str, Any]:
        va = self.y[self.validation]
        return {
            "feature_names": self.data.feature_names,
            "classes": self.classes,
            "labels": label_order(self.data.y.tolist()),
            "positive": self.positive,
            "target_column": self.target,
            "dataset": {"name": self.data.name, "fingerprint": self.data.fingerprint, "rows": self.data.n_rows},
            "split": self.split.to_dict(),
            "validation_class_counts": np.bincount(va, minlength=self.n_classes).astype(int).tolist(),
            **({"feature_plan": self.data.plan.to_meta()} if self.data.plan is not None else {}),
        }

    def model_file(self, kind: str, tables: Any, record: dict[str, Any]) -> ModelFile:
        """The model file of ``tables`` trained on this task: its meta with the training ``record``."""
        meta = self.meta()
        meta["training"] = record
        return ModelFile(kind=kind, tables=tables, meta=meta)


def label_list(labels: list[str], most: int = 6) -> str:
    """The first ``most`` labels, quoted (a label may hold a comma), then how many more: "'a', 'b', ... (12 in
    all)"."""
    head = ", ".join(repr(v) for v in labels[:most])
    return head if len(labels) <= most else f"{head}, ... ({len(labels)} in all)"


def prepare(spec: str, positive: str | None = None, target: str | None = None, seed: int = 0,
            features: str | None = None) -> Task:
    """The task of DATA; raw windows become the columns of the --features plan (default: the default plan)."""
    if target is not None and not (Path(spec).is_file() and Path(spec).suffix.lower() in NAMED_COLUMN_SUFFIXES):
        raise DataError(f"--target-column {target!r} applies to data with named columns (a .csv or .arff file); "
                        f"{spec} has its labels in place: leave the option out")
    data = load_dataset(spec, target, features)
    y, classes = encode_labels(data.y, positive, data.label_column)
    split = Split(seed=seed)
    tr, va, te = split.indices(y)
    for name, idx in (("training", tr), ("validation", va)):
        if np.unique(y[idx]).size < 2:
            raise DataError(f"the {name} part of {spec} has a single class: too few rows of one class")
    missing = sorted(set(range(len(classes))) - set(np.unique(y[tr]).tolist()))
    if missing:
        raise DataError(f"class {classes[missing[0]]!r} of {spec} has no training rows (too few rows of "
                        f"{len(missing)} class{'es' if len(missing) > 1 else ''}): add rows or drop the class")
    return Task(data, y, classes, positive, target, split, tr, va, te)


def task_costs(task: Task, costs_path: str | None) -> FeatureCosts | None:
    return load_costs(costs_path, task.data.feature_names) if costs_path else None


# ------------------------------------------------------------ training ----
# ---------------------------------------------------------- evaluation ----
def same_numbers_as(y: np.ndarray, known: set[str]) -> np.ndarray:
    """``y`` with each label the model does not know replaced by the one known label of the same number, when
    there is exactly one: "1.0" in a CSV is the model's "1" (an NPZ of float labels, or a converted estimator),
    and "1" a model's "1.0" (labels written 1.0 in a training CSV). Texts that are not numbers, or match no or
    several known labels ("01" and "1"), are left for the caller's unseen-label check."""
    numbers: dict[float, list[str]] = {}
    for k in known:
        if is_number(k):
            numbers.setdefault(parse_number(k), []).append(k)
    alias = {}
    for v in set(y.tolist()) - known:
        match = numbers.get(parse_number(v), []) if is_number(v) else []
        if len(match) == 1:
            alias[v] = match[0]
    return np.array([alias.get(v, v) for v in y.tolist()], dtype=str) if alias else y


def rows_for_eval(model: ModelFile, spec: str) -> tuple[Dataset, np.ndarray, np.ndarray, str]:
    """Load DATA for a model: (data, class index of the rows, row indices, 'test' or 'all')."""
    meta = model.meta
    data = load_for_model(spec, meta)
    if not data.labelled:
        raise DataError(f"{spec} has no labels (no label column, y or @classLabel): evaluating needs them; "
                        "`frugalml predict` runs rows without labels")
    classes = model.classes
    positive = meta.get("positive")
    if data.X.shape[1] != int(model.tables.n_features):
        raise DataError(f"{spec} has {data.X.shape[1]} features, the model expects {model.tables.n_features}")
    known = set(meta.get("labels") or ([] if "rest" in classes else classes))
    data.y = same_numbers_as(data.y, known)
    labels = set(data.y.tolist())
    unseen = sorted(labels - known) if known else []
    if unseen:
        column = meta.get("target_column")
        where = f"column {column!r}, as in training" if column else "a column named target/class/label/y, else the last"
        raise DataError(f"{spec} has labels the model never saw in training ({label_list(unseen)}; the model "
                        f"knows {label_list(sorted(known))}): check the data's label column ({where})")
    if positive is not None or len(classes) == 2:
        y = (data.y == (positive if positive is not None else classes[1])).astype(np.int64)
    else:
        index = {c: i for i, c in enumerate(classes)}
        y = np.array([index.get(v, -1) for v in data.y.tolist()], dtype=np.int64)
    if meta.get("dataset", {}).get("fingerprint") == data.fingerprint and "split" in meta:
        s = meta["split"]
        split = Split(seed=int(s["seed"]), train=float(s["train"]), validation=float(s["validation"]))
        test = split.indices(y)[2]
        if test.size == 0:
            raise DataError(f"the test part of {spec} is empty (too few rows a class for the model's split to hold "
                            "one out): evaluate on other labelled data")
        return data, y, test, "test"
    return data, y, np.arange(data.n_rows), "all"


def summarize(model: ModelFile, y: np.ndarray, pred: Predictions) -> dict[str, Any]:
    """The figures of `eval`: accuracy, weighted and balanced accuracy, macro-F1, features read and cost
    (mean and per true class), the stop histogram and the confusion matrix."""
    n_classes = len(model.classes)
    counts = model.meta.get("validation_class_counts")
    n = int(y.size)
    stages = np.bincount(pred.stage.astype(np.int64)) if n else np.zeros(1, np.int64)
    if n_classes == 2:
        weights = (int(counts[1]) or 1, int(counts[0]) or 1) if counts and len(counts) == 2 else class_weights(y)
        wacc = weighted_accuracy(y, pred.label, weights) if n else 0.0
    else:
        wacc = class_weighted_accuracy(y, pred.label, counts if counts and len(counts) == n_classes
                                       else np.bincount(y, minlength=n_classes))
    return {
        "kind": model.kind,
        "n": n,
        "accuracy": float(np.mean(pred.label == y)) if n else 0.0,
        "weighted_accuracy": wacc,
        "balanced_accuracy": balanced_accuracy(y, pred.label) if n else 0.0,
        "macro_f1": macro_f1(y, pred.label, n_classes) if n else 0.0,
        "mean_features": float(pred.n_read.mean()) if n else 0.0,
        "max_features": int(pred.n_read.max()) if n else 0,
        "mean_cost": float(np.mean(pred.cost)) if n else 0.0,
        "stop_histogram": {str(i): int(c) for i, c in enumerate(stages) if c},
        "per_class": per_class(model.classes, y, pred),
        "confusion": confusion(model.classes, y, pred.label),
    }


def confusion_matrix(y: np.ndarray, pred: np.ndarray, n_classes: int) -> np.ndarray:
    """Counts [true class, predicted class]; a last column counts answers outside 0..K-1 (-1: deferred or
    nothing fits the budget)."""
    m = np.zeros((n_classes, n_classes + 1), dtype=np.int64)
    p = np.where((pred >= 0) & (pred < n_classes), pred, n_classes)
    np.add.at(m, (np.asarray(y, np.int64), np.asarray(p, np.int64)), 1)
    return m


def confusion(classes: list[str], y: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    """`eval` report of the confusion matrix: rows = true class, columns = predicted class (+ "none")."""
    m = confusion_matrix(y, pred, len(classes))
    return {"labels": list(classes), "matrix": m[:, :-1].tolist(), "none": m[:, -1].tolist()}


def macro_f1(y: np.ndarray, pred: np.ndarray, n_classes: int) -> float:
    """Mean F1 over the classes that are true or predicted on these rows (scikit-learn's f1_score(average="macro")
    with its default labels): a class absent from both, e.g. from a file that holds some of the classes, is not
    averaged in; a row that got no class (deferred) counts against its true class's recall."""
    m = confusion_matrix(y, pred, n_classes)
    tp = np.diag(m[:, :n_classes]).astype(np.float64)
    denom = m.sum(axis=1) + m[:, :n_classes].sum(axis=0)
    present = denom > 0
    if not present.any():
        return 0.0
    return float(np.mean(2 * tp[present] / denom[present]))


def per_class(classes: list[str], y: np.ndarray, pred: Predictions) -> dict[str, dict[str, float]]:
    """Rows, accuracy, mean features read and mean cost per true class."""
    out = {}
    for c, name in enumerate(classes):
        m = y == c
        if np.any(m):
            out[name] = {"n": int(m.sum()), "accuracy": float(np.mean(pred.label[m] == c)),
                         "mean_features": float(pred.n_read[m].mean()), "mean_cost": float(np.mean(pred.cost[m]))}
    return out


def class_weighted_accuracy(y: np.ndarray, pred: np.ndarray, counts: Any) -> float:
    """Accuracy with every class weighted by the inverse of its (validation) count: equal total weight per
    class when the counts are those of y (the K-class form of weighted_accuracy)."""
    if y.size == 0:
        return 0.0
    c = np.maximum(np.asarray(counts, dtype=np.int64), 1)
    w = [Fraction(1, int(v)) for v in c]
    total = sum((w[int(v)] for v in y), Fraction(0))
    good = sum((w[int(v)] for v, p in zip(y, pred) if v == p), Fraction(0))
    return float(good / total) if total else 0.0


# ------------------------------------------------------------ train/validation ----
def split(task: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X, y = task.data.X.astype(np.float32), task.y
    return X[task.train], y[task.train], X[task.validation], y[task.validation]


# ------------------------------------------------------------------- metrics ----
def class_weights(y01: np.ndarray) -> tuple[int, int]:
    """Integer weights (w0, w1) = (n1, n0): equal total weight per class."""
    n1 = int(np.sum(y01 == 1))
    n0 = int(y01.size - n1)
    return max(n1, 1), max(n0, 1)


def weighted_accuracy(y01: np.ndarray, pred: np.ndarray, weights: tuple[int, int]) -> float:
    w = np.where(y01 == 1, weights[1], weights[0]).astype(np.int64)
    total = int(w.sum())
    return float(Fraction(int(w[pred == y01].sum()), total)) if total else 0.0


def balanced_validation_accuracy(y: np.ndarray, pred: np.ndarray, n_classes: int) -> float:
    """The model file's validation_weighted_accuracy: every class of y the same total weight
    (weighted_accuracy's integer weights for two classes, class_weighted_accuracy for more)."""
    if n_classes <= 2:
        return weighted_accuracy(y, pred, class_weights(y))
    return class_weighted_accuracy(y, pred, np.bincount(y, minlength=n_classes))


# ------------------------------------------------------------ trivial models ----
MUCH_BETTER = 0.05  # a reference this much more accurate makes a model that reads nothing trivial


class TrivialModelError(FrugalmlError, ValueError):
    """A trainer produced a model no better than a constant (see check_not_trivial)."""


def majority_accuracy(y: np.ndarray) -> float:
    """Accuracy of always answering the most frequent label of y."""
    _, counts = np.unique(np.asarray(y), return_counts=True)
    return float(counts.max() / counts.sum()) if counts.size else 0.0


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean recall over the labels present in y (a constant answer scores 1 / n_labels)."""
    y = np.asarray(y)
    labels = np.unique(y)
    return float(np.mean([np.mean(np.asarray(pred)[y == c] == c) for c in labels])) if labels.size else 0.0


def check_not_trivial(kind: str, y_val: np.ndarray, pred_val: np.ndarray, n_read: np.ndarray | None,
                      opts: dict[str, Any], hint: str, reference: tuple[str, float] | None = None) -> dict[str, Any]:
    """Refuse a trivial model: raise TrivialModelError (one line: what is wrong, what to change) unless
    ``opts["allow_trivial"]``. Returns the figures of the check for the model file's meta.

    A model is trivial when on the validation rows
    - it does not beat the majority class: accuracy <= the majority class's share and balanced accuracy
      <= 1 / n_classes (so a useful model on imbalanced data that trades plain accuracy for the rare
      class still passes), or
    - it reads no feature at all while ``reference`` (f0, the full model: (name, validation accuracy))
      is at least MUCH_BETTER (5 points) more accurate.
    """
    y = np.asarray(y_val)
    pred = np.asarray(pred_val)
    acc = float(np.mean(pred == y)) if y.size else 0.0
    maj = majority_accuracy(y)
    bal = balanced_accuracy(y, pred)
    n_classes = max(int(np.unique(y).size), 1)
    reads = float(np.mean(n_read)) if n_read is not None and np.size(n_read) else None
    figures: dict[str, Any] = {"majority_validation_accuracy": maj, "trivial": False}
    reason = None
    if acc <= maj + 1e-12 and bal <= 1.0 / n_classes + 1e-12:
        reason = (f"validation accuracy {acc:.4f} does not beat the majority class ({maj:.4f}, balanced "
                  f"accuracy {bal:.4f})")
    elif reference is not None and reads == 0.0 and reference[1] >= acc + MUCH_BETTER:
        reason = f"it reads no feature (validation accuracy {acc:.4f}) while {reference[0]} reaches {reference[1]:.4f}"
    if reason is None:
        return figures
    if not opts.get("allow_trivial"):
        raise TrivialModelError(f"{kind}: the trained model is trivial: {reason}; {hint}, or give --allow-trivial "
                                "to write it anyway")
    figures["trivial"] = True
    return figures


# ----------------------------------------------------------------- options ----
def parse_floats(text: str, option: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{option} must be comma-separated numbers, got {text!r}") from None
    if not vals or any(not np.isfinite(v) or v < 0 for v in vals):
        raise ValueError(f"{option} needs finite numbers >= 0, got {text!r}")
    return vals
