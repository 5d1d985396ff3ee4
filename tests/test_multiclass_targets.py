"""K-class models on the device targets (issue 19), the 26-class set (generated, labels "a" .. "z"; the 10-class
set: tests/test_multiclass_targets_digits.py): every kind that trains K classes, in every form the kind offers
(tables; code where the model has a code form) and both numeric types: the firmware examples print the label text
and features read (and cost) of every embedded row, exactly the lines `frugalml predict` prints -- under QEMU on
Cortex-M3 (q15) and M33 (float32) and Raspberry Pi armhf, and the Arduino sketch compiles (C++) with each model.
One build per target per kind (tests/multiclass_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from multiclass_cases import TRAIN, check_arduino, check_cortex_m, check_raspberry_pi, write_set

SETS = ("letters",)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("multiclass_targets")
    for name in SETS:
        write_set(d, name)
    return d


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("kind", sorted(TRAIN))
def test_cortex_m_prints_what_predict_prints(work: Path, tmp_path: Path, kind: str, name: str) -> None:
    check_cortex_m(work, tmp_path, kind, name)


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("kind", sorted(TRAIN))
def test_raspberry_pi_prints_what_predict_prints(work: Path, tmp_path: Path, kind: str, name: str) -> None:
    check_raspberry_pi(work, tmp_path, kind, name)


@pytest.mark.parametrize("kind", sorted(TRAIN))
def test_arduino_sketch_compiles_as_cxx(work: Path, tmp_path: Path, kind: str) -> None:
    """Every form and numeric type of the 26-class model in the Arduino sketch (C++, one compile each)."""
    check_arduino(work, tmp_path, kind)
