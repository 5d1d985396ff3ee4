"""The benchmark scripts' counts (trees, rows, sets, seeds) refuse 0 and negative values by name, where
`args.trees or DEFAULT` used to run the default silently on 0."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common.args import positive_int  # noqa: E402


def test_positive_int() -> None:
    assert positive_int("3") == 3
    for text, message in (("0", "must be >= 1, got 0"), ("-2", "must be >= 1, got -2"),
                          ("2.5", "'2.5' is not an integer"), ("", "'' is not an integer")):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            positive_int(text)


@pytest.mark.parametrize("script, option", [
    ("runtime.py", "--qemu-rows"), ("multiclass.py", "--seeds"), ("shared_runs.py", "--rows"),
    ("skyline_count.py", "--rows"), ("nb_stop_cost.py", "--rows"), ("multiclass_seeds.py", "--polydom-sets"),
    ("multiclass_seeds.py", "--max-sets"), ("adapt_letters.py", "--trees"),
])
def test_scripts_refuse_a_zero_count(script: str, option: str) -> None:
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), option, "0"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines()[-1] == f"{script}: error: argument {option}: must be >= 1, got 0"
