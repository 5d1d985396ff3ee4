"""benchmarks/base_learner.py's seed ranges and summaries (known answers; the runs themselves: its --quick test)."""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np
import pytest


@pytest.fixture()
def bl(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "path", list(sys.path))
    from benchmarks import base_learner

    return base_learner


def test_seed_ranges_and_lists(bl: ModuleType) -> None:
    assert bl.parse_seeds("0-3") == [0, 1, 2, 3]
    assert bl.parse_seeds("0-2,7, 9") == [0, 1, 2, 7, 9]
    for bad in ("", "a", "1-x", ","):
        with pytest.raises(SystemExit, match="--seeds"):
            bl.parse_seeds(bad)


def test_differences_summary_and_per_set_rows(bl: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"data": "a", "seed": 0, "test_rows": 100, "miser0": 0.80, "lgb255": 0.82, "lgb63": 0.83},
            {"data": "a", "seed": 1, "test_rows": 100, "miser0": 0.85, "lgb255": 0.84, "lgb63": 0.84},
            {"data": "b", "seed": 0, "test_rows": 50, "miser0": None, "lgb255": 0.90, "lgb63": 0.86}]
    np.testing.assert_allclose(bl.differences(rows, "miser0", "lgb255"), [-2.0, 1.0])  # the refused run left out
    np.testing.assert_allclose(bl.differences(rows, "lgb63", "lgb255"), [1.0, 0.0, -4.0])
    assert bl.summary(np.array([-2.0, 1.0])) == ("median -0.50, mean -0.50 (s.e. 1.50), min -2.00, more than 1 point "
                                                 "below on 1 of 2")
    bl.report(rows)
    out = capsys.readouterr().out
    assert "miser lambda 0 - LightGBM (points): median -0.50" in out
    assert "LightGBM 63 bins - LightGBM 255 (points): median +0.00, mean -1.00" in out
    assert "| a | 2 | 100 | 1.00 | -0.50 / -2.00 / 1 | +0.50 / +0.00 / 0 |" in out
    assert "| b | 1 | 50 | 2.00 | - | -4.00 / -4.00 / 1 |" in out


def test_without_the_peer_the_report_says_so(bl: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    bl.report([{"data": "a", "seed": 0, "test_rows": 10, "miser0": 0.5}])
    assert "no LightGBM comparison" in capsys.readouterr().out
