"""Budget index (skyline) at the floor: instructions per prediction at several budgets, x86 / Cortex-M3 / Cortex-M4F.

Usage: .venv/bin/python benchmarks/skyline_count.py [--data sklearn:breast_cancer ...] [--bases nb linear]
                                                    [--rows 200] [--qemu-rows 50] [--no-qemu]

Per data set (all classes: sklearn:digits gives the K-class tables) and base: `frugalml train skyline DATA
--base B --method greedy-acc --max-sets S` (every feature costs 1, sizes 0 .. inf, the empty model indexed; S:
the whole forward selection, d(d+1)/2 sets, for the NB base as benchmarks/multiclass.py trains it, 256 for the
linear base, whose fits were 20-50x slower under a two-thread BLAS, about 2.5x since round 50's one thread
(docs/scaling.md); a fixed search, not `--method auto`, whose cap depends on a timing and
so would change the models run to run). The budgets: +inf (the stored default: the most accurate model, "best"),
1/2 and 1/4 of that model's cost (at the default size), and 0: the empty model (majority class, reads nothing),
i.e. the lookup and the call's fixed overhead, the nearest to the lookup alone on the devices. Each budget is
the same model file with its default budget replaced (compiler.skyline.kind.skyline_at, what `eval --budget`
uses), exported with `export-c --embed DATA --rows N` (tables: the only form skyline exports),
so FM_PREDICT_VEC (fm_skymodel_predict_vec, or its fm_skymodel_q15_ form) runs at that budget:
  - x86-64 -O2, valgrind callgrind, instructions of the FM_PREDICT_VEC call only (benchmarks/c/nb_count.c,
    --toggle-collect on the predict function), float32 and q15; "lookup": the same rows counted again with
    --toggle-collect=fm_skyline_select, the index lookup alone (two binary searches and the chosen model's cost
    polynomial, in double; a function of its own in the runtime's archive, so it is never inlined);
  - Cortex-M3 q15 and Cortex-M4F float32 under QEMU with the repository's counting plugin
    (benchmarks/common/qemu_count.py: REPEAT=2 minus REPEAT=1 self-test images over --qemu-rows rows; includes
    the self-test's row loop, a handful of instructions per row). The index, budget, size and cost are doubles
    in both numeric forms: on the Cortex-M3 (no FPU) and the M4F (single-precision FPU) the lookup's double
    arithmetic is software.
Columns: feat = mean features read per prediction (x86 run's n_read; the same tables and rows on the devices),
/feat = instructions per prediction / feat ("-" when the empty model reads nothing), table = MODEL_TABLE_BYTES
of the header (the whole index and every indexed model's tables, the same at every budget).
Counts, not times: they repeat exactly.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from nb import callgrind  # noqa: E402

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from benchmarks.common.cli import frugalml  # noqa: E402
from benchmarks.common.qemu_count import cortex_m_columns, count_cortex_m  # noqa: E402

DATASETS = ("sklearn:breast_cancer", "sklearn:digits")
BASES = ("nb", "linear")
QUICK_DATA = "sklearn:breast_cancer"
FRACTIONS = (None, 0.5, 0.25, 0.0)  # None: +inf, the best model; else that fraction of the best model's cost
LINEAR_MAX_SETS = 256
LOOKUP_FN = "fm_skyline_select"
# (numeric, device target or None for x86): M3 counts the q15 tables, M4F the float32 ones
DEVICES = {"q15": "cortex-m3", "float32": "cortex-m4f"}


@dataclass
class Row:
    data: str
    base: str
    numeric: str
    budget: str
    model: int
    feats: float
    x86: float
    lookup: float | None
    m3: float | None
    m4f: float | None
    table: int


def max_sets(spec: str, base: str, override: int | None) -> int:
    """Sets the greedy-acc search trains: the whole forward selection d(d+1)/2 (NB), LINEAR_MAX_SETS (linear)."""
    if override is not None:
        return override
    if base == "linear":
        return LINEAR_MAX_SETS
    from pyruntime.data import load_dataset  # noqa: PLC0415

    d = int(load_dataset(spec).X.shape[1])
    return d * (d + 1) // 2


def train(spec: str, base: str, out: Path, sets: int) -> Path:
    model = out / f"{base}.msgpack"
    frugalml("train", "skyline", spec, "--base", base, "--method", "greedy-acc", "--max-sets", str(sets), "-o",
             model, echo_stderr=False)
    return model


def budget_variants(model: Path, out: Path) -> list[tuple[str, Path, int]]:
    """(budget label, model file at that default budget, index of the model the lookup picks) per FRACTIONS;
    a budget where nothing fits (budget 0 without the empty model) is left out."""
    from compiler.skyline.kind import skyline_at  # noqa: PLC0415 - imports scikit-learn
    from pyruntime import format as fmt  # noqa: PLC0415

    mf = fmt.load(model)
    tables = mf.tables
    size = tables.default_size
    best = tables.index.lookup(math.inf, size)
    variants = []
    for frac in FRACTIONS:
        budget = math.inf if frac is None else frac * best.cost
        label = f"best={best.cost:g}" if frac is None else f"{budget:g}"
        k = tables.index.lookup(budget, size).model
        if k < 0:
            continue
        path = out / f"{model.stem}_b{'inf' if frac is None else str(frac).replace('.', '')}.msgpack"
        fmt.save(skyline_at(mf, budget, None), path)
        variants.append((label, path, k))
    return variants


def export(model: Path, numeric: str, spec: str, rows: int, out: Path, target: str | None = None) -> Path:
    header = out / f"{model.stem}_{target or numeric}" / "model.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    numeric_args = ["--target", target] if target else ["--numeric", numeric]
    frugalml("export-c", model, "-o", header, *numeric_args, "--embed", spec, "--rows", str(rows),
             echo_stderr=False)
    return header


def x86_count(header: Path, lookup: bool) -> tuple[float, float, float | None, int]:
    """(instructions per prediction of the FM_PREDICT_VEC call, features read per prediction, instructions per
    prediction inside fm_skyline_select or None, table bytes)."""
    text = header.read_text()
    fn = re.search(r"#define FM_PREDICT_VEC\(x, n, out\) (\w+)\(", text)
    rows = re.search(r"#define FM_N_ROWS (\d+)", text)
    table = re.search(r"#define MODEL_TABLE_BYTES (\d+)u", text)
    if fn is None or rows is None or table is None:
        raise RuntimeError(f"{header}: no FM_PREDICT_VEC, FM_N_ROWS or MODEL_TABLE_BYTES")
    n = int(rows.group(1))
    exe = callgrind.build_counter(header, header.parent)
    ir, stdout = callgrind.instructions([str(exe), str(n)], fn.group(1), header.parent / "cg.out")
    sel = None
    if lookup:
        sel_ir, _ = callgrind.instructions([str(exe), str(n)], LOOKUP_FN, header.parent / "cg_lookup.out")
        sel = sel_ir / n
    return ir / n, int(stdout.split()[0]) / n, sel, int(table.group(1))


def qemu(header: Path, target: str) -> float | None:
    try:
        return count_cortex_m(header, target)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
        detail = getattr(exc, "stderr", None) or ""
        print(f"note: {target} count failed for {header}: {exc} {str(detail)[-300:]}", file=sys.stderr)
        return None


def fmt_count(per: float | None, feats: float) -> str:
    if per is None:
        return f"{'-':>9} {'-':>6}"
    return f"{per:9.1f} {per / feats:6.1f}" if feats > 0 else f"{per:9.1f} {'-':>6}"


HEADER = (f"{'data / base':<28} {'numeric':<7} {'budget':>9} {'model':>5} {'feat':>6} | {'x86 instr':>9} {'/feat':>6} "
          f"{'lookup':>6} | {'M3 instr':>9} {'/feat':>6} | {'M4F instr':>9} {'/feat':>6} | {'table B':>7}")


def print_row(r: Row) -> None:
    lookup = f"{r.lookup:6.1f}" if r.lookup is not None else f"{'-':>6}"
    print(f"{r.data + ' ' + r.base:<28} {r.numeric:<7} {r.budget:>9} {r.model:>5} {r.feats:6.2f} | "
          f"{fmt_count(r.x86, r.feats)} {lookup} | {fmt_count(r.m3, r.feats)} | {fmt_count(r.m4f, r.feats)} | "
          f"{r.table:>7}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="*", default=None,
                    help=f"data sets, all classes (default {' '.join(DATASETS)}; --quick: {QUICK_DATA})")
    ap.add_argument("--bases", nargs="*", choices=BASES, default=None,
                    help="skyline bases (default nb linear; --quick: nb)")
    ap.add_argument("--rows", type=positive_int, default=None,
                    help="embedded rows counted on x86 (default 200; --quick: 10)")
    ap.add_argument("--qemu-rows", type=positive_int, default=50, help="embedded rows counted under QEMU (default 50)")
    ap.add_argument("--no-qemu", action="store_true", help="skip the Cortex-M columns")
    ap.add_argument("--max-sets", type=int, default=None,
                    help=f"sets the greedy-acc search trains (default: d(d+1)/2 for nb, {LINEAR_MAX_SETS} for linear)")
    ap.add_argument("--no-lookup", action="store_true", help="skip the x86 lookup-alone column")
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_DATA}, base nb, 10 rows, no Cortex-M columns (seconds)")
    figures.add_argument(ap)
    a = ap.parse_args(argv)
    a.data = a.data or ([QUICK_DATA] if a.quick else list(DATASETS))
    a.bases = a.bases or (["nb"] if a.quick else list(BASES))
    a.rows = a.rows or (10 if a.quick else 200)
    if shutil.which("valgrind") is None:
        print("note: valgrind not installed: no counts (nothing to print)")
        return 0
    a.no_qemu = not cortex_m_columns(a.no_qemu, a.quick, "the full run counts them")
    print(f"skyline (train skyline DATA --base B --method greedy-acc, unit feature costs); instructions of the "
          f"FM_PREDICT_VEC call only; x86 over {a.rows} rows, QEMU over {a.qemu_rows}")
    print("budget: best = +inf (the most accurate model, its cost), 1/2 and 1/4 of that cost, 0 (the empty model: "
          "lookup + call overhead); model: the index of the model the lookup picks; lookup: x86 instructions inside "
          "fm_skyline_select")
    print(HEADER)
    with tempfile.TemporaryDirectory(prefix="skyline_count_") as tmp:
        for spec in a.data:
            for base in a.bases:
                out = Path(tmp) / spec.replace(":", "_")
                out.mkdir(exist_ok=True)
                try:
                    model = train(spec, base, out, max_sets(spec, base, a.max_sets))
                except subprocess.CalledProcessError as exc:
                    err = exc.stderr.decode().strip().splitlines()[-1:] if exc.stderr else []
                    print(f"{spec + ' ' + base:<28} unavailable: {err}")
                    continue
                for label, variant, k in budget_variants(model, out):
                    for numeric in ("float32", "q15"):
                        per, feats, sel, table = x86_count(export(variant, numeric, spec, a.rows, out),
                                                           not a.no_lookup)
                        dev = None
                        if not a.no_qemu:
                            dev = qemu(export(variant, numeric, spec, a.qemu_rows, out, DEVICES[numeric]),
                                       DEVICES[numeric])
                        print_row(Row(spec, base, numeric, label, k, feats, per, sel,
                                      dev if numeric == "q15" else None, dev if numeric == "float32" else None,
                                      table))
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
