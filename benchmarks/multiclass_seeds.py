"""The seed papers' multi-class experiments in shape on a bundled K >= 10 class set (issue 19, item 7; not a
test): Greedy Miser's Figure-3 protocol and the budget index's accuracy-vs-budget curves.

    .venv/bin/python benchmarks/multiclass_seeds.py [--data sklearn:digits] [--seed 0] [--trees 100]

The split is `frugalml train`'s 60/20/20 (--seed); uniform feature costs. See benchmarks/mc/seeds.py for
the protocols. Methods of the budget index: polydom (exact since round 50: the whole search, however many of
the 2^d feature sets it trains; --polydom-sets N caps it; PolyDom walks at most 24 features, so digits' 8x8
images are pooled 2x2 to 16 features for all three methods), greedy-acc and greedy-cost (at most --max-sets
sets each); the paper's plain Greedy is greedy-acc's forward selection without its cost weights and has no
separate method here. Each feature set's model is the paper's
multi-class black box in shape, K linear scorers and their argmax (`--base linear`, the default; `--base nb`:
K-class static NB tables). Plots: docs/figures/multiclass_miser.png
and docs/figures/multiclass_skyline.png (--quick: none).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from benchmarks.mc import seeds  # noqa: E402
from compiler import tasks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LAMBDAS = [0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
THRESHOLDS = [0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999]
METHODS = ("polydom", "greedy-acc", "greedy-cost")


def print_points(title: str, pts: list[seeds.Point], x: str) -> None:
    print(f"\n{title}")
    print(f"{'point':<28} {'accuracy':>9} {x:>9}")
    for p in pts:
        print(f"{p.label:<28} {p.accuracy:>9.4f} {p.features:>9.2f}")


def thin(pts: list[seeds.Point], n: int = 16) -> list[seeds.Point]:
    """About n points of a long curve, the last one included."""
    step = max(1, len(pts) // n)
    return pts[::step] + (pts[-1:] if (len(pts) - 1) % step else [])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="DATA (default sklearn:digits; --quick: sklearn:wine)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trees", type=positive_int, default=None, help="iterations (default 100; --quick: 20)")
    ap.add_argument("--max-sets", type=positive_int, default=None,
                    help="feature sets per greedy search (default 2080; --quick: 60)")
    ap.add_argument("--polydom-sets", type=positive_int, default=None,
                    help="cap on PolyDom's feature sets (default: none, the exact search; --quick: 60)")
    ap.add_argument("--base", choices=("linear", "nb"), default="linear",
                    help="the budget index's model per feature set (default linear: the paper's black box)")
    ap.add_argument("--quick", action="store_true", help="wine, 20 iterations, 60 sets, no plots (seconds)")
    figures.add_argument(ap)
    a = ap.parse_args(argv)
    a.data = a.data or ("sklearn:wine" if a.quick else "sklearn:digits")
    a.trees = a.trees if a.trees is not None else (20 if a.quick else 100)
    greedy_cap = a.max_sets if a.max_sets is not None else (60 if a.quick else 2080)
    polydom_cap = a.polydom_sets if a.polydom_sets is not None else (60 if a.quick else None)
    caps = {method: polydom_cap if method == "polydom" else greedy_cap for method in METHODS}
    task = tasks.prepare(a.data, seed=a.seed)
    print(f"{a.data}: {task.n_classes} classes, {task.n_features} features, {task.test.size} test rows "
          f"(seed {a.seed}); uniform costs: cost = features read")
    lambdas = LAMBDAS[:3] if a.quick else LAMBDAS
    miser, ref = seeds.miser_curve(task, lambdas, a.trees, a.seed)
    print_points(f"Greedy Miser ({a.trees} iterations x {task.n_classes} depth-3 trees, multi-class log-loss, "
                 "step 0.1; each lambda at its best validation iteration)", miser, "features")
    exits = seeds.early_exit_curve(ref, task.data.X[task.test], task.y[task.test], THRESHOLDS)
    print_points("early exits every 10 iterations of the lambda = 0 ensemble on max class probability > s",
                 exits, "features")
    sky: dict[str, list[seeds.Point]] = {}
    with tempfile.TemporaryDirectory(prefix="fm_mc_seeds_") as tmp:
        lattice = seeds.pooled_task(task, a.seed, Path(tmp))
        print(f"\nbudget index on {lattice.n_features} features" + (" (the 8x8 images pooled 2x2, same rows and "
              "split: PolyDom walks at most 24)" if lattice is not task else ""))
        curves = {method: seeds.skyline_curve(lattice, method, caps[method], a.base) for method in METHODS}
    for method, (pts, n_models, trained) in curves.items():
        sky[method] = pts
        limit = "exact" if caps[method] is None else f"at most {caps[method]} sets"
        print_points(f"budget index, {method}, base {a.base} ({limit}: trained {trained} of "
                     f"{2 ** lattice.n_features} sets, {n_models} indexed models): accuracy vs budget", thin(pts),
                     "budget")
    if not a.quick:
        out = ROOT / "docs" / "figures"
        seeds.plot({"Greedy Miser (lambda grid)": miser, "early exit (s grid)": exits},
                   str(out / "multiclass_miser.png"), "mean features read",
                   f"{a.data}: Greedy Miser vs early exits")
        seeds.plot({m: p for m, p in sky.items()}, str(out / "multiclass_skyline.png"), "budget (features)",
                   f"{a.data}: budget index (base {a.base}), accuracy vs budget")
        print("\nplots: docs/figures/multiclass_miser.png, docs/figures/multiclass_skyline.png")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
