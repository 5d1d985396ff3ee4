"""The peers' table of benchmarks/multiclass.py: on the same K-class split, emlearn's RandomForest (inline
and loadable C) and GaussianNB (C), LightGBM multiclass (plain and CEGB), scikit-learn GradientBoosting of
the miser shape, beside frugalml's nb-stop, miser lambda = 0 and the default cascade (shared trees for K > 2, tables
and code form) exported to C.

Accuracy and macro-F1 of the emlearn rows are those of their C code (the harness's labels); features read:
distinct features on the decision paths (forests, LightGBM), all for the NBs and GradientBoosting; x86
instructions per prediction: valgrind callgrind on the prediction call alone (-O2); Cortex-M3 and
Cortex-M4F under QEMU on the first 40 test rows (frugalml: q15 on the M3, float32 on the M4F; emlearn: its C as
it takes inputs, int16 for the forests, float for the Gaussian NB, benchmarks/common/emlearn_m.py); table bytes:
frugalml's MODEL_TABLE_BYTES, emlearn loadable forest 8 per node + 4 per root + 1 per leaf, emlearn Gaussian NB
12 per class and feature (three Q16 numbers, not const: RAM).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import peers
from benchmarks.common.emlearn_m import emlearn_cortex_m
from benchmarks.common.qemu_count import count_cortex_m, missing_tools
from benchmarks.nb.callgrind import instructions
from benchmarks.runtime import count_ours, loadable_bytes
from compiler import tasks
from compiler.kinds import kind_spec
from pyruntime import format as fmt
from pyruntime.evaluators import c_evaluator

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "compiler.cli"]
Row = dict[str, Any]
QEMU_ROWS = 40  # test rows each Cortex-M count runs over


def _row(name: str, y: np.ndarray, pred: np.ndarray, k: int, reads: Any, **extra: Any) -> Row:
    return {"model": name, "accuracy": float(np.mean(pred == y)), "macro_f1": tasks.macro_f1(y, pred, k),
            "features": float(np.mean(reads)), **extra}


def emlearn_c(header: Path, rows: Path, feature_t: str, include: str, work: Path,
              count: bool) -> tuple[np.ndarray, dict[str, float]]:
    """(labels, {"x86": instructions per prediction} when count) of an emlearn header on the rows file."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "emlearn_model.h").write_text(header.read_text())
    exe = work / "em"
    subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", f"-DEM_FEATURE_T={feature_t}", f"-I{include}",
                    f"-I{work}", str(ROOT / "benchmarks" / "c" / "em_labels.c"), "-o", str(exe), "-lm"], check=True)
    if not count:
        out = subprocess.run([str(exe), str(rows)], check=True, capture_output=True, text=True).stdout
        return np.array([int(s) for s in out.split()], dtype=np.int64), {}
    n, out = instructions([str(exe), str(rows)], "peer_predict", work / "cg.out")
    labels = np.array([int(s) for s in out.split()], dtype=np.int64)
    return labels, {"x86": n / max(labels.size, 1)}


def frugalml_c(task: Any, kind: str, opts: dict[str, Any], names: dict[str, str], work: Path, count: bool,
               qemu: bool) -> list[Row]:
    """The rows of one frugalml model trained once on the split, one per C form in NAMES (form -> row name:
    tables, or code: 0 table bytes): accuracy, macro-F1 and features read of the C runtime (float32) on the
    test rows, x86 instructions per prediction and table bytes of its float32 header in that form, and the
    Cortex-M counts (on the first 40 test rows)."""
    work.mkdir(parents=True, exist_ok=True)
    m = kind_spec(kind).train(kind, task, opts, None)
    pred = c_evaluator(m, "float32").predict(task.data.X[task.test])
    model, rows = work / "m.msgpack", work / "rows.npz"
    if count:
        fmt.save(m, model)
        np.savez(rows, X=task.data.X[task.test], y=task.y[task.test])
    n = int(task.test.size)
    out: list[Row] = []
    for form, name in names.items():
        row = _row(name, task.y[task.test], pred.label, task.n_classes, pred.n_read)
        out.append(row)
        if not count:
            continue
        fw = work / form
        fw.mkdir(exist_ok=True)
        h = fw / "model.h"  # the name nb_count.c includes
        subprocess.run([*CLI, "export-c", str(model), "-o", str(h), "--form", form, "--embed", str(rows), "--rows",
                        str(n)], check=True, cwd=ROOT, capture_output=True)
        row["x86"], row["bytes"] = count_ours(h, fw, n, work.parent)  # one runtime archive for every row
        if qemu:
            for target, numeric in (("cortex-m3", "q15"), ("cortex-m4f", "float32")):
                ht = fw / f"{target}.h"
                subprocess.run([*CLI, "export-c", str(model), "-o", str(ht), "--target", target, "--numeric",
                                numeric, "--form", form, "--embed", str(rows), "--rows", str(min(n, QEMU_ROWS))],
                               check=True, cwd=ROOT, capture_output=True)
                row[target] = count_cortex_m(ht, target)
    return out


def peer_table(task: Any, seed: int, trees: int, quick: bool) -> list[Row]:
    """Every row of the peers' table (peers skipped with a printed note when their venv is missing)."""
    from sklearn.ensemble import GradientBoostingClassifier  # noqa: PLC0415

    k, d = task.n_classes, task.n_features
    y = task.y[task.test]
    qemu, count = not quick and missing_tools() is None, not quick and shutil.which("valgrind") is not None
    if quick:
        print("note: --quick: no instruction counts (valgrind, QEMU) in the peers' table")
    elif not qemu:
        print(f"note: Cortex-M counts skipped: {missing_tools()}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fm_mc_peers_") as tmp:
        work = Path(tmp)
        rows += frugalml_c(task, "nb-stop", {}, {"tables": "frugalml nb-stop (validation budget)",
                                                 "code": "frugalml nb-stop, code form"}, work / "nb", count, qemu)
        rows += frugalml_c(task, "miser", {"lambda": 0.0, "trees": trees},
                           {"tables": f"frugalml miser lambda=0, {trees} x K"}, work / "miser", count, qemu)
        rows += frugalml_c(task, "cascade", {"trees": trees},
                           {"tables": "frugalml cascade defaults (shared trees)",
                            "code": "frugalml cascade defaults, code form"}, work / "cascade", count, qemu)
        gb = GradientBoostingClassifier(n_estimators=trees, max_depth=3, learning_rate=0.1, random_state=seed)
        gb.fit(task.data.X[task.train], task.y[task.train])
        rows.append(_row(f"sklearn GradientBoosting, {trees} x K, depth 3", y, gb.predict(task.data.X[task.test]), k,
                         d))
        py = peers.has("emlearn", create=not quick)
        if py is None or peers.has("lightgbm", create=False) is None:
            print(peers.skipped("emlearn and lightgbm"))
            return rows
        np.savez(work / "data.npz", Xtr=task.data.X[task.train], ytr=task.y[task.train],
                 Xte=task.data.X[task.test], costs=np.ones(d))
        subprocess.run([str(py), str(ROOT / "benchmarks" / "mc" / "peer_models.py"), str(work / "data.npz"),
                        str(work), str(trees), str(seed)], check=True, capture_output=True)
        res = json.loads((work / "peers.json").read_text())
        def on_targets(header: Path, feature_t: str) -> dict[str, float]:
            if not qemu:
                return {}
            X = task.data.X[task.test][:QEMU_ROWS]
            return {t: emlearn_cortex_m(header, X, feature_t, t, work / "em_m", res["include"])[0]
                    for t in ("cortex-m3", "cortex-m4f")}

        for form in ("inline", "loadable"):
            labels, per = emlearn_c(work / f"rf_{form}.h", work / "rows_i16.bin", "int16_t", res["include"],
                                    work / f"em_{form}", count)
            nbytes = loadable_bytes(work / "rf_loadable.h") if form == "loadable" else 0
            rows.append(_row(f"emlearn RandomForest {trees} x depth 8, {form}", y, labels, k, res["rf_reads"],
                             bytes=nbytes, **per, **on_targets(work / f"rf_{form}.h", "int16_t")))
        labels, per = emlearn_c(work / "gnb.h", work / "rows_f32.bin", "float", res["include"], work / "em_gnb",
                                count)
        rows.append(_row("emlearn GaussianNB, loadable", y, labels, k, d, bytes=12 * k * d, **per,
                         **on_targets(work / "gnb.h", "float")))
        for key, name in (("lgbm", "LightGBM multiclass"), ("lgbm_cegb", "LightGBM, CEGB tradeoff 1")):
            rows.append(_row(f"{name}, {trees} x K, 8 leaves", y, np.asarray(res[key]["pred"], np.int64), k,
                             res[key]["reads"]))
    return rows


def print_peer_table(spec: str, rows: list[Row]) -> None:
    print(f"\n{spec}: peers side by side (x86 instr/prediction: callgrind, -O2; M3 / M4F: QEMU instructions per "
          "prediction, frugalml q15 / float32, emlearn's C as it takes inputs: int16 forests, float NB; bytes: table "
          "bytes, 0 = code form, - = no C export here)")
    print(f"{'model':<54} {'accuracy':>8} {'macro-F1':>8} {'features':>8} {'x86':>9} {'M3':>9} {'M4F':>9}"
          f" {'bytes':>8}")

    def num(r: Row, key: str) -> str:
        return f"{r[key]:.0f}" if key in r else "-"

    for r in rows:
        print(f"{r['model']:<54} {r['accuracy']:>8.4f} {r['macro_f1']:>8.4f} {r['features']:>8.2f} "
              f"{num(r, 'x86'):>9} {num(r, 'cortex-m3'):>9} {num(r, 'cortex-m4f'):>9} {num(r, 'bytes'):>8}")
