"""Build a generated header with the C runtime into a host program (gcc/cc, C99, -Werror, sanitizers)
and run it: what the K-class tests use to check a header's tables and label table against `predict`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

from pyruntime.build_cffi import ROOT, runtime_include_dirs, runtime_include_flags, runtime_sources

# prints FM_LABEL_TEXT(label) and n_read of every embedded row, as the firmware examples do
PRINT_ROWS = (
    "    for (i = 0; i < FM_N_ROWS; ++i) {\n"
    "        if (FM_PREDICT_VEC(FM_ROWS[i], FM_N_FEATURES, &r) != FM_OK) return 1;\n"
    '        printf("%s %u\\n", FM_LABEL_TEXT(r.label), (unsigned)r.n_read);\n    }\n')


def run_with_header(header_text: str, body: str, folder: Path) -> list[str]:
    """Compile main() { uint32_t i; fm_result r; BODY return 0; } with model.h = header_text and the runtime
    (address and undefined-behaviour sanitizers on), run it, return its output lines."""
    (folder / "model.h").write_text(header_text)
    (folder / "main.c").write_text('#include <stdio.h>\n#include "model.h"\n'
                                   "int main(void) {\n    uint32_t i;\n    fm_result r;\n    (void)i;\n    (void)r;\n"
                                   f"{body}    return 0;\n}}\n")
    compile_main(folder).check_returncode()
    return subprocess.run([str(folder / "main")], check=True, capture_output=True, text=True).stdout.splitlines()


def compile_main(folder: Path) -> subprocess.CompletedProcess[str]:
    """folder/main.c (its headers in folder) with the runtime into folder/main: C99, -Werror, address and
    undefined-behaviour sanitizers; the compiler's result (stderr captured) for the caller to check."""
    return subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsanitize=address,undefined",
                           "-fno-sanitize-recover=all", *runtime_include_flags(), f"-I{folder}", str(folder / "main.c"),
                           *map(str, runtime_sources()), "-lm", "-o", str(folder / "main")], capture_output=True,
                          text=True)


def cffi_module(tmp: Path, name: str, cdefs: list[str], include: str, sources: list[Path], portable: bool = False,
                cdef_prefix: str = "") -> Any:
    """A private cffi build of some runtime sources (cdefs: the pyruntime/cdefs files, by stem, in order;
    include: the C text of set_source; portable: -DFM_PORTABLE, the plain C99 path of fm_port.h), loaded."""
    from cffi import FFI  # noqa: PLC0415

    ffi = FFI()
    ffi.cdef(cdef_prefix + "".join((ROOT / "pyruntime" / "cdefs" / f"{c}.cdef").read_text() for c in cdefs))
    ffi.set_source(name, include, sources=[str(s) for s in sources],
                   include_dirs=[str(d) for d in runtime_include_dirs()],
                   extra_compile_args=["-std=c99", "-O2", "-ffp-contract=off", "-Wno-unused-parameter",
                                       *(["-DFM_PORTABLE"] * portable)])
    so = ffi.compile(tmpdir=str(tmp))
    spec = importlib.util.spec_from_file_location(name, so)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def trees_module(tmp: Path, name: str, portable: bool = False) -> Any:
    """The tree and linear runtime (core + trees) as a private cffi module, registered in sys.modules."""
    from pyruntime.build_cffi import runtime_family_sources  # noqa: PLC0415

    mod = cffi_module(tmp, name, ["common", "memo", "linear", "trees"],
                      '#include "fm_linear.h"\n#include "fm_trees.h"\n', runtime_family_sources("trees"), portable)
    sys.modules[name] = mod
    return mod
