"""The C runtime on its own: unit tests under ASan/UBSan, warning-free builds,
and generated headers compiled back and compared with the cffi binding."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from compiler.demo import build_row_runner, run_rows
from compiler.header import render_header
from compiler.nb.train import NaiveBayesBudget
from pyruntime.evaluators import c_evaluator
from pyruntime.format import ModelFile

ROOT = Path(__file__).resolve().parent.parent


# each path of include/core/fm_port.h on its own (two tests of about a minute: parallel workers share them)
@pytest.mark.slow
@pytest.mark.parametrize("port", ["native", "portable"])
def test_c_unit_tests_under_sanitizers(tmp_path: Path, port: str) -> None:
    res = subprocess.run(["make", "-s", "-C", str(ROOT / "runtime_c"), "test", f"PORTS={port}", f"BUILD={tmp_path}"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"-- {port} build" in res.stdout
    assert "test_nb: all checks passed" in res.stdout


def test_sources_are_warning_free() -> None:
    res = subprocess.run(["make", "-s", "-C", str(ROOT / "runtime_c"), "warnings"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "gcc: no warnings" in res.stdout


def trained(numeric_rows: int = 60) -> tuple[ModelFile, np.ndarray]:
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 5000)
    X = rng.normal(size=(5000, 25)) + np.outer(2 * y - 1, np.linspace(0.6, 0.02, 25))
    X[rng.random(X.shape) < 0.1] = 0.0
    est = NaiveBayesBudget(budget=20).fit(X[:4000], y[:4000])
    return ModelFile("nb-stop", est.model_, {}), X[4000:4000 + numeric_rows]


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_generated_header_compiles_clean_and_agrees(tmp_path: Path, numeric: str, cc: str) -> None:
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not installed")
    model, X = trained()
    assert model.tables.n_stops > 0
    header = tmp_path / "model.h"
    header.write_text(render_header(model, numeric, "model", X))
    exe = build_row_runner(header, tmp_path, cc=cc)
    labels, n_read, ns = run_rows(exe, seconds=0.01)
    pred = c_evaluator(model, numeric).predict(X)
    np.testing.assert_array_equal(labels, pred.label)
    np.testing.assert_array_equal(n_read, pred.n_read)
    assert ns > 0


def test_header_tables_are_const_and_sized(tmp_path: Path) -> None:
    model, X = trained()
    text = render_header(model, "float32", "model", X)
    decls = [line for line in text.splitlines() if line.startswith("static ")]
    assert decls and all(line.startswith("static const ") for line in decls)
    # the per-feature tables dominate; the stop points add 12 bytes each
    m = model.tables
    n_edges = int(np.max(np.diff(m.edge_start)))
    expected = 4 * m.n_used * (1 + n_edges + n_edges + 2) + 12 * m.n_stops
    assert f"#define MODEL_TABLE_BYTES {expected}u" in text


def test_render_header_loads_the_emitters_itself(tmp_path: Path) -> None:
    """A library user who imports only compiler.header (no kind module yet) can export any kind: the
    emitters register when the kinds load, which c_tables does on first need (a fresh interpreter)."""
    import sys  # noqa: PLC0415

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.integers(0, 2, 200)
    model = ModelFile(kind="nb-static", tables=NaiveBayesBudget(budget=3).fit(X, y).model_)
    from pyruntime import format as fmt  # noqa: PLC0415

    fmt.save(model, tmp_path / "m.msgpack")
    code = ("import sys; from pyruntime import format as fmt; from compiler.header import render_header; "
            "assert 'compiler.nb.kind' not in sys.modules; "
            f"print(len(render_header(fmt.load({str(tmp_path / 'm.msgpack')!r}), 'q15')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    assert int(out) > 100


def test_no_runtime_object_calls_memcpy_on_the_cortex_m0(tmp_path: Path) -> None:
    """Built as the Cortex-M firmware builds it, for the M0 (no unaligned loads), no runtime object calls memcpy:
    every float's bits and every record field are read from an object GCC knows the alignment of (a memcpy from
    a pointer it cannot vouch for becomes a call there: fm_nb.c's record walk made one a feature read until round
    43). memset stays where a buffer is cleared (fm_memo.c)."""
    from firmware_tools import cortex_m0_undefined  # noqa: PLC0415

    from pyruntime.build_cffi import runtime_include_flags, runtime_sources  # noqa: PLC0415

    calls = {}
    for i, src in enumerate(runtime_sources()):
        undefined = cortex_m0_undefined(src, tmp_path / f"{i}.o", *runtime_include_flags())
        calls[src.relative_to(ROOT / "runtime_c" / "src").as_posix()] = undefined & {"memcpy", "memmove", "memset"}
    assert len(calls) > 10 and "nb/fm_nb.c" in calls
    assert {name: s for name, s in calls.items() if s} == {"core/fm_memo.c": {"memset"}}
