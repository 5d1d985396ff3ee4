"""NB at the floor: instructions per prediction and per feature read, static vs early-stopping NB.

Usage: .venv/bin/python benchmarks/nb_floor.py [--data keel:magic ...] [--rows 200] [--no-qemu] [--no-peer]
                                               [--form tables|code|both] [--bins quantile:32]

Per data set: `frugalml train nb-static DATA` picks the budget k (best static validation accuracy);
`frugalml train nb-stop DATA --budget k` learns stop points at the same budget. Both are exported
(`export-c --embed DATA --rows N`, tables form and/or `--form code`) and counted on the same rows:
  - x86-64 -O2, valgrind callgrind, instructions of the FM_PREDICT_VEC call only
    (benchmarks/c/nb_count.c), float32 and q15;
  - Cortex-M3 q15 and Cortex-M4F float32 under QEMU with the repository's counting plugin
    (benchmarks/common/qemu_count.py: REPEAT=2 minus REPEAT=1 images; includes the self-test's row loop,
    a handful of instructions per row);
  - the peer: emlearn's GaussianNB (benchmarks/.venv, made on first use by benchmarks/runtime.py)
    on the same rows, x86 callgrind of its predict call (reads every feature).
Per feature read = instructions per prediction / mean features read per prediction (the x86 run's
n_read, identical on the devices: same tables, same rows). Counts, not times: they repeat exactly.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from nb import callgrind, peer  # noqa: E402

from benchmarks.common import figures, peers  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from benchmarks.common.cli import frugalml  # noqa: E402
from benchmarks.common.qemu_count import cortex_m_columns, count_cortex_m  # noqa: E402

DATASETS = ("keel:magic", "keel:spambase", "sklearn:breast_cancer", "sklearn:digits")
QUICK_DATA = "sklearn:breast_cancer"


def train(spec: str, kind: str, out: Path, extra: list[str]) -> Path:
    model = out / f"{kind}.msgpack"
    pos = ["--positive", "8"] if spec == "sklearn:digits" else []
    frugalml("train", kind, spec, *pos, *extra, "-o", model, echo_stderr=False)
    return model


def budget_of(model: Path) -> int:
    sys_path = frugalml("inspect", model, "--json", echo_stderr=False)
    m = re.search(r'"budget": (\d+)', sys_path)
    if m is None:
        raise RuntimeError(f"no budget in `frugalml inspect {model}`")
    return int(m.group(1))


def export(model: Path, numeric: str, spec: str, rows: int, out: Path, form: str = "tables") -> Path:
    header = out / f"{model.stem}_{numeric}_{form}" / "model.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    frugalml("export-c", model, "-o", header, "--numeric", numeric, "--embed", spec, "--rows", str(rows), "--form",
             form, echo_stderr=False)
    return header


def x86_count(header: Path) -> tuple[float, float]:
    """(instructions per prediction, features read per prediction) of the FM_PREDICT_VEC call."""
    fn = re.search(r"#define FM_PREDICT_VEC\(x, n, out\) (\w+)\(", header.read_text())
    rows = int(re.search(r"#define FM_N_ROWS (\d+)", header.read_text()).group(1))  # type: ignore[union-attr]
    assert fn is not None
    exe = callgrind.build_counter(header, header.parent)
    ir, stdout = callgrind.instructions([str(exe), str(rows)], fn.group(1), header.parent / "cg.out")
    return ir / rows, int(stdout.split()[0]) / rows


def qemu(header: Path, target: str) -> float | None:
    try:
        return count_cortex_m(header, target)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
        print(f"note: {target} count failed for {header}: {exc}", file=sys.stderr)
        return None


def peer_count(py: Path, spec: str, rows: int, out: Path) -> tuple[float, int] | None:
    """emlearn GaussianNB instructions per prediction on the first rows of the data (same rows as embedded)."""
    from compiler import tasks

    task = tasks.prepare(spec, "8" if spec == "sklearn:digits" else None, None, 0)
    X, y = task.data.X, task.y
    d = out / "peer"
    d.mkdir(parents=True, exist_ok=True)
    try:
        peer.build_in(py, X[task.train], y[task.train], X[:rows], d)
    except subprocess.CalledProcessError as exc:
        print(f"note: emlearn build failed: {(exc.stderr or '').strip()[-300:]}")
        return None
    ir, _ = callgrind.instructions([str(d / "emlearn_time"), str(d / "rows.bin"), "0"], "peer_predict",
                                   d / "cg.out")
    return ir / rows, X.shape[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="*", default=None, help=f"data sets (default {' '.join(DATASETS)}; "
                                                             f"--quick: {QUICK_DATA})")
    ap.add_argument("--rows", type=positive_int, default=None, help="embedded rows counted (default 200; --quick: 20)")
    ap.add_argument("--no-qemu", action="store_true")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--form", choices=["tables", "code", "both"], default="both",
                    help="export form(s) counted (default both)")
    ap.add_argument("--bins", default=None,
                    help="nb-* --bins of both models (default: the kinds' own, the paper's mean-std; e.g. quantile:32 "
                    "for the fixed-stride walk of many edges)")
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_DATA}, 20 rows, no Cortex-M columns, peers never installed (seconds)")
    figures.add_argument(ap)
    a = ap.parse_args(argv)
    a.data = a.data or ([QUICK_DATA] if a.quick else list(DATASETS))
    a.rows = a.rows or (20 if a.quick else 200)
    forms = ["tables", "code"] if a.form == "both" else [a.form]
    if shutil.which("valgrind") is None:
        print("note: valgrind not installed: no counts (nothing to print)")
        return 0
    a.no_qemu = not cortex_m_columns(a.no_qemu, a.quick, "benchmarks/runtime.py --quick counts one")
    print(f"{'data':<22} {'model':<14} {'k':>3} {'feat':>6} | {'x86 f32':>8} {'/feat':>6} | {'x86 q15':>8} "
          f"{'/feat':>6} | {'M3 q15':>8} {'/feat':>6} | {'M4F f32':>8} {'/feat':>6}")
    py = None if a.no_peer else peers.has("emlearn", create=not a.quick)
    if not a.no_peer and py is None:
        print(peers.skipped("emlearn"))
    with tempfile.TemporaryDirectory(prefix="nb_floor_") as tmp:
        for spec in a.data:
            out = Path(tmp) / spec.replace(":", "_")
            out.mkdir(parents=True)
            bins = ["--bins", a.bins] if a.bins else []
            try:
                static = train(spec, "nb-static", out, bins)
            except subprocess.CalledProcessError as exc:
                print(f"{spec:<22} unavailable: {exc.stderr.decode().strip().splitlines()[-1:]}")
                continue
            k = budget_of(static)
            stop = train(spec, "nb-stop", out, [*bins, "--budget", str(k)])
            for form in forms:
                for name, model in (("static", static), ("stop", stop)):
                    cells = []
                    feats = 0.0
                    for numeric, target in (("float32", None), ("q15", None), ("q15", "cortex-m3"),
                                            ("float32", "cortex-m4f")):
                        if target is None:
                            per, feats = x86_count(export(model, numeric, spec, a.rows, out, form))
                        else:
                            per = None if a.no_qemu else qemu(export(model, numeric, spec, a.rows, out, form),
                                                              target)
                        cells.append(f"{per:8.1f} {per / feats:6.2f}" if per is not None else f"{'-':>8} {'-':>6}")
                    label = f"{name} {form}"
                    print(f"{spec:<22} {label:<14} {k:>3} {feats:6.2f} | " + " | ".join(cells), flush=True)
            if py is not None:
                got = peer_count(py, spec, a.rows, out)
                if got is not None:
                    per, d = got
                    print(f"{spec:<22} {'emlearn':<14} {d:>3} {d:6.2f} | {per:8.1f} {per / d:6.2f} "
                          f"(GaussianNB, x86 callgrind, every feature)", flush=True)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
