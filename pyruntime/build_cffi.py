"""cffi out-of-line API build of runtime_c into ``pyruntime._frugalml_c``, and where runtime_c's files are.

Every ``.c`` under ``runtime_c/src`` (one folder per family plus ``core/``, at any depth) is compiled,
and every folder of headers under ``runtime_c/include`` is on the include path: sources include
headers by bare name. ``runtime_sources`` / ``runtime_source`` / ``runtime_include_flags`` give the
same files to the tests and benchmarks that compile the runtime themselves (runtime_c/runtime.mk is
the Makefile twin). The cdef files are declared in the order of ``CDEF_ORDER`` (a file may use the
types of the files before it); a new model family adds its C folder, its cdef file and one entry
there. A cdef file missing from the list is an error, so none is silently left out.

setup.py's ``ffibuilder`` is ``make_ffi`` itself (cffi calls a function it is given), so importing
this module for the file helpers parses no cdefs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cffi import FFI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNTIME = ROOT / "runtime_c"

CFLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"]


CDEF_ORDER = ("common", "memo", "linear", "trees", "trees_cascade", "trees_gated", "nb", "skyline", "skymodel",
              "cstc", "features")


def runtime_sources(runtime: Path = RUNTIME) -> list[Path]:
    """Every C source of the runtime, in a stable order."""
    return sorted((runtime / "src").rglob("*.c"))


def runtime_family_sources(*families: str, runtime: Path = RUNTIME) -> list[Path]:
    """The sources of ``core/`` and of the named family folders (a build of some families only)."""
    return [p for p in runtime_sources(runtime) if p.relative_to(runtime / "src").parts[0] in ("core", *families)]


def runtime_source(name: str, runtime: Path = RUNTIME) -> Path:
    """The one runtime source named ``name`` (e.g. ``"fm_trees.c"``), in whichever folder it lives."""
    found = [p for p in runtime_sources(runtime) if p.name == name]
    if len(found) != 1:
        raise FileNotFoundError(f"{runtime / 'src'}: {len(found)} files named {name}")
    return found[0]


def runtime_headers(runtime: Path = RUNTIME) -> list[Path]:
    return sorted((runtime / "include").rglob("*.h"))


def runtime_include_dirs(runtime: Path = RUNTIME) -> list[Path]:
    """Every folder of runtime headers (the include path of any build of the runtime)."""
    return sorted({h.parent for h in runtime_headers(runtime)})


def runtime_include_flags(runtime: Path = RUNTIME) -> list[str]:
    """``-I`` flags for a compiler command line."""
    return [f"-I{d}" for d in runtime_include_dirs(runtime)]


def cdef_files() -> list[Path]:
    present = {p.stem: p for p in (HERE / "cdefs").glob("*.cdef")}
    unlisted = sorted(set(present) - set(CDEF_ORDER))
    if unlisted:
        raise RuntimeError(f"pyruntime/cdefs: {', '.join(unlisted)} not in CDEF_ORDER (pyruntime/build_cffi.py)")
    return [present[name] for name in CDEF_ORDER if name in present]


def make_ffi() -> FFI:
    from cffi import FFI

    ffi = FFI()
    for path in cdef_files():
        ffi.cdef(path.read_text())
    ffi.set_source(
        "pyruntime._frugalml_c",
        "\n".join(f'#include "{h.name}"' for h in runtime_headers()),
        sources=[str(s.relative_to(ROOT)) for s in runtime_sources()],
        include_dirs=[str(d) for d in runtime_include_dirs()],
        extra_compile_args=CFLAGS,
    )
    return ffi


ffibuilder = make_ffi

if __name__ == "__main__":
    make_ffi().compile(verbose=True)
