"""K-class nb-stop with 200-299 validation rows: the stop cuts judged out of fold (round 46) or on the validation
part (round 45), on K-class sets over split seeds (not a test).

    .venv/bin/python benchmarks/nb_stop_midsize.py [--sets keel:contraceptive,sklearn:digits@1250]
        [--seeds 0,1,2,3,4] [--quick] [--write-docs]

The safe stop criterion's rule-of-three term, (disagreements + 3) / stopped rows <= the bound, needs
ceil(3 / bound) stopped rows: 300 at K > 2 classes' default 0.01 (round 45). A validation part of 200 to 299 rows,
above the small-set rule's 200, could therefore never accept a judged cut, and the model stopped only where no
class can overtake the leader. Round 46 judges the cuts out of fold on the train and validation rows pooled there
too (compiler.nb.train.stop_cut_folds; the tables then refitted on the pooled rows, as under 200 rows; the order
and budget still judged on the validation part); `--folds 1` is round 45's model.

Data: keel:contraceptive has 1,473 rows (295 validation rows); SPEC@N is a stratified sample of N rows of SPEC
drawn with the split seed before `frugalml train`'s 60/20/20 split (N = 1,250: 250 validation rows). Per set,
means over the split seeds: test accuracy / mean features read (mean stop points) of nb-static, nb-stop --folds 1
and nb-stop at the defaults (the float32 reference, which the C runtime equals bit for bit). --quick:
keel:contraceptive, seed 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.sets_seeds import SetsSeeds  # noqa: E402

SETS = ("keel:contraceptive,sklearn:digits@1250,keel:optdigits@1250,keel:satimage@1250,keel:segment@1250,"
        "keel:penbased@1250,keel:texture@1250")
RUNS = SetsSeeds(SETS, "0,1,2,3,4", "keel:contraceptive", "0")


def split(spec: str, seed: int) -> tuple[np.ndarray, ...]:
    """(X_train, y_train, X_val, y_val, X_test, y_test) of SPEC or SPEC@N at one split seed."""
    from pyruntime.data import Split, encode_labels, load_dataset  # noqa: PLC0415

    name, _, rows = spec.partition("@")
    data = load_dataset(name)
    X, y = np.asarray(data.X, dtype=np.float64), encode_labels(np.asarray(data.y), None)[0]
    if rows and int(rows) < y.size:
        from sklearn.model_selection import train_test_split  # noqa: PLC0415

        keep, _ = train_test_split(np.arange(y.size), train_size=int(rows), random_state=seed, stratify=y)
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    tr, va, te = Split(seed=seed).indices(y)
    return X[tr], y[tr], X[va], y[va], X[te], y[te]


def fit(parts: tuple[np.ndarray, ...], seed: int, **params: Any) -> tuple[float, float, float, int]:
    """(test accuracy, mean features read, stop points, cut folds) of NaiveBayesBudget(**params)."""
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415

    Xr, yr, Xv, yv, Xt, yt = parts
    est = NaiveBayesBudget(random_state=seed, **params).fit(Xr, yr, eval_set=(Xv, yv))
    ref = est.model_.predict_reference(np.asarray(Xt, dtype=np.float32))
    stops = len(getattr(est.model_, "stop_at", []))
    return float(np.mean(ref.label == yt)), float(np.mean(ref.n_read)), float(stops), int(est.cut_folds_)


def cell(mean: np.ndarray, stops: bool = True) -> str:
    """accuracy / features (stop points) of one column's means."""
    return f"{mean[0]:.4f} / {mean[1]:.2f}" + (f" ({mean[2]:.1f})" if stops else "")


def main(argv: list[str] | None = None) -> int:
    sets, seeds = RUNS.parse(argv, __doc__.splitlines()[0], "K-class data specs (SPEC@N: N sampled rows)")
    print(f"test accuracy / mean features read (stop points), means over split seeds {','.join(map(str, seeds))}; "
          "--folds 1: the cuts judged on the validation part (round 45); default: out of fold below "
          "ceil(3 / bound) validation rows (round 46)\n")
    print("| data | K | val rows | features | nb-static | nb-stop --folds 1 | nb-stop | cut folds |")
    print("|---|---|---|---|---|---|---|---|")
    d_acc: list[float] = []
    ratio: list[float] = []
    for spec in sets:
        cols: dict[str, list[tuple[float, float, float, int]]] = {"static": [], "one": [], "new": []}
        for seed in seeds:
            parts = split(spec, seed)
            k = int(np.unique(parts[1]).size)
            if k < 3:
                raise SystemExit(f"{spec}: {k} classes; this benchmark is for K > 2")
            cols["static"].append(fit(parts, seed, early_stopping=False))
            cols["one"].append(fit(parts, seed, folds=1))
            cols["new"].append(fit(parts, seed))
        m = {c: np.mean(np.asarray(v, dtype=np.float64), axis=0) for c, v in cols.items()}
        d_acc.append(100 * (m["new"][0] - m["one"][0]))
        ratio.append(m["new"][1] / m["one"][1])

        print(f"| {spec} | {k} | {parts[3].size} | {parts[0].shape[1]} | {cell(m['static'], False)} | "
              f"{cell(m['one'])} | {cell(m['new'])} | {sorted({c[3] for c in cols['new']})} |", flush=True)
    a, r = np.asarray(d_acc), np.asarray(ratio)
    print(f"\nnb-stop default against --folds 1 over {a.size} sets: features read x{np.median(r):.2f} (median; "
          f"{r.min():.2f} .. {r.max():.2f}), test accuracy {np.median(a):+.2f} points (median; {a.min():+.2f} .. "
          f"{a.max():+.2f})")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
