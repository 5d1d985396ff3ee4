"""K-class peers of benchmarks/multiclass.py; runs in the peers' venv (benchmarks/.venv: emlearn, lightgbm).

Usage: python peer_models.py DATA.npz OUT_DIR TREES SEED
DATA.npz holds Xtr, ytr, Xte (class indices 0..K-1) and costs (one per feature).
Writes to OUT_DIR: rf_inline.h, rf_loadable.h, gnb.h (emlearn.convert(...).save(name="peer")),
rows_i16.bin and rows_f32.bin (the test rows as the harness reads them: uint32 rows, uint32 cols, values;
the forest's inputs are int16, each feature scaled by `scale` before rounding, so that the forest is
trained on exactly what its C code reads) and peers.json: per LightGBM model its test predictions and the
features each test row's paths read, the forest's and the GaussianNB's own predictions, the forest's
decision-node features read per row.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import emlearn
import lightgbm as lgb
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.naive_bayes import GaussianNB

INT16_RANGE = 30000.0


def write_rows(path: Path, X: np.ndarray, dtype: str) -> None:
    with path.open("wb") as fh:
        fh.write(np.array(X.shape, "<u4").tobytes())
        fh.write(np.ascontiguousarray(X, dtype=dtype).tobytes())


def forest_reads(model: RandomForestClassifier, X: np.ndarray) -> list[float]:
    """Distinct features on the decision paths of each row (all trees)."""
    out = []
    paths = [(e.decision_path(X), e.tree_.feature) for e in model.estimators_]
    for i in range(X.shape[0]):
        used: set[int] = set()
        for p, feat in paths:
            nodes = p.indices[p.indptr[i]:p.indptr[i + 1]]
            used.update(int(f) for f in feat[nodes] if f >= 0)
        out.append(float(len(used)))
    return out


def leaf_features(tree: dict) -> dict[int, set[int]]:
    """leaf_index -> split features on its path, for one LightGBM tree dump."""
    out: dict[int, set[int]] = {}

    def walk(node: dict, path: frozenset[int]) -> None:
        if "leaf_index" in node or "split_feature" not in node:
            out[int(node.get("leaf_index", 0))] = set(path)
            return
        here = path | {int(node["split_feature"])}
        walk(node["left_child"], here)
        walk(node["right_child"], here)

    walk(tree["tree_structure"], frozenset())
    return out


def lgbm(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, trees: int, seed: int, costs: np.ndarray,
         tradeoff: float | None) -> dict[str, list[float]]:
    extra = {} if tradeoff is None else {"cegb_tradeoff": tradeoff,
                                         "cegb_penalty_feature_coupled": [float(c) for c in costs]}
    g = lgb.LGBMClassifier(n_estimators=trees, num_leaves=8, max_depth=3, learning_rate=0.1, random_state=seed,
                           verbose=-1, n_jobs=1, **extra)
    g.fit(Xtr, ytr)
    leaves = g.booster_.predict(Xte, pred_leaf=True)
    maps = [leaf_features(t) for t in g.booster_.dump_model()["tree_info"]]
    reads = [float(len(set().union(*(maps[t][int(leaf)] for t, leaf in enumerate(row))))) for row in leaves]
    return {"pred": [float(v) for v in g.predict(Xte)], "reads": reads}


def main() -> None:
    data, out, trees, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    d = np.load(data)
    Xtr, ytr, Xte, costs = d["Xtr"], d["ytr"], d["Xte"], d["costs"]
    scale = INT16_RANGE / np.maximum(np.abs(Xtr).max(axis=0), 1e-12)
    q = lambda X: np.clip(np.round(X * scale), -32768, 32767)  # noqa: E731
    rf = RandomForestClassifier(n_estimators=trees, max_depth=8, random_state=seed).fit(q(Xtr), ytr)
    for method in ("inline", "loadable"):
        emlearn.convert(rf, method=method).save(name="peer", file=str(out / f"rf_{method}.h"))
    gnb = GaussianNB().fit(Xtr, ytr)
    with np.errstate(all="ignore"):
        emlearn.convert(gnb, method="loadable").save(name="peer", file=str(out / "gnb.h"))
    write_rows(out / "rows_i16.bin", q(Xte), "<i2")
    write_rows(out / "rows_f32.bin", Xte, "<f4")
    res = {"rf_pred": [float(v) for v in rf.predict(q(Xte))], "rf_reads": forest_reads(rf, q(Xte)),
           "gnb_pred": [float(v) for v in gnb.predict(Xte)], "lgbm": lgbm(Xtr, ytr, Xte, trees, seed, costs, None),
           "lgbm_cegb": lgbm(Xtr, ytr, Xte, trees, seed, costs, 1.0), "include": emlearn.includedir}
    (out / "peers.json").write_text(json.dumps(res))


if __name__ == "__main__":
    main()
