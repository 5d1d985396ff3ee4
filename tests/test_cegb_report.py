"""benchmarks/cegb.py --from-json: runs measured per set merge into one table and summary (known answers)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import cegb  # noqa: E402


def _run(name: str, sweep: tuple[float, float], cegb_val: tuple[float, float], miser0: float) -> dict:
    p = lambda a, c: {"acc": a, "cost": c}  # noqa: E731
    return {"data": name, "seed": 0, "miser0": p(miser0, 10), "lgb": p(0.90, 10), "sweep": p(*sweep),
            "cascade": p(*sweep), **{f"cegb_{k}": {"val_choice": p(*cegb_val), "hindsight": p(0.9, 5)}
                                     for k in ("coupled", "lazy")}}


def test_from_json_merges_runs_into_one_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"runs": [_run("a", (0.896, 4.0), (0.90, 8.0), 0.895)]}))  # cheaper, -0.4 points
    b.write_text(json.dumps({"runs": [_run("b", (0.90, 12.0), (0.90, 8.0), 0.88)]}))  # dearer
    assert cegb.main(["--from-json", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.count("| a | 0 |") == 1 and out.count("| b | 0 |") == 1
    assert "median -1.25, min -2.00, mean -1.25 over 2 runs; more than 1 point below on 1" in out
    assert "sweep vs CEGB coupled (validation choice): cheaper at accuracy >= CEGB - 0.5 points on 1/2 runs; " \
           "median cost ratio 1.00" in out
    assert "| rows |" not in out  # nothing trained, no scaling
