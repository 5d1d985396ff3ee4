"""K-class models on the device targets (issue 19), on two sets: "letters" (26 generated classes, labels "a" ..
"z") and "digits" (scikit-learn's, 10 classes). Every kind that trains K classes, in every form the kind offers
(tables; code where the model has a code form) and both numeric types: the firmware examples print the label text
and features read (and cost) of every embedded row, exactly the lines `frugalml predict` prints -- under QEMU on
Cortex-M3 (q15) and M33 (float32) and Raspberry Pi armhf for letters, Cortex-M0 (q15) and M4F (float32) and
Raspberry Pi aarch64 for digits; the Arduino sketch compiles (C++) with each letters model. One build per target
per kind (tests/multiclass_cases.py).

Each set is one pytest-xdist unit of work (XDIST_UNITS, tests/conftest.py): the two sets' builds run on two
workers, and each set's models are trained once, on the worker that runs that set."""

from __future__ import annotations

from pathlib import Path

import pytest
from multiclass_cases import TRAIN, check_arduino, check_cortex_m, check_raspberry_pi, write_set

XDIST_UNITS = ("letters", "digits")  # tests/conftest.py: the tests of one set are one unit of work
SETS = XDIST_UNITS


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


@pytest.mark.parametrize("name", ["letters"])  # the letters unit: its trained models
@pytest.mark.parametrize("kind", sorted(TRAIN))
def test_arduino_sketch_compiles_as_cxx(work: Path, tmp_path: Path, kind: str, name: str) -> None:
    """Every form and numeric type of the 26-class model in the Arduino sketch (C++, one compile each)."""
    check_arduino(work, tmp_path, kind, name)
