"""Guest instructions per prediction on Cortex-M under QEMU, and flash bytes of the image.

Usage: .venv/bin/python benchmarks/common/qemu_count.py MODEL.h [--target cortex-m3] [--machine NAME]

MODEL.h is a generated header with embedded rows (`frugalml export-c M -o MODEL.h --target T
--embed DATA --rows N`). The bare-metal self-test of firmware_examples/cortex_m is built twice,
evaluating the rows once (REPEAT=1) and twice (REPEAT=2), and run under qemu-system-arm with the
repository's instruction-counting TCG plugin (runtime_c/tools/qemu_insn_count.c, built with
`make -C runtime_c qemu-plugin`). Start-up, printing and exit are the same in both runs, so

    instructions per prediction = (count(REPEAT=2) - count(REPEAT=1)) / FM_N_ROWS

(the self-test reads REPEAT from flash through a volatile, so both images run the same code).
which is the prediction call plus the self-test's row loop (a handful of instructions per row).
Counts are exact and repeat run to run (TCG counts executed guest instructions; no timing).
Flash bytes: text + rodata + exidx + data of the REPEAT=1 image (arm-none-eabi-size, the
Makefile's `size` target), i.e. runtime code + tables + embedded rows + the self-test.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware_examples" / "cortex_m"
PLUGIN = ROOT / "runtime_c" / "build" / "qemu_insn_count.so"
TARGETS = ("cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33")


def missing_tools() -> str | None:
    """Why Cortex-M counts cannot run here (a missing tool), or None."""
    gone = [t for t in ("qemu-system-arm", "arm-none-eabi-gcc", "make") if shutil.which(t) is None]
    return f"{', '.join(gone)} not installed (make toolchains)" if gone else None


def cortex_m_columns(no_qemu: bool, quick: bool, quick_note: str) -> bool:
    """Whether a benchmark counts its Cortex-M columns: not with --no-qemu, not in --quick (prints quick_note), not
    without the tools (prints why)."""
    if no_qemu:
        return False
    if quick:
        print(f"note: --quick: Cortex-M columns not counted ({quick_note})")
        return False
    if (why := missing_tools()) is not None:
        print(f"note: Cortex-M columns skipped: {why}")
        return False
    return True


def plugin_path() -> Path:
    """The counting plugin, built on first use (host gcc)."""
    subprocess.run(["make", "-s", "-C", str(ROOT / "runtime_c"), "qemu-plugin"], check=True,
                   stdout=subprocess.DEVNULL)
    return PLUGIN


def _make(header: Path, target: str, build: Path, repeat: int, goal: str, machine: str | None,
          extra: list[str] | None = None) -> str:
    args = ["make", "-s", "-C", str(FIRMWARE), f"MODEL={header.resolve()}", f"TARGET={target}",
            f"BUILD={build}", f"REPEAT={repeat}", "QEMU_TIMEOUT=120", goal, *(extra or [])]
    if machine:
        args.append(f"MACHINE={machine}")
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def n_rows(header: Path) -> int:
    m = re.search(r"#define FM_N_ROWS (\d+)", header.read_text())
    if m is None:
        raise ValueError(f"{header}: no embedded rows (export it with --embed DATA --rows N)")
    return int(m.group(1))


def run_count(header: Path, target: str, repeat: int, work: Path, machine: str | None = None,
              extra: list[str] | None = None) -> int:
    """Guest instructions of one whole self-test run (start-up to exit); extra: more make variables
    (e.g. APP=/abs/other_main.c, CFLAGS=...)."""
    out = work / f"insns_{repeat}"
    build = work / f"build_{target}_{repeat}"
    _make(header, target, build, repeat, "run", machine, [f"QEMU_PLUGIN={plugin_path()},out={out}", *(extra or [])])
    m = re.match(r"insns (\d+)", out.read_text())
    if m is None:
        raise RuntimeError(f"the counting plugin wrote no count to {out}")
    return int(m.group(1))


def count_cortex_m(header: Path, target: str = "cortex-m3", machine: str | None = None,
                   extra: list[str] | None = None) -> float:
    """Guest instructions per prediction (prediction call + the self-test's row loop); extra as run_count
    (benchmarks/runtime.py counts emlearn's forest with APP=benchmarks/c/em_trees_selftest.c)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
    rows = n_rows(header)
    with tempfile.TemporaryDirectory(prefix="fm_qemu_count_") as tmp:
        work = Path(tmp)
        once = run_count(header, target, 1, work, machine, extra)
        twice = run_count(header, target, 2, work, machine, extra)
    return (twice - once) / rows


def flash_bytes(header: Path, target: str = "cortex-m3", machine: str | None = None,
                extra: list[str] | None = None) -> int:
    """Flash bytes of the self-test image: runtime code, tables, embedded rows and the test itself."""
    with tempfile.TemporaryDirectory(prefix="fm_qemu_size_") as tmp:
        text = _make(header, target, Path(tmp) / "build", 1, "size", machine, extra)
    m = re.search(r"flash_bytes (\d+)", text)
    if m is None:
        raise RuntimeError(f"no flash_bytes line in: {text}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("header", type=Path)
    ap.add_argument("--target", default="cortex-m3", choices=TARGETS)
    ap.add_argument("--machine", default=None, help="QEMU machine (default: the target's, targets.mk)")
    a = ap.parse_args()
    per = count_cortex_m(a.header, a.target, a.machine)
    print(f"{a.header}: {a.target}: {per:.1f} instructions per prediction, "
          f"{flash_bytes(a.header, a.target, a.machine)} flash bytes")


if __name__ == "__main__":
    main()
