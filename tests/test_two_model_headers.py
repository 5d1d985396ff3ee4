"""Two exported models in one C program: the generic FM_* names belong to the first header; a second one
included after `#define FM_NO_GENERIC_NAMES` keeps its own NAME_* names, tables and functions (round 65's probe:
the second header redefined FM_MODEL_KIND and the build failed with -Werror). Without the define the build stops
at an #error that says what to do."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from host_build import compile_main

MAIN = """#include <stdio.h>
#include "alpha.h"
{define}#include "beta.h"
int main(void) {{
    uint32_t i;
    fm_result r;
    for (i = 0; i < FM_N_ROWS; ++i) {{
        if (FM_PREDICT_VEC(FM_ROWS[i], FM_N_FEATURES, &r) != FM_OK) return 1;
        printf("%s ", FM_LABEL_TEXT(r.label));
        if (beta_predict_vec(beta_rows[i], BETA_N_FEATURES, &r) != FM_OK) return 1;
        printf("%s\\n", beta_labels[r.label]);
    }}
    return 0;
}}
"""


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """alpha.h: nb-static tables of 3 classes; beta.h: a miser model in the code form, both with 30 rows embedded;
    the labels `frugalml predict` gives each model, side by side."""
    d = tmp_path_factory.mktemp("two")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(240, 5))
    y = np.array(["walk", "run", "sit"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    lines = ["a,b,c,d,e,label"] + [",".join([*(f"{v:.6g}" for v in x), t]) for x, t in zip(X, y, strict=True)]
    (d / "d.csv").write_text("\n".join(lines) + "\n")
    (d / "rows.csv").write_text("\n".join(lines[:31]) + "\n")
    want: list[list[str]] = []
    for kind, name, form in (("nb-static", "alpha", "tables"), ("miser", "beta", "code")):
        code, _, err = run("train", kind, d / "d.csv", "-o", d / f"{name}.msgpack")
        assert code == 0, err
        code, _, err = run("export-c", d / f"{name}.msgpack", "-o", d / f"{name}.h", "--name", name, "--form", form,
                           "--embed", d / "rows.csv", "--rows", "30")
        assert code == 0, err
        code, out, err = run("predict", d / f"{name}.msgpack", d / "rows.csv")
        assert code == 0, err
        want.append([line.split()[0] for line in out.splitlines()])
    return d, [f"{a} {b}" for a, b in zip(*want, strict=True)]


def build(folder: Path, define: str) -> subprocess.CompletedProcess[str]:
    (folder / "main.c").write_text(MAIN.format(define=define))
    return compile_main(folder)


def test_a_second_header_after_the_define_keeps_its_own_names(headers: tuple[Path, list[str]]) -> None:
    folder, want = headers
    res = build(folder, "#define FM_NO_GENERIC_NAMES\n")
    assert res.returncode == 0, res.stderr
    got = subprocess.run([str(folder / "main")], check=True, capture_output=True, text=True).stdout.splitlines()
    assert got == want and len(got) == 30 and len(set(got)) > 2


def test_a_second_header_without_the_define_says_what_to_do(headers: tuple[Path, list[str]]) -> None:
    folder, _ = headers
    res = build(folder, "")
    assert res.returncode != 0
    assert ("a second frugalml model header: #define FM_NO_GENERIC_NAMES before including it (the generic FM_* "
            "names are the first model's; use this one's BETA_* names)") in res.stderr
    assert "redefined" not in res.stderr
