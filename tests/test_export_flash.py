"""`frugalml export-c --target/--flash-budget`: the flash bytes of a model's const data are reported (and
equal what arm-none-eabi-gcc puts in .rodata), a model over the budget is refused with one line naming the
remedies and nothing is written, the budget defaults from the target and can be given or disabled."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compiler.cli import cli
from compiler.header import FLASH_BUDGETS, POINTER_BYTES, c_tables, flash_bytes, parse_bytes
from pyruntime import format as fmt
from pyruntime.build_cffi import runtime_include_flags

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "v1"


def run(*args: str | Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return res.exit_code, res.stderr


@pytest.fixture(scope="module")
def big_cstc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cstc model whose one node has 45,000 terms (the fixture's 5 terms repeated): 270,000 bytes of q15
    tables (int32 feature + int16 weight per term), 360,000 in float32 -- over 256 KiB either way."""
    m = fmt.load(FIXTURES / "cstc.msgpack")
    t = m.tables
    assert t.term_start.tolist() == [0, 5]
    reps = 9000
    big = dataclasses.replace(t, feature=np.tile(t.feature, reps), weight=np.tile(t.weight, reps),
                              term_start=np.array([0, 5 * reps], dtype=t.term_start.dtype))
    path = tmp_path_factory.mktemp("flash") / "big_cstc.msgpack"
    fmt.save(fmt.ModelFile(kind=m.kind, tables=big, meta=m.meta), path)
    return path


def test_parse_bytes() -> None:
    assert parse_bytes("262144") == 262144
    assert parse_bytes("256K") == parse_bytes("256k") == parse_bytes("256KiB") == 262144
    assert parse_bytes("1M") == 1048576
    assert parse_bytes("0") is None and parse_bytes("none") is None and parse_bytes("NONE") is None
    for bad in ("", "K", "-5", "1.5K", "12G", "lots"):
        with pytest.raises(ValueError, match="--flash-budget"):
            parse_bytes(bad)


def test_default_budgets() -> None:
    assert {t: FLASH_BUDGETS[t] for t in ("cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33")} == dict.fromkeys(
        ("cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33"), 256 * 1024)
    assert FLASH_BUDGETS["pi"] is None and FLASH_BUDGETS["host"] is None


def linked_rodata(tmp_path: Path, model_path: Path, target: str, *args: str) -> tuple[int, int, str]:
    """(.rodata bytes of an object that uses the model and its label texts, as firmware does; the header's
    MODEL_CONST_BYTES; export-c's stderr), cross-compiled for the Cortex-M target."""
    header = tmp_path / f"{model_path.stem}.h"
    code, err = run("export-c", model_path, "-o", header, "--target", target, *args)
    assert code == 0, err
    reported = int(re.search(r"#define MODEL_CONST_BYTES (\d+)u", header.read_text()).group(1))  # type: ignore[union-attr]
    src = tmp_path / f"{model_path.stem}.c"
    src.write_text(f'#include "{header.name}"\nconst void *keep(void) {{ return &model; }}\n'
                   "const char *label(int i) { return FM_LABEL_TEXT(i); }\n")
    obj = tmp_path / f"{model_path.stem}.o"
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", f"-mcpu={target.removesuffix('f')}", "-mthumb", "-O2",
                    *runtime_include_flags(), "-c", str(src), "-o", str(obj)], check=True)
    sections = subprocess.run(["arm-none-eabi-size", "-A", str(obj)], capture_output=True, text=True,
                              check=True).stdout
    return sum(int(m.group(1)) for m in re.finditer(r"^\.rodata\S*\s+(\d+)", sections, re.M)), reported, err


@pytest.mark.parametrize("target", ["cortex-m3", "cortex-m4f"])
def test_reported_bytes_cover_the_object_file(tmp_path: Path, target: str) -> None:
    """The header's CONST_BYTES (the figure the budget is checked against) is at least the .rodata the cross
    compiler emits for the model and its label table, and exact up to a double array's alignment slack and
    the label texts' rounding to 4 bytes."""
    if shutil.which("arm-none-eabi-gcc") is None or shutil.which("arm-none-eabi-size") is None:
        pytest.skip("missing arm-none-eabi-gcc/size (run `make toolchains`)")
    names = ["nb_stop", "miser", "cascade", "gated", "cstc"] + (["skyline"] if target == "cortex-m4f" else [])
    for name in names:
        model = fmt.load(FIXTURES / f"{name}.msgpack")
        rodata, reported, err = linked_rodata(tmp_path, FIXTURES / f"{name}.msgpack", target)
        assert f"{reported:,} bytes of flash" in err
        slack = 4 * sum(a.ctype == "double" for a in c_tables(model, "q15" if target == "cortex-m3" else
                                                              "float32").arrays)
        assert rodata <= reported <= rodata + slack + 4 + 3 * (len(model.classes) + 1), (name, rodata, reported)


def test_long_label_texts_count_against_the_budget(tmp_path: Path) -> None:
    """The label table was left out of CONST_BYTES and the budget (round 66's probe: 40 labels of 247 bytes,
    reported 11,032 bytes of flash where the object's .rodata was 21,116, accepted under a 12K budget)."""
    if shutil.which("arm-none-eabi-gcc") is None or shutil.which("arm-none-eabi-size") is None:
        pytest.skip("missing arm-none-eabi-gcc/size (run `make toolchains`)")
    rng = np.random.default_rng(0)
    rows = [f"{rng.normal() + k:.4f},{rng.normal() - k:.4f},class{k:02d}{'x' * 240}" for k in range(40)
            for _ in range(12)]
    (tmp_path / "long.csv").write_text("f0,f1,label\n" + "\n".join(rows) + "\n")
    model = tmp_path / "long.msgpack"
    assert CliRunner().invoke(cli, ["train", "nb-static", str(tmp_path / "long.csv"), "-o", str(model)]).exit_code == 0
    rodata, reported, _ = linked_rodata(tmp_path, model, "cortex-m4f")
    assert 40 * 248 < rodata <= reported <= rodata + 4 + 3 * 41, (rodata, reported)
    code, err = run("export-c", model, "-o", tmp_path / "x.h", "--target", "cortex-m4f", "--flash-budget", "12K")
    assert code == 2 and f"needs {reported:,} bytes of flash" in err and not (tmp_path / "x.h").exists(), err


@pytest.mark.parametrize("target", ["cortex-m3", "cortex-m4f"])
def test_over_the_target_budget_exits_2_and_writes_nothing(big_cstc: Path, tmp_path: Path, target: str) -> None:
    out = tmp_path / "model.h"
    code, err = run("export-c", big_cstc, "-o", out, "--target", target)
    assert code == 2 and not out.exists()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    numeric = "q15" if target == "cortex-m3" else "float32"
    model = fmt.load(big_cstc)
    need = flash_bytes(model, c_tables(model, numeric), POINTER_BYTES[target])
    assert need > 256 * 1024
    assert f"needs {need:,} bytes of flash" in lines[0] and f"262,144-byte budget of {target}" in lines[0]
    assert "--flash-budget" in lines[0] and "smaller model" in lines[0]


def test_over_budget_leaves_an_existing_output_untouched(big_cstc: Path, tmp_path: Path) -> None:
    out = tmp_path / "model.h"
    out.write_text("/* the previous header */\n")
    code, _ = run("export-c", big_cstc, "-o", out, "--target", "cortex-m3")
    assert code == 2 and out.read_text() == "/* the previous header */\n"


def test_gated_remedy_names_hpc_remote(tmp_path: Path) -> None:
    out = tmp_path / "model.h"
    code, err = run("export-c", FIXTURES / "gated.msgpack", "-o", out, "--target", "cortex-m3", "--flash-budget",
                    "100")
    assert code == 2 and not out.exists()
    assert "--hpc-remote" in err and "DEFER" in err and "smaller f0" in err and "100-byte budget" in err


def test_under_budget_no_budget_and_disabled(big_cstc: Path, tmp_path: Path) -> None:
    out = tmp_path / "model.h"
    # the Pi has no default budget: the big model is written, its size reported
    code, err = run("export-c", big_cstc, "-o", out, "--target", "pi")
    assert code == 0 and out.exists() and "bytes of flash" in err and "flash budget" not in err
    for off in ("0", "none"):
        out.unlink()
        code, err = run("export-c", big_cstc, "-o", out, "--target", "cortex-m3", "--flash-budget", off)
        assert code == 0 and out.exists(), err
    # an explicit budget replaces the target's, in both directions
    code, err = run("export-c", big_cstc, "-o", out, "--target", "cortex-m3", "--flash-budget", "1M")
    assert code == 0 and "of the 1,048,576-byte flash budget" in err
    small = tmp_path / "small.h"
    code, err = run("export-c", FIXTURES / "miser.msgpack", "-o", small, "--flash-budget", "64K")
    assert code == 0 and small.exists() and "of the 65,536-byte flash budget" in err
    code, err = run("export-c", FIXTURES / "miser.msgpack", "-o", tmp_path / "tiny.h", "--flash-budget", "64")
    assert code == 2 and "64-byte budget:" in err and not (tmp_path / "tiny.h").exists()


def test_bad_budget_value(tmp_path: Path) -> None:
    code, err = run("export-c", FIXTURES / "miser.msgpack", "-o", tmp_path / "m.h", "--flash-budget", "lots")
    assert code == 2 and err.strip().splitlines() == [
        "error: --flash-budget must be a byte count with an optional K or M suffix (e.g. 262144, 256K, 1M) or "
        "none, got 'lots'"]
    assert not (tmp_path / "m.h").exists()


def test_code_form_reports_and_refuses_on_its_constants(tmp_path: Path) -> None:
    """--form code: the written line gives the tables' bytes as the code's lower bound, and a budget below them
    refuses the model saying so (nothing written)."""
    miser = FIXTURES / "miser.msgpack"
    need = flash_bytes(fmt.load(miser), c_tables(fmt.load(miser), "q15"), POINTER_BYTES["cortex-m3"])
    out = tmp_path / "code.h"
    code, err = run("export-c", miser, "-o", out, "--target", "cortex-m3", "--form", "code")
    assert code == 0 and out.exists() and f"at least {need:,} bytes of flash" in err, err
    code, err = run("export-c", miser, "-o", tmp_path / "tiny.h", "--target", "cortex-m3", "--form", "code",
                    "--flash-budget", str(need - 1))
    assert code == 2 and not (tmp_path / "tiny.h").exists()
    assert f"needs {need:,} bytes of flash (its q15 tables; the code form needs at least as much)" in err, err
