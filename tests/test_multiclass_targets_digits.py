"""K-class models on the device targets (issue 19), the 10-class set (scikit-learn's digits;
the 26-class set: tests/test_multiclass_targets.py): every kind that trains K classes, in every form the kind
offers and both numeric types, prints exactly the lines `frugalml predict` prints -- under QEMU on Cortex-M0 (q15)
and M4F (float32) and Raspberry Pi aarch64. A file of its own so that its builds run beside the 26-class set's on
another pytest-xdist worker (tests/multiclass_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from multiclass_cases import TRAIN, check_cortex_m, check_raspberry_pi, write_set

SETS = ("digits",)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("multiclass_targets_digits")
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
