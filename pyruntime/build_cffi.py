"""cffi out-of-line API build of runtime_c into ``pyruntime._frugalml_c``.

Every ``runtime_c/src/*.c`` is compiled, and every ``pyruntime/cdefs/*.cdef``
is declared (``common.cdef`` first, then ``linear.cdef``: the feature memo), so a new model family adds its C file
and its cdef file and nothing else.
"""

from __future__ import annotations

from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNTIME = ROOT / "runtime_c"

CFLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"]


def cdef_files() -> list[Path]:
    files = sorted((HERE / "cdefs").glob("*.cdef"))
    # common first, then linear (fm_memo, which every lazily reading family takes), then by name
    return sorted(files, key=lambda p: (p.name != "common.cdef", p.name != "linear.cdef"))


def make_ffi() -> FFI:
    ffi = FFI()
    for path in cdef_files():
        ffi.cdef(path.read_text())
    headers = sorted((RUNTIME / "include").glob("*.h"))
    sources = sorted((RUNTIME / "src").glob("*.c"))
    ffi.set_source(
        "pyruntime._frugalml_c",
        "\n".join(f'#include "{h.name}"' for h in headers),
        sources=[str(s.relative_to(ROOT)) for s in sources],
        include_dirs=[str(RUNTIME / "include")],
        extra_compile_args=CFLAGS,
    )
    return ffi


ffibuilder = make_ffi()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
