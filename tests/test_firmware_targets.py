"""Firmware examples on their targets, under emulation: every printed
prediction (label and features read) equals `frugalml predict` on the same
rows with the same tables, and the exit codes are the documented ones."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from firmware_tools import (
    CORTEX_M,
    CORTEX_M_TOOLS,
    PI,
    PI_TOOLS,
    RUNTIME,
    cortex_m_lines,
    embedded_bytes,
    expected_lines,
    frugalml,
    make,
    require_tools,
    size_report,
)

from compiler.codegen import render_code_header
from compiler.header import numeric_for, render_header
from compiler.kinds import load_kind_modules
from pyruntime import format as fmt
from pyruntime.build_cffi import runtime_include_flags, runtime_source
from pyruntime.data import load_dataset
from pyruntime.evaluators import c_evaluator

load_kind_modules()  # header emitters of every kind (miser too)

# (name, DATA, train options, rows embedded): a dense model without early stops
# and a sparse early-stopping model whose rows stop at different points.
MODELS = {
    "dense": ("sklearn:breast_cancer", (), 40),
    "sparse": ("gen:sparse:1500:400:7", ("--budget", "60"), 30),
}
# a kind with feature costs: the firmware prints a COST column too (non-integer costs: q15 cost units)
COSTED = ("sklearn:breast_cancer", 40)
# Bytes besides a header's tables and rows: runtime code, start-up, the self-test and its printing.
# Measured (gcc 12.2): Cortex-M images 2,300-3,310 B over the header's data; the Pi program 5,000 B
# dynamically linked (host cc), 363,000-478,000 B with the cross toolchains (static glibc).
FIRMWARE_CODE = 4_096
PI_CODE = {"": 8_192, "aarch64-linux-gnu-": 600_000, "arm-linux-gnueabihf-": 600_000}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("fw_models")
    out = {}
    for name, (data, opts, _) in MODELS.items():
        out[name] = work / f"{name}.msgpack"
        frugalml("train", "nb-stop", data, "-o", out[name], *opts)
    return out


@cache
def _rows(name: str) -> np.ndarray:
    data, rows = COSTED if name == "costed" else (MODELS[name][0], MODELS[name][2])
    return load_dataset(data).X[:rows]


@pytest.fixture(scope="module")
def costed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("fw_costed")
    costs = work / "costs.csv"
    costs.write_text("feature,cost\n" + "".join(f"{j},{0.3 + 0.7 * (j % 4)}\n" for j in range(30)))
    frugalml("train", "miser", COSTED[0], "-o", work / "miser.msgpack", "--costs", costs, "--trees", "20",
             "--lambda", "0.05")
    return work / "miser.msgpack"


@pytest.mark.parametrize(("target", "machine", "numeric"), [("cortex-m3", "mps2-an385", None),
                                                              ("cortex-m4f", "mps2-an386", None),
                                                              ("cortex-m0", "microbit", None)])
def test_cortex_m_prints_the_cost_column_of_predict(costed: Path, tmp_path: Path, target: str, machine: str,
                                                    numeric: str | None) -> None:
    """A costed kind (miser): LABEL FEATURES_READ COST, byte-identical to `frugalml predict` (float32 and
    q15 tables, soft-float and FPU cores)."""
    require_tools(*CORTEX_M_TOOLS)
    header, expected = export(costed, "costed", tmp_path, target, numeric)
    assert all(len(line.split()) == 3 for line in expected)
    assert len({line.split()[2] for line in expected}) >= 2 and any("." in line.split()[2] for line in expected)
    assert cortex_m_lines(header, target, machine, tmp_path / "b") == expected
    cli = frugalml("predict", costed, COSTED[0], "--rows", str(COSTED[1]), "--target", target)
    assert cli.splitlines() == expected


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_raspberry_pi_prints_the_cost_column_of_predict(costed: Path, tmp_path: Path, numeric: str) -> None:
    require_tools(*PI_TOOLS["aarch64-linux-gnu-"])
    header, expected = export(costed, "costed", tmp_path, "pi", numeric)
    assert all(len(line.split()) == 3 for line in expected)
    p = make(PI, f"MODEL={header}", "CROSS=aarch64-linux-gnu-", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected


def export(model: Path, name: str, out: Path, target: str, numeric: str | None = None,
           form: str = "tables") -> tuple[Path, list[str]]:
    """Header with embedded rows (tables or generated code), and the lines `frugalml predict` prints for
    them (in process: the same export and evaluator functions the CLI calls; test_cli_interface runs the
    commands)."""
    m = fmt.load(model)
    num = numeric_for(target, numeric)
    header = out / "model.h"
    render = render_code_header if form == "code" else render_header
    header.write_text(render(m, num, "model", _rows(name), target))
    return header, expected_lines(m, num, _rows(name))


def test_cli_interface_cortex_m3(models: dict[str, Path], tmp_path: Path) -> None:
    """The documented commands end to end: export-c --embed, make run, predict."""
    require_tools(*CORTEX_M_TOOLS)
    data, _, rows = MODELS["sparse"]
    header = tmp_path / "model.h"
    frugalml("export-c", models["sparse"], "-o", header, "--target", "cortex-m3", "--embed", data, "--rows", str(rows))
    expected = frugalml("predict", models["sparse"], data, "--rows", str(rows), "--target", "cortex-m3")
    p = make(CORTEX_M, f"MODEL={header}", "TARGET=cortex-m3", f"BUILD={tmp_path / 'b'}", "run")
    assert p.stdout == expected and len(expected.splitlines()) == rows


def test_cortex_m_build_of_a_header_without_rows_fails_with_one_error(models: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    """A header exported without --embed: the build stops on the one #error naming the fix, with no cascade of
    undeclared names after it (a deployer's trial saw a dozen)."""
    require_tools(*CORTEX_M_TOOLS)
    header = tmp_path / "model.h"
    frugalml("export-c", models["sparse"], "-o", header, "--target", "cortex-m3")
    p = make(CORTEX_M, f"MODEL={header}", "TARGET=cortex-m3", f"BUILD={tmp_path / 'b'}", "run", check=False)
    errors = [line for line in p.stderr.splitlines() if "error:" in line]
    assert p.returncode != 0
    assert len(errors) == 1 and "export it with --embed DATA --rows N" in errors[0], p.stderr


def test_sparse_model_stops_early_on_some_rows(models: dict[str, Path], tmp_path: Path) -> None:
    """The sparse model exercises the stop points: rows end after different numbers of features."""
    _, expected = export(models["sparse"], "sparse", tmp_path, "host")
    assert len({line.split()[1] for line in expected}) >= 2


CORTEX_M_CASES = [
    ("cortex-m0", "microbit", None),
    ("cortex-m0", "mps2-an385", None),
    ("cortex-m3", "mps2-an385", None),
    ("cortex-m3", "mps2-an385", "float32"),  # soft-float evaluation of float tables
    ("cortex-m4f", "mps2-an386", None),
    ("cortex-m4f", "mps2-an386", "q15"),
    ("cortex-m33", "mps2-an505", None),
]


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize(("target", "machine", "numeric"), CORTEX_M_CASES)
def test_cortex_m_matches_predict(models: dict[str, Path], tmp_path: Path, name: str, target: str, machine: str,
                                  numeric: str | None) -> None:
    require_tools(*CORTEX_M_TOOLS)
    header, expected = export(models[name], name, tmp_path, target, numeric)
    assert cortex_m_lines(header, target, machine, tmp_path / "b") == expected
    flash, ram = size_report(make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"MACHINE={machine}",
                                  f"BUILD={tmp_path / 'b'}", "size").stdout)
    # tables and rows stay in flash (no RAM copies); the runtime and the self-test add at most FIRMWARE_CODE
    assert embedded_bytes(header) < flash <= embedded_bytes(header) + FIRMWARE_CODE and ram < 1024


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize("cross", sorted(PI_TOOLS))
def test_raspberry_pi_matches_predict(models: dict[str, Path], tmp_path: Path, cross: str, numeric: str) -> None:
    require_tools(*PI_TOOLS[cross])
    header, expected = export(models["sparse"], "sparse", tmp_path, "pi", numeric)
    p = make(PI, f"MODEL={header}", f"CROSS={cross}", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected
    flash, _ = size_report(make(PI, f"MODEL={header}", f"CROSS={cross}", f"BUILD={tmp_path / 'b'}", "size").stdout)
    assert embedded_bytes(header) < flash <= embedded_bytes(header) + PI_CODE[cross]


def _csv_of_rows(header: Path, path: Path) -> int:
    """The header's embedded rows as a CSV with a header line (same float32 text)."""
    text = header.read_text()
    body = text[text.index("_rows["):]
    rows = re.findall(r"^\s*\{([^}]*)\},$", body, re.M)
    n = len(rows[0].split(","))
    path.write_text(",".join(f"x{i}" for i in range(n)) + "\n" + "\n".join(r.replace("f", "") for r in rows) + "\n")
    return len(rows)


def test_raspberry_pi_reads_rows_from_a_file_and_loops_a_workload(models: dict[str, Path], tmp_path: Path) -> None:
    require_tools(*PI_TOOLS["aarch64-linux-gnu-"])
    header, expected = export(models["dense"], "dense", tmp_path, "pi")
    csv = tmp_path / "rows.csv"
    assert _csv_of_rows(header, csv) == len(expected)
    build = f"BUILD={tmp_path / 'b'}"
    cross = "CROSS=aarch64-linux-gnu-"
    p = make(PI, f"MODEL={header}", cross, build, "run", f"ARGS={csv}")
    assert p.stdout.splitlines() == expected
    p = make(PI, f"MODEL={header}", cross, build, "run", f"ARGS=-q -n 7 {csv}")
    assert p.stdout.strip().startswith('{"predictions": ' + str(7 * len(expected)) + ",")
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3\n")
    p = make(PI, f"MODEL={header}", cross, build, "run", f"ARGS={bad}", check=False)
    assert p.returncode != 0 and "expected 30 numbers" in p.stderr


def _poison_first_row(header: Path) -> None:
    """Every value of embedded row 0 becomes NaN: the runtime must refuse it."""
    text = header.read_text()
    start = text.index("{", text.index("{", text.index("_rows[")) + 1)
    end = text.index("}", start)
    n = len(text[start + 1:end].split(","))
    header.write_text(text[:start + 1] + ", ".join(["NAN"] * n) + text[end:])


@pytest.mark.parametrize("target", ["cortex-m3", "cortex-m4f"])
def test_cortex_m_failed_prediction_exits_1(models: dict[str, Path], tmp_path: Path, target: str) -> None:
    require_tools(*CORTEX_M_TOOLS)
    header, _ = export(models["dense"], "dense", tmp_path, target)
    _poison_first_row(header)
    p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert "error 0 -3: a feature value is NaN or infinite" in p.stdout  # FM_E_VALUE on row 0, fm_strerror
    assert re.search(r"Error 1$", p.stderr.strip(), re.M), p.stderr


def test_raspberry_pi_failed_prediction_exits_1(models: dict[str, Path], tmp_path: Path) -> None:
    require_tools(*PI_TOOLS["aarch64-linux-gnu-"])
    header, _ = export(models["dense"], "dense", tmp_path, "pi")
    _poison_first_row(header)
    p = make(PI, f"MODEL={header}", "CROSS=aarch64-linux-gnu-", f"BUILD={tmp_path / 'b'}", "run", check=False)
    assert "row 0: prediction failed (error -3: a feature value is NaN or infinite)" in p.stderr
    assert re.search(r"Error 1$", p.stderr.strip(), re.M), p.stderr


@pytest.mark.parametrize("name", sorted(MODELS))
def test_native_build_under_sanitizers(models: dict[str, Path], tmp_path: Path, name: str) -> None:
    """The Pi program built natively with ASan + UBSan: no out-of-table read, no overflow."""
    require_tools("gcc")
    for numeric in ("float32", "q15"):
        header, expected = export(models[name], name, tmp_path, "host", numeric)
        p = make(PI, f"MODEL={header}", "CROSS=", f"BUILD={tmp_path / numeric}", "run",
                 "CFLAGS=-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all", check=False)
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines() == expected


GPIOD_STUB = """
struct gpiod_chip;
struct gpiod_line;
struct gpiod_chip *gpiod_chip_open_lookup(const char *name);
struct gpiod_line *gpiod_chip_get_line(struct gpiod_chip *chip, unsigned int offset);
int gpiod_line_request_output(struct gpiod_line *line, const char *consumer, int value);
int gpiod_line_set_value(struct gpiod_line *line, int value);
void gpiod_line_release(struct gpiod_line *line);
void gpiod_chip_close(struct gpiod_chip *chip);
"""


def test_gpio_marker_compiles_against_the_libgpiod_1_api(models: dict[str, Path], tmp_path: Path) -> None:
    """The optional libgpiod marker (GPIO=1) compiles warning-free; the declarations
    are libgpiod 1.6's (Raspberry Pi OS bookworm), so no board or library is needed."""
    require_tools("gcc")
    header, _ = export(models["dense"], "dense", tmp_path, "pi")
    (tmp_path / "gpiod.h").write_text(GPIOD_STUB)
    p = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
                        "-DFM_GPIOD", f"-DFM_MODEL_HEADER=\"{header}\"", f"-I{tmp_path}",
                        *runtime_include_flags(Path(RUNTIME)), f"-I{PI}", str(PI / "fm_pi.c")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


# The generated-code form (export-c --form code) on every core: the same lines as the tables' predict.
# Its header needs no runtime source (only frugalml.h); the examples print fm_strerror's message on a
# failed prediction, so the builds below link fm_common.c alone.
CODE_LINK = f"RUNTIME_SRC={runtime_source('fm_common.c', Path(RUNTIME))}"
CODE_CORTEX_M_CASES = [
    ("costed", "cortex-m0", "microbit"),
    ("costed", "cortex-m3", "mps2-an385"),
    ("costed", "cortex-m4f", "mps2-an386"),
    ("costed", "cortex-m33", "mps2-an505"),
    ("sparse", "cortex-m3", "mps2-an385"),
    ("sparse", "cortex-m4f", "mps2-an386"),
]


@pytest.mark.parametrize(("name", "target", "machine"), CODE_CORTEX_M_CASES)
def test_code_form_on_cortex_m_matches_predict(models: dict[str, Path], costed: Path, tmp_path: Path, name: str,
                                               target: str, machine: str) -> None:
    """A costed miser (trees, COST column) and an early-stopping NB, q15 on M0/M3 and float32 on M4F/M33."""
    require_tools(*CORTEX_M_TOOLS)
    model = costed if name == "costed" else models[name]
    header, expected = export(model, name, tmp_path, target, form="code")
    assert '_FORM "code"' in header.read_text()
    assert cortex_m_lines(header, target, machine, tmp_path / "b", CODE_LINK) == expected


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize("cross", ["aarch64-linux-gnu-", "arm-linux-gnueabihf-"])
def test_code_form_on_raspberry_pi_matches_predict(costed: Path, tmp_path: Path, cross: str, numeric: str) -> None:
    require_tools(*PI_TOOLS[cross])
    header, expected = export(costed, "costed", tmp_path, "pi", numeric, form="code")
    p = make(PI, f"MODEL={header}", f"CROSS={cross}", f"BUILD={tmp_path / 'b'}", CODE_LINK, "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected


def test_code_form_failed_prediction_exits_1(models: dict[str, Path], tmp_path: Path) -> None:
    require_tools(*CORTEX_M_TOOLS)
    header, _ = export(models["dense"], "dense", tmp_path, "cortex-m3", form="code")
    _poison_first_row(header)
    p = make(CORTEX_M, f"MODEL={header}", "TARGET=cortex-m3", f"BUILD={tmp_path / 'b'}", CODE_LINK, "run",
             check=False)
    assert "error 0 -3" in p.stdout  # FM_E_VALUE on row 0
    assert re.search(r"Error 1$", p.stderr.strip(), re.M), p.stderr


@pytest.mark.parametrize(("target", "machine"), [("cortex-m0", "microbit"), ("cortex-m3", "mps2-an385"),
                                               ("cortex-m4f", "mps2-an386")])
def test_code_form_of_a_gated_tree_model_on_cortex_m(tmp_path: Path, target: str, machine: str) -> None:
    """A gated model whose gate, f1 and f0 are tree ensembles (costed), q15 on M0 and M3 (M3: the 16-bit
    compares of MODEL_KEY16, thresholds of both signs) and float32 on M4F."""
    require_tools(*CORTEX_M_TOOLS)
    from test_code_form import random_ensemble  # noqa: PLC0415

    from pyruntime.format import ModelFile  # noqa: PLC0415
    from pyruntime.gated.model import GatedModel  # noqa: PLC0415

    rng = np.random.default_rng(2)  # a seed whose gate sends rows both ways, float32 and q15
    m = GatedModel(n_features=12, gate=random_ensemble(rng, 12, 1), f1=random_ensemble(rng, 12, 1),
                   f0=random_ensemble(rng, 12, 1), costs=rng.choice(np.float32([0.3, 1.0, 2.5]), 12))
    X = rng.normal(size=(30, 12)).astype(np.float32)
    mf = ModelFile("gated", m)
    num = numeric_for(target, None)
    header = tmp_path / "model.h"
    header.write_text(render_code_header(mf, num, "model", X, target))
    pred = c_evaluator(mf, num).predict(X)
    assert len(set(pred.stage.tolist())) == 2  # both f1 and f0 answer some rows
    expected = expected_lines(mf, num, X)
    assert cortex_m_lines(header, target, machine, tmp_path / "b", CODE_LINK) == expected
