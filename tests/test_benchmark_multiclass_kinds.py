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
