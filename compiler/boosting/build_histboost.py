"""cffi out-of-line API build of histboost.c into ``compiler.boosting._histboost`` (at install, like
the runtime: setup.py's cffi_modules). The cdef is histboost.h without its preprocessor lines
(its integer constants kept)."""

from __future__ import annotations

import re
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CFLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra"]


def cdef_text() -> str:
    """histboost.h without its preprocessor lines, its integer constants (``#define NAME 123``) kept."""
    lines = (HERE / "histboost.h").read_text().splitlines()
    return "\n".join(line for line in lines
                     if not line.lstrip().startswith("#") or re.fullmatch(r"#define \w+ \d+", line.strip()))


def make_ffi() -> FFI:
    ffi = FFI()
    ffi.cdef(cdef_text())
    ffi.set_source("compiler.boosting._histboost", '#include "histboost.h"',
                   sources=[str((HERE / "histboost.c").relative_to(ROOT))], include_dirs=[str(HERE)],
                   extra_compile_args=CFLAGS)
    return ffi


ffibuilder = make_ffi()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
