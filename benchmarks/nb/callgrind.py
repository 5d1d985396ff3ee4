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


CFLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-pedantic"]
_ARCHIVES: dict[tuple[Path, Path], Path] = {}


def runtime_archive(runtime: Path, work: Path) -> Path:
    """runtime's sources compiled once (-O2) into a static archive under work, reused by later builds."""
    key = (runtime.resolve(), work.resolve())
    if key in _ARCHIVES and _ARCHIVES[key].exists():
        return _ARCHIVES[key]
    objs = work / "runtime_objs"
    objs.mkdir(parents=True, exist_ok=True)
    srcs = runtime_sources(runtime)
    subprocess.run(["cc", *CFLAGS, "-c", *runtime_include_flags(runtime), *map(str, srcs)], check=True, cwd=objs)
    archive = work / "libfrugalml_runtime.a"
    subprocess.run(["ar", "rcs", str(archive), *sorted(str(o) for o in objs.glob("*.o"))], check=True)
    _ARCHIVES[key] = archive
    return archive


def build_counter(header: Path, out: Path, runtime: Path = RUNTIME) -> Path:
    """The harness over header; a code-form header's function is kept out of line (FM_CODE_FN) so that
    callgrind can collect its call. The runtime is compiled once per runtime folder (the header is not one
    of its inputs) and linked from an archive."""
    exe = out / "nb_count"
    lib = runtime_archive(runtime, out.parent)
    subprocess.run(["cc", *CFLAGS, "-DFM_CODE_FN=__attribute__((noinline, noclone))",
                    *runtime_include_flags(runtime), f"-I{header.parent}", str(HERE / "c" / "nb_count.c"), str(lib),
                    "-o", str(exe)], check=True)
    return exe


def instructions(cmd: list[str], function: str, out_file: Path) -> tuple[int, str]:
    """(instructions collected inside `function` and its callees, program stdout)."""
    res = subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={function}",
                          f"--callgrind-out-file={out_file}", *cmd],
                         check=True, capture_output=True, text=True)
    text = out_file.read_text()
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return (int(m.group(1)) if m else 0), res.stdout
