"""Joules per prediction of the whole pipeline (raw window in, label out), lazy vs eager, with a meter.

Run: .venv/bin/python benchmarks/energy_pipeline.py [--quick] [--write-docs]
     [--meter METER:PORT --volts V]   (default: the emulated Tenma 72-7730A)

Trains a Greedy Miser on uea:BasicMotions with the feature costs profiled on Cortex-M4F (the bundled
costs_cortex-m4f.csv), exports it with 20 raw test windows, builds runtime_c/tools/fm_window_workload.c on this
machine (cc -O2) and measures it with `frugalml power run`: A = lazy (features computed as the model reads them),
B = eager (every planned feature first, the same model), alternating A B A B. With the emulated meter the current
is the same in both phases (150 mA over 100 mA idle at 5 V), so the ratio is the ratio of time per prediction on
this machine; on a Pi with a real meter, the same run measures the draw (docs/power.md).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures  # noqa: E402
from benchmarks.pipeline_parts.runs import frugalml  # noqa: E402
from pyruntime.build_cffi import runtime_include_flags, runtime_sources  # noqa: E402
from pyruntime.data import BUNDLED_WINDOWS  # noqa: E402

COSTS = BUNDLED_WINDOWS / "BasicMotions" / "costs_cortex-m4f.csv"
WINDOWS = BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TEST.ts"
TOOL = ROOT / "runtime_c" / "tools" / "fm_window_workload.c"
EMULATE = "idle=100mA,A=150mA,B=150mA,noise=0.5mA,interval=0.02"


def build_workload(model: Path, work: Path, cc: str = "cc") -> Path:
    """The workload program of model (its header with 20 raw windows)."""
    header = work / "model.h"
    frugalml("export-c", model, "-o", header, "--embed", WINDOWS, "--rows", "20")
    exe = work / "fm_window_workload"
    subprocess.run([cc, "-std=c99", "-O2", "-ffp-contract=off", *runtime_include_flags(),
                    f"-DFM_MODEL_HEADER=\"{header}\"", str(TOOL), *map(str, runtime_sources()), "-o", str(exe)],
                   check=True)
    return exe


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meter", default="emulated:tenma-72-7730a")
    ap.add_argument("--volts", type=float, default=5.0)
    ap.add_argument("--quick", action="store_true", help="short phases, 8 samples (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    if shutil.which("cc") is None:
        print("error: no C compiler 'cc' on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fm_energy_pipeline_") as tmp:
        work = Path(tmp)
        model = work / "activity.msgpack"
        frugalml("train", "miser", "uea:BasicMotions", "--costs", COSTS, "-o", model)
        exe = build_workload(model, work)
        for mode in ("lazy", "eager"):  # the workload's mode is the model path's ending
            shutil.copy(model, work / f"activity.{mode}")
        run = ["power", "run", "--meter", args.meter, "--volts", str(args.volts), "--model", work / "activity.lazy",
               "--compare", work / "activity.eager", "--data", "uea:BasicMotions",
               "--workload-cmd", f"{exe} {{model}} {{seconds}}", "--idle-seconds", "0.5" if args.quick else "3",
               "--min-samples", "8" if args.quick else "30", "--settle-seconds", "0.1", "-o", work / "run"]
        if args.meter.startswith("emulated:"):
            run += ["--emulate", EMULATE]
        report = frugalml(*run)
    print(f"whole pipeline on uea:BasicMotions (20 raw test windows, 6 x 100 samples), miser on M4F costs; "
          f"meter {args.meter}" + (f" ({EMULATE})" if args.meter.startswith("emulated:") else ""))
    for line in report.splitlines():
        if line.startswith(("A (", "B (", "  energy per prediction", "energy ratio")):
            print(line.replace(str(work) + "/", ""))
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
