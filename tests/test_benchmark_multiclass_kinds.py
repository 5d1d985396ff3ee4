"""benchmarks/multiclass.py --kinds: only the chosen row groups run, their verdicts alone are printed, and an
unknown group is a usage error."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "multiclass.py"


def load(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location("_benchmark_multiclass_kinds", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_kinds_runs_the_chosen_groups_only(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    mc = load(monkeypatch)
    assert mc.main(["--quick", "--kinds", "trees", "--no-peers", "--trees", "5"]) == 0
    out = capsys.readouterr().out
    assert mc.MISER_SWEEP in out and mc.CASCADE_SWEEP in out and mc.CASCADE_DEFAULT in out
    assert mc.NB_ALL not in out and mc.F0 not in out and mc.CSTC0 not in out and mc.SKY0 not in out
    verdicts = [line for line in out.splitlines() if line.startswith(("unbudgeted", "budgeted"))]
    assert [line.split()[1] for line in verdicts] == ["miser", "miser/sh", "miser", "miser/sh", "cascade",
                                                      "cascade/sep", "cascade/10"]


def test_unknown_group_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    mc = load(monkeypatch)
    with pytest.raises(SystemExit) as exc:
        mc.main(["--quick", "--kinds", "trees,forest"])
    assert exc.value.code == 2 and "unknown group 'forest'" in capsys.readouterr().err


def _row(accuracy: float, features: float) -> dict[str, float]:
    return {"accuracy": accuracy, "macro_f1": accuracy, "features": features}


def test_verdicts_of_a_mean_count_the_splits_that_meet(monkeypatch: pytest.MonkeyPatch) -> None:
    mc = load(monkeypatch)
    # split 1: 2.5x fewer features at -0.5 points (meets); split 2: 2x fewer at -2.0 points (misses)
    runs = [[(mc.NB_DEF, _row(0.90, 10.0)), (mc.NB_STOP, _row(0.895, 4.0))],
            [(mc.NB_DEF, _row(0.92, 10.0)), (mc.NB_STOP, _row(0.90, 5.0))]]
    rows = mc.mean_rows(runs)
    (line,) = mc.verdicts(rows, 100, runs)
    assert line.startswith("budgeted   nb-stop    4.50 vs 10.00 features (1/2.22), -1.25 points: misses")
    assert line.endswith("; per split: 1 of 2 meet, points -2.00 .. -0.50")
    (single,) = mc.verdicts(runs[0], 100, runs[:1])  # one split: no per-split note
    assert single.endswith("meets the bar (>= 2x, within 1 point)")


def test_seeds_given_averages_every_set(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    mc = load(monkeypatch)
    monkeypatch.setattr(mc, "SMALL_TEST", 10)  # wine's 35 test rows count as a large set
    assert mc.main(["--quick", "--kinds", "nb", "--no-peers"]) == 0
    assert "35 test rows (one row = 2.86 points); seed 0" in capsys.readouterr().out
    assert mc.main(["--quick", "--kinds", "nb", "--no-peers", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "mean of 2 split seeds 0-1" in out
    budgeted = [line for line in out.splitlines() if line.startswith("budgeted")]
    assert budgeted and all(" of 2 meet, points " in line for line in budgeted)


def test_seeds_below_one_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    mc = load(monkeypatch)
    with pytest.raises(SystemExit) as exc:
        mc.main(["--quick", "--seeds", "0"])
    assert exc.value.code == 2 and "argument --seeds: must be >= 1, got 0" in capsys.readouterr().err
