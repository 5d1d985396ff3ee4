"""Shared steps of the CLI: prepare a task from DATA, train a kind, evaluate.

A model file's meta records what is needed to evaluate it again on the same
data without repeating options: the data set's fingerprint, the split, the
positive label, the target column and the validation class counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.data import Dataset, Split, binarize, load_dataset
from pyruntime.errors import DataError
from pyruntime.format import ModelFile
from pyruntime.nb import Predictions

from .costs import FeatureCosts, load_costs
from .nb_train import NaiveBayesBudget, class_weights, weighted_accuracy


@dataclass
class Task:
    data: Dataset
    y: np.ndarray  # 0/1
    classes: list[str]
    positive: str | None
    target: str | None
    split: Split
    train: np.ndarray
    validation: np.ndarray
    test: np.ndarray

    def meta(self) -> dict[str, Any]:
        va = self.y[self.validation]
        return {
            "feature_names": self.data.feature_names,
            "classes": self.classes,
            "positive": self.positive,
            "target_column": self.target,
            "dataset": {"name": self.data.name, "fingerprint": self.data.fingerprint, "rows": self.data.n_rows},
            "split": self.split.to_dict(),
            "validation_class_counts": [int(np.sum(va == 0)), int(np.sum(va == 1))],
        }


def prepare(spec: str, positive: str | None = None, target: str | None = None, seed: int = 0) -> Task:
    data = load_dataset(spec, target)
    y, classes = binarize(data.y, positive)
    split = Split(seed=seed)
    tr, va, te = split.indices(y)
    for name, idx in (("training", tr), ("validation", va)):
        if np.unique(y[idx]).size < 2:
            raise DataError(f"the {name} part of {spec} has a single class: too few rows of one class")
    return Task(data, y, classes, positive, target, split, tr, va, te)


def task_costs(task: Task, costs_path: str | None) -> FeatureCosts | None:
    return load_costs(costs_path, task.data.feature_names) if costs_path else None


# ------------------------------------------------------------ training ----
def train_nb(kind: str, task: Task, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    est = NaiveBayesBudget(
        budget=opts.get("budget"), ordering=opts.get("ordering", "ig"), bins=opts.get("bins", "mean-std"),
        early_stopping=kind == "nb-stop", support=opts.get("support", 0.05),
        performance=opts.get("performance", 0.05), criterion=opts.get("criterion", "safe"),
        disagreement=opts.get("disagreement", 0.02),
        random_state=task.split.seed,
    )
    cost_vec = None if costs is None else costs.at(0.0).astype(np.float32)
    X, y = task.data.X, task.y
    est.fit(X[task.train], y[task.train], X[task.validation], y[task.validation], costs=cost_vec)
    model = est.model_
    val = model.predict_reference(X[task.validation])
    w = class_weights(y[task.validation])
    meta = task.meta()
    meta["training"] = {
        "kind": kind, **{k: v for k, v in opts.items() if v is not None},
        "budget_chosen": int(est.budget_), "static_threshold": est.static_threshold_,
        "validation_weighted_accuracy": weighted_accuracy(y[task.validation], val.label, w),
        "validation_mean_features": float(val.n_read.mean()),
        "static_curve": {str(k): v for k, v in est.static_curve_.items()},
    }
    return ModelFile(kind=kind, tables=model, meta=meta)


# ---------------------------------------------------------- evaluation ----
def rows_for_eval(model: ModelFile, spec: str) -> tuple[Dataset, np.ndarray, np.ndarray, str]:
    """Load DATA for a model: (data, y01 of the rows, row indices, 'test' or 'all')."""
    meta = model.meta
    data = load_dataset(spec, meta.get("target_column"))
    classes = [str(c) for c in meta.get("classes", ["0", "1"])]
    positive = meta.get("positive")
    labels = set(data.y.tolist())
    pos = positive if positive is not None else classes[1]
    if positive is None and not labels <= set(classes):
        raise DataError(f"labels of {spec} ({', '.join(sorted(labels)[:6])}) do not match the model's classes "
                        f"({', '.join(classes)})")
    y = (data.y == pos).astype(np.int64)
    if data.X.shape[1] != int(model.tables.n_features):
        raise DataError(f"{spec} has {data.X.shape[1]} features, the model expects {model.tables.n_features}")
    if meta.get("dataset", {}).get("fingerprint") == data.fingerprint and "split" in meta:
        s = meta["split"]
        split = Split(seed=int(s["seed"]), train=float(s["train"]), validation=float(s["validation"]))
        return data, y, split.indices(y)[2], "test"
    return data, y, np.arange(data.n_rows), "all"


def summarize(model: ModelFile, y: np.ndarray, pred: Predictions) -> dict[str, Any]:
    counts = model.meta.get("validation_class_counts")
    weights = (int(counts[1]) or 1, int(counts[0]) or 1) if counts else class_weights(y)
    n = int(y.size)
    stages = np.bincount(pred.stage.astype(np.int64)) if n else np.zeros(1, np.int64)
    return {
        "kind": model.kind,
        "n": n,
        "accuracy": float(np.mean(pred.label == y)) if n else 0.0,
        "weighted_accuracy": weighted_accuracy(y, pred.label, weights) if n else 0.0,
        "mean_features": float(pred.n_read.mean()) if n else 0.0,
        "max_features": int(pred.n_read.max()) if n else 0,
        "mean_cost": float(np.mean(pred.cost)) if n else 0.0,
        "stop_histogram": {str(i): int(c) for i, c in enumerate(stages) if c},
    }
