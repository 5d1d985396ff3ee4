"""LightGBM CEGB peer of benchmarks/miser_cascade.py; runs in the peers' venv (benchmarks/.venv).

Usage: python lightgbm_cegb.py DATA.npz OUT.json TREES SEED TRADEOFF[,TRADEOFF...]
DATA.npz holds Xa, ya (training), Xv, yv (validation, early stopping) and costs (per feature).
OUT.json: {tradeoff: LGBMClassifier(...).booster_.dump_model()} for each tradeoff.
"""

from __future__ import annotations

import json
import sys

import lightgbm as lgb
import numpy as np


def main() -> None:
    data, out, trees, seed, grid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    d = np.load(data)
    dumps = {}
    for tradeoff in (float(t) for t in grid.split(",")):
        g = lgb.LGBMClassifier(n_estimators=trees, num_leaves=8, max_depth=3, learning_rate=0.1,
                               cegb_tradeoff=tradeoff, cegb_penalty_feature_coupled=[float(c) for c in d["costs"]],
                               random_state=seed, verbose=-1, n_jobs=1)
        g.fit(d["Xa"], d["ya"], eval_set=[(d["Xv"], d["yv"])], callbacks=[lgb.early_stopping(20, verbose=False)])
        dumps[f"{tradeoff:g}"] = g.booster_.dump_model()
    with open(out, "w") as fh:
        json.dump(dumps, fh)


if __name__ == "__main__":
    main()
