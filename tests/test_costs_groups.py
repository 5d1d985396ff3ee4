"""Costs CSV with feature groups: a group's cost paid once per prediction (cost_of), each feature's cost read alone
in coef (own + its groups), and every malformed group file one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compiler.costs import CostsError, FeatureCosts, load_costs

NAMES = ["c0__mean", "c0__fft_centroid", "c0__fft_dominant_frequency", "c1__mean"]


def write(tmp: Path, text: str) -> Path:
    p = tmp / "costs.csv"
    p.write_text(text)
    return p


def test_group_cost_is_paid_once(tmp_path: Path) -> None:
    p = write(tmp_path, "feature,cost,group\nc0__pass,100,\nc0__spectrum,850,\nc0__mean,2,c0__pass\n"
                        "c0__fft_centroid,30,c0__pass;c0__spectrum\nc0__fft_dominant_frequency,12,c0__pass;c0__spectrum\n"
                        "*,5,\n")
    c = load_costs(p, NAMES)
    assert c.group_names == ("c0__pass", "c0__spectrum") and c.has_groups
    assert c.at(0).tolist() == [102, 980, 962, 5]  # alone: own + groups
    assert c.cost_of([1, 2]) == 30 + 12 + 100 + 850  # the spectrum once
    assert c.cost_of([0, 1, 2, 3]) == 2 + 30 + 12 + 5 + 100 + 850
    assert c.cost_of([3]) == 5 and c.cost_of([]) == 0


def test_polynomial_group_costs(tmp_path: Path) -> None:
    p = write(tmp_path, "feature,c0,c1,c2,group\ng,10,2,0.5,\nc0__mean,1,0,0,g\nc0__fft_centroid,0,1,0,g\n"
                        "c0__fft_dominant_frequency,3,0,0,\nc1__mean,3,0,0,\n")
    c = load_costs(p, NAMES)
    assert c.cost_of([0, 1], size=4) == pytest.approx(1 + 4 + (10 + 8 + 8))
    assert np.allclose(c.at(4), [1 + 26, 4 + 26, 3, 3])


def test_plain_files_have_no_groups(tmp_path: Path) -> None:
    c = load_costs(write(tmp_path, "feature,cost\n*,2\n"), NAMES)
    assert not c.has_groups and c.cost_of([0, 0, 3]) == 4


@pytest.mark.parametrize(("text", "message"), [
    ("feature,cost,group\nc0__mean,1,g\n*,1,\n", "group 'g' has no cost row"),
    ("feature,cost,group\ng,1,h\nh,1,\nc0__mean,1,g\n*,1,\n", "groups do not nest"),
    ("feature,cost,group\ng,1,\ng,2,\nc0__mean,1,g\n*,1,\n", "group 'g' already has a cost"),
    ("feature,cost,group\nc0__mean,1,c1__mean\n*,1,\n", "has the name of a feature"),
    ("feature,cost,group\nc0__mean,1\n*,1,\n", "expected 3 fields"),
    ("feature,cost,group\nzzz,1,\n*,1,\n", "unknown feature 'zzz'$"),
    ("feature,cost,group\nc0__wiggle,1,\n*,1,\n", "unknown feature 'c0__wiggle'; a costs file for raw windows must "
     "be profiled for the same feature plan"),
    # a feature of the catalog the data do not have is left out (a wider plan's costs); one the data need is missing
    ("feature,cost,group\nc5__maximum,1,\nc0__mean,1,\n", r"no cost for 3 of the 4 features \(c0__fft_centroid, "
     r"c0__fft_dominant_frequency, c1__mean\); it names 1 other feature \(profiled for another feature plan\)"),
    ("feature,cost,grp\n*,1,\n", "header must be"),
])
def test_bad_group_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CostsError, match=message) as exc:
        load_costs(write(tmp_path, text), NAMES)
    assert "\n" not in str(exc.value)


def test_marginal_cost_is_what_a_feature_adds_to_the_chosen(tmp_path: Path) -> None:
    """FeatureCosts.marginal(chosen)[j] == cost_of(chosen + [j]) - cost_of(chosen): its own cost and the groups no
    chosen feature has paid; a chosen feature adds nothing (the K-class NB cost-aware greedy step's cost)."""
    p = write(tmp_path, "feature,cost,group\nc0__pass,100,\nc0__spectrum,850,\nc0__mean,2,c0__pass\n"
                        "c0__fft_centroid,30,c0__pass;c0__spectrum\nc0__fft_dominant_frequency,12,c0__pass;c0__spectrum\n"
                        "*,5,\n")
    c = load_costs(p, NAMES)
    assert c.marginal([]).tolist() == c.at(0).tolist() == [102, 980, 962, 5]
    assert c.marginal([0]).tolist() == [0, 880, 862, 5]  # the pass paid by c0__mean
    assert c.marginal([1]).tolist() == [2, 0, 12, 5]  # both groups paid by the centroid
    for chosen in ([], [0], [1], [3], [0, 3], [1, 2]):
        m = c.marginal(chosen)
        for j in range(4):
            assert m[j] == (0 if j in chosen else c.cost_of([*chosen, j]) - c.cost_of(chosen))
    plain = load_costs(write(tmp_path, "feature,cost\nc0__mean,3\n*,7\n"), NAMES)
    assert plain.marginal([2]).tolist() == [3, 7, 0, 7]


def test_constant_costs_and_uniformity(tmp_path: Path) -> None:
    """FeatureCosts.constant: one constant cost per feature, no groups; is_uniform only when every feature costs the
    same at every size with no groups (the K-class NB greedy step then picks as the plain one)."""
    c = FeatureCosts.constant(np.array([3, 7, 0, 7], dtype=np.float32))
    assert c.at(0).tolist() == c.at(50).tolist() == [3, 7, 0, 7] and not c.has_groups and c.is_constant
    assert c.marginal([1]).tolist() == [3, 0, 0, 7] and c.cost_of([1, 3]) == 14
    assert not c.is_uniform
    assert FeatureCosts.uniform(4, 2.5).is_uniform and FeatureCosts.constant(np.full(4, 2.5)).is_uniform
    assert load_costs(write(tmp_path, "feature,cost\n*,2\n"), NAMES).is_uniform
    assert not load_costs(write(tmp_path, "feature,c0,c1,c2\nc0__mean,2,1,0\n*,2,0,0\n"), NAMES).is_uniform
    grouped = load_costs(write(tmp_path, "feature,cost,group\ng,4,\nc0__mean,1,g\n*,1,\n"), NAMES)
    assert not grouped.is_uniform  # a group paid once makes features' costs depend on what else is read
    grouped_even = load_costs(write(tmp_path, "feature,cost,group\ng,4,\n*,1,g\n"), NAMES)
    assert not grouped_even.is_uniform
