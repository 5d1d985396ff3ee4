"""Line and branch coverage of the C runtime under the committed fuzz corpora.

Usage: .venv/bin/python tools/fuzz_coverage.py [--build DIR] [--uncovered] [--min-lines PCT]

Runs `make -C runtime_c fuzz-cov`: every harness of runtime_c/fuzz, built by clang with
source-based coverage (-fprofile-instr-generate -fcoverage-mapping) and a plain main()
(fuzz/replay_main.c), replays its committed corpus and crash inputs once; llvm-profdata merges
the profiles. This script then reads `llvm-cov export -summary-only` and prints, per source file
of runtime_c/src (and the inline code of runtime_c/include), lines and branches covered, and
the totals. `--uncovered` lists the line numbers no input reached, per file (for docs/fuzzing.md);
`--min-lines 90` exits 1 when total line coverage is below 90%.

Code under `#if` for other targets (Thumb-2 assembly, ...) is not compiled on the host and is
not counted. Needs clang, llvm-profdata and llvm-cov (Debian: clang, llvm).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime_c"
SHOW_LINE = re.compile(r"^\s*(\d+)\|\s*(\S*)\|")


@dataclass(frozen=True)
class FileCoverage:
    """Covered and total lines and branches of one source file."""

    path: str
    lines: int
    lines_covered: int
    branches: int
    branches_covered: int

    @staticmethod
    def pct(covered: int, total: int) -> float:
        return 100.0 * covered / total if total else 100.0


def run_profile(build: Path) -> list[Path]:
    """Builds the coverage replays, runs them over the corpora, returns the binaries."""
    p = subprocess.run(["make", "-s", "-C", str(RUNTIME), f"BUILD={build}", "fuzz-cov"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"make fuzz-cov failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return sorted((build / "cov").glob("replay_*"))


def sources() -> list[Path]:
    """The runtime's C sources and headers, found recursively (per-family folders included)."""
    return sorted([*(RUNTIME / "src").rglob("*.c"), *(RUNTIME / "include").rglob("*.h")])


def llvm_cov(cmd: str, build: Path, objects: list[Path], extra: list[str]) -> str:
    args = ["llvm-cov", cmd, str(objects[0])]
    for o in objects[1:]:
        args += ["-object", str(o)]
    args += [f"-instr-profile={build / 'cov' / 'fuzz.profdata'}", *extra, *map(str, sources())]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def summary(build: Path, objects: list[Path]) -> list[FileCoverage]:
    data = json.loads(llvm_cov("export", build, objects, ["-summary-only"]))
    rows = []
    for f in data["data"][0]["files"]:
        s = f["summary"]
        rows.append(FileCoverage(str(Path(f["filename"]).resolve().relative_to(RUNTIME)),
                                 s["lines"]["count"], s["lines"]["covered"],
                                 s["branches"]["count"], s["branches"]["covered"]))
    return sorted(rows, key=lambda r: r.path)


def uncovered_lines(build: Path, objects: list[Path]) -> dict[str, list[int]]:
    """Line numbers with an execution count of 0, per file (llvm-cov show's text form)."""
    out: dict[str, list[int]] = {}
    current = ""
    for line in llvm_cov("show", build, objects, ["-show-line-counts"]).splitlines():
        if line.startswith("/") and line.endswith(":"):
            current = str(Path(line[:-1]).resolve().relative_to(RUNTIME))
            continue
        m = SHOW_LINE.match(line)
        if m and m.group(2) == "0":
            out.setdefault(current, []).append(int(m.group(1)))
    return out


def ranges(numbers: list[int]) -> str:
    """1,2,3,7 -> '1-3, 7'."""
    parts: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:] + [-1]:
        if n != prev + 1:
            parts.append(f"{start}-{prev}" if prev != start else f"{start}")
            start = n
        prev = n
    return ", ".join(parts)


def table(rows: list[FileCoverage]) -> str:
    head = "| file | lines | covered | % | branches | covered | % |\n|---|---:|---:|---:|---:|---:|---:|\n"
    body = "".join(
        f"| {r.path} | {r.lines:,} | {r.lines_covered:,} | {r.pct(r.lines_covered, r.lines):.1f} | "
        f"{r.branches:,} | {r.branches_covered:,} | {r.pct(r.branches_covered, r.branches):.1f} |\n"
        for r in rows)
    lt, lc = sum(r.lines for r in rows), sum(r.lines_covered for r in rows)
    bt, bc = sum(r.branches for r in rows), sum(r.branches_covered for r in rows)
    total = (f"| **total** | {lt:,} | {lc:,} | {FileCoverage.pct(lc, lt):.1f} | {bt:,} | {bc:,} | "
             f"{FileCoverage.pct(bc, bt):.1f} |\n")
    return head + body + total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, default=RUNTIME / "build", help="runtime_c build folder")
    ap.add_argument("--uncovered", action="store_true", help="list the lines no corpus input reaches")
    ap.add_argument("--min-lines", type=float, default=None, help="exit 1 below this total line coverage (%%)")
    args = ap.parse_args(argv)
    build = args.build.resolve()
    objects = run_profile(build)
    if not objects:
        print("no harness was built", file=sys.stderr)
        return 2
    rows = summary(build, objects)
    print(table(rows), end="")
    if args.uncovered:
        for path, numbers in sorted(uncovered_lines(build, objects).items()):
            print(f"{path}: {ranges(numbers)}")
    lt, lc = sum(r.lines for r in rows), sum(r.lines_covered for r in rows)
    if args.min_lines is not None and FileCoverage.pct(lc, lt) < args.min_lines:
        print(f"line coverage {FileCoverage.pct(lc, lt):.1f}% is below {args.min_lines}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
