"""What one nb-stop stop check costs in feature reads, per numeric type and walk, counted on the targets (round 39;
not a test).

    .venv/bin/python benchmarks/nb_stop_cost.py [--data sklearn:breast_cancer ...] [--rows 200] [--no-qemu]
        [--quick] [--write-docs]

The pay rule keeps a stop point only when the reads its stopped validation rows skip outweigh `stop_cost` reads
per running row (compiler/nb/train.py). Part 1 measures that price: per data set, nb-static at a quarter, half
and all of the budget and nb-stop at stop costs 0 to 6 (more or fewer stop points) are exported (the header
`export-c --embed DATA --rows N` writes: the first N rows of the data) and counted on the same rows: x86
callgrind (float32 and q15), Cortex-M4F float32, Cortex-M3 and Cortex-M0 q15 under QEMU. Instructions per
prediction = fixed + read x features read + check x stop checks (a row pays one check per stop point it
reaches; the features read and the checks from the C runtime's n_read) is fitted by least squares over the
models. check / read is the stop cost the walk would want; `default` is what the trainer uses for that numeric
type (compiler/nb/stop_cost.py).

Part 2 counts what it buys: static NB at the budget nb-stop uses, nb-stop with the float32 default (`train
nb-stop`) and with the q15 one (`train nb-stop --numeric q15`), on the test rows of the seed-0 split
(accuracy and features read of each numeric type's own tables, instructions per prediction on the embedded
rows). --quick: sklearn:breast_cancer, 20 rows, x86 only, four models in part 1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from benchmarks.common.qemu_count import cortex_m_columns  # noqa: E402
from benchmarks.nb_floor import qemu, x86_count  # noqa: E402
from compiler import tasks  # noqa: E402

DATASETS = ("sklearn:breast_cancer", "sklearn:wine", "sklearn:digits")
QUICK_DATA = "sklearn:breast_cancer"
WALKS = (("x86", "float32", None), ("x86", "q15", None), ("Cortex-M4F", "float32", "cortex-m4f"),
         ("Cortex-M3", "q15", "cortex-m3"), ("Cortex-M0", "q15", "cortex-m0"))
# nb-stop variants of part 1: (stop cost, support); a low support keeps more stop points
STOPS = ((0.0, 0.01), (0.5, 0.02), (1.5, 0.05), (3.0, 0.05), (6.0, 0.05))


def train(task: tasks.Task, kind: str, **opts: Any) -> Any:
    """The model `frugalml train KIND` writes for these options (its trainer, in this process)."""
    from compiler.nb.kind import train_nb  # noqa: PLC0415

    with contextlib.redirect_stderr(io.StringIO()):
        return train_nb(kind, task, opts, None)


def counts(model: Any, work: Path, X: np.ndarray, qemu_on: bool
           ) -> dict[tuple[str, str], tuple[float, float, float | None]]:
    """Per walk (name, numeric): (features read, stop checks, instructions) per prediction on the rows X, embedded
    in the header `export-c --embed` writes (rendered in this process)."""
    from compiler.header import render_header  # noqa: PLC0415
    from pyruntime.evaluators import c_evaluator  # noqa: PLC0415

    stop_at = np.asarray(getattr(model.tables, "stop_at", np.zeros(0)), dtype=float)
    out: dict[tuple[str, str], tuple[float, float, float | None]] = {}
    per_numeric: dict[str, tuple[np.ndarray, Path]] = {}  # the C runtime's n_read and the header, once per type
    for name, numeric, target in WALKS:
        if numeric not in per_numeric:
            header = work / numeric / "model.h"
            header.parent.mkdir(parents=True, exist_ok=True)
            header.write_text(render_header(model, numeric, "model", X))
            per_numeric[numeric] = (np.asarray(c_evaluator(model, numeric).predict(X).n_read, dtype=float), header)
        n_read, header = per_numeric[numeric]
        checks = float((stop_at[None, :] <= n_read[:, None]).sum(axis=1).mean())
        if target is None:
            ins: float | None = x86_count(header)[0]
        else:
            ins = qemu(header, target) if qemu_on else None
        out[name, numeric] = (float(n_read.mean()), checks, ins)
    return out


def fit_costs(points: list[tuple[float, float, float]]) -> tuple[float, float, float, float]:
    """(fixed, read, check, max |residual|) of instructions = fixed + read x reads + check x checks."""
    A = np.array([[1.0, r, c] for r, c, _ in points])
    y = np.array([i for _, _, i in points])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return float(coef[0]), float(coef[1]), float(coef[2]), float(np.abs(y - A @ coef).max())


def main(argv: list[str] | None = None) -> int:
    from compiler.nb.stop_cost import default_stop_cost  # noqa: PLC0415
    from pyruntime.evaluators import c_evaluator  # noqa: PLC0415

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="*", default=None,
                    help=f"data sets (default {' '.join(DATASETS)}; --quick: {QUICK_DATA})")
    ap.add_argument("--rows", type=positive_int, default=None, help="embedded rows counted (default 200; --quick: 20)")
    ap.add_argument("--no-qemu", action="store_true", help="x86 columns only")
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_DATA}, 20 rows, x86 only (seconds)")
    figures.add_argument(ap)
    a = ap.parse_args(argv)
    data = a.data or ([QUICK_DATA] if a.quick else list(DATASETS))
    rows = a.rows or (20 if a.quick else 200)
    if shutil.which("valgrind") is None:
        print("note: valgrind not installed: no counts (nothing to print)")
        return 0
    qemu_on = cortex_m_columns(a.no_qemu, a.quick, "the x86 columns only")
    walks = [w for w in WALKS if w[2] is None or qemu_on]
    stops = (STOPS[0], STOPS[-1]) if a.quick else STOPS
    print(f"Part 1: instructions per prediction = fixed + read x features read + check x stop checks, fitted over "
          f"{(2 if a.quick else 3) + len(stops)} models (nb-static at {'1/2' if a.quick else '1/4, 1/2'} and all "
          f"of the budget; nb-stop at stop costs {', '.join(f'{c:g}' for c, _ in stops)}), {rows} embedded rows\n")
    print(f"{'data':<22} {'K':>3} {'k':>3} {'walk':<20} {'fixed':>7} {'read':>7} {'check':>7} {'check/read':>10} "
          f"{'default':>7} {'max resid':>9}")
    effect = []
    with tempfile.TemporaryDirectory(prefix="nb_stop_cost_") as tmp:
        for spec in data:
            task = tasks.prepare(spec, seed=0)
            X = np.asarray(task.data.X[:rows], dtype=np.float32)
            k = min(task.n_features, 64)
            budgets = sorted({max(2, k // 2), k} if a.quick else {max(2, k // 4), max(2, k // 2), k})
            variants = [("nb-static", {"budget": b}) for b in budgets]
            variants += [("nb-stop", {"budget": k, "stop_cost": c, "support": s}) for c, s in stops]
            per = []
            for i, (kind, opts) in enumerate(variants):
                model = train(task, kind, **opts)
                per.append(counts(model, Path(tmp) / f"{spec.replace(':', '_')}_{i}", X, qemu_on))
            for name, numeric, _ in walks:
                pts = [(p[name, numeric][0], p[name, numeric][1], p[name, numeric][2]) for p in per]
                if any(ins is None for _, _, ins in pts):
                    continue
                fixed, read, check, resid = fit_costs([(r, c, float(ins)) for r, c, ins in pts])  # type: ignore[arg-type]
                print(f"{spec:<22} {task.n_classes:>3} {k:>3} {name + ' ' + numeric:<20} {fixed:7.1f} {read:7.2f} "
                      f"{check:7.2f} {check / read:10.2f} {default_stop_cost(numeric, task.n_classes):7.1f} "
                      f"{resid:9.1f}", flush=True)
            effect.append((spec, task))
        print("\nPart 2: test accuracy / features read (each numeric type's own tables, test rows of the seed-0 "
              "split) and instructions per prediction (embedded rows) of static NB and nb-stop kept for float32 "
              "(default) and for q15 (--numeric q15)\n")
        print(f"{'data':<22} {'model':<22} {'stops':>5} {'f32 acc / read':>16} {'q15 acc / read':>16} "
              + " ".join(f"{name + ' ' + numeric:>18}" for name, numeric, _ in walks))
        for spec, task in effect:
            X = np.asarray(task.data.X[:rows], dtype=np.float32)
            stop_f = train(task, "nb-stop")
            k = int(stop_f.tables.n_used)
            models = (("nb-static", train(task, "nb-static", budget=k)), ("nb-stop (float32)", stop_f),
                      ("nb-stop --numeric q15", train(task, "nb-stop", numeric="q15")))
            for j, (label, model) in enumerate(models):
                got = counts(model, Path(tmp) / f"e_{spec.replace(':', '_')}_{j}", X, qemu_on)
                cells = []
                for numeric in ("float32", "q15"):
                    p = c_evaluator(model, numeric).predict(np.asarray(task.data.X[task.test], dtype=np.float32))
                    acc = float(np.mean(np.asarray(p.label) == task.y[task.test]))
                    cells.append(f"{acc:.4f} / {float(np.mean(p.n_read)):5.2f}")
                ins = " ".join(f"{'-' if got[w[0], w[1]][2] is None else format(got[w[0], w[1]][2], '.1f'):>18}"
                               for w in walks)
                print(f"{spec:<22} {label:<22} {int(getattr(model.tables, 'n_stops', 0)):>5} {cells[0]:>16} "
                      f"{cells[1]:>16} {ins}", flush=True)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
