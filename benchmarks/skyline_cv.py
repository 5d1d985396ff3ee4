"""The budget index's feature sets scored on the validation part against 5-fold cross-validation (round 58).

The index keeps, at every budget, the best-scored of the many feature sets it trained; on a validation part of a
few hundred rows the best of many scores is partly the best of their noise, so since round 58 the CLI
cross-validates the sets under 1,000 validation rows (docs/skyline.md, "Cross-validated scores"). This script
measures that choice: for each data set, split seed and base it trains the index as benchmarks/multiclass.py's
``skyline_rows`` does (greedy-acc over the whole forward selection, ``--patience 0``, uniform costs) twice, with
``--folds 1`` (the validation part) and ``--folds 5`` (the cross-validated sets, the models refitted on the train
and validation parts), and evaluates both with the C runtime on the test part at every budget 1 .. d: the mean
test accuracy over those budgets (the curve), and the best model's accuracy and features.

    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/skyline_cv.py            # digits seeds 0-2, segment 0-1 (minutes)
    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/skyline_cv.py --runs keel:satimage@0 --bases nb
    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/skyline_cv.py --quick    # wine, seed 0, NB (seconds)

A run is ``SPEC@SEEDS`` (split seeds, comma-separated). Not a figure block yet: one run's printout is the table
of docs/skyline.md (``--write-docs`` writes into blocks stated with this command, none today).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.skyline_index import forward_selection_options  # noqa: E402
from compiler import tasks  # noqa: E402
from compiler.kinds import kind_spec  # noqa: E402
from compiler.skyline.kind import skyline_eval  # noqa: E402

DEFAULT_RUNS = ("sklearn:digits@0,1,2", "keel:segment@0,1")
SCORING = (("validation", 1), ("cross-validated", 5))  # --folds of each index


def parse_run(text: str) -> tuple[str, list[int]]:
    """``SPEC@SEEDS`` -> (spec, seeds); a spec alone means seed 0."""
    spec, _, seeds = text.rpartition("@") if "@" in text else (text, "", "0")
    try:
        values = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seeds after @ must be comma-separated integers") from None
    if not spec or not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected SPEC@SEEDS, e.g. sklearn:digits@0,1,2")
    return spec, values


def index_curve(task: Any, base: str, folds: int) -> dict[str, Any]:
    """The index's test accuracy at every budget 1 .. d and its best model's (``frugalml eval --budget-sweep``'s
    report: the C runtime, float32; with uniform costs a model's cost is its feature count)."""
    d = int(task.n_features)
    opts = {**forward_selection_options(d, base), "folds": folds}
    model = kind_spec("skyline").train("skyline", task, opts, None)
    rep = skyline_eval(model, task.data.X[task.test], task.y[task.test], budget=float("inf"),
                       sweep=list(range(1, d + 1)))
    return {"curve": float(np.mean([c["accuracy"] for c in rep["budget_sweep"]])), "best_acc": rep["accuracy"],
            "best_features": rep["mean_cost"], "val_rows": int(task.validation.size)}


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """How often the cross-validated index's curve and best model beat the validation one's."""
    n = len(rows)
    up = [r["cross-validated"]["curve"] - r["validation"]["curve"] for r in rows]
    best = sum(r["cross-validated"]["best_acc"] > r["validation"]["best_acc"] for r in rows)
    return [f"curve higher cross-validated on {sum(u > 0 for u in up)} of {n} runs "
            f"(by {100 * min(up):+.2f} .. {100 * max(up):+.2f} points); best model more accurate on {best} of {n}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", nargs="+", type=parse_run, default=None, metavar="SPEC@SEEDS",
                    help=f"data sets and split seeds (default: {' '.join(DEFAULT_RUNS)})")
    ap.add_argument("--bases", default="nb,linear", help="comma-separated skyline bases (default nb,linear)")
    ap.add_argument("--quick", action="store_true", help="sklearn:wine, seed 0, NB only (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    runs = args.runs or [parse_run(r) for r in DEFAULT_RUNS]
    bases = [b.strip() for b in args.bases.split(",") if b.strip()]
    if args.quick:
        runs, bases = [("sklearn:wine", [0])], ["nb"]
    print("| set, seed | base | validation rows | mean test accuracy over budgets 1 .. d: validation / cross-validated "
          "| best model: validation / cross-validated |")
    print("|---|---|---:|---|---|")
    rows = []
    for spec, seeds in runs:
        for seed in seeds:
            task = tasks.prepare(spec, seed=seed)
            for base in bases:
                r = {name: index_curve(task, base, folds) for name, folds in SCORING}
                v, c = r["validation"], r["cross-validated"]
                print(f"| {spec}, {seed} | {base} | {v['val_rows']} | {v['curve']:.4f} / {c['curve']:.4f} | "
                      f"{v['best_acc']:.4f} / {v['best_features']:.0f} features, {c['best_acc']:.4f} / "
                      f"{c['best_features']:.0f} |", flush=True)
                rows.append(r)
    print()
    for line in summary(rows):
        print(line)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
