"""K-class kinds side by side with their scikit-learn counterparts of the same shape (issue 19's
acceptance figures; not a test). On each bundled K-class set, the same 60/20/20 split (--seed) as
`frugalml train`; frugalml models are evaluated by the C runtime (float32) on the test part, the
scikit-learn models fit on the train part.

    .venv/bin/python benchmarks/multiclass.py [--data sklearn:digits,sklearn:wine] [--seed 0] [--trees 100]

Rows:
- nb-static (all features: the unbudgeted NB) vs CategoricalNB on the same bins (one-hot of the
  mean-std bins) and GaussianNB on the raw inputs;
- nb-static at its validation budget and nb-stop: mean features read (cost) and accuracy;
- miser lambda = 0 vs GradientBoostingClassifier with the same trees per class, depth and step;
- miser at --lambda 1, miser --sweep (the cheapest lambda within 0.01 of lambda = 0 on validation) and
  the --early-exit-every 10 cascade over the lambda = 0 ensemble: mean cost (features read) against
  miser lambda = 0;
- skyline (base nb, greedy-acc over the whole forward selection) with no budget and at budgets d / 2, d / 4;
- gated (gated_rows): f0 alone (adapt-lin at --pfull 1, every input to f0) vs scikit-learn's
  RandomForest of f0's shape; adapt-lin and l1-gate at --pfull 0.3 (K-class f1, binary gate);
- cstc (cstc_rows: binary routers, K class scorers per leaf) at lambda = 0 (no cost term, the unbudgeted
  form) vs scikit-learn's RidgeClassifier (one leaf's shape: K one-vs-rest squared-loss linear scorers on
  all features), then at the default lambda 1.5 and at lambda 3: mean features read.

Then, per data set, the peers' table (benchmarks/mc/peers_k.py): emlearn RandomForest and GaussianNB in C,
LightGBM multiclass (plain and CEGB), scikit-learn GradientBoosting, beside frugalml nb-stop and miser
lambda = 0 in C: accuracy, macro-F1, features read, x86 and Cortex-M instructions per prediction, table
bytes (--no-peers skips it; --quick runs it without the peers' venv installs and the Cortex-M counts).
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from compiler import tasks  # noqa: E402
from compiler.kinds import load_kind_modules  # noqa: E402
from pyruntime.evaluators import c_evaluator  # noqa: E402


def frugalml_row(task: Any, kind: str, opts: dict[str, Any]) -> dict[str, float]:
    model = load_kind_modules()[kind].train(kind, task, opts, None)
    X, y = task.data.X[task.test], task.y[task.test]
    pred = c_evaluator(model, "float32").predict(X)
    return {"accuracy": float(np.mean(pred.label == y)), "features": float(np.mean(pred.n_read)),
            "macro_f1": tasks.macro_f1(y, pred.label, task.n_classes)}


def sklearn_row(est: Any, task: Any, transform: Any = None) -> dict[str, float]:
    X = task.data.X if transform is None else transform(task.data.X)
    est.fit(X[task.train], task.y[task.train])
    pred = est.predict(X[task.test])
    y = task.y[task.test]
    return {"accuracy": float(np.mean(pred == y)), "features": float(task.n_features),
            "macro_f1": tasks.macro_f1(y, pred, task.n_classes)}


def binned(bins: Any, X: np.ndarray) -> np.ndarray:
    """The NB kinds' bins of X as category codes (CategoricalNB's input)."""
    return bins.transform(X).astype(np.int64)


def skyline_section(task: Any) -> list[tuple[str, dict[str, float]]]:
    """The skyline rows (benchmarks/mc/skyline_rows.py): no budget, budgets d / 2 and d / 4."""
    from benchmarks.mc.skyline_rows import skyline_rows  # noqa: PLC0415

    return skyline_rows(task)


def peers_section(spec: str, task: Any, args: argparse.Namespace) -> None:
    """The peers' table of one data set (benchmarks/mc/peers_k.py)."""
    from benchmarks.mc.peers_k import peer_table, print_peer_table  # noqa: PLC0415

    print_peer_table(spec, peer_table(task, args.seed, args.trees, args.quick))
def gated_rows(task: Any, seed: int) -> list[tuple[str, dict[str, float]]]:
    """The gated kinds' rows (issue 19): the unbudgeted form (f0 answers every input) beside its forest,
    then the budgeted adapt-lin and l1-gate (f1 K linear scorers; features = mean features read)."""
    from sklearn.ensemble import RandomForestClassifier  # noqa: PLC0415

    return [
        ("adapt-lin --pfull 1 (f0 = rf answers all)", frugalml_row(task, "adapt-lin", {"pfull": 1.0})),
        ("sklearn RandomForest, 100 trees (f0's shape)",
         sklearn_row(RandomForestClassifier(n_estimators=100, random_state=seed), task)),
        ("adapt-lin --pfull 0.3", frugalml_row(task, "adapt-lin", {"pfull": 0.3})),
        ("l1-gate --pfull 0.3", frugalml_row(task, "l1-gate", {"pfull": 0.3})),
    ]


def cstc_rows(task: Any) -> list[tuple[str, dict[str, float]]]:
    """The K-class CSTC rows (depth 3): unbudgeted (lambda 0) beside RidgeClassifier, then budgeted."""
    from sklearn.linear_model import RidgeClassifier  # noqa: PLC0415

    return [
        ("cstc lambda=0 (no cost term), depth 3", frugalml_row(task, "cstc", {"lambda": 0.0})),
        ("sklearn RidgeClassifier (one leaf's shape, all features)", sklearn_row(RidgeClassifier(), task)),
        ("cstc lambda=1.5 (default)", frugalml_row(task, "cstc", {"lambda": 1.5})),
        ("cstc lambda=3", frugalml_row(task, "cstc", {"lambda": 3.0})),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="comma-separated DATA (default sklearn:digits,sklearn:wine; "
                    "--quick: sklearn:wine)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trees", type=int, default=None, help="iterations (default 100; --quick: 10)")
    ap.add_argument("--quick", action="store_true", help="the same table on wine with 10 iterations (seconds)")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers' table")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    args.data = args.data or ("sklearn:wine" if args.quick else "sklearn:digits,sklearn:wine")
    args.trees = args.trees or (10 if args.quick else 100)
    from sklearn.ensemble import GradientBoostingClassifier  # noqa: PLC0415
    from sklearn.naive_bayes import CategoricalNB, GaussianNB  # noqa: PLC0415

    from compiler.nb.discretize import fit_bins  # noqa: PLC0415

    for spec in args.data.split(","):
        task = tasks.prepare(spec, seed=args.seed)
        bins = fit_bins(task.data.X[task.train])
        n_bins = [bins.n_bins(j) for j in range(task.n_features)]
        d = task.n_features
        rows: list[tuple[str, dict[str, float]]] = [
            ("nb-static, all features", frugalml_row(task, "nb-static", {"budget": d})),
            ("sklearn CategoricalNB, same bins",
             sklearn_row(CategoricalNB(min_categories=n_bins), task, partial(binned, bins))),
            ("sklearn GaussianNB, raw inputs", sklearn_row(GaussianNB(), task)),
            ("nb-static, validation budget", frugalml_row(task, "nb-static", {})),
            ("nb-stop, validation budget", frugalml_row(task, "nb-stop", {})),
            (f"miser lambda=0, {args.trees} iterations x K", frugalml_row(task, "miser",
                                                                         {"lambda": 0.0, "trees": args.trees})),
            (f"sklearn GradientBoosting, {args.trees} x K, depth 3, step 0.1",
             sklearn_row(GradientBoostingClassifier(n_estimators=args.trees, max_depth=3, learning_rate=0.1,
                                                    random_state=args.seed), task)),
            ("miser lambda=1", frugalml_row(task, "miser", {"lambda": 1.0, "trees": args.trees})),
            ("miser --sweep (cheapest within 0.01 of lambda=0 on validation)",
             frugalml_row(task, "miser", {"sweep": True, "trees": args.trees})),
            ("cascade --early-exit-every 10 (lambda 0)",
             frugalml_row(task, "cascade", {"early_exit_every": 10, "trees": args.trees, "lambda": 0.0})),
        ]
        rows += skyline_section(task)
        rows += gated_rows(task, args.seed)
        rows += cstc_rows(task)
        print(f"\n{spec}: {task.n_classes} classes, {d} features, {task.test.size} test rows (seed {args.seed})")
        print(f"{'model':<64} {'accuracy':>9} {'macro-F1':>9} {'features':>9}")
        for name, r in rows:
            print(f"{name:<64} {r['accuracy']:>9.4f} {r['macro_f1']:>9.4f} {r['features']:>9.2f}")
        if not args.no_peers:
            peers_section(spec, task, args)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
