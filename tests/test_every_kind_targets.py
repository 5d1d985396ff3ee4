"""Every registered kind on every target, float32 and q15, in both forms of
`export-c` (tables, and generated code where the kind has it): the generated header
with embedded rows runs under QEMU (Cortex-M0/M3/M4F/M33 bare metal, Raspberry
Pi aarch64/armhf Linux user mode) and prints exactly the lines `frugalml
predict` prints for the same tables (label, features read, cost), and the
Arduino sketch compiles it as C++. A kind added later is picked up from the
registry (trained with its defaults unless TRAIN names options)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_work import shifted_binary, write_costs
from click.testing import CliRunner
from firmware_tools import (
    CORTEX_M,
    CORTEX_M_TOOLS,
    FIRMWARE,
    PI,
    PI_TOOLS,
    embedded_bytes,
    expected_lines,
    make,
    object_bytes,
    require_tools,
)

from compiler.cli import cli
from compiler.codegen import code_kinds, render_code_header
from compiler.header import render_header
from compiler.kinds import load_kind_modules
from pyruntime import format as fmt

# A sketch object (gcc 12.2, -Os) is at least SKETCH_MIN bytes (its own code) and at most its header's tables
# and rows plus SKETCH_CODE: measured up to 30,108 B over the header data (adapt-gbrt code form float32: its
# constants are instructions; 28,320 before round 47's f1 leaf penalty l2 1, whose model has 200 B more tables).
SKETCH_MIN = 256
SKETCH_CODE = 32_768

KINDS = sorted(load_kind_modules())
D = 6
ROWS = 16
COSTS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]
# small, fast models; every kind not named here trains with its defaults
TRAIN: dict[str, tuple[str, ...]] = {
    "miser": ("--trees", "12", "--depth", "3", "--lambda", "0.01"),
    "cascade": ("--trees", "12", "--stages", "3", "--depth", "2"),
    "adapt-gbrt": ("--trees", "12", "--hpc", "gbrt"),
    "adapt-lin": ("--hpc", "gbrt"),
    "l1-gate": ("--hpc", "gbrt", "--hpc-remote"),  # f0 off the device: the gate answers DEFER
    "skyline": ("--base", "linear"),
}
NUMERICS: dict[str, tuple[str, ...]] = {}  # kinds with fewer numeric types than float32 and q15 (none since round 19)
CORTEX_M_TARGETS = [("cortex-m0", "microbit"), ("cortex-m3", "mps2-an385"), ("cortex-m4f", "mps2-an386"),
                    ("cortex-m33", "mps2-an505")]
PI_CROSS = ["aarch64-linux-gnu-", "arm-linux-gnueabihf-"]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("every_kind")
    X, y = shifted_binary(600, 5, [1.5, 1.0, 0.5, 0.2, 0.0, 0.0])
    np.savez(d / "data.npz", X=X, y=y)
    write_costs(d / "costs.csv", COSTS, names=[f"x{j}" for j in range(D)])
    return d


def model_of(work: Path, kind: str) -> Path:
    path = work / f"{kind}.msgpack"
    if not path.exists():
        res = CliRunner().invoke(cli, ["train", kind, str(work / "data.npz"), "--costs", str(work / "costs.csv"),
                                       "-o", str(path), *TRAIN.get(kind, ())], catch_exceptions=False,
                                 env={"FRUGALML_PROGRESS": "off"})
        assert res.exit_code == 0, (kind, res.stderr)
    return path


def forms(work: Path, kind: str) -> list[str]:
    """tables, plus code when the model's kind has a code form; a gated model with a linear part is
    refused by the code form with its documented one-line reason."""
    m = fmt.load(model_of(work, kind))
    if m.kind not in code_kinds():
        return ["tables"]
    try:
        render_code_header(m, "float32", "model", None, None)
    except ValueError as e:
        assert m.kind == "gated" and "linear scorer" in str(e), e
        return ["tables"]
    return ["tables", "code"]


def export(work: Path, kind: str, numeric: str, target: str, out: Path,
           form: str = "tables") -> tuple[Path, list[str]]:
    """Header with the first ROWS rows embedded, and the lines `frugalml predict` prints for them."""
    m = fmt.load(model_of(work, kind))
    X = np.load(work / "data.npz")["X"][:ROWS]
    header = out / f"model_{form}_{numeric}.h"
    render = render_code_header if form == "code" else render_header
    header.write_text(render(m, numeric, "model", X, target))
    lines = expected_lines(m, numeric, X)
    assert len(lines) == ROWS
    return header, lines


def run_on(folder: Path, work: Path, tmp_path: Path, kind: str, target: str, args: tuple[str, ...],
           form_list: list[str]) -> None:
    """Each form and numeric of the kind built in the example folder and run: exactly predict's lines."""
    for form in form_list:
        for numeric in NUMERICS.get(kind, ("float32", "q15")):
            header, expected = export(work, kind, numeric, target, tmp_path, form)
            p = make(folder, f"MODEL={header}", *args, f"BUILD={tmp_path / form / numeric}", "run", check=False)
            assert p.returncode == 0, (form, numeric, p.stderr)
            assert p.stdout.splitlines() == expected, (form, numeric)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("target", "machine"), CORTEX_M_TARGETS)
def test_cortex_m(work: Path, tmp_path: Path, kind: str, target: str, machine: str) -> None:
    require_tools(*CORTEX_M_TOOLS)
    run_on(CORTEX_M, work, tmp_path, kind, target, (f"TARGET={target}", f"MACHINE={machine}"), forms(work, kind))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cross", PI_CROSS)
def test_raspberry_pi(work: Path, tmp_path: Path, kind: str, cross: str) -> None:
    require_tools(*PI_TOOLS[cross])
    run_on(PI, work, tmp_path, kind, "pi", (f"CROSS={cross}",), forms(work, kind))


# The portable build (-DFM_PORTABLE: runtime_c/include/core/fm_port.h's plain C99 path, no assembly) of the
# kinds whose tables run fm_trees' walks, the only runtime code with a target-specific path (the code form
# is plain C either way): the same lines on every target.
PORT_KINDS = ("adapt-gbrt", "cascade", "miser")
PORTABLE = "CFLAGS=-O2 -DFM_PORTABLE"


@pytest.mark.parametrize("kind", PORT_KINDS)
@pytest.mark.parametrize(("target", "machine"), CORTEX_M_TARGETS)
def test_cortex_m_portable(work: Path, tmp_path: Path, kind: str, target: str, machine: str) -> None:
    require_tools(*CORTEX_M_TOOLS)
    run_on(CORTEX_M, work, tmp_path, kind, target, (f"TARGET={target}", f"MACHINE={machine}", PORTABLE),
           ["tables"])


@pytest.mark.parametrize("kind", PORT_KINDS)
@pytest.mark.parametrize("cross", PI_CROSS)
def test_raspberry_pi_portable(work: Path, tmp_path: Path, kind: str, cross: str) -> None:
    require_tools(*PI_TOOLS[cross])
    run_on(PI, work, tmp_path, kind, "pi", (f"CROSS={cross}", PORTABLE), ["tables"])


@pytest.mark.parametrize("kind", KINDS)
def test_arduino_sketch_compiles_as_cxx(work: Path, tmp_path: Path, kind: str) -> None:
    require_tools("arm-none-eabi-g++")
    for form in forms(work, kind):
        for numeric in NUMERICS.get(kind, ("float32", "q15")):
            target = "cortex-m4f" if numeric == "float32" else "cortex-m0"
            header, _ = export(work, kind, numeric, target, tmp_path, form)
            build = tmp_path / form / numeric
            make(FIRMWARE / "arduino", f"MODEL={header}", f"TARGET={target}", f"BUILD={build}", "check")
            got = object_bytes(build / "sketch.o")  # the header's tables and rows, and the sketch's code
            assert SKETCH_MIN <= got <= embedded_bytes(header) + SKETCH_CODE, (kind, form, numeric, got)


def test_an_empty_struct_array_compiles_as_cxx(work: Path, tmp_path: Path) -> None:
    """A skyline of NB models (its default base) holds an NB whose position records are empty: the header's one
    placeholder record names every member (compiler.header.c_zero), so g++ -Wextra takes it (round 64: a bare {0}
    was a missing-initializer error in C++, fine in C)."""
    require_tools("arm-none-eabi-g++")
    path = tmp_path / "sky.msgpack"
    res = CliRunner().invoke(cli, ["train", "skyline", str(work / "data.npz"), "-o", str(path)],
                             catch_exceptions=False, env={"FRUGALML_PROGRESS": "off"})
    assert res.exit_code == 0, res.stderr
    header = tmp_path / "sky.h"
    header.write_text(render_header(fmt.load(path), "float32", "model", None, "cortex-m4f"))
    assert "_pos[1] = {\n    {\n" in header.read_text()  # the case this test is for: an empty array's placeholder
    make(FIRMWARE / "arduino", f"MODEL={header}", "TARGET=cortex-m4f", f"BUILD={tmp_path / 'b'}", "check")


def test_pipeline_kinds_names_exactly_the_kinds_with_a_window_pipeline(work: Path) -> None:
    """export-c's warning names the kinds with an on-device feature pipeline from PIPELINE_KINDS, a text written
    beside LAZY_CALLS: it must name exactly the registered kinds whose float32 and q15 tables LAZY_CALLS evaluates
    window by window (a kind added to LAZY_CALLS, or one whose tables change struct, fails here)."""
    from compiler.header import c_tables
    from compiler.pipeline_header import LAZY_CALLS, PIPELINE_KINDS

    named = {k.strip() for part in PIPELINE_KINDS.split(" and ") for k in part.split(",")}
    lazy = {kind for kind in KINDS
            if all(c_tables(fmt.load(model_of(work, kind)), num).struct_type in LAZY_CALLS
                   for num in ("float32", "q15"))}
    assert named == lazy
