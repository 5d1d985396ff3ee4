"""K-class NB's cost-aware greedy step: with costs that differ, each step adds the feature with the largest rise in
the rows' mean log-probability of their class per unit of what it adds to the cost (compiler.nb.multi_train);
uniform or no costs, or cost_aware=False, train exactly the plain order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split

from compiler.costs import FeatureCosts
from compiler.nb.multi_train import cost_aware_pick
from compiler.nb.train import NaiveBayesBudget


def _wine(seed: int = 0) -> tuple[np.ndarray, ...]:
    X, y = load_wine(return_X_y=True)
    X = X.astype(np.float32)
    Xa, _, ya, _ = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    return tuple(train_test_split(Xa, ya, test_size=0.25, stratify=ya, random_state=seed))  # Xr, Xv, yr, yv


def test_pick_rule_known_answers() -> None:
    gain = np.array([0.30, 0.10, 0.05, -0.2])
    assert cost_aware_pick(gain, np.array([10.0, 1.0, 1.0, 1.0])) == 1  # 0.10 per unit beats 0.03
    assert cost_aware_pick(gain, np.array([1.0, 10.0, 10.0, 1.0])) == 0
    assert cost_aware_pick(gain, np.array([5.0, 0.0, 0.0, 0.0])) == 1  # free with a gain: the largest such gain
    assert cost_aware_pick(np.array([-0.3, -0.1, -0.2]), np.array([1.0, 9.0, 1.0])) == 1  # no rise: the largest
    assert cost_aware_pick(np.array([0.2, 0.1, 0.2]), np.array([2.0, 1.0, 2.0])) == 0  # ties: the first


def _mean_log_prob(est: NaiveBayesBudget, Xr: np.ndarray, yr: np.ndarray, X: np.ndarray, y: np.ndarray,
                   feats: list[int]) -> float:
    """The rows' mean log-probability of their class from the tables fitted on (Xr, yr) over ``feats`` (float64
    sums of the float32 entries), computed apart from the greedy's blocked products."""
    from compiler.nb.discretize import fit_bins  # noqa: PLC0415
    from compiler.nb.multi_train import fit_multi_tables  # noqa: PLC0415

    bins = fit_bins(Xr, est.bins_)
    tables, _ = fit_multi_tables(bins.transform(Xr), yr, 3, bins, est.alpha, est.likelihood_, Xr)
    B = bins.transform(X)
    S = np.tile(tables.d0.astype(np.float64), (X.shape[0], 1))
    for j in feats:
        S += tables.ll[j][B[:, j]].astype(np.float64)
    top = S.max(axis=1)
    lse = top + np.log(np.exp(S - top[:, None]).sum(axis=1))
    return float((S[np.arange(y.size), y] - lse).mean())


COSTS = np.array([1, 50, 5, 20, 1, 100, 200, 10, 5, 150, 1, 50, 20], dtype=np.float32)


def _grouped() -> FeatureCosts:
    """Own costs COSTS; features 6 and 11 (flavanoids, OD280: both telling) share one group of cost 400."""
    own = np.zeros((13, 3))
    own[:, 0] = COSTS
    groups = tuple((0,) if j in (6, 11) else () for j in range(13))
    alone = own.copy()
    alone[[6, 11], 0] += 400
    return FeatureCosts(coef=alone, own_coef=own, group_names=("shared",), group_coef=np.array([[400.0, 0, 0]]),
                        feature_groups=groups)


@pytest.mark.parametrize("grouped", [False, True])
def test_the_first_steps_follow_the_gain_per_unit_of_cost(grouped: bool) -> None:
    """With 200 validation rows and more the order is judged on the validation part, which this test recomputes:
    each of the first four steps adds the argmax of (rise in mean log-probability) / (what the feature adds to
    the cost: its own cost and its groups not yet paid)."""
    X, y = load_wine(return_X_y=True)
    X = np.tile(X.astype(np.float32), (3, 1))
    X += np.random.default_rng(0).normal(0, 0.01, X.shape).astype(np.float32) * X.std(axis=0).astype(np.float32)
    y = np.tile(y, 3)
    Xr, Xv, yr, yv = train_test_split(X, y, test_size=0.4, stratify=y, random_state=0)
    assert Xv.shape[0] >= 200
    costs = _grouped() if grouped else COSTS
    plain = NaiveBayesBudget(bins="mean-std", early_stopping=False, budget=13, costs=costs, cost_aware=False).fit(
        Xr, yr, eval_set=(Xv, yv))
    aware = NaiveBayesBudget(bins="mean-std", early_stopping=False, budget=13, costs=costs).fit(
        Xr, yr, eval_set=(Xv, yv))
    chosen: list[int] = []
    for step in range(4):
        now = _mean_log_prob(aware, Xr, yr, Xv, yv, chosen)
        left = [j for j in range(13) if j not in chosen]
        rise = np.array([_mean_log_prob(aware, Xr, yr, Xv, yv, [*chosen, j]) - now for j in left])
        add = (costs.marginal(chosen) if isinstance(costs, FeatureCosts) else COSTS.astype(np.float64))[left]
        assert rise.max() > 0 and add.min() > 0
        want = left[int(np.argmax(np.where(rise > 0, rise / add, -np.inf)))]
        assert int(aware.ordering_[step]) == want, step
        chosen.append(want)
    assert not np.array_equal(aware.ordering_[:4], plain.ordering_[:4])  # these costs move the order
    assert np.array_equal(aware.model_.costs, np.asarray(COSTS if not grouped else costs.at(0.0), np.float32))


@pytest.mark.parametrize("early_stopping", [False, True])
def test_no_uniform_or_off_costs_train_the_plain_model(early_stopping: bool) -> None:
    Xr, Xv, yr, yv = _wine(1)

    def fit(**kw: object) -> object:
        return NaiveBayesBudget(early_stopping=early_stopping, **kw).fit(Xr, yr, eval_set=(Xv, yv)).model_

    base = fit()
    for other in (fit(costs=np.full(13, 7.0)), fit(costs=COSTS, cost_aware=False),
                  fit(costs=FeatureCosts.uniform(13, 3.0))):
        assert np.array_equal(other.order, base.order)
        assert list(other.stop_at) == list(base.stop_at) and list(other.stop_margin) == list(base.stop_margin)


def test_out_of_fold_order_is_cost_aware_and_cheaper_on_wine() -> None:
    """Under 200 validation rows (wine: 36) the cost-aware step runs on the pooled folds too: the order moves and
    the static model it chooses reads cheaper features."""
    Xr, Xv, yr, yv = _wine(0)
    plain = NaiveBayesBudget(costs=COSTS, cost_aware=False, early_stopping=False).fit(Xr, yr, eval_set=(Xv, yv))
    aware = NaiveBayesBudget(costs=COSTS, early_stopping=False).fit(Xr, yr, eval_set=(Xv, yv))
    assert not np.array_equal(aware.ordering_, plain.ordering_)
    c = lambda est: float(COSTS[np.asarray(est.model_.order, dtype=np.intp)].sum())  # noqa: E731
    assert c(aware) < c(plain)


def test_cli_costs_move_the_order_and_no_cost_aware_keeps_the_plain_one(tmp_path: Path) -> None:
    """`train nb-static --costs F`: the K-class greedy order is cost-aware by default; --no-cost-aware trains the
    order the same data gives without costs (the costs only reported), and the model file records the choice;
    --cost-aware without --costs warns that it changes nothing and trains the plain order."""
    from cli_work import run  # noqa: PLC0415
    from test_multiclass import write_csv  # noqa: PLC0415

    from pyruntime import format as fmt  # noqa: PLC0415

    X, y = load_wine(return_X_y=True)
    data = write_csv(tmp_path / "w.csv", X, [f"c{v}" for v in y])
    costs = tmp_path / "costs.csv"
    costs.write_text("feature,cost\n" + "".join(f"f{j},{c:g}\n" for j, c in enumerate(COSTS)))
    orders = {}
    warning = "warning: --cost-aware without --costs: every feature costs 1, so the greedy order is the plain one"
    for name, extra in (("none", ()), ("aware", ("--costs", costs)), ("plain", ("--costs", costs, "--no-cost-aware")),
                        ("aware, no costs", ("--cost-aware",)), ("aware, given", ("--costs", costs, "--cost-aware"))):
        out = tmp_path / f"{name}.msgpack"
        code, _, err = run("train", "nb-static", data, *extra, "-o", out)
        assert code == 0, err
        assert (warning in err) == (name == "aware, no costs"), err
        m = fmt.load(out)
        orders[name] = [int(j) for j in m.tables.order]
        if name == "plain":
            assert m.meta["training"]["cost_aware"] is False
        elif name == "aware":
            assert "cost_aware" not in m.meta["training"]  # the default: not given
    assert orders["plain"] == orders["none"] == orders["aware, no costs"]
    assert orders["aware"] == orders["aware, given"] != orders["plain"]
    assert sum(COSTS[orders["aware"]]) < sum(COSTS[orders["plain"]])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_costs_that_are_not_finite_and_non_negative_are_refused_at_fit(bad: float) -> None:
    Xr, Xv, yr, yv = _wine(0)
    costs = COSTS.copy()
    costs[3] = bad
    with pytest.raises(ValueError, match="costs must be finite and >= 0"):
        NaiveBayesBudget(costs=costs).fit(Xr, yr, eval_set=(Xv, yv))
