"""benchmarks/cegb.py --resweep and --recascade: the options parse to train options, and each is refused without
--from-json."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cegb import parse_resweep  # noqa: E402


def test_parse_resweep_gives_typed_options() -> None:
    assert parse_resweep("refine=2,sweep_trees=1,tolerance=0.005") == {"refine": 2, "sweep_trees": 1,
                                                                       "tolerance": 0.005}
    assert parse_resweep("lambda_grid=0.1") == {"lambda_grid": 0.1}
    with pytest.raises(SystemExit, match="not OPT=VALUE"):
        parse_resweep("refine")


def test_resweep_without_stored_runs_is_a_usage_error() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cegb.py"), "--resweep", "refine=2"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and "--resweep needs --from-json" in res.stderr


def test_recascade_without_stored_runs_is_a_usage_error() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cegb.py"), "--recascade"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and "--recascade needs --from-json" in res.stderr
