"""LightGBM peer of benchmarks/cegb.py; runs in the peers' venv (benchmarks/.venv), never in the project's.

Usage: python lightgbm_fit.py DATA.npz JOBS.json OUT.json
DATA.npz holds Xtr, ytr (training) and, when a job needs them, Xva, yva (validation: early stopping and
scoring) and Xte, yte (scoring). JOBS.json: {"fits": [{"params": {...LGBMClassifier parameters...},
"early_stopping": ROUNDS or null, "score": ["va", "te"]}, ...]}.
OUT.json: one entry per fit, in order: {"seconds" (the fit alone), "iteration" (the best iteration, else
n_estimators), "dump" (booster_.dump_model(num_iteration=iteration), only when "score" is not empty),
"pred": {part: predicted labels at that iteration}}.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import lightgbm as lgb
import numpy as np

warnings.filterwarnings("ignore", message=".*eval_set.*")  # lightgbm 4.7's deprecation of eval_set


def fit_one(d: np.lib.npyio.NpzFile, job: dict) -> dict:
    m = lgb.LGBMClassifier(**job["params"])
    kw = {}
    if job.get("early_stopping"):
        kw = {"eval_set": [(d["Xva"], d["yva"])],
              "callbacks": [lgb.early_stopping(int(job["early_stopping"]), verbose=False)]}
    t0 = time.perf_counter()
    m.fit(d["Xtr"], d["ytr"], **kw)
    out: dict = {"seconds": time.perf_counter() - t0}
    it = int(m.best_iteration_ or m.n_estimators)
    out["iteration"] = it
    score = job.get("score") or []
    if score:
        out["dump"] = m.booster_.dump_model(num_iteration=it)
        out["pred"] = {part: m.predict(d[f"X{part}"], num_iteration=it).tolist() for part in score}
    return out


def main() -> None:
    data, jobs, out = sys.argv[1], sys.argv[2], sys.argv[3]
    d = np.load(data)
    with open(jobs) as fh:
        spec = json.load(fh)
    res = [fit_one(d, job) for job in spec["fits"]]
    with open(out, "w") as fh:
        json.dump(res, fh)


if __name__ == "__main__":
    main()
