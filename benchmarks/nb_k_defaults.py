"""K-class NB: round 34's defaults against round 33's, on K-class sets over split seeds (not a test).

    .venv/bin/python benchmarks/nb_k_defaults.py [--sets sklearn:wine,keel:vowel] [--seeds 0,1,2,3,4]
        [--write-docs]

Round 34 changed two K-class defaults of nb-static and nb-stop (docs/multiclass.md, "Defaults"): the table form
is judged (`--bins auto`: mean-std kept unless another form beats it by more than one standard error,
compiler.nb.table_form), and under 200 validation rows the greedy order and the budget are judged out of fold on
the train and validation rows pooled (the stop cuts' folds) instead of ig's order and the coarse grid's best.
Round 33's defaults are exactly `--bins mean-std` with `--ordering ig` under 200 validation rows, `--bins
mean-std` from 200 on (the greedy order judged on the validation part, unchanged). Both columns keep the stop
bound both rounds had, `--disagreement 0.02` (round 45 made it 0.01 for K > 2 classes: docs/nb_stop.md, "K
classes: the stop's bound"; benchmarks/multiclass.py measures today's defaults).

Per data set, means over the split seeds of `frugalml train`'s 60/20/20 split (the estimator as `train` fits
it; accuracy and mean features read of the float32 reference, which the C runtime equals bit for bit,
tests/test_nb_table_form.py): NB on every feature in each round's form, nb-static and nb-stop at each round's
defaults, and scikit-learn's GaussianNB on the raw inputs (every feature) for scale. --quick: keel:iris, seeds 0-1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.sets_seeds import SetsSeeds  # noqa: E402
from compiler import tasks  # noqa: E402
from compiler.options import CV_BELOW  # noqa: E402

SETS = ("sklearn:wine,keel:iris,keel:vehicle,keel:movement_libras,keel:vowel,keel:hayes-roth,keel:led7digit,"
        "keel:texture,keel:segment,keel:satimage,sklearn:digits")
RUNS = SetsSeeds(SETS, "0,1,2,3,4", "keel:iris", "0,1")


BOUND = 0.02  # the safe stop criterion's bound of rounds 33 and 34 (both columns; K > 2's default since round 45: 0.01)


def fit(task: tasks.Task, **params: Any) -> tuple[float, float, Any]:
    """(test accuracy, mean features read, estimator) of NaiveBayesBudget(**params) fitted as `train` fits it."""
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415

    X, y = task.data.X, task.y
    est = NaiveBayesBudget(random_state=task.split.seed, **params).fit(
        X[task.train], y[task.train], eval_set=(X[task.validation], y[task.validation]))
    ref = est.model_.predict_reference(np.asarray(X[task.test], dtype=np.float32))
    return float(np.mean(ref.label == y[task.test])), float(np.mean(ref.n_read)), est


def runs(task: tasks.Task) -> dict[str, tuple[float, float]]:
    """Each column's (accuracy, features) on one split."""
    from sklearn.naive_bayes import GaussianNB  # noqa: PLC0415

    d = task.n_features
    old = {"bins": "mean-std", "disagreement": BOUND,
           **({"ordering": "ig"} if task.validation.size < CV_BELOW else {})}
    out: dict[str, tuple[float, float]] = {}
    out["all33"] = fit(task, bins="mean-std", budget=d, early_stopping=False)[:2]
    acc, feats, est = fit(task, budget=d, early_stopping=False)
    out["all34"] = (acc, feats)
    out["form"] = est.bins_ + ("/gauss" if est.likelihood_ == "gaussian" else "")  # type: ignore[assignment]
    out["static33"] = fit(task, early_stopping=False, **old)[:2]
    out["static34"] = fit(task, early_stopping=False)[:2]
    out["stop33"] = fit(task, **old)[:2]
    out["stop34"] = fit(task, disagreement=BOUND)[:2]
    X, y = task.data.X, task.y
    pred = GaussianNB().fit(X[task.train], y[task.train]).predict(X[task.test])
    out["gnb"] = (float(np.mean(pred == y[task.test])), float(d))
    return out


def main(argv: list[str] | None = None) -> int:
    sets, seeds = RUNS.parse(argv, __doc__.splitlines()[0], "K-class data specs")
    print(f"test accuracy / mean features read, means over split seeds {','.join(map(str, seeds))}; "
          "33: round 33's defaults, 34: this round's\n")
    print("| data | K | val rows | forms kept (34) | all 33 | all 34 | nb-static 33 | nb-static 34 | nb-stop 33 "
          "| nb-stop 34 | GaussianNB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    gains: dict[str, list[float]] = {"all": [], "static": [], "stop": []}
    for spec in sets:
        per = []
        for seed in seeds:
            task = tasks.prepare(spec, seed=seed)
            if task.n_classes < 3:
                raise SystemExit(f"{spec}: {task.n_classes} classes; this benchmark is for K > 2")
            per.append(runs(task))
        forms = sorted({str(r["form"]) for r in per})

        def cell(key: str, rows: list[dict[str, Any]] = per) -> str:
            a = np.mean([r[key][0] for r in rows])
            f = np.mean([r[key][1] for r in rows])
            return f"{a:.4f} / {f:.2f}"

        for col in gains:
            gains[col].append(100 * float(np.mean([r[f"{col}34"][0] - r[f"{col}33"][0] for r in per])))
        print(f"| {spec} | {task.n_classes} | {task.validation.size} | {', '.join(forms)} | {cell('all33')} | "
              f"{cell('all34')} | {cell('static33')} | {cell('static34')} | {cell('stop33')} | {cell('stop34')} | "
              f"{np.mean([r['gnb'][0] for r in per]):.4f} |", flush=True)
    print()
    for col, g in gains.items():
        v = np.asarray(g)
        print(f"{col:>6}: 34 - 33 on test, mean over seeds per set (points): median {np.median(v):+.2f}, min "
              f"{v.min():+.2f}, max {v.max():+.2f}; better by more than 0.5 on {int(np.sum(v > 0.5))} of {v.size} "
              f"sets, worse on {int(np.sum(v < -0.5))}")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
