"""cffi out-of-line API build of runtime_c into ``pyruntime._frugalml_c``.

Every ``runtime_c/src/**/*.c`` is compiled (the top folder and one folder per family, e.g. features/), and
every public header ``runtime_c/include/**/*.h`` is included by its path under include/. The cdef files are
declared in the order of ``CDEF_ORDER`` (a file may use the types of the files before it); a
new model family adds its C file, its cdef file and one entry there. A cdef
file missing from the list is an error, so none is silently left out.
"""

from __future__ import annotations

from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNTIME = ROOT / "runtime_c"

CFLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"]


CDEF_ORDER = ("common", "memo", "linear", "trees", "trees_cascade", "trees_gated", "nb", "skyline", "skymodel",
              "cstc", "features")


def cdef_files() -> list[Path]:
    present = {p.stem: p for p in (HERE / "cdefs").glob("*.cdef")}
    unlisted = sorted(set(present) - set(CDEF_ORDER))
    if unlisted:
        raise RuntimeError(f"pyruntime/cdefs: {', '.join(unlisted)} not in CDEF_ORDER (pyruntime/build_cffi.py)")
    return [present[name] for name in CDEF_ORDER if name in present]


def make_ffi() -> FFI:
    ffi = FFI()
    for path in cdef_files():
        ffi.cdef(path.read_text())
    include = RUNTIME / "include"
    headers = sorted(include.rglob("*.h"))
    sources = sorted((RUNTIME / "src").rglob("*.c"))
    ffi.set_source(
        "pyruntime._frugalml_c",
        "\n".join(f'#include "{h.relative_to(include).as_posix()}"' for h in headers),
        sources=[str(s.relative_to(ROOT)) for s in sources],
        include_dirs=[str(RUNTIME / "include")],
        extra_compile_args=CFLAGS,
    )
    return ffi


ffibuilder = make_ffi()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
