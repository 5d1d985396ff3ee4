"""`make demo`: static top-k NB vs early-stopping NB, end to end; then the activity example on raw windows.

Trains both on a bundled data set, writes model.msgpack and model.h, builds
a small standalone C program around model.h, runs the test rows through it
and through the cffi binding, checks that they agree row by row, and prints
weighted accuracy, mean features read and ns per prediction side by side.
It ends with the activity example (compiler/demo_activity.py): features computed on the device, lazily.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from compiler import tasks
from compiler.demo_activity import activity
from compiler.header import render_header
from compiler.nb.kind import train_nb
from pyruntime import format as fmt
from pyruntime.build_cffi import runtime_include_flags, runtime_sources
from pyruntime.evaluators import c_evaluator
from pyruntime.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime_c"


def build_row_runner(header: Path, out_dir: Path, cc: str = "cc") -> Path:
    """Compile runtime_c/tools/fm_run_rows.c against a generated model.h."""
    exe = out_dir / "run_rows"
    sources = [str(RUNTIME / "tools" / "fm_run_rows.c")] + [str(p) for p in runtime_sources()]
    cmd = [cc, "-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-pedantic",
           *runtime_include_flags(), f"-I{header.parent}", *sources, "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def run_rows(exe: Path, seconds: float = 0.3) -> tuple[np.ndarray, np.ndarray, float]:
    out = subprocess.run([str(exe), str(seconds)], check=True, capture_output=True, text=True).stdout.split("\n")
    rows = [line.split() for line in out if line and not line.startswith("ns_per_prediction")]
    ns = float(next(line.split()[1] for line in out if line.startswith("ns_per_prediction")))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1], ns


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="sklearn:digits")
    ap.add_argument("--positive", default="8")
    ap.add_argument("--out", default="demo_out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-activity", action="store_true", help="skip the activity example on raw windows")
    args = ap.parse_args(argv)
    if shutil.which("cc") is None:
        print("error: no C compiler 'cc' on PATH", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    task = tasks.prepare(args.data, args.positive if args.positive != "-" else None, None, args.seed)
    print(f"data {args.data} (positive class {args.positive}): {task.train.size} train, "
          f"{task.validation.size} validation, {task.test.size} test rows, {task.data.X.shape[1]} features")
    with Progress("demo", total=4, unit="stage") as progress:
        rows = _stages(task, out, progress)
    if rows is None:
        return 1
    k = rows[0][-1]
    y_test = task.y[task.test]
    shutil.copy(out / "dynamic" / "model.msgpack", out / "model.msgpack")
    shutil.copy(out / "dynamic" / "model.h", out / "model.h")
    print(f"budget k = {k} features; C program and cffi binding agree on all {len(y_test)} test rows\n")
    print(f"{'model':<20} {'w.accuracy':>10} {'features':>9} {'ns/pred C':>10} {'ns/pred cffi':>13} "
          f"{'stops':>6} {'msgpack B':>10}")
    for r in rows:
        print(f"{r[0]:<20} {r[1]:>10.4f} {r[2]:>9.2f} {r[3]:>10.1f} {r[4]:>13.1f} {r[5]:>6} {r[6]:>10}")
    print(f"\nspeedup (static / early-stopping): {rows[0][3] / rows[1][3]:.2f}x in C, "
          f"{rows[0][2] / rows[1][2]:.2f}x fewer features read")
    print(f"wrote {out / 'model.msgpack'} and {out / 'model.h'}")
    if not args.no_activity:
        activity(out / "activity")
    return 0


def _stages(task: tasks.Task, out: Path, progress: Progress) -> list[tuple] | None:
    """Train both models, then build and run each: one progress step per stage. None on disagreement."""
    progress.note("training nb-static")
    static = train_nb("nb-static", task, {}, None)
    progress.update()
    k = int(static.meta["training"]["budget_chosen"])
    progress.note("training nb-stop")
    dynamic = train_nb("nb-stop", task, {"budget": k}, None)
    progress.update()
    X_test, y_test = task.data.X[task.test], task.y[task.test]
    rows = []
    for label, model in (("static top-k NB", static), ("early-stopping NB", dynamic)):
        progress.note(f"C build + run: {label}")
        sub = out / ("static" if model is static else "dynamic")
        sub.mkdir(exist_ok=True)
        size = fmt.save(model, sub / "model.msgpack")
        header = sub / "model.h"
        header.write_text(render_header(fmt.load(sub / "model.msgpack"), "float32", "model", X_test))
        exe = build_row_runner(header, sub)
        c_label, c_read, c_ns = run_rows(exe)
        ev = c_evaluator(model, "float32")
        pred = ev.predict(X_test)
        if not (np.array_equal(c_label, pred.label) and np.array_equal(c_read, pred.n_read)):
            print(f"error: the standalone C program and the cffi binding disagree for {label}", file=sys.stderr)
            return None
        summary = tasks.summarize(model, y_test, pred)
        rows.append((label, summary["weighted_accuracy"], summary["mean_features"], c_ns,
                     ev.ns_per_prediction(X_test), model.tables.n_stops, size, k))
        progress.update()
    return rows


if __name__ == "__main__":
    sys.exit(main())
