"""Accuracy and mean test-time cost of CSTC against Greedy Miser.

Usage: .venv/bin/python benchmarks/cstc.py [--seed 0] [--quick]

Data sets (split train/validation/test 60/20/20, stratified by the seed):
- quadrants: the synthetic task of Xu et al. (JMLR 2014) section 6.1 (compiler.synthetic.make_cstc_quadrants,
  2000 rows; cheap sign features cost 1, the four label-carrying features cost 10);
- cancer-yahoo: scikit-learn breast_cancer, each feature a cost drawn from the Yahoo LTR cost set
  {1, 5, 10, 20, 50, 100, 150, 200} (as benchmarks/miser_cascade.py).
Rows: Greedy Miser at lambda = 0 (plain stage-wise regression) and a lambda sweep, CSTC at
lambda = 0 and a lambda sweep. Cost is the summed cost of the distinct features read per test input,
measured by the C runtime on the compiled tables (pyruntime.cstc.model.CCSTC / pyruntime.trees.cascade.CCascade).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.tree_peers import YAHOO_COSTS  # noqa: E402
from compiler.cstc.train import CSTCClassifier  # noqa: E402
from compiler.synthetic import CSTC_COSTS, make_cstc_quadrants  # noqa: E402
from compiler.trees.miser import GreedyMiserClassifier  # noqa: E402
from pyruntime.cstc.model import CCSTC, CSTCModel  # noqa: E402
from pyruntime.trees.cascade import CCascade, TreeCascade  # noqa: E402


def datasets(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    X, y = make_cstc_quadrants(2000, random_state=seed)
    out = {"quadrants": (X, y, CSTC_COSTS.copy())}
    X, y = load_breast_cancer(return_X_y=True)
    out["cancer-yahoo"] = (X, y, rng.choice(YAHOO_COSTS, size=X.shape[1]))
    return out


def split(X: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, ...]:
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    Xtr, Xva, ytr, yva = train_test_split(Xtr, ytr, test_size=0.25, stratify=ytr, random_state=seed)
    return tuple(a.astype(np.float32) for a in (Xtr, Xva, Xte)) + (ytr, yva, yte)


def run_cstc(lam: float, parts: tuple[np.ndarray, ...], costs: np.ndarray, seed: int,
             quick: bool = False) -> tuple[float, float, float]:
    Xtr, Xva, Xte, ytr, yva, yte = parts
    fast = {"depth": 2, "max_iter": 2, "inner_iter": 2} if quick else {}
    m = CSTCClassifier(lam=lam, costs=costs, random_state=seed, **fast).fit(Xtr, ytr, eval_set=(Xva, yva))
    t = CSTCModel(**m.to_ir(), input_absmax=float(np.abs(Xtr).max()))
    va = CCSTC(t).predict(Xva)
    p = CCSTC(t).predict(Xte)
    return float(np.mean(va.label == yva)), float(np.mean(p.label == yte)), float(np.mean(p.cost))


def run_miser(lam: float, parts: tuple[np.ndarray, ...], costs: np.ndarray, seed: int,
              trees: int) -> tuple[float, float, float]:
    Xtr, Xva, Xte, ytr, yva, yte = parts
    m = GreedyMiserClassifier(lam=lam, n_trees=trees, max_depth=3, costs=costs, random_state=seed)
    m.fit(Xtr, ytr, eval_set=(Xva, yva))
    t = TreeCascade.from_ir(m.to_tree_ensemble())
    va = CCascade(t).predict(Xva)
    p = CCascade(t).predict(Xte)
    return float(np.mean(va.label == yva)), float(np.mean(p.label == yte)), float(np.mean(p.cost))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="fewer lambdas and trees, CSTC depth 2 with 2 iterations (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    cstc_grid = [0.0, 0.3, 1.0, 1.5, 3.0] if not args.quick else [0.0, 1.5]
    miser_grid = [0.0, 0.1, 0.3, 1.0, 3.0, 10.0] if not args.quick else [0.0, 1.0]
    trees = 100 if not args.quick else 10
    for name, (X, y, costs) in datasets(args.seed).items():
        parts = split(X, y, args.seed)
        print(f"\n{name}: {X.shape[1]} features, cost of all = {costs.sum():g}, test rows = {parts[2].shape[0]}")
        print(f"{'model':<8} {'lambda':>7} {'val acc':>8} {'test acc':>9} {'mean cost':>10}")
        for lam in miser_grid:
            va, te, c = run_miser(lam, parts, costs, args.seed, trees)
            print(f"{'miser':<8} {lam:>7g} {va:>8.4f} {te:>9.4f} {c:>10.2f}", flush=True)
        for lam in cstc_grid:
            va, te, c = run_cstc(lam, parts, costs, args.seed, args.quick)
            print(f"{'cstc':<8} {lam:>7g} {va:>8.4f} {te:>9.4f} {c:>10.2f}", flush=True)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
