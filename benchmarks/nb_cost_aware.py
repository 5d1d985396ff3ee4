"""K-class NB with feature costs: the cost-aware greedy step against the plain one, on K-class sets (not a test).

    .venv/bin/python benchmarks/nb_cost_aware.py [--sets sklearn:wine,keel:vowel] [--seeds 0,1,2]
        [--write-docs]

Round 35: with costs that differ, each step of the K-class greedy order adds the feature with the largest rise
in the rows' mean log-probability of their class per unit of what the feature adds to the cost (a feature
group's cost paid once; compiler.nb.multi_train.greedy_order_parts), where before it added the largest rise
and the costs were only reported (`--no-cost-aware`). The budget and the stop points are chosen as before, on
the new order.

Per data set, means over the split seeds of `frugalml train`'s 60/20/20 split, each seed with its own
Yahoo-like costs (one of 1, 5, 10, 20, 50, 100, 150, 200 per feature, drawn with the split seed:
yahoo_costs in benchmarks/common/tree_peers.py): test accuracy and mean cost per prediction of the float32 reference
(the C runtime equals it bit for bit) for nb-static and nb-stop at their defaults, plain step and cost-aware
step. --quick: sklearn:wine, seed 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.sets_seeds import SetsSeeds  # noqa: E402
from benchmarks.common.tree_peers import yahoo_costs  # noqa: E402
from compiler import tasks  # noqa: E402

SETS = ("sklearn:wine,keel:iris,keel:vehicle,keel:movement_libras,keel:vowel,keel:hayes-roth,keel:led7digit,"
        "keel:texture,keel:segment,keel:satimage,sklearn:digits")
RUNS = SetsSeeds(SETS, "0,1,2,3,4", "sklearn:wine", "0")
COLUMNS = [(kind, aware) for kind in ("static", "stop") for aware in (False, True)]


def fit(task: tasks.Task, costs: np.ndarray, early_stopping: bool, cost_aware: bool) -> tuple[float, float]:
    """(test accuracy, mean cost per prediction) of NaiveBayesBudget fitted as `train` fits it."""
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415

    X, y = task.data.X, task.y
    est = NaiveBayesBudget(random_state=task.split.seed, costs=costs, early_stopping=early_stopping,
                           cost_aware=cost_aware).fit(X[task.train], y[task.train],
                                                      eval_set=(X[task.validation], y[task.validation]))
    ref = est.model_.predict_reference(np.asarray(X[task.test], dtype=np.float32))
    return float(np.mean(ref.label == y[task.test])), float(np.mean(ref.cost))


def main(argv: list[str] | None = None) -> int:
    sets, seeds = RUNS.parse(argv, __doc__.splitlines()[0], "K-class data specs")
    print(f"test accuracy / mean cost per prediction, means over split seeds {','.join(map(str, seeds))}, "
          "Yahoo-like costs drawn per seed; plain: --no-cost-aware, aware: the default\n")
    print("| data | K | features | nb-static plain | nb-static aware | cost aware/plain | nb-stop plain "
          "| nb-stop aware | cost aware/plain | accuracy aware - plain (stop, points) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratio: dict[str, list[float]] = {"static": [], "stop": []}
    delta: dict[str, list[float]] = {"static": [], "stop": []}
    for spec in sets:
        got: dict[tuple[str, bool], list[tuple[float, float]]] = {c: [] for c in COLUMNS}
        for seed in seeds:
            task = tasks.prepare(spec, seed=seed)
            if task.n_classes < 3:
                raise SystemExit(f"{spec}: {task.n_classes} classes; this benchmark is for K > 2")
            costs = yahoo_costs(task.n_features, seed).at(0.0).astype(np.float32)
            for kind, aware in COLUMNS:
                got[(kind, aware)].append(fit(task, costs, kind == "stop", aware))
        mean = {c: np.mean(np.asarray(v), axis=0) for c, v in got.items()}
        cells = []
        for kind in ("static", "stop"):
            (a0, c0), (a1, c1) = mean[(kind, False)], mean[(kind, True)]
            ratio[kind].append(float(c1 / c0))
            delta[kind].append(100 * float(a1 - a0))
            cells += [f"{a0:.4f} / {c0:.1f}", f"{a1:.4f} / {c1:.1f}", f"{c1 / c0:.2f}"]
        print(f"| {spec} | {task.n_classes} | {task.n_features} | {' | '.join(cells)} | {delta['stop'][-1]:+.2f} |",
              flush=True)
    print()
    for kind in ("static", "stop"):
        r, g = np.asarray(ratio[kind]), np.asarray(delta[kind])
        print(f"nb-{kind}: cost aware/plain median {np.median(r):.2f} (min {r.min():.2f}, max {r.max():.2f}), "
              f"cheaper by more than 10% on {int(np.sum(r < 0.9))} of {r.size} sets, dearer by more than 10% on "
              f"{int(np.sum(r > 1.1))}; accuracy aware - plain median {np.median(g):+.2f} points (min {g.min():+.2f}, "
              f"max {g.max():+.2f}); cheaper at accuracy no more than 1 point lower on "
              f"{int(np.sum((r < 1) & (g >= -1)))} of {r.size}")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
