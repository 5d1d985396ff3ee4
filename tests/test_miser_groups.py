"""Feature groups in Greedy Miser's split gain: a group's cost is charged once, like a feature's
(compiler/boosting/penalty.py), with known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from cli_work import run

from compiler.boosting.grow import BinnedData, TreeParams, grow_tree
from compiler.boosting.penalty import GroupedCosts
from compiler.costs import FeatureCosts, load_costs
from compiler.trees.cascade import EarlyExitEnsemble
from compiler.trees.cost_tree import ir_tree_features
from compiler.trees.miser import GreedyMiserClassifier
from pyruntime import format as fmt

NAMES = ["a", "b", "c"]
# a and c share the group g (cost 100); b has no group and costs 60; a and c cost 1 of their own
CSV = "feature,cost,group\ng,100,\na,1,g\nb,60,\nc,1,g\n"


def grouped(tmp_path: Path) -> FeatureCosts:
    p = tmp_path / "costs.csv"
    p.write_text(CSV)
    return load_costs(p, NAMES)


def test_penalty_charges_a_group_once(tmp_path: Path) -> None:
    gc = GroupedCosts.from_costs(grouped(tmp_path))
    assert gc.penalty(np.array([False, False, False])).tolist() == [101, 60, 101]
    assert gc.penalty(np.array([True, False, False])).tolist() == [0, 60, 1]  # g paid by a
    read = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0]], dtype=bool)
    fc = grouped(tmp_path)
    assert gc.cost_of_rows(read).tolist() == [fc.cost_of(np.flatnonzero(r)) for r in read] == [102, 60, 162, 0]


def _two_level_data() -> tuple[np.ndarray, np.ndarray]:
    """a decides most of y; b and c are the same column (equal gains), deciding the rest."""
    rng = np.random.default_rng(0)
    a, x = rng.uniform(size=400), rng.uniform(size=400)
    y = 0.7 * (a > 0.5) + 0.3 * (x > 0.5)
    return np.column_stack([a, x, x]).astype(np.float32), y


def test_after_a_the_group_mate_is_cheaper_than_the_ungrouped_twin(tmp_path: Path) -> None:
    X, y = _two_level_data()
    data = BinnedData.from_data(X, 32)
    g, h = -(y - y.mean()), np.ones(y.size)
    rows = np.arange(y.size, dtype=np.int32)
    fc = grouped(tmp_path)
    params = TreeParams(max_depth=2, min_samples_leaf=5)
    alone, _ = grow_tree(data, g, h, rows, params, penalty=1e-4 * fc.at(0))
    tree, used = grow_tree(data, g, h, rows, params, penalty=GroupedCosts.from_costs(fc).scaled(1e-4))
    assert alone.feature[0] == tree.feature[0] == 0
    assert sorted(alone.feature[alone.feature >= 0][1:].tolist()) == [1, 1]  # b (60) beats c read alone (101)
    assert sorted(tree.feature[tree.feature >= 0][1:].tolist()) == [2, 2]  # c (1 after a paid g) beats b (60)
    assert used.tolist() == [True, False, True]


def test_miser_with_groups_costs_each_group_once(tmp_path: Path) -> None:
    X, _ = _two_level_data()
    label = np.where(X[:, 0] > 0.5, X[:, 1] > 0.15, X[:, 1] > 0.85).astype(np.int64)  # a first, then x
    fc = grouped(tmp_path)
    m = GreedyMiserClassifier(lam=0.3, costs=fc, n_trees=30, random_state=0).fit(X, label)
    assert m.features_used_.tolist() == [0, 2]  # x through c: nearly free once a has paid g
    read = m.features_read(X)
    np.testing.assert_array_equal(m.test_time_cost(X), [fc.cost_of(np.flatnonzero(r)) for r in read])
    plain = GreedyMiserClassifier(lam=0.3, costs=fc.at(0), n_trees=30, random_state=0).fit(X, label)
    assert plain.features_used_.tolist() == [0, 1]  # without groups c costs 101 against b's 60



def test_early_exit_cascade_charges_each_group_once(tmp_path: Path) -> None:
    """`train cascade --early-exit-every` over a costs CSV with groups: its miser's split gain charges the group
    once (c, not b, after a), and the cascade's test-time cost counts each group once per row."""
    X, _ = _two_level_data()
    label = np.where(X[:, 0] > 0.5, X[:, 1] > 0.15, X[:, 1] > 0.85).astype(np.int64)
    fc = grouped(tmp_path)
    ensemble = EarlyExitEnsemble(GreedyMiserClassifier(lam=0.3, costs=fc, n_trees=30, random_state=0).fit(X, label),
                                 every=5).fit(X, label)
    assert ensemble.groups_ is not None
    d = ensemble.predict_detailed(X)
    per_tree = np.asarray(ir_tree_features(ensemble.ir_, X))  # (trees, rows, features) read masks
    ends = ensemble.stage_end_[d["exit_stage"]]
    expect = [fc.cost_of(np.flatnonzero(per_tree[:end, i].any(axis=0))) for i, end in enumerate(ends)]
    np.testing.assert_allclose(d["cost"], expect)
    assert 102 in expect  # rows that read a and c pay g once (charged alone: 202)
    data, costs = tmp_path / "d.csv", tmp_path / "costs.csv"
    rows = ["a,b,c,y"] + [f"{a!r},{b!r},{c!r},{y}" for (a, b, c), y in zip(X.tolist(), label.tolist(), strict=True)]
    data.write_text("\n".join(rows) + "\n")
    costs.write_text(CSV)
    code, _, err = run("train", "cascade", data, "--costs", costs, "--early-exit-every", 5, "--lambda", 0.3,
                       "--trees", 30, "-o", tmp_path / "ee.msgpack")
    assert code == 0, err
    feature = fmt.load(tmp_path / "ee.msgpack").tables.trees.feature
    assert sorted(set(feature[feature >= 0].tolist())) == [0, 2]  # x through c once a paid g (alone: b, 60 < 101)
