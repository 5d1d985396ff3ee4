"""Cost/accuracy of Greedy Miser, plain stage-wise regression, early exit, CSCC and LightGBM CEGB.

Usage: .venv/bin/python benchmarks/miser_cascade.py [--seed 0] [--trees 100] [--quick]

Data sets (costs fixed by the seed):
- cancer-yahoo: scikit-learn breast_cancer, each feature a cost drawn from the
  Yahoo LTR cost set {1, 5, 10, 20, 50, 100, 150, 200} (two orders of magnitude);
- digits-yahoo: scikit-learn digits, "digit < 5" vs the rest, Yahoo costs;
- cheap-noisy: generated; 10 cheap (cost 1) noisy features and 10 expensive
  (cost 100) informative ones.
Each is split train/validation/test 60/20/20 (stratified). Costs are the summed
acquisition cost of the distinct features read per test input (tree_eval_cost 0).
Prints one table per data set and the cost ratio of the sweep's model
(cheapest within 1% of lambda = 0 on validation) against lambda = 0 on test.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compiler.cascade import CsccCascadeClassifier, EarlyExitEnsemble  # noqa: E402
from compiler.cost_tree import CostTree, ensemble_to_ir, ir_scores, ir_tree_features  # noqa: E402
from compiler.miser import GreedyMiserClassifier  # noqa: E402

YAHOO_COSTS = np.array([1, 5, 10, 20, 50, 100, 150, 200], dtype=float)
LAMBDAS = [0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]


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
    return out


def _lgbm_tree(root: dict) -> CostTree:
    """One LightGBM tree dump -> CostTree (float32-exact thresholds for float32 inputs)."""
    feat: list[int] = []
    thr: list[np.float32] = []
    left: list[int] = []
    right: list[int] = []
    val: list[float] = []
    stack = [(root, -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        i = len(feat)
        if parent >= 0:
            (right if is_right else left)[parent] = i
        feat.append(-1)
        thr.append(np.float32(0.0))
        left.append(-1)
        right.append(-1)
        val.append(0.0)
        if "split_feature" in node:
            if node.get("decision_type", "<=") != "<=":
                raise ValueError("unsupported LightGBM split")
            feat[i] = int(node["split_feature"])
            t = np.float32(node["threshold"])
            if float(t) > float(node["threshold"]):
                t = np.nextafter(t, np.float32(-np.inf))
            thr[i] = t
            stack.append((node["right_child"], i, True))
            stack.append((node["left_child"], i, False))
        else:
            val[i] = float(np.float32(node["leaf_value"]))
    return CostTree(np.array(feat, np.int32), np.array(thr, np.float32), np.array(left, np.int32),
                    np.array(right, np.int32), np.array(val))


def lgbm_to_ir(model: object, n_features: int, costs: np.ndarray) -> dict:
    """LightGBM binary model -> IR, so that its per-input cost is counted like ours."""
    trees = [_lgbm_tree(info["tree_structure"]) for info in model.booster_.dump_model()["tree_info"]]
    return ensemble_to_ir(trees, [0] * len(trees), np.zeros(1), n_features, costs, 0.0)


def ir_cost(ir: dict, X: np.ndarray, costs: np.ndarray) -> np.ndarray:
    read = np.zeros(X.shape, dtype=bool)
    for r in ir_tree_features(ir, X):
        read |= r
    return read @ costs


def run(name: str, X: np.ndarray, y: np.ndarray, costs: np.ndarray, seed: int, trees: int,
        quick: bool) -> None:
    X = X.astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=0.25, random_state=seed, stratify=ytr)
    rows = []

    def add(label: str, val_acc: float, acc: float, cost: float, extra: str = "") -> None:
        rows.append((label, val_acc, acc, cost, extra))

    t0 = time.time()
    misers = {}
    for lam in (LAMBDAS[::2] if quick else LAMBDAS):
        m = GreedyMiserClassifier(lambda_=lam, n_trees=trees, costs=costs, loss="logistic", random_state=seed)
        m.fit(Xa, ya, eval_set=(Xv, yv))
        misers[lam] = m
        add(f"miser lambda={lam:g}" if lam else "stage-wise (lambda=0)", m.validation_accuracy_,
            m.score(Xte, yte), m.test_time_cost(Xte).mean(), f"trees={m.n_trees_}")
    ref = misers[0.0]
    ok = [m for m in misers.values() if m.validation_accuracy_ >= ref.validation_accuracy_ - 0.01]
    chosen = min(ok, key=lambda m: m.test_time_cost(Xv).mean())

    ee = EarlyExitEnsemble(ref, every=10).fit(Xv, yv)
    d = ee.predict_detailed(Xte)
    add("early exit every 10 (lambda=0)", np.nan, np.mean(d["label"] == yte), d["cost"].mean(),
        f"trees={d['trees_evaluated'].mean():.1f}")
    if chosen is ref:
        chosen_ee = None
    else:
        chosen_ee = chosen
    for model in [chosen_ee] if chosen_ee is not None else []:
        ee2 = EarlyExitEnsemble(model, every=10).fit(Xv, yv)
        d = ee2.predict_detailed(Xte)
        add(f"early exit every 10 (lambda={chosen.lambda_:g})", np.nan, np.mean(d["label"] == yte),
            d["cost"].mean(), f"trees={d['trees_evaluated'].mean():.1f}")
    for lams in ([30.0, 3.0, 0.3], [100.0, 10.0, 1.0]):
        c = CsccCascadeClassifier(n_stages=3, n_trees=[trees // 4, trees // 4, trees // 2], lambdas=lams,
                                  costs=costs, random_state=seed)
        c.fit(Xa, ya, eval_set=(Xv, yv))
        d = c.predict_detailed(Xte)
        add(f"CSCC 3 stages lambdas={lams}", np.nan, np.mean(d["label"] == yte), d["cost"].mean(),
            f"exits={c.exit_histogram(Xte).tolist()}")
    try:
        import lightgbm as lgb

        for tradeoff in ([0.0, 0.01, 0.1] if quick else [0.0, 0.001, 0.01, 0.1, 1.0]):
            g = lgb.LGBMClassifier(n_estimators=trees, num_leaves=8, max_depth=3, learning_rate=0.1,
                                   cegb_tradeoff=tradeoff, cegb_penalty_feature_coupled=list(costs),
                                   random_state=seed, verbose=-1, n_jobs=1)
            g.fit(Xa, ya, eval_set=[(Xv, yv)], callbacks=[lgb.early_stopping(20, verbose=False)])
            ir = lgbm_to_ir(g, X.shape[1], costs)
            s = ir_scores(ir, Xte)[:, 0]
            acc = float(np.mean((s > 0).astype(int) == yte))
            add(f"LightGBM CEGB tradeoff={tradeoff:g}", np.nan, acc, ir_cost(ir, Xte, costs).mean(),
                f"trees={ir['roots'].size}")
    except ImportError:
        add("LightGBM CEGB (lightgbm not installed)", np.nan, np.nan, np.nan)

    print(f"\n== {name}: n={len(y)}, d={X.shape[1]}, costs {costs.min():g}..{costs.max():g} "
          f"(sum {costs.sum():g}); {time.time() - t0:.1f} s")
    print(f"{'model':44s} {'val acc':>8s} {'test acc':>8s} {'mean cost':>10s}  notes")
    for label, va, acc, cost, extra in rows:
        vs = "" if np.isnan(va) else f"{va:.4f}"
        print(f"{label:44s} {vs:>8s} {acc:8.4f} {cost:10.2f}  {extra}")
    r_cost = ref.test_time_cost(Xte).mean()
    c_cost = chosen.test_time_cost(Xte).mean()
    print(f"sweep choice lambda={chosen.lambda_:g}: test acc {chosen.score(Xte, yte):.4f} vs "
          f"{ref.score(Xte, yte):.4f} at lambda=0; cost {c_cost:.2f} vs {r_cost:.2f} "
          f"= 1/{r_cost / max(c_cost, 1e-12):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="fewer grid points")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", message=".*eval_set.*")
    for name, (X, y, costs) in datasets(args.seed).items():
        run(name, X, y, costs, args.seed, args.trees, args.quick)


if __name__ == "__main__":
    main()
