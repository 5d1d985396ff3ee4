"""The Arduino sketch, without an Arduino core: compiled as C++ with
arm-none-eabi-g++ against the runtime, and run on Cortex-M cores under QEMU
with stand-ins (analogRead serves the header's rows as ADC counts, Serial
prints over semihosting); its lines equal `frugalml predict` on the rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from firmware_tools import (
    CORTEX_M_TOOLS,
    FIRMWARE,
    embedded_bytes,
    expected_lines,
    frugalml,
    make,
    object_bytes,
    require_tools,
)

from compiler.codegen import render_code_header
from compiler.header import numeric_for, render_header
from compiler.kinds import load_kind_modules
from pyruntime import format as fmt
from pyruntime.data import load_dataset

# A sketch object (gcc 12.2, -Os) is at least SKETCH_MIN bytes (its own code) and at most its header's tables
# and rows plus SKETCH_CODE: measured 354-410 B in all here (the ADC sketch does not reference the embedded
# rows, so gcc drops them).
SKETCH_MIN = 256
SKETCH_CODE = 1_024

load_kind_modules()  # header emitters of every kind (miser too)

ARDUINO = FIRMWARE / "arduino"
ROWS = 40


@pytest.fixture(scope="module")
def adc_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A model trained on six 10-bit ADC channels (integer counts 0..1023)."""
    work = tmp_path_factory.mktemp("adc")
    rng = np.random.default_rng(11)
    X = rng.integers(0, 1024, size=(600, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] - X[:, 2] + rng.normal(0, 150, 600) > 300).astype(int)
    csv = work / "adc.csv"
    lines = ["a0,a1,a2,a3,a4,a5,label"] + [",".join(map(str, r)) + f",{t}" for r, t in zip(X, y)]
    csv.write_text("\n".join(lines) + "\n")
    model = work / "adc.msgpack"
    frugalml("train", "nb-stop", str(csv), "-o", model, "--target-column", "label")
    return model, csv


def header_and_expected(model: Path, csv: Path, target: str, out: Path, form: str = "tables") -> tuple[Path, list[str]]:
    m = fmt.load(model)
    num = numeric_for(target, None)
    X = load_dataset(str(csv), "label").X[:ROWS]
    header = out / "model.h"
    header.write_text((render_code_header if form == "code" else render_header)(m, num, "model", X, target))
    return header, expected_lines(m, num, X)


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33"])
def test_sketch_compiles_as_cxx(adc_model: tuple[Path, Path], tmp_path: Path, target: str) -> None:
    require_tools("arm-none-eabi-g++")
    header, _ = header_and_expected(*adc_model, target, tmp_path)
    make(ARDUINO, f"MODEL={header}", f"TARGET={target}", f"BUILD={tmp_path / 'b'}", "check")
    # the sketch's code and what it uses of the header, no more
    got = object_bytes(tmp_path / "b" / "sketch.o")
    assert SKETCH_MIN <= got <= embedded_bytes(header) + SKETCH_CODE, got


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m4f"])
def test_sketch_predicts_from_analog_reads(adc_model: tuple[Path, Path], tmp_path: Path, target: str) -> None:
    require_tools("arm-none-eabi-g++", *CORTEX_M_TOOLS)
    header, expected = header_and_expected(*adc_model, target, tmp_path)
    p = make(ARDUINO, f"MODEL={header}", f"TARGET={target}", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected


def test_sketch_prints_the_cost_column_of_a_costed_kind(adc_model: tuple[Path, Path], tmp_path: Path) -> None:
    """A costed kind (miser, non-integer costs): the sketch prints LABEL FEATURES_READ COST like predict."""
    require_tools("arm-none-eabi-g++", *CORTEX_M_TOOLS)
    _, csv = adc_model
    costs = tmp_path / "costs.csv"
    costs.write_text("feature,cost\n" + "".join(f"a{j},{0.25 + 0.5 * j}\n" for j in range(6)))
    model = tmp_path / "miser.msgpack"
    frugalml("train", "miser", str(csv), "-o", model, "--target-column", "label", "--costs", costs, "--trees", "10")
    header, expected = header_and_expected(model, csv, "cortex-m4f", tmp_path)
    assert all(len(line.split()) == 3 for line in expected)
    p = make(ARDUINO, f"MODEL={header}", "TARGET=cortex-m4f", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m4f"])
def test_sketch_runs_the_generated_code_form(adc_model: tuple[Path, Path], tmp_path: Path, target: str) -> None:
    """export-c --form code: the sketch compiles as C++ over the generated code (no model object, no
    runtime source) and prints what `predict` prints."""
    require_tools("arm-none-eabi-g++", *CORTEX_M_TOOLS)
    header, expected = header_and_expected(*adc_model, target, tmp_path, form="code")
    p = make(ARDUINO, f"MODEL={header}", f"TARGET={target}", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected
