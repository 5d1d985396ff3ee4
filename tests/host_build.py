"""Build a generated header with the C runtime into a host program (gcc/cc, C99, -Werror, sanitizers)
and run it: what the K-class tests use to check a header's tables and label table against `predict`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pyruntime.build_cffi import runtime_include_flags, runtime_sources

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
    srcs = [str(p) for p in runtime_sources()]
    incs = runtime_include_flags()
    exe = folder / "main"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", *incs, f"-I{folder}", str(folder / "main.c"), *srcs, "-o",
                    str(exe)], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
