"""Gated low-cost / high-cost models (kind ``gated``) side by side: ADAPT-GBRT, ADAPT-LIN, the L1
baseline and f0 alone, uniform feature costs.

For every data set: each trainer runs its --sweep (one shared f0 per trainer, the CLI's code path
compiler.gated.kind.train_gated), keeps the cheapest model within 1% (absolute) of f0's validation
accuracy, and is then measured on the held-out test part with the C runtime: accuracy, mean cost
(distinct features read), share sent to f0, cost reduction vs f0 alone, and C ns per prediction of
the gated model vs f0 alone in the same run. Writes a PNG of the validation accuracy/cost curves.

    .venv/bin/python benchmarks/gated.py [--sets digits,letter,magic] [--plot gated.png] [--quick]

Data: sklearn:digits (positive class 8, one-vs-rest), keel:letter (A-M vs N-Z), keel:magic (g vs h).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures  # noqa: E402
from compiler.gated.kind import train_gated  # noqa: E402
from compiler.parallel import add_arguments  # noqa: E402
from compiler.tasks import Task  # noqa: E402
from pyruntime.data import Split, load_dataset  # noqa: E402
from pyruntime.gated.model import CGated, GatedModel  # noqa: E402
from pyruntime.linear import LinearScorer  # noqa: E402

SETS = {
    "digits": ("sklearn:digits", lambda y: (y.astype(str) == "8").astype(np.int64)),
    "letter": ("keel:letter", lambda y: (np.asarray(y).astype(str) > "M").astype(np.int64)),
    "magic": ("keel:magic", lambda y: (np.asarray(y).astype(str) == "h").astype(np.int64)),
}
GRIDS = {
    "adapt-gbrt": {"pfull_grid": "0.1,0.2,0.3,0.5", "gamma_grid": "0.03,0.3,3"},
    "adapt-lin": {"pfull_grid": "0.1,0.2,0.3,0.5", "gamma_grid": "0.001,0.01,0.03"},
    "l1-gate": {"pfull_grid": "0.1,0.2,0.3,0.5", "gamma_grid": "0.001,0.01,0.03"},
}
QUICK_GAMMA = {"adapt-gbrt": "0.03", "adapt-lin": "0.01", "l1-gate": "0.01"}


def make_task(name: str, seed: int = 0, max_rows: int | None = None) -> Task:
    spec, to01 = SETS[name]
    data = load_dataset(spec)
    if max_rows is not None and data.X.shape[0] > max_rows:
        idx = np.random.default_rng(seed).choice(data.X.shape[0], max_rows, replace=False)
        data = dataclasses.replace(data, X=data.X[idx], y=np.asarray(data.y)[idx])
    y = to01(np.asarray(data.y))
    split = Split(seed=seed)
    tr, va, te = split.indices(y)
    return Task(data, y, ["rest", "positive"], None, None, split, tr, va, te)


def f0_alone(m: GatedModel) -> GatedModel:
    """f0 behind a constant gate that reads nothing and sends every input to f0 (same C code path)."""
    const = LinearScorer(n_features=m.n_features, feature=[], weight=[], bias=1.0, decision_threshold=0.0)
    return GatedModel(n_features=m.n_features, gate=const, f1=const, f0=m.f0, gate_above="f0", costs=m.costs)


def measure(task: Task, trainer: str, trees: int, jobs: int | None = None,
            scheduler: str | None = None) -> dict[str, Any]:
    opts: dict[str, Any] = {"sweep": True, "tolerance": 0.01, **GRIDS[trainer], "jobs": jobs,
                            "scheduler": scheduler}
    if trainer == "adapt-gbrt":
        opts["trees"] = trees
    t0 = time.perf_counter()
    model = train_gated(trainer, task, opts, None)
    train_s = time.perf_counter() - t0
    m = model.tables
    X = task.data.X[task.test].astype(np.float32)
    y = task.y[task.test]
    g = CGated(m)
    p = g.predict(X)
    f0 = CGated(f0_alone(m))
    p0 = f0.predict(X)
    ns_g, ns_0 = g.ns_per_prediction(X, 0.3), f0.ns_per_prediction(X, 0.3)
    tr = model.meta["training"]
    return {
        "trainer": trainer, "train_s": train_s, "acc": float(np.mean(p.label == y)),
        "cost": float(np.mean(p.cost)), "to_f0": float(np.mean(p.stage == 1)),
        "f0_acc": float(np.mean(p0.label == y)), "f0_cost": float(np.mean(p0.cost)),
        "ns": ns_g, "f0_ns": ns_0, "curve": tr["sweep_curve"],
        # the curve's f0 point: cross-validated when the sweep was (fewer than 200 validation rows)
        "f0_val_acc": tr.get("hpc_cv_accuracy", tr["hpc_validation_accuracy"]),
        "f0_val_cost": tr.get("hpc_cv_mean_cost", tr["hpc_validation_mean_cost"]),
        "kept": (tr["pfull_chosen"], tr["gamma_chosen"]),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=None, help="data sets (default digits,letter,magic; --quick: digits)")
    ap.add_argument("--plot", default=None,
                    help="PNG of the curves (default benchmarks/gated.png; --quick: none; '' = none)")
    ap.add_argument("--trees", type=int, default=None, help="ADAPT-GBRT boosting iterations (default 60; --quick: 5)")
    ap.add_argument("--trainers", default="adapt-gbrt,adapt-lin,l1-gate")
    ap.add_argument("--pfull-grid", default=None, help="override every trainer's P grid (--quick: 0.3,0.5)")
    ap.add_argument("--max-rows", type=int, default=None, help="subsample every data set (--quick: 400)")
    ap.add_argument("--quick", action="store_true", help="digits, 400 rows, 5 trees, two P values, one gamma (seconds)")
    add_arguments(ap)
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    quick = {"sets": "digits", "plot": "", "trees": 5, "pfull_grid": "0.3,0.5", "max_rows": 400}
    full = {"sets": "digits,letter,magic", "plot": str(ROOT / "benchmarks" / "gated.png"), "trees": 60}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    results: dict[str, list[dict[str, Any]]] = {}
    print(f"{'data':<8} {'trainer':<11} {'acc':>6} {'f0 acc':>7} {'cost':>6} {'f0 cost':>8} {'reduct':>7} "
          f"{'to f0':>6} {'ns':>7} {'f0 ns':>7} {'train s':>8} kept(P,gamma)")
    for name in args.sets.split(","):
        try:
            task = make_task(name, max_rows=args.max_rows)
        except Exception as exc:  # noqa: BLE001 - a missing optional data set is skipped
            print(f"{name}: skipped ({exc})")
            continue
        results[name] = []
        for trainer in args.trainers.split(","):
            if args.pfull_grid:
                GRIDS[trainer]["pfull_grid"] = args.pfull_grid
            if args.quick:  # one gamma per trainer
                GRIDS[trainer]["gamma_grid"] = QUICK_GAMMA[trainer]
            r = measure(task, trainer, args.trees, args.jobs, args.scheduler)
            results[name].append(r)
            red = 1.0 - r["cost"] / r["f0_cost"] if r["f0_cost"] else 0.0
            print(f"{name:<8} {trainer:<11} {r['acc']:>6.4f} {r['f0_acc']:>7.4f} {r['cost']:>6.2f} "
                  f"{r['f0_cost']:>8.2f} {red:>7.1%} {r['to_f0']:>6.2f} {r['ns']:>7.0f} {r['f0_ns']:>7.0f} "
                  f"{r['train_s']:>8.1f} {r['kept']}", flush=True)
    if results and args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
        for ax, (name, rs) in zip(axes[0], results.items()):
            for r in rs:
                judged = "cv" if "cv_accuracy" in r["curve"][0] else "validation"
                pts = sorted((q[f"{judged}_cost"], q[f"{judged}_accuracy"]) for q in r["curve"])
                ax.plot([c for c, _ in pts], [a for _, a in pts], "o-", ms=3, label=r["trainer"])
            ax.plot([rs[0]["f0_val_cost"]], [rs[0]["f0_val_acc"]], "k*", ms=10, label="f0 alone")
            ax.set_title(f"{name} (validation)")
            ax.set_xlabel("mean feature cost")
            ax.set_ylabel("accuracy")
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        shown = Path(args.plot).resolve()
        print(f"wrote {shown.relative_to(ROOT) if ROOT in shown.parents else args.plot}")  # no home folder in docs
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
