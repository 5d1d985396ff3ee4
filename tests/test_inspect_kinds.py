"""`frugalml inspect` per kind: the file-level facts plus the tables' describe() (trees and depth, stages
and exits, gate and parts, indexed models and budgets, features used and their costs), as text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_work import run, shifted_binary, strict_json, write_costs

from pyruntime import format as fmt
from pyruntime.describe import tree_depths
from pyruntime.skyline.index import poly_cost

D = 6
SHIFT = [1.5, 1.0, 0.5, 0.2, 0.0, 0.0]
COSTS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]
TRAIN = {
    "nb-stop": (),
    "miser": ("--trees", "6", "--depth", "2", "--lambda", "0.01"),
    "cascade": ("--trees", "6", "--stages", "2", "--depth", "2"),
    "l1-gate": ("--hpc", "gbrt", "--hpc-remote"),
    "skyline": ("--base", "linear"),
    "cstc": (),
}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("inspect")
    X, y = shifted_binary(500, 2, SHIFT)
    np.savez(d / "data.npz", X=X, y=y)
    write_costs(d / "costs.csv", COSTS, names=[f"x{j}" for j in range(D)])
    for kind, opts in TRAIN.items():
        code, _, err = run("train", kind, d / "data.npz", "--costs", d / "costs.csv", "-o", d / f"{kind}.msgpack",
                           *opts)
        assert code == 0, (kind, err)
    return d


def inspect_json(work: Path, kind: str) -> dict:
    code, out, err = run("inspect", work / f"{kind}.msgpack", "--json")
    assert code == 0, err
    return json.loads(out)


def features_of(info_features: list[dict]) -> dict[int, float]:
    return {f["index"]: f["cost"] for f in info_features}


def test_nb_shows_budget_order_and_stops(work: Path) -> None:
    info = inspect_json(work, "nb-stop")
    t = fmt.load(work / "nb-stop.msgpack").tables
    assert info["budget"] == t.n_used and info["n_stop_points"] == t.n_stops == len(info["stop_points"])
    assert info["reading_order"] == [f"x{j}" for j in t.order]
    assert [f["cost"] for f in info["feature_costs"]] == [COSTS[j] for j in t.order]


def test_text_says_none_for_an_empty_list(work: Path, tmp_path: Path) -> None:
    """A static NB has no stop points: the text says `none` (not an empty value), JSON an empty list."""
    code, _, err = run("train", "nb-static", work / "data.npz", "-o", tmp_path / "s.msgpack")
    assert code == 0, err
    code, out, err = run("inspect", tmp_path / "s.msgpack")
    assert code == 0, err
    lines = [line.strip() for line in out.splitlines()]
    assert [t for t in lines if t.startswith("stop points:")] == ["stop points: none"]
    assert all(not line.rstrip().endswith(":") for line in out.splitlines()), out
    code, out, err = run("inspect", tmp_path / "s.msgpack", "--json")
    assert code == 0 and json.loads(out)["stop_points"] == [], err


@pytest.mark.parametrize("kind", ["miser", "cascade"])
def test_tree_kinds_show_trees_depth_stages_and_features(work: Path, kind: str) -> None:
    info = inspect_json(work, kind)
    t = fmt.load(work / f"{kind}.msgpack").tables
    assert "budget" not in info and "n_stop_points" not in info
    assert info["n_trees"] == t.trees.n_trees and info["n_stages"] == t.n_stages
    assert info["n_walks"] == t.trees.n_trees  # two classes: one tree per iteration, no runs
    assert info["max_depth"] == max(tree_depths(t.trees.feature, t.trees.left, t.trees.right, t.trees.roots)) <= 2
    used = sorted(set(t.trees.feature[t.trees.feature >= 0].tolist()))
    assert features_of(info["features_used"]) == {j: COSTS[j] for j in used}
    assert info["n_features_used"] == len(used)
    assert info["stage_end_tree"] == t.stage_end.tolist()
    if kind == "cascade":
        assert info["n_stages"] == 2
    code, out, _ = run("inspect", work / f"{kind}.msgpack")
    assert code == 0 and "max depth: " in out and "features used: " in out and "stop" not in out


def test_gated_shows_parts_and_remote_f0(work: Path) -> None:
    info = inspect_json(work, "l1-gate")
    t = fmt.load(work / "l1-gate.msgpack").tables
    assert info["kind"] == "gated" and info["f0"].startswith("remote")
    assert info["gate"]["type"] == "linear" and info["f1"]["type"] == "linear"
    assert info["f1"]["features"] == [f"x{j}" for j in dict.fromkeys(t.f1.feature.tolist())]
    used = set(t.gate.feature.tolist()) | set(t.f1.feature.tolist())
    assert features_of(info["features_used"]) == {j: COSTS[j] for j in used}


def test_skyline_shows_models_and_budgets(work: Path) -> None:
    info = inspect_json(work, "skyline")
    t = fmt.load(work / "skyline.msgpack").tables
    assert info["n_models"] == t.n_models == len(info["models"]) and info["default_budget"] is None
    cost = poly_cost(t.index.model_coef, t.default_size)
    for k, m in enumerate(info["models"]):
        assert m["features"] == [f"x{j}" for j in t.index.features_of(k)]
        assert m["cost_at_default_size"] == float(cost[k]) == sum(COSTS[j] for j in t.index.features_of(k))
    code, out, _ = run("inspect", work / "skyline.msgpack")
    assert code == 0 and "models: features=" in out and "default budget: -" in out


def test_cstc_shows_the_tree_of_classifiers(work: Path) -> None:
    info = inspect_json(work, "cstc")
    t = fmt.load(work / "cstc.msgpack").tables
    assert info["n_nodes"] == t.n_nodes == len(info["nodes"])
    assert info["n_leaves"] == sum(t.is_leaf(k) for k in range(t.n_nodes))
    for k, node in enumerate(info["nodes"]):
        assert node["features"] == [f"x{j}" for j in t.feature[t.term_start[k]:t.term_start[k + 1]]]
    assert features_of(info["features_used"]) == {j: COSTS[j] for j in set(t.feature.tolist())}


def test_a_k_class_linear_part_lists_each_feature_once(tmp_path: Path) -> None:
    """K class scorers of f1 read the same features: inspect lists each once (it listed them K times)."""
    model = tmp_path / "iris.msgpack"
    code, _, err = run("train", "l1-gate", "sklearn:iris", "-o", model)
    assert code == 0, err
    code, out, err = run("inspect", model, "--json")
    assert code == 0, err
    f1 = json.loads(out)["f1"]
    m = fmt.load(model)
    names = m.meta["feature_names"]
    assert f1["n_classes"] == 3 and f1["nnz"] == m.tables.f1.nnz > len(f1["features"])
    assert f1["features"] == [names[j] for j in dict.fromkeys(m.tables.f1.feature.tolist())]


@pytest.mark.parametrize("kind", sorted(TRAIN))
def test_every_json_is_strict_and_infinite_bounds_are_null(work: Path, kind: str) -> None:
    """inspect --json and eval --json of every kind parse as strict JSON (round 64: a miser or cascade model's
    open exit bounds and an nb-stop's open stop thresholds printed Infinity); an infinite bound reads null."""
    code, out, err = run("inspect", work / f"{kind}.msgpack", "--json")
    assert code == 0, err
    info = strict_json(out)
    code, out, err = run("eval", work / f"{kind}.msgpack", work / "data.npz", "--json")
    assert code == 0 and strict_json(out)["kind"] == info["kind"], err
    if kind in ("miser", "cascade"):
        m = fmt.load(work / f"{kind}.msgpack")
        upper = np.asarray(m.tables.exit_upper, np.float64)
        assert np.isinf(upper).any()  # the case this test is for
        assert info["exit_upper"] == [None if np.isinf(v) else float(v) for v in upper]
