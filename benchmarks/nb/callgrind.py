"""Instructions per prediction with valgrind callgrind (a repeatable count)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pyruntime.build_cffi import runtime_include_flags, runtime_sources

RUNTIME = Path(__file__).resolve().parent.parent.parent / "runtime_c"
HERE = Path(__file__).resolve().parent.parent


def runtime_snapshot(out: Path) -> Path:
    """runtime_c as committed (HEAD), so a half-edited working tree cannot break the build."""
    dest = out / "runtime_head"
    if not dest.exists():
        dest.mkdir(parents=True)
        tar = subprocess.run(["git", "-C", str(RUNTIME.parent), "archive", "HEAD", "runtime_c"], check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "runtime_c"


def build_counter(header: Path, out: Path, runtime: Path = RUNTIME) -> Path:
    """The harness over header; a code-form header's function is kept out of line (FM_CODE_FN) so that
    callgrind can collect its call."""
    exe = out / "nb_count"
    src = [str(HERE / "c" / "nb_count.c")] + [str(p) for p in runtime_sources(runtime)]
    subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    "-DFM_CODE_FN=__attribute__((noinline, noclone))",
                    *runtime_include_flags(runtime), f"-I{header.parent}", *src, "-o", str(exe)], check=True)
    return exe


def instructions(cmd: list[str], function: str, out_file: Path) -> tuple[int, str]:
    """(instructions collected inside `function` and its callees, program stdout)."""
    res = subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={function}",
                          f"--callgrind-out-file={out_file}", *cmd],
                         check=True, capture_output=True, text=True)
    text = out_file.read_text()
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return (int(m.group(1)) if m else 0), res.stdout
