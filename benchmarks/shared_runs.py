"""Runs of equal trees in the C tables: a K-class model on shared trees walked once per iteration, against the
same tables walked tree by tree, in one run.

Usage: .venv/bin/python benchmarks/shared_runs.py [--data sklearn:digits] [--trees 100] [--rows 100] [--no-qemu]
                                                  [--quick]

`frugalml train miser DATA --lambda 0 --trees T --class-trees shared` and `frugalml train cascade DATA --trees T`
(the cascade's defaults: shared trees for K > 2 classes, its exits) are exported as tables
(`export-c --embed DATA --rows N`). The header says `/* run */ K` (fm_trees.run, docs/runtime.md: each run of K
trees with equal splits walked once, tree j adding to output j); a copy of the same header with `run` 0 walks
every tree, as before round 18. Both are counted on the same rows:
  - x86-64 -O2, valgrind callgrind, instructions of the FM_PREDICT_VEC call (benchmarks/c/nb_count.c), float32
    and q15;
  - Cortex-M4F float32 and Cortex-M3 q15 under QEMU with the repository's counting plugin
    (benchmarks/common/qemu_count.py; includes the self-test's row loop, a handful of instructions per row).
The answers (labels, scores, reads) are the same either way (tests/test_trees_runtime.py); the counts repeat
exactly. --quick: 10 iterations on wine, 20 rows, x86 only.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.cli import frugalml  # noqa: E402
from benchmarks.common.qemu_count import count_cortex_m, missing_tools  # noqa: E402
from benchmarks.nb_floor import x86_count  # noqa: E402

RUN = re.compile(r"/\* run \*/ (\d+)u")
TARGETS = {"float32": "cortex-m4f", "q15": "cortex-m3"}


def export(model: Path, out: Path, data: str, rows: int, numeric: str, target: str | None) -> tuple[Path, Path, int]:
    """(header with its runs, the same header with run 0, K) of one export."""
    out.mkdir(parents=True, exist_ok=True)
    header = out / "model.h"
    args = ["export-c", model, "-o", header, "--embed", data, "--rows", str(rows)]
    args += ["--target", target] if target else ["--numeric", numeric]
    frugalml(*args, echo_stderr=False)
    text = header.read_text()
    runs = [int(v) for v in RUN.findall(text)]
    flat = out.parent / f"{out.name}_flat" / "model.h"
    flat.parent.mkdir(parents=True, exist_ok=True)
    flat.write_text(RUN.sub("/* run */ 0u", text))
    return header, flat, max(runs, default=0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="a K-class DATA (default sklearn:digits; --quick: sklearn:wine)")
    ap.add_argument("--trees", type=int, default=None, help="iterations (default 100; --quick: 10)")
    ap.add_argument("--rows", type=int, default=None, help="rows embedded and counted (default 100; --quick: 20)")
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
    print(f"{data}, {trees} iterations, {rows} rows: instructions per prediction, tables form, each run of K "
          "equal trees walked once (run = K) against every tree walked (run = 0), same tables and rows")
    print(f"{'model':<10} {'numeric':<8} {'target':<11} {'K':>3} {'run = K':>10} {'run = 0':>10} {'ratio':>7}")
    with tempfile.TemporaryDirectory(prefix="fm_runs_") as tmp:
        work = Path(tmp)
        models = {"miser": ["--lambda", "0", "--class-trees", "shared"], "cascade": []}
        for kind, extra in models.items():
            model = work / f"{kind}.msgpack"
            frugalml("train", kind, data, "-o", model, "--trees", str(trees), *extra, echo_stderr=False)
            for numeric in ("float32", "q15"):
                places = [("x86", None)] + ([(TARGETS[numeric], TARGETS[numeric])] if qemu else [])
                for where, target in places:
                    header, flat, k = export(model, work / f"{kind}_{numeric}_{where}", data, rows, numeric, target)
                    if where == "x86":
                        if shutil.which("valgrind") is None:
                            continue
                        a, b = x86_count(header)[0], x86_count(flat)[0]
                    else:
                        a, b = count_cortex_m(header, where), count_cortex_m(flat, where)
                    print(f"{kind:<10} {numeric:<8} {where:<11} {k:>3} {a:>10.1f} {b:>10.1f} {b / a:>6.2f}x")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
