"""CSCC (`train cascade`, defaults) against Greedy Miser lambda = 0 (`train miser --lambda 0`) on KEEL sets
with Yahoo-like feature costs, as the CLI trains and evaluates them (issue 12's done-when).

For every set and seed: the CLI's 60/20/20 split (``--seed``), a cost per feature drawn from
{1, 5, 10, 20, 50, 100, 150, 200} with ``np.random.default_rng(0)`` (the ``--costs`` file), both models
trained by the CLI's trainers in-process (``kind_spec(kind).train``: same code as ``frugalml train``) and
scored on the test part by the numpy reference of the runtime (equal to the C runtime and to
``frugalml eval --json``: ``accuracy``, ``mean_cost``). Multi-class sets: last label vs the rest
(``--positive``).

    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/cscc_keel.py [--quick] [--sets pima,wdbc] [--seeds 0,1,2]

The default full run takes the ten small sets (FULL_SETS, minutes); ``--sets`` with ALL_SETS adds texture,
banana, phoneme, magic, spambase, ring and twonorm (each run of magic or ring trains for minutes).

Met = CSCC test accuracy within 1 point of miser lambda = 0 (>= acc - 0.01) at a lower mean cost.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.tree_peers import keel_task  # noqa: E402
from compiler.kinds import kind_spec  # noqa: E402

ALL_SETS = ("pima,wdbc,australian,texture,banana,phoneme,magic,spambase,ring,twonorm,titanic,heart,"
            "ionosphere,bupa,sonar,mammographic,wisconsin")
# The default full run: the small sets (minutes); ALL_SETS (the larger ones take up to ten minutes a run each).
FULL_SETS = "pima,wdbc,australian,titanic,heart,ionosphere,bupa,sonar,mammographic,wisconsin"
QUICK_SETS = "pima"


def run(name: str, seed: int, cascade_opts: dict | None = None) -> dict:
    task, costs = keel_task(name, seed)
    X = task.data.X.astype(np.float32)
    Xte, yte = X[task.test], task.y[task.test]
    out = {"data": name, "seed": seed, "n_val": int(task.validation.size), "n_test": int(task.test.size)}
    for kind, opts in (("miser", {"lambda": 0.0}), ("cascade", dict(cascade_opts or {}))):
        t0 = time.perf_counter()
        model = kind_spec(kind).train(kind, task, opts, costs)
        p = model.tables.predict_reference(Xte)
        out[kind] = {"acc": float(np.mean(p.label == yte)), "cost": float(np.mean(p.cost)),
                     "exits": np.bincount(p.stage.astype(np.int64), minlength=model.tables.n_stages).tolist(),
                     "val_acc": float(model.meta["training"]["validation_accuracy"]),
                     "val_cost": float(model.meta["training"]["validation_mean_cost"]),
                     "seconds": time.perf_counter() - t0}
    m, c = out["miser"], out["cascade"]
    out["delta"] = 100.0 * (c["acc"] - m["acc"])
    out["ratio"] = c["cost"] / m["cost"] if m["cost"] > 0 else float("inf")
    out["met"] = c["acc"] >= m["acc"] - 0.01 - 1e-12 and c["cost"] < m["cost"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=None,
                    help=f"KEEL sets (default {FULL_SETS}; --quick: {QUICK_SETS}; all: {ALL_SETS})")
    ap.add_argument("--seeds", default=None, help="split seeds (default 0,1,2; --quick: 0)")
    ap.add_argument("--quick", action="store_true", help="one small set, one seed (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    args.sets = args.sets or (QUICK_SETS if args.quick else FULL_SETS)
    args.seeds = args.seeds or ("0" if args.quick else "0,1,2")
    rows = []
    print("| data | seed | val/test rows | miser lambda=0 acc / cost | CSCC acc / cost | CSCC test exits | "
          "delta (points) | cost ratio | met |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            r = run(name, seed)
            rows.append(r)
            m, c = r["miser"], r["cascade"]
            print(f"| {name} | {seed} | {r['n_val']}/{r['n_test']} | {m['acc']:.4f} / {m['cost']:.1f} | "
                  f"{c['acc']:.4f} / {c['cost']:.1f} | {c['exits']} | {r['delta']:+.2f} | {r['ratio']:.2f} | "
                  f"{'yes' if r['met'] else 'no'} |", flush=True)
    met = sum(r["met"] for r in rows)
    within = sum(r["delta"] >= -1.0 - 1e-9 for r in rows)
    cheaper = sum(r["ratio"] < 1.0 for r in rows)
    print(f"\nmet {met}/{len(rows)}; within 1 point {within}/{len(rows)}; cheaper {cheaper}/{len(rows)}; "
          f"mean delta {np.mean([r['delta'] for r in rows]):+.2f} points, mean cost ratio "
          f"{np.mean([r['ratio'] for r in rows]):.2f}")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
