"""Two-class nb-stop on small validation parts: the stop cuts judged out of fold on the pooled rows (round 38)
against the validation part alone, over split seeds (not a test).

    .venv/bin/python benchmarks/nb_small_binary.py [--sets sklearn:breast_cancer,keel:pima] [--seeds 0,1,2,3,4]
        [--write-docs]

Under 200 validation rows the `safe` criterion's rule-of-three term cannot pass on either side (it needs 150
stopped rows), so before round 38 a two-class nb-stop trained by `frugalml train` never stopped there: it was
nb-static. Since round 38 its stop cuts and threshold are judged on out-of-fold scores of the train and
validation rows pooled (5 stratified folds, each scored by tables fitted on the other four with the final
bins and order; the rule-of-three term off, as for K classes), its tables staying the train part's
(docs/nb_stop.md, "Small validation parts, two classes"). `--folds 1` is the old procedure.

Per data set, means over the split seeds of `frugalml train`'s 60/20/20 split (the estimator as `train` fits it;
test accuracy and mean features read of the float32 reference, which the C runtime equals bit for bit): nb-static,
nb-stop with `--folds 1` and nb-stop by default, the stop points kept, and scikit-learn's GaussianNB on the raw
inputs for scale. --quick: sklearn:breast_cancer, seed 0.
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

SETS = ("sklearn:breast_cancer,keel:pima,keel:sonar,keel:bands,keel:australian,keel:heart,keel:ionosphere,"
        "keel:wdbc,keel:bupa,keel:saheart,keel:housevotes,keel:wisconsin,keel:mammographic,keel:crx,keel:monk-2,"
        "keel:breast")
RUNS = SetsSeeds(SETS, "0,1,2,3,4", "sklearn:breast_cancer", "0")
COLUMNS = ("static", "stop1", "stop")


def fit(task: tasks.Task, **params: Any) -> tuple[float, float, int]:
    """(test accuracy, mean features read, stop points) of NaiveBayesBudget(**params) fitted as `train` fits it."""
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415

    X, y = task.data.X, task.y
    est = NaiveBayesBudget(random_state=task.split.seed, **params).fit(
        X[task.train], y[task.train], eval_set=(X[task.validation], y[task.validation]))
    ref = est.model_.predict_reference(np.asarray(X[task.test], dtype=np.float32))
    return float(np.mean(ref.label == y[task.test])), float(np.mean(ref.n_read)), int(est.model_.n_stops)


def runs(task: tasks.Task) -> dict[str, tuple[float, float, int]]:
    """Each column's (accuracy, features, stop points) on one split, and GaussianNB's accuracy."""
    from sklearn.naive_bayes import GaussianNB  # noqa: PLC0415

    out = {"static": fit(task, early_stopping=False), "stop1": fit(task, folds=1), "stop": fit(task)}
    X, y = task.data.X, task.y
    pred = GaussianNB().fit(X[task.train], y[task.train]).predict(X[task.test])
    out["gnb"] = (float(np.mean(pred == y[task.test])), float(task.n_features), 0)
    return out


def main(argv: list[str] | None = None) -> int:
    sets, seeds = RUNS.parse(argv, __doc__.splitlines()[0], "two-class data specs")
    print(f"test accuracy / mean features read (stop points), means over split seeds {','.join(map(str, seeds))}; "
          "nb-stop --folds 1: the validation part alone (before round 38); nb-stop: the cuts out of fold\n")
    print("| data | val rows | features | nb-static | nb-stop --folds 1 | nb-stop | GaussianNB |")
    print("|---|---|---|---|---|---|---|")
    gain, ratio = [], []
    for spec in sets:
        per = []
        for seed in seeds:
            task = tasks.prepare(spec, seed=seed)
            if task.n_classes != 2:
                raise SystemExit(f"{spec}: {task.n_classes} classes; this benchmark is for two")
            if task.validation.size >= CV_BELOW:
                raise SystemExit(f"{spec}: {task.validation.size} validation rows; the small-set rule is for "
                                 f"fewer than {CV_BELOW}")
            per.append(runs(task))

        def cell(key: str, rows: list[dict[str, Any]] = per, stops: bool = True) -> str:
            a, f = np.mean([r[key][0] for r in rows]), np.mean([r[key][1] for r in rows])
            s = f" ({np.mean([r[key][2] for r in rows]):.1f})" if stops else ""
            return f"{a:.4f} / {f:.2f}{s}"

        gain.append(100 * float(np.mean([r["stop"][0] - r["stop1"][0] for r in per])))
        ratio.append(float(np.mean([r["stop1"][1] for r in per]) / np.mean([r["stop"][1] for r in per])))
        print(f"| {spec} | {task.validation.size} | {task.n_features} | {cell('static', stops=False)} | "
              f"{cell('stop1')} | {cell('stop')} | {np.mean([r['gnb'][0] for r in per]):.4f} |", flush=True)
    g, q = np.asarray(gain), np.asarray(ratio)
    print(f"\nnb-stop - nb-stop --folds 1 on test, mean over seeds per set (points): median {np.median(g):+.2f}, "
          f"mean {g.mean():+.2f}, min {g.min():+.2f}, max {g.max():+.2f}; better by more than 0.5 on "
          f"{int(np.sum(g > 0.5))} of {g.size} sets, worse on {int(np.sum(g < -0.5))}")
    print(f"features read, nb-stop --folds 1 / nb-stop per set: median {np.median(q):.2f}x, min {q.min():.2f}x, "
          f"max {q.max():.2f}x")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
