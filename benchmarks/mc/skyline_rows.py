"""Rows of kind skyline (K classes, base nb) for benchmarks/multiclass.py: one index trained with greedy-acc
over the whole forward selection (d (d + 1) / 2 feature sets), evaluated by the C runtime on the test rows
with no budget (its most accurate model) and at budgets d / 2 and d / 4 (uniform costs: features)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from compiler import tasks
from compiler.kinds import load_kind_modules
from pyruntime.evaluators import c_evaluator


def skyline_rows(task: Any) -> list[tuple[str, dict[str, float]]]:
    d = int(task.n_features)
    opts = {"method": "greedy-acc", "max_sets": d * (d + 1) // 2}
    model = load_kind_modules()["skyline"].train("skyline", task, opts, None)
    ev = c_evaluator(model, "float32")
    X, y = task.data.X[task.test], task.y[task.test]
    rows = []
    for budget in (math.inf, d // 2, d // 4):
        p = ev.predict(X, float(budget), 0.0)
        name = "skyline greedy-acc, no budget (best model)" if budget == math.inf else f"skyline, budget {budget}"
        rows.append((name, {"accuracy": float(np.mean(p.label == y)), "features": float(np.mean(p.n_read)),
                            "macro_f1": tasks.macro_f1(y, p.label, task.n_classes)}))
    return rows
