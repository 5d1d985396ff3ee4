"""Cost/accuracy of Greedy Miser, plain stage-wise regression, early exit, CSCC and LightGBM CEGB.

Usage: .venv/bin/python benchmarks/miser_cascade.py [--seed 0] [--trees 300] [--quick] [--plot PNG]
       [--sets pima-yahoo,wdbc-yahoo]

Data sets (costs fixed by the seed):
- cancer-yahoo: scikit-learn breast_cancer, each feature a cost drawn from the
  Yahoo LTR cost set {1, 5, 10, 20, 50, 100, 150, 200} (two orders of magnitude);
- digits-yahoo: scikit-learn digits, "digit < 5" vs the rest, Yahoo costs;
- pima-yahoo, wdbc-yahoo: KEEL pima (768 rows, 8 features), wdbc (569 rows, 30 features), Yahoo costs
  drawn with a fresh generator of the seed (the costs of /tmp-style `feature,cost` files: seed 0);
- cheap-noisy: generated; 10 cheap (cost 1) noisy features and 10 expensive
  (cost 100) informative ones.
Each is split train/validation/test 60/20/20 (stratified). Costs are the summed
acquisition cost of the distinct features read per test input (tree_eval_cost 0).
Prints one table per data set and the cost ratio of the sweep's model
(cheapest within 1% of lambda = 0 on validation) against lambda = 0 on test.
Then, in the C runtime (pyruntime.trees.cascade.CCascade, fm_cascade.c) on the same
test inputs in one run: ns per prediction of the cascades (CSCC kept on
validation, early exit) against the full ensemble of the same trees without
exits, with the runtime's own mean cost and trees evaluated (the runtime's
labels and costs are checked against the estimators'). Writes a PNG of the
cost/accuracy curves (--plot, default miser_cascade.png).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures, peers  # noqa: E402
from benchmarks.common.tree_peers import YAHOO_COSTS, flat_lgbm_tree  # noqa: E402
from compiler.parallel import add_arguments, run_map  # noqa: E402
from compiler.trees.cascade import EarlyExitEnsemble  # noqa: E402
from compiler.trees.cost_tree import CostTree, ensemble_to_ir, ir_scores, ir_tree_features  # noqa: E402
from compiler.trees.cscc import CsccCascadeClassifier  # noqa: E402
from compiler.trees.miser import GreedyMiserClassifier  # noqa: E402
from pyruntime.trees.cascade import CCascade, TreeCascade  # noqa: E402

LAMBDAS = [0.0, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 1.0, 3.0, 10.0, 30.0]
CSCC_LAMBDAS = (0.1, 1.0, 10.0)  # xu2014's lambda, one per cascade: the grid the CLI default chooses from on validation


QUICK_SETS = "cancer-yahoo"


def datasets(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    out["cancer-yahoo"] = (X, y, rng.choice(YAHOO_COSTS, size=X.shape[1]))
    X, y = load_digits(return_X_y=True)
    out["digits-yahoo"] = (X, (y < 5).astype(int), rng.choice(YAHOO_COSTS, size=X.shape[1]))
    n = 6000
    yy = rng.integers(0, 2, size=n)
    s = 2.0 * yy - 1.0
    cheap = 0.4 * s[:, None] + rng.normal(size=(n, 10)) * 1.5
    w = rng.normal(size=(n, 10))
    expensive = np.column_stack([w[:, :5], s[:, None] * np.abs(w[:, 5:]) + 0.3 * rng.normal(size=(n, 5))])
    out["cheap-noisy"] = (np.column_stack([cheap, expensive]), yy, np.array([1.0] * 10 + [100.0] * 10))
    from pyruntime.data import load_dataset

    for keel in ("pima", "wdbc"):
        d = load_dataset(f"keel:{keel}")
        yk = np.asarray(d.y).astype(str)
        out[f"{keel}-yahoo"] = (np.asarray(d.X, dtype=np.float64), (yk == sorted(set(yk))[-1]).astype(int),
                                np.random.default_rng(seed).choice(YAHOO_COSTS, size=d.X.shape[1]))
    return out


def _lgbm_tree(root: dict) -> CostTree:
    """One LightGBM tree dump -> CostTree (float32-exact thresholds for float32 inputs: the largest float32
    not above the dumped threshold)."""
    feat, thr, left, right, val = flat_lgbm_tree(root)
    t32 = thr.astype(np.float32)
    t32 = np.where(t32.astype(np.float64) > thr, np.nextafter(t32, np.float32(-np.inf)), t32)
    return CostTree(feat.astype(np.int32), t32.astype(np.float32), left.astype(np.int32), right.astype(np.int32),
                    val.astype(np.float32).astype(np.float64))


def lgbm_to_ir(dump: dict, n_features: int, costs: np.ndarray) -> dict:
    """LightGBM binary model (booster_.dump_model()) -> IR, so that its per-input cost is counted like ours."""
    trees = [_lgbm_tree(info["tree_structure"]) for info in dump["tree_info"]]
    return ensemble_to_ir(trees, [0] * len(trees), np.zeros(1), n_features, costs, 0.0)


def lightgbm_peer(Xa: np.ndarray, ya: np.ndarray, Xv: np.ndarray, yv: np.ndarray, costs: np.ndarray, trees: int,
                  seed: int, grid: list[float], quick: bool) -> dict[str, dict] | None:
    """{tradeoff: dump_model()} of LightGBM CEGB fitted in the peers' venv, or None (note printed)."""
    py = peers.has("lightgbm", create=not quick)
    if py is None:
        print(peers.skipped("lightgbm"))
        return None
    with tempfile.TemporaryDirectory(prefix="fm_lgbm_") as tmp:
        data, out = Path(tmp) / "data.npz", Path(tmp) / "out.json"
        np.savez(data, Xa=Xa, ya=ya, Xv=Xv, yv=yv, costs=costs)
        subprocess.run([str(py), str(ROOT / "benchmarks" / "common" / "lightgbm_cegb.py"), str(data), str(out),
                        str(trees), str(seed), ",".join(f"{t:g}" for t in grid)], check=True)
        return json.loads(out.read_text())


def ir_cost(ir: dict, X: np.ndarray, costs: np.ndarray) -> np.ndarray:
    read = np.zeros(X.shape, dtype=bool)
    for r in ir_tree_features(ir, X):
        read |= r
    return read @ costs


def runtime_check(tables: TreeCascade, X: np.ndarray, d: dict) -> None:
    """The C runtime gives the estimator's labels, exits and features read on these inputs."""
    p = CCascade(tables).predict(X)
    if not (np.array_equal(p.label, d["label"]) and np.array_equal(p.stage, d["exit_stage"])
            and np.array_equal(p.n_read, d["features_read"])):
        raise SystemExit("error: the C runtime disagrees with the estimator")


def full_ensemble(tables: TreeCascade) -> TreeCascade:
    """The same trees as one stage without exits."""
    return TreeCascade(trees=tables.trees, stage_end=tables.stage_end[-1:], exit_upper=[np.inf],
                       exit_lower=[-np.inf])


def c_timing(label: str, tables: TreeCascade, X: np.ndarray, y: np.ndarray) -> list[tuple]:
    """(model, accuracy, mean cost, mean trees, ns/prediction) of a cascade and its full ensemble,
    timed alternately in one run on the same inputs (best of three each)."""
    out = []
    evs = [(label, CCascade(tables)), ("  same trees, no exits", CCascade(full_ensemble(tables)))]
    ns = {k: float("inf") for k, _ in evs}
    for _ in range(3):
        for k, ev in evs:
            ns[k] = min(ns[k], ev.ns_per_prediction(X, min_seconds=0.1))
    for k, ev in evs:
        p = ev.predict(X)
        out.append((k, float(np.mean(p.label == y)), float(np.mean(p.cost)),
                    float(np.mean(ev.model.trees_at(p.stage))), ns[k]))
    return out


def _fit_miser(Xa: np.ndarray, ya: np.ndarray, Xv: np.ndarray, yv: np.ndarray, costs: np.ndarray, trees: int,
               seed: int, lam: float) -> GreedyMiserClassifier:
    m = GreedyMiserClassifier(lam=lam, n_trees=trees, costs=costs, loss="logistic", random_state=seed)
    return m.fit(Xa, ya, eval_set=(Xv, yv))


def _fit_cscc(Xa: np.ndarray, ya: np.ndarray, Xv: np.ndarray, yv: np.ndarray, costs: np.ndarray, trees: int,
              seed: int, lam: float) -> CsccCascadeClassifier:
    c = CsccCascadeClassifier(n_stages=3, n_trees=trees, lam=lam, costs=costs, pool_lambdas=(0.0, 3.0, 30.0),
                              random_state=seed)  # the CLI's pool
    return c.fit(Xa, ya, eval_set=(Xv, yv))


def run(name: str, X: np.ndarray, y: np.ndarray, costs: np.ndarray, seed: int, trees: int,
        quick: bool, jobs: int | None = None, scheduler: str | None = None) -> dict:
    X = X.astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=0.25, random_state=seed, stratify=ytr)
    rows = []
    curves: dict[str, list[tuple[float, float]]] = {}

    def add(label: str, val_acc: float, acc: float, cost: float, extra: str = "", family: str = "") -> None:
        rows.append((label, val_acc, acc, cost, extra))
        if family:
            curves.setdefault(family, []).append((float(cost), float(acc)))

    t0 = time.time()
    misers = {}
    lams = LAMBDAS[::2] if quick else LAMBDAS
    fitted = run_map(partial(_fit_miser, Xa, ya, Xv, yv, costs, trees, seed), lams, jobs, scheduler,
                     desc=f"{name}: miser lambdas")
    for lam, m in zip(lams, fitted, strict=True):
        misers[lam] = m
        add(f"miser lambda={lam:g}" if lam else "stage-wise (lambda=0)", m.validation_accuracy_,
            m.score(Xte, yte), m.test_time_cost(Xte).mean(), f"trees={m.n_trees_}",
            "Greedy Miser (lambda grid)")
    ref = misers[0.0]
    add("stage-wise (lambda=0)", ref.validation_accuracy_, ref.score(Xte, yte), ref.test_time_cost(Xte).mean(),
        family="stage-wise regression (lambda=0)")
    rows.pop()
    ok = [m for m in misers.values() if m.validation_accuracy_ >= ref.validation_accuracy_ - 0.01]
    chosen = min(ok, key=lambda m: m.test_time_cost(Xv).mean())

    early = []
    for model in dict.fromkeys([ref, chosen]):
        ee = EarlyExitEnsemble(model, every=10).fit(Xv, yv)
        d = ee.predict_detailed(Xte)
        runtime_check(TreeCascade.from_ir(ee.to_tree_ensemble()), Xte, d)
        early.append(ee)
        add(f"early exit every 10 (lambda={model.lam:g})", np.nan, np.mean(d["label"] == yte),
            d["cost"].mean(), f"trees={d['trees_evaluated'].mean():.1f}", "early exit every 10")
    cascades = []
    grid = CSCC_LAMBDAS[:2] if quick else CSCC_LAMBDAS
    fitted_c = run_map(partial(_fit_cscc, Xa, ya, Xv, yv, costs, trees, seed), grid, jobs, scheduler,
                       desc=f"{name}: CSCC cascades")
    for lams, c in zip(grid, fitted_c, strict=True):
        d = c.predict_detailed(Xte)
        runtime_check(TreeCascade.from_ir(c.to_tree_ensemble()), Xte, d)
        dv = c.predict_detailed(Xv)
        cascades.append((c, float(np.mean(dv["label"] == yv)), float(dv["cost"].mean())))
        add(f"CSCC 3 stages lambda={lams:g}", cascades[-1][1], np.mean(d["label"] == yte), d["cost"].mean(),
            f"exits={c.exit_histogram(Xte).tolist()}", "CSCC (3 stages)")
    grid_l = [0.0, 0.01, 0.1] if quick else [0.0, 0.001, 0.01, 0.1, 1.0]
    lgbm = lightgbm_peer(Xa, ya, Xv, yv, costs, trees, seed, grid_l, quick)
    if lgbm is None:
        add("LightGBM CEGB (peer skipped, see the note)", np.nan, np.nan, np.nan)
    for tradeoff, dump in (lgbm or {}).items():
        ir = lgbm_to_ir(dump, X.shape[1], costs)
        s = ir_scores(ir, Xte)[:, 0]
        acc = float(np.mean((s > 0).astype(int) == yte))
        add(f"LightGBM CEGB tradeoff={tradeoff}", np.nan, acc, ir_cost(ir, Xte, costs).mean(),
            f"trees={ir['roots'].size}", "LightGBM CEGB")

    print(f"\n== {name}: n={len(y)}, d={X.shape[1]}, costs {costs.min():g}..{costs.max():g} "
          f"(sum {costs.sum():g}); {time.time() - t0:.1f} s")
    print(f"{'model':44s} {'val acc':>8s} {'test acc':>8s} {'mean cost':>10s}  notes")
    for label, va, acc, cost, extra in rows:
        vs = "" if np.isnan(va) else f"{va:.4f}"
        print(f"{label:44s} {vs:>8s} {acc:8.4f} {cost:10.2f}  {extra}")
    r_cost = ref.test_time_cost(Xte).mean()
    c_cost = chosen.test_time_cost(Xte).mean()
    r_acc, c_acc = ref.score(Xte, yte), chosen.score(Xte, yte)
    print(f"sweep choice lambda={chosen.lam:g}: test acc {c_acc:.4f} vs {r_acc:.4f} at lambda=0 "
          f"({100 * (c_acc - r_acc):+.2f} points); cost {c_cost:.2f} vs {r_cost:.2f} "
          f"= 1/{r_cost / max(c_cost, 1e-12):.1f}")

    best = [r for r in rows if np.isfinite(r[2]) and r[2] >= r_acc - 0.01]
    cheap = min(best, key=lambda r: r[3])
    print(f"cheapest model within 1 point of lambda=0 on test (hindsight, not a validation choice): {cheap[0]}, "
          f"test acc {cheap[2]:.4f}, cost {cheap[3]:.2f} = 1/{r_cost / max(cheap[3], 1e-12):.1f}")

    # C runtime: cascades vs the full ensemble of the same trees, same inputs, one run
    kept = max(cascades, key=lambda t: (t[1], -t[2]))[0]  # best validation accuracy, then cheapest
    timing = c_timing("CSCC (kept on validation)", TreeCascade.from_ir(kept.to_tree_ensemble()), Xte, yte)
    timing += c_timing("early exit every 10 (lambda=0)", TreeCascade.from_ir(early[0].to_tree_ensemble()),
                       Xte, yte)
    miser_c = [CCascade(TreeCascade.from_ir(m.to_tree_ensemble())) for m in (ref, chosen)]
    print(f"C runtime on the {len(yte)} test inputs (ns/prediction best of 3, timed in one run):")
    print(f"{'model':44s} {'test acc':>8s} {'mean cost':>10s} {'trees':>7s} {'ns/pred':>8s} {'speedup':>8s}")
    for i, (label, acc, cost, tr, ns) in enumerate(timing):
        base = timing[i + 1][4] if i % 2 == 0 else ns
        print(f"{label:44s} {acc:8.4f} {cost:10.2f} {tr:7.1f} {ns:8.1f} {base / ns:7.2f}x")
    ns_m = [ev.ns_per_prediction(Xte, min_seconds=0.1) for ev in miser_c]
    print(f"{'miser sweep choice vs lambda=0':44s} {'':8s} {'':10s} {'':7s} {ns_m[1]:8.1f} "
          f"{ns_m[0] / ns_m[1]:7.2f}x")
    return curves


def plot(results: dict[str, dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4.4))
    styles = {"Greedy Miser (lambda grid)": "o-", "stage-wise regression (lambda=0)": "k*",
              "early exit every 10": "s", "CSCC (3 stages)": "^", "LightGBM CEGB": "d--"}
    for ax, (name, curves) in zip(np.atleast_1d(axes), results.items(), strict=True):
        for family, pts in curves.items():
            pts = sorted(pts)
            ax.plot([max(c, 0.5) for c, _ in pts], [a for _, a in pts], styles.get(family, "o"), label=family,
                    markersize=9 if family.startswith("stage") else 5)
        ax.set_xscale("log")
        ax.set_xlabel("mean test-time feature cost per input (log)")
        ax.set_ylabel("test accuracy")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nwrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trees", type=int, default=None, help="boosting iterations (default 300; --quick: 20)")
    ap.add_argument("--quick", action="store_true",
                    help=f"fewer grid points, 20 trees, sets {QUICK_SETS}, no plot unless --plot (seconds)")
    ap.add_argument("--sets", default="", help="comma-separated data set names (default: all)")
    ap.add_argument("--plot", default=None, help="PNG of the cost/accuracy curves (default miser_cascade.png; "
                                                 "'' = none)")
    add_arguments(ap)
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    if args.trees is None:
        args.trees = 20 if args.quick else 300
    if args.plot is None:
        args.plot = "" if args.quick else "miser_cascade.png"
    if args.quick and not args.sets:
        args.sets = QUICK_SETS
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", message=".*eval_set.*")
    results = {}
    wanted = [v for v in args.sets.split(",") if v]
    for name, (X, y, costs) in datasets(args.seed).items():
        if wanted and name not in wanted:
            continue
        results[name] = run(name, X, y, costs, args.seed, args.trees, args.quick, args.jobs, args.scheduler)
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
