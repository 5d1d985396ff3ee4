"""emlearn peer of benchmarks/runtime.py; runs in the benchmark-only venv (benchmarks/.venv, emlearn installed).

Usage: python emlearn_forest.py DATA.npz OUT_DIR TREES DEPTH
DATA.npz holds Xtr, ytr (integer labels, two classes or more). Writes OUT_DIR/{inline,loadable}.h (name "peer") of a
scikit-learn RandomForestClassifier(n_estimators=TREES, max_depth=DEPTH, random_state=0) and prints
the number of decision nodes of the forest.
"""

from __future__ import annotations

import sys
from pathlib import Path

import emlearn
import numpy as np
from sklearn.ensemble import RandomForestClassifier


def main() -> None:
    data, out, trees, depth = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    d = np.load(data)
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0)
    model.fit(d["Xtr"], d["ytr"])
    for method in ("inline", "loadable"):
        emlearn.convert(model, method=method).save(name="peer", file=str(out / f"{method}.h"))
    print(sum(int((e.tree_.children_left >= 0).sum()) for e in model.estimators_))


if __name__ == "__main__":
    main()
