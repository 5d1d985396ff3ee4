"""Flash cost of the early-stopping NB's stop points on a 2,000-feature model,
measured in linked Cortex-M images: the image with the stop points against the
same tables with the stop points removed (a static top-k NB), float32 tables
for the Cortex-M4F and q15 tables for the Cortex-M3.

The early-stopping NB paper reports the stop points' memory overhead as at
most 15% of the model at k = 10, 3% at k = 100 and 0.4% at k = 1000."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from firmware_tools import CORTEX_M, CORTEX_M_TOOLS, frugalml, make, require_tools, size_report

from compiler.header import c_tables, render_header
from pyruntime import format as fmt
from pyruntime.data import load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.flash_stops import without_stops  # noqa: E402  (the doc table's benchmark)

DATA = "gen:sparse:3000:2000"
PAPER_BOUND = {10: 0.15, 100: 0.03, 1000: 0.004}
TARGETS = {"cortex-m4f": "float32", "cortex-m3": "q15"}


@pytest.fixture(scope="module")
def stop_models(tmp_path_factory: pytest.TempPathFactory) -> dict[int, fmt.ModelFile]:
    require_tools(*CORTEX_M_TOOLS)
    work = tmp_path_factory.mktemp("size_models")
    out = {}
    for k in PAPER_BOUND:
        path = work / f"stop{k}.msgpack"
        frugalml("train", "nb-stop", DATA, "-o", path, "--budget", str(k))
        out[k] = fmt.load(path)
    return out


def image_flash(model: fmt.ModelFile, target: str, row: np.ndarray, work: Path) -> int:
    header = work / "model.h"
    header.write_text(render_header(model, TARGETS[target], "model", row, target))
    p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"BUILD={work / 'b'}", "size")
    return size_report(p.stdout)[0]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_stop_points_add_less_flash_than_the_paper(stop_models: dict[int, fmt.ModelFile], tmp_path: Path,
                                                   target: str, record_property) -> None:
    row = load_dataset(DATA).X[:1]
    numeric = TARGETS[target]
    lines = [f"{target} ({numeric}): k, stop points, image flash with / without stops, model table bytes, overhead"]
    for k, model in stop_models.items():
        static = without_stops(model)
        assert static.tables.n_used == k
        with_stops = image_flash(model, target, row, tmp_path)
        plain = image_flash(static, target, row, tmp_path)
        tables = c_tables(static, numeric).table_bytes
        stop_bytes = c_tables(model, numeric).table_bytes - tables
        # each stop point is one position and two bounds: 12 bytes in both numeric types; the
        # linked image grows by at most that (a header without stops keeps 1-entry placeholders)
        assert stop_bytes == 12 * model.tables.n_stops
        assert 0 <= with_stops - plain <= stop_bytes
        overhead = stop_bytes / tables
        lines.append(f"  k={k:>4} stops={model.tables.n_stops:>3} image flash {with_stops} / {plain} "
                     f"tables {tables} + stops {stop_bytes}: overhead {100 * overhead:.3f}%")
        assert overhead < PAPER_BOUND[k], lines[-1]
    record_property("flash_report", "\n".join(lines))
    print("\n".join(lines))
