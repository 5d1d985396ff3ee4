"""The end of `make demo`: the activity example on raw sensor windows (uea:BasicMotions, 6 channels x 100).

A Greedy Miser trained on the feature costs profiled on Cortex-M4F (the bundled costs_cortex-m4f.csv, what
`train --costs measured --on cortex-m4f` writes), its test accuracy and features read, and the whole pipeline's
instructions per prediction on the M4F under QEMU (`frugalml bench`), lazy vs eager, against a random forest over
every feature converted by emlearn (the peers' venv, benchmarks/.venv; skipped with a note when missing): the
forest needs every feature of every window, so its pipeline costs at least the eager extraction.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from pyruntime import format as fmt
from pyruntime.data import BUNDLED_WINDOWS

ROOT = Path(__file__).resolve().parent.parent
DATA = "uea:BasicMotions"
COSTS = BUNDLED_WINDOWS / "BasicMotions" / "costs_cortex-m4f.csv"
WINDOWS = BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TEST.ts"
PEER = ROOT / "benchmarks" / ".venv" / "bin" / "python"
FOREST = """
import sys, numpy as np, emlearn
from sklearn.ensemble import RandomForestClassifier
d = np.load(sys.argv[1])
rf = RandomForestClassifier(n_estimators=10, max_depth=8, random_state=0).fit(d["Xtr"], d["ytr"])
emlearn.convert(rf, method="inline").save(name="peer", file=sys.argv[2])
print(float(np.mean(rf.predict(d["Xte"]) == d["yte"])))
"""


def _cli(*args: str | Path) -> str:
    p = subprocess.run([sys.executable, "-m", "compiler.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    return p.stdout


def forest_accuracy(out: Path) -> float | str:
    """emlearn's forest over all features, trained and tested on the same split, or why it was skipped."""
    from compiler import tasks  # noqa: PLC0415

    if not PEER.exists():
        return "no peers' venv at benchmarks/.venv (make bench-peers)"
    t = tasks.prepare(DATA)
    X = t.data.X.astype(np.float32)
    np.savez(out / "split.npz", Xtr=X[t.train], ytr=t.y[t.train], Xte=X[t.test], yte=t.y[t.test])
    p = subprocess.run([str(PEER), "-c", FOREST, str(out / "split.npz"), str(out / "forest.h")], capture_output=True,
                       text=True)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        return f"the peers' venv failed: {lines[-1] if lines else f'exit {p.returncode}'}"
    return float(p.stdout.strip())


def activity(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    model = out / "activity.msgpack"
    _cli("train", "miser", DATA, "--costs", COSTS, "-o", model)
    ev = json.loads(_cli("eval", model, DATA, "--json"))
    n_plan = len(fmt.load(model).meta["feature_plan"]["features"])  # the default plan's features: what eager computes
    print(f"\nactivity example: {DATA}, raw windows of 6 channels x 100 samples, {ev['n']} test windows")
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        b = None
        print("note: Cortex-M4F counts skipped: qemu-system-arm / arm-none-eabi-gcc missing (make toolchains)")
    else:
        b = json.loads(_cli("bench", model, "--data", WINDOWS, "--on", "cortex-m4f", "--rows", "4", "--json"))
    forest = forest_accuracy(out)
    print(f"{'model':<44} {'accuracy':>9} {'features':>9} {'M4F instr/pred':>15}")
    lazy = f"{b['instructions_per_prediction']:,.0f}" if b else "-"
    eager = f"{b['eager_instructions_per_prediction']:,.0f}" if b else "-"
    print(f"{'miser (M4F costs), lazy pipeline':<44} {ev['accuracy']:>9.4f} {ev['mean_features']:>9.2f} {lazy:>15}")
    print(f"{'miser (M4F costs), eager pipeline':<44} {ev['accuracy']:>9.4f} {n_plan:>9.2f} {eager:>15}")
    if isinstance(forest, str):
        print(f"note: emlearn forest skipped: {forest}")
    else:
        floor = f">= {b['eager_extraction_instructions']:,.0f}" if b else "-"
        print(f"{'emlearn forest, 10 trees depth 8, all':<44} {forest:>9.4f} {n_plan:>9.2f} {floor:>15}")
    if b:
        print(f"lazy vs eager: {b['eager_instructions_per_prediction'] / b['instructions_per_prediction']:.1f}x "
              f"fewer instructions per prediction on Cortex-M4F (extraction {b['extraction_instructions']:,.0f}, "
              f"model {b['model_instructions']:,.0f})")
