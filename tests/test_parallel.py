"""Sweeps on local processes (--jobs, joblib/loky) and on a Dask cluster (--scheduler) give the same
results as serial: the miser lambda sweep and the ADAPT sweep through the CLI (byte-identical model
files), the NB budget search, the skyline searches and the library sweeps."""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from cli_work import run

from compiler import parallel
from compiler.parallel import ParallelError, run_map

distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install "
                                  "'frugalml[cluster]')")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local two-worker Dask cluster (worker threads in this process: fast, same code path)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        parallel.close_clients()
        cluster.close()


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("parallel")
    rng = np.random.default_rng(7)
    n = 400
    y = rng.integers(0, 2, size=n)
    s = 2.0 * y - 1.0
    X = np.column_stack([0.6 * s[:, None] + 1.3 * rng.normal(size=(n, 3)),
                         1.8 * s[:, None] + 0.8 * rng.normal(size=(n, 3))])
    np.savez(d / "data.npz", X=X, y=y)
    (d / "costs.csv").write_text("feature,cost\n" + "".join(f"{j},{1 if j < 3 else 20}\n" for j in range(6)))
    return d


# ------------------------------------------------------------------------------ run_map
def test_run_map_keeps_input_order_everywhere(scheduler: str) -> None:
    items = list(range(9))
    want = [x + 3 for x in items]
    fn = partial(operator.add, 3)  # a builtin: the workers import nothing for it
    assert run_map(fn, items) == want
    assert run_map(fn, items, jobs=2) == want
    assert run_map(fn, items, scheduler=scheduler) == want
    assert run_map(fn, items, jobs=1, scheduler=scheduler) == want
    assert run_map(fn, [], jobs=2) == []


@pytest.mark.parametrize("jobs", [0, -2, 1.5, True])
def test_bad_jobs(jobs: object) -> None:
    with pytest.raises(ParallelError, match="--jobs must be"):
        run_map(abs, [1, 2], jobs=jobs)  # type: ignore[arg-type]


def test_unreachable_scheduler_and_missing_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(ParallelError, match=r"^cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9: "):
        run_map(abs, [1, 2], scheduler="tcp://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as if not installed
    with pytest.raises(ParallelError, match=r"needs dask.distributed: pip install 'frugalml\[cluster\]'"):
        run_map(abs, [1, 2], scheduler="tcp://127.0.0.1:9")


def test_cli_errors(work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, out = work / "data.npz", tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", data, "-o", out, "--jobs", "2")
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: --jobs needs --sweep")
    code, _, err = run("train", "miser", data, "-o", out, "--sweep", "--jobs", "0")
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: --jobs must be a positive number")
    code, _, err = run("train", "cascade", data, "-o", out, "--jobs", "2")
    assert code == 2 and "--jobs does not apply to kind cascade" in err
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", 1.0)
    code, _, err = run("train", "adapt-gbrt", data, "-o", out, "--sweep", "--trees", "3", "--pfull-grid", "0.3",
                       "--gamma-grid", "1,2", "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert not out.exists()


# ------------------------------------------------------------------------------ CLI sweeps
def _three_ways(work: Path, tmp_path: Path, scheduler: str, *args: object) -> list[bytes]:
    files = []
    for name, extra in (("serial", ()), ("jobs", ("--jobs", "2")), ("dask", ("--scheduler", scheduler))):
        out = tmp_path / f"{name}.msgpack"
        code, stdout, err = run("train", *args[:1], work / "data.npz", "--costs", work / "costs.csv", "-o", out,
                                *args[1:], *extra)
        assert code == 0, err
        assert stdout == ""
        files.append(out.read_bytes())
    return files


def test_cli_miser_sweep_same_model_files(work: Path, tmp_path: Path, scheduler: str) -> None:
    serial, jobs, dask = _three_ways(work, tmp_path, scheduler, "miser", "--sweep", "--trees", "15",
                                     "--lambda-grid", "0.3,3,30", "--tolerance", "0.02", "--folds", "1")
    assert serial == jobs == dask
    from pyruntime import format as fmt

    curve = fmt.load(tmp_path / "serial.msgpack").meta["training"]["sweep_curve"]
    lams = [p["lambda"] for p in curve]
    assert {0.0, 0.3, 3.0, 30.0} <= set(lams) and lams == sorted(lams)  # the grid, and the refined round's lambdas
    assert len({p["validation_cost"] for p in curve}) > 1  # the grid points really differ


def test_cli_adapt_gbrt_sweep_same_model_files(work: Path, tmp_path: Path, scheduler: str) -> None:
    serial, jobs, dask = _three_ways(work, tmp_path, scheduler, "adapt-gbrt", "--sweep", "--trees", "6",
                                     "--pfull-grid", "0.2,0.5", "--gamma-grid", "0.1,10")
    assert serial == jobs == dask


def test_cli_nb_budget_search_same_model_files(work: Path, tmp_path: Path, scheduler: str) -> None:
    serial, jobs, dask = _three_ways(work, tmp_path, scheduler, "nb-stop")
    assert serial == jobs == dask


# ------------------------------------------------------------------------------ library sweeps
def test_nb_budget_search_estimator(scheduler: str) -> None:
    from compiler.nb.train import NaiveBayesBudget

    X, y = _sparse(900, 120)
    Xtr, ytr, Xva, yva = X[:600], y[:600], X[600:], y[600:]
    fits = [NaiveBayesBudget(n_jobs=j, scheduler=s).fit(Xtr, ytr, eval_set=(Xva, yva))
            for j, s in ((None, None), (2, None), (None, scheduler))]
    ref = fits[0]
    assert len(ref.static_curve_) > 3
    for f in fits[1:]:
        assert f.static_curve_ == ref.static_curve_ and f.budget_ == ref.budget_
        a, b = f.model_.to_dict(), ref.model_.to_dict()
        assert a.keys() == b.keys()
        for k in a:
            assert np.array_equal(np.asarray(a[k]), np.asarray(b[k])), k


def _sparse(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, size=n)
    w = rng.normal(size=d) * (rng.random(d) < 0.2)
    X = (rng.random((n, d)) < 0.1).astype(np.float64) * (1 + y[:, None] * (w > 0))
    return X, y


def test_skyline_searches(scheduler: str) -> None:
    from sklearn.naive_bayes import GaussianNB

    from compiler.skyline.search import AccuracyOracle, brute_force_search, greedy_search, polydom_search

    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, size=300)
    X = (2.0 * y - 1.0)[:, None] * rng.uniform(0.2, 1.5, size=5) + rng.normal(size=(300, 5))
    coef = np.column_stack([rng.uniform(1, 5, 5), np.zeros(5), np.zeros(5)])

    def oracle() -> AccuracyOracle:
        return AccuracyOracle(GaussianNB(), X[:200], y[:200], X[200:], y[200:])

    for par in ({"jobs": 2}, {"scheduler": scheduler}):
        for search in (lambda o, **kw: polydom_search(o, 5, 0.01, **kw),
                       lambda o, **kw: polydom_search(o, 5, 0.0, max_sets=9, **kw),
                       lambda o, **kw: brute_force_search(o, 5, **kw),
                       lambda o, **kw: greedy_search(o, coef, 1.0, "greedy-acc", max_sets=12, **kw)):
            a, b = search(oracle()), search(oracle(), **par)
            assert a.accuracy == b.accuracy and list(a.accuracy) == list(b.accuracy)
            assert (a.complete, a.orders, a.pruned_sandwich) == (b.complete, b.orders, b.pruned_sandwich)


def test_library_miser_and_adapt_sweeps(scheduler: str) -> None:
    from sklearn.ensemble import RandomForestClassifier

    from compiler.gated.adapt_gbrt import adapt_sweep
    from compiler.gated.adapt_lin import AdaptLinClassifier
    from compiler.gated.common import sweep as gated_sweep
    from compiler.trees.miser import sweep as miser_sweep

    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, size=300)
    X = (2.0 * y - 1.0)[:, None] * np.array([0.4, 0.4, 2.0, 2.0]) + rng.normal(size=(300, 4))
    costs = np.array([1.0, 1.0, 10.0, 10.0])

    def miser_curve(**kw: object) -> list[tuple]:
        r = miser_sweep(X, y, [0.1, 10.0], n_trees=8, costs=costs, **kw)
        return [(p.lam, p.validation_accuracy, p.validation_cost, p.model.ir_["threshold"].tobytes())
                for p in r.points] + [r.chosen.lam]

    def adapt_curve(**kw: object) -> list[tuple]:
        r = adapt_sweep(X, y, [0.2, 0.5], [0.1, 10.0], hpc=RandomForestClassifier(10, random_state=0), n_trees=4,
                        costs=costs, **kw)
        return [(p.p_full, p.gamma, p.validation_accuracy, p.validation_cost) for p in r.points]

    def lin_curve(**kw: object) -> list[tuple]:
        r = gated_sweep(lambda p, g, f0: AdaptLinClassifier(hpc=f0, p_full=p, gamma=g, n_iter=3, inner_iter=50),
                        [0.3, 0.6], [0.01],
                        X[:200], y[:200], X[200:], y[200:], hpc=RandomForestClassifier(10, random_state=0),
                        costs=costs, **kw)
        return [(p.p_full, p.gamma, p.val_accuracy, p.val_mean_cost) for p in r.points]

    assert miser_curve(jobs=2) == miser_curve() == miser_curve(scheduler=scheduler)
    for curve in (adapt_curve, lin_curve):  # local processes: covered by the CLI tests above
        assert curve(scheduler=scheduler) == curve()
