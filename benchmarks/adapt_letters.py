"""ADAPT-GBRT on Letters A-M vs N-Z (Nan & Saligrama, NIPS 2017, Table 1 / Figure 5 set-up).

keel:letter (20,000 rows, 16 features, uniform cost 1), split 12,000 train / 4,000 validation / 4,000 test
(pyruntime.data.Split, seed 0) as in the paper's Table 1; f0 = random forest (the paper's "Adapt_Gbrt RF").

Part 1 (does the gate follow P_full?): one model per P_full at the given gamma; prints the share of
training and test inputs sent to f0, mean sigma(g) and mean q on the training rows, test accuracy,
mean test cost and the cost reduction against f0 alone.
Part 2 (--sweep): the P_full x gamma grid, keeps the cheapest model within 1 point (absolute) of f0's
*validation* accuracy and reports it on the test rows (the paper: about 31% lower cost on Letters
within 1% of the top accuracy).

    .venv/bin/python benchmarks/adapt_letters.py [--gamma 0.1] [--trees 50] [--sweep] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier  # noqa: E402
from compiler.trees.cost_tree import ir_staged_scores  # noqa: E402
from pyruntime.data import Split, load_dataset  # noqa: E402

P_GRID = (0.1, 0.2, 0.3, 0.5, 0.6, 0.65, 0.7)  # the CLI sweep default (compiler.gated.kind.DEFAULT_P_GRID)
GAMMA_GRID = (0.01, 0.03, 0.1, 0.3)


def load_letters(seed: int = 0, max_rows: int | None = None) -> tuple[np.ndarray, ...]:
    d = load_dataset("keel:letter")
    y = (np.asarray(d.y).astype(str) > "M").astype(np.int64)  # A-M -> 0, N-Z -> 1
    X = np.asarray(d.X, dtype=np.float32)
    if max_rows is not None and max_rows < y.size:  # --quick: a random subset (seeded)
        keep = np.sort(np.random.default_rng(seed).choice(y.size, max_rows, replace=False))
        X, y = X[keep], y[keep]
    tr, va, te = Split(seed=seed).indices(y)
    return X[tr], y[tr], X[va], y[va], X[te], y[te]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gamma", type=float, default=0.1, help="gamma of part 1 (the CLI default: 0.1)")
    ap.add_argument("--trees", type=positive_int, default=None,
                    help="boosting iterations (the CLI default: 50; --quick: 5)")
    ap.add_argument("--sweep", action="store_true", help="also run the P_full x gamma sweep (part 2)")
    ap.add_argument("--pfull-grid", default=None,
                    help=f"P_full values (comma-separated; default {','.join(f'{v:g}' for v in P_GRID)}; "
                         "--quick: 0.1,0.5)")
    ap.add_argument("--gamma-grid", default=None,
                    help=f"gamma values of the sweep (default {','.join(f'{v:g}' for v in GAMMA_GRID)}; "
                         "--quick: 0.1)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="extra AdaptGbrtClassifier parameter (python literal), e.g. --set xi=2")
    ap.add_argument("--quick", action="store_true", help="2,000 of the 20,000 rows, 5 trees, small grids (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    args.trees = args.trees or (5 if args.quick else 50)
    args.pfull_grid = args.pfull_grid or ("0.1,0.5" if args.quick else ",".join(f"{v:g}" for v in P_GRID))
    args.gamma_grid = args.gamma_grid or ("0.1" if args.quick else ",".join(f"{v:g}" for v in GAMMA_GRID))
    extra = {k: ast.literal_eval(v) for k, v in (s.split("=", 1) for s in args.set)}
    p_grid = tuple(float(v) for v in args.pfull_grid.split(","))
    gamma_grid = tuple(float(v) for v in args.gamma_grid.split(","))
    Xtr, ytr, Xva, yva, Xte, yte = load_letters(max_rows=2000 if args.quick else None)
    if args.quick:
        print(f"--quick: {Xtr.shape[0] + Xva.shape[0] + Xte.shape[0]} of the 20,000 rows")
    costs = np.ones(Xtr.shape[1])
    t0 = time.time()
    first = AdaptGbrtClassifier(hpc="rf", p_full=p_grid[0], gamma=args.gamma, n_trees=args.trees, costs=costs,
                                **extra).fit(Xtr, ytr)
    f0, p0 = first.f0_, first.f0_proba_
    acc0_va = float(np.mean(f0.predict(Xva) == yva))
    acc0 = float(np.mean(f0.predict(Xte) == yte))
    cost0 = first.hpc_cost(Xte)  # f0 alone as the runtime reads it: the features on each test row's paths
    print(f"f0 (random forest): test accuracy {acc0:.4f}, "
          f"validation accuracy {acc0_va:.4f}, mean test cost {cost0:.2f}")

    cache: dict[tuple[float, float], AdaptGbrtClassifier] = {(p_grid[0], args.gamma): first}

    def fit(p: float, g: float) -> AdaptGbrtClassifier:  # part 2 reuses part 1's models
        if (p, g) not in cache:
            cache[p, g] = AdaptGbrtClassifier(hpc=f0, p_full=p, gamma=g, n_trees=args.trees, costs=costs,
                                              **extra).fit(Xtr, ytr, f0_proba=p0)
        return cache[p, g]

    print(f"\nPart 1: gamma {args.gamma:g}, {args.trees} trees {extra or ''}")
    print(f"{'P_full':>6} {'to f0 tr':>8} {'to f0 te':>8} {'mean σ(g)':>9} {'mean q':>7} {'test acc':>8} "
          f"{'cost':>6} {'vs f0':>7}")
    for p in p_grid:
        m = fit(p, args.gamma)
        G = ir_staged_scores(m.gate_ir_, Xtr)[0][:, 0].astype(np.float64)
        acc = float(np.mean(m.predict(Xte) == yte))
        c = m.mean_cost(Xte)
        print(f"{p:>6g} {m.train_route_fraction_:>8.3f} {np.mean(m.route(Xte)):>8.3f} "
              f"{np.mean(1 / (1 + np.exp(-G))):>9.3f} {np.mean(m.q_):>7.3f} {acc:>8.4f} {c:>6.2f} "
              f"{100 * (1 - c / cost0):>6.1f}%")
    if args.sweep:
        print(f"\nPart 2: sweep P_full {p_grid} x gamma {gamma_grid}; kept: cheapest within 0.01 of f0's "
              "validation accuracy")
        pts = []
        for p in p_grid:
            for g in gamma_grid:
                m = fit(p, g)
                pts.append((p, g, float(np.mean(m.predict(Xva) == yva)), m.mean_cost(Xva), m))
        ok = [pt for pt in pts if pt[2] >= acc0_va - 0.01]
        print(f"{'P_full':>6} {'gamma':>6} {'val acc':>8} {'val cost':>8}")
        for p, g, a, c, _ in sorted(pts, key=lambda t: t[3]):
            print(f"{p:>6g} {g:>6g} {a:>8.4f} {c:>8.2f}")
        if not ok:
            print("no model within 0.01 of f0's validation accuracy")
        else:
            p, g, _, _, m = min(ok, key=lambda t: (t[3], -t[2]))
            acc = float(np.mean(m.predict(Xte) == yte))
            c = m.mean_cost(Xte)
            print(f"kept P_full {p:g}, gamma {g:g}: test accuracy {acc:.4f} (f0 {acc0:.4f}, {acc - acc0:+.4f}), "
                  f"mean test cost {c:.2f} (f0 {cost0:g}): {100 * (1 - c / cost0):.1f}% lower, "
                  f"share to f0 {np.mean(m.route(Xte)):.3f}")
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
