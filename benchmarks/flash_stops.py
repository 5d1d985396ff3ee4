"""Flash cost of the early-stopping NB's stop points in linked Cortex-M images (the table of docs/deploy.md).

For each budget k: `frugalml train nb-stop DATA --budget k` on a 2,000-feature generated sparse set; the same
tables with the stop points removed are a static top-k NB. Both are linked into the bare-metal self-test of
firmware_examples/cortex_m (float32 tables for the Cortex-M4F, q15 for the Cortex-M3) and
`arm-none-eabi-size` gives each image's flash bytes. Table and stop bytes are the generated header's
accounting (`c_tables`). Bytes, not times: they repeat exactly with the same compiler. The paper's bound
(Verachtert et al. 2016) is the stop points' memory overhead at k = 10 / 100 / 1000.

    .venv/bin/python benchmarks/flash_stops.py [--quick]      # --quick: k = 10 only
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures  # noqa: E402
from compiler.header import c_tables, render_header  # noqa: E402
from pyruntime import format as fmt  # noqa: E402
from pyruntime.data import load_dataset  # noqa: E402

CORTEX_M = ROOT / "firmware_examples" / "cortex_m"
PAPER_BOUND = {10: 0.15, 100: 0.03, 1000: 0.004}
TARGETS = {"cortex-m4f": "float32", "cortex-m3": "q15"}
TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-size")


def without_stops(model: fmt.ModelFile) -> fmt.ModelFile:
    t = dataclasses.replace(model.tables, stop_at=np.zeros(0, np.uint32), stop_hi=np.zeros(0, np.float32),
                            stop_lo=np.zeros(0, np.float32))
    return fmt.ModelFile(kind="nb-static", tables=t, meta=model.meta)


def image_flash(model: fmt.ModelFile, target: str, row: np.ndarray, work: Path) -> int:
    header = work / "model.h"
    header.write_text(render_header(model, TARGETS[target], "model", row, target))
    p = subprocess.run(["make", "-s", "-C", str(CORTEX_M), f"RUNTIME={ROOT / 'runtime_c'}", f"MODEL={header}",
                        f"TARGET={target}", f"BUILD={work / ('b_' + target)}", "size"],
                       capture_output=True, text=True, check=True)
    line = next(x for x in p.stdout.splitlines() if x.startswith("flash_bytes "))
    return int(line.split()[1])


def train(data: str, k: int, out: Path) -> fmt.ModelFile:
    subprocess.run([sys.executable, "-m", "compiler.cli", "train", "nb-stop", data, "-o", str(out), "--budget",
                    str(k)], cwd=ROOT, check=True, capture_output=True)
    return fmt.load(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="k = 10 only (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print(f"note: {', '.join(missing)} missing (`make toolchains`): no image measured")
        print("| target (numeric) | k | stop points | tables | + stops | overhead | paper | image with / without |")
        return 0
    data = "gen:sparse:3000:2000"
    budgets = [10] if args.quick else sorted(PAPER_BOUND)
    row = load_dataset(data).X[:1]
    print(f"data {data}; nb-stop --budget k; flash of the linked firmware_examples/cortex_m self-test\n")
    print("| target (numeric) | k | stop points | tables | + stops | overhead | paper | image with / without |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="fm_flash_stops_") as tmp:
        work = Path(tmp)
        models = {k: train(data, k, work / f"stop{k}.msgpack") for k in budgets}
        for target, numeric in TARGETS.items():
            for k, model in models.items():
                static = without_stops(model)
                tables = c_tables(static, numeric).table_bytes
                stops = c_tables(model, numeric).table_bytes - tables
                with_img = image_flash(model, target, row, work)
                plain_img = image_flash(static, target, row, work)
                print(f"| {target} ({numeric}) | {k} | {model.tables.n_stops} | {tables:,} B | {stops:,} B | "
                      f"{100 * stops / tables:.3g}% | {100 * PAPER_BOUND[k]:g}% | {with_img:,} / {plain_img:,} B |")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
