"""Runs of equal trees in the C tables: a K-class model on shared trees walked once per iteration with each run's
splits stored once, against the same model's tables in the two older layouts, in one run.

Usage: .venv/bin/python benchmarks/shared_runs.py [--data sklearn:digits] [--trees 100] [--rows 100] [--no-qemu]
                                                  [--quick]

`frugalml train miser DATA --lambda 0 --trees T --class-trees shared` and `frugalml train cascade DATA --trees T`
(the cascade's defaults: shared trees for K > 2 classes, its exits) are exported as tables
(`export-c --embed DATA --rows N`) in three layouts of the same trees (docs/runtime.md):
  - "shared": run = K and shared_splits = 1, what export-c writes since round 21: each run of K trees with equal
    splits walked once, its splits stored once;
  - "copies": run = K, every tree its own copy of the splits (rounds 18-20);
  - "flat": run = 0, every tree walked (before round 18).
The older two are written by the same export with `compact_tables` asked for them (`shared_splits=False`, run
0; and `split_dict=False`: the float32 split dictionary of round 22 did not exist then, "shared" takes it when
export-c does). Each is counted on the same rows:
  - x86-64 -O2, valgrind callgrind, instructions of the FM_PREDICT_VEC call (benchmarks/c/nb_count.c), float32
    and q15;
  - Cortex-M4F float32 and Cortex-M3 q15 under QEMU with the repository's counting plugin
    (benchmarks/common/qemu_count.py; includes the self-test's row loop, a handful of instructions per row);
and its table bytes (the header's NAME_TABLE_BYTES). The answers (labels, scores, reads) are the same in every
layout (tests/test_trees_runtime.py); the counts repeat exactly. --quick: 10 iterations on wine, 20 rows, x86
only.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from benchmarks.common.cli import frugalml  # noqa: E402
from benchmarks.common.qemu_count import count_cortex_m, missing_tools  # noqa: E402
from benchmarks.nb_floor import x86_count  # noqa: E402

RUN = re.compile(r"/\* run \*/ (\d+)u")
BYTES = re.compile(r"_TABLE_BYTES (\d+)u")
TARGETS = {"float32": "cortex-m4f", "q15": "cortex-m3"}
LAYOUTS = ("shared", "copies", "flat")


def _older_tables(layout: str) -> Callable[..., dict[str, Any]]:
    """compact_tables as the header writer calls it, giving an older layout of the same trees."""
    from pyruntime.trees.ensemble import compact_tables  # noqa: PLC0415

    def tables(t: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        c = compact_tables(t, *args, **{**kwargs, "shared_splits": False, "split_dict": False})
        return {**c, "run": 0} if layout == "flat" else c

    return tables


def export(model: Path, out: Path, data: str, rows: int, numeric: str, target: str | None,
           layout: str) -> tuple[Path, int, int]:
    """(header, K, table bytes) of one export in one layout."""
    (out / layout).mkdir(parents=True, exist_ok=True)
    header = out / layout / "model.h"  # the counting harnesses include "model.h"
    args = ["export-c", model, "-o", header, "--embed", data, "--rows", str(rows)]
    args += ["--target", target] if target else ["--numeric", numeric]
    if layout == "shared":
        frugalml(*args, echo_stderr=False)
    else:
        with mock.patch("compiler.header_blocks.compact_tables", _older_tables(layout)):
            frugalml(*args, echo_stderr=False)
    text = header.read_text()
    runs = [int(v) for v in RUN.findall(text)]
    return header, max(runs, default=0), int(BYTES.findall(text)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="a K-class DATA (default sklearn:digits; --quick: sklearn:wine)")
    ap.add_argument("--trees", type=positive_int, default=None, help="iterations (default 100; --quick: 10)")
    ap.add_argument("--rows", type=positive_int, default=None,
                    help="rows embedded and counted (default 100; --quick: 20)")
    ap.add_argument("--no-qemu", action="store_true", help="x86 counts only")
    ap.add_argument("--quick", action="store_true", help="wine, 10 iterations, 20 rows, x86 only (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    data = args.data or ("sklearn:wine" if args.quick else "sklearn:digits")
    trees = args.trees or (10 if args.quick else 100)
    rows = args.rows or (20 if args.quick else 100)
    if shutil.which("valgrind") is None:
        print("note: valgrind is missing: no x86 counts")
    qemu = not (args.quick or args.no_qemu)
    if qemu and (why := missing_tools()) is not None:
        print(f"note: Cortex-M counts skipped: {why}")
        qemu = False
    print(f"{data}, {trees} iterations, {rows} rows: instructions per prediction and table bytes, tables form, "
          "in three layouts of the same trees: runs of K equal trees walked once with their splits stored once "
          "(shared), walked once with a copy per tree (copies), every tree walked (flat)")
    print(f"{'model':<10} {'numeric':<8} {'target':<11} {'K':>3} {'shared':>9} {'copies':>9} {'flat':>9} "
          f"{'flat/shared':>11} {'bytes shared':>12} {'copies':>8} {'flat':>8} {'copies/shared':>13}")
    with tempfile.TemporaryDirectory(prefix="fm_runs_") as tmp:
        work = Path(tmp)
        models = {"miser": ["--lambda", "0", "--class-trees", "shared"], "cascade": []}
        for kind, extra in models.items():
            model = work / f"{kind}.msgpack"
            frugalml("train", kind, data, "-o", model, "--trees", str(trees), *extra, echo_stderr=False)
            for numeric in ("float32", "q15"):
                places = [("x86", None)] + ([(TARGETS[numeric], TARGETS[numeric])] if qemu else [])
                for where, target in places:
                    if where == "x86" and shutil.which("valgrind") is None:
                        continue
                    made = [export(model, work / f"{kind}_{numeric}_{where}", data, rows, numeric, target, lay)
                            for lay in LAYOUTS]
                    k = made[0][1]
                    count = [x86_count(h)[0] if where == "x86" else count_cortex_m(h, where) for h, _, _ in made]
                    size = [b for _, _, b in made]
                    print(f"{kind:<10} {numeric:<8} {where:<11} {k:>3} {count[0]:>9.1f} {count[1]:>9.1f} "
                          f"{count[2]:>9.1f} {count[2] / count[0]:>10.2f}x {size[0]:>12} {size[1]:>8} {size[2]:>8} "
                          f"{size[1] / size[0]:>12.2f}x")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
