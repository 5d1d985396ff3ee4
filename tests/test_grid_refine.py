"""The sweeps' shared refinement rule (compiler/grid_refine.py): two values at a third and two thirds of the way
between neighbours, geometrically, known answers by hand."""

from __future__ import annotations

import pytest

from compiler.grid_refine import thirds_between


def test_known_answers() -> None:
    assert thirds_between(1, 10, [0, 1, 10]) == [2.154, 4.642]  # 10^(1/3), 10^(2/3)
    assert thirds_between(0.1, 0.3, [0.1, 0.3]) == [0.1442, 0.208]  # 0.1 * 3^(1/3), 0.1 * 3^(2/3)
    # a low end of 0: from a ninth of the high end, which is tried too
    assert thirds_between(0, 0.9, [0, 0.9]) == [0.1, 0.208, 0.4327]
    assert thirds_between(0, 0.9, [0, 0.1, 0.9]) == [0.208, 0.4327]  # the ninth already fitted
    assert thirds_between(1, 10, [1, 2.154, 10]) == [4.642]  # a known value is not fitted again


@pytest.mark.parametrize(("lo", "hi"), [(1, 1), (2, 1), (-1, 1), (0, 0)])
def test_an_empty_or_reversed_interval_is_refused(lo: float, hi: float) -> None:
    with pytest.raises(ValueError, match="hi > lo >= 0"):
        thirds_between(lo, hi, [])
