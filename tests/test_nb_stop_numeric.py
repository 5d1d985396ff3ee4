"""nb-stop's pay rule per numeric type (round 39): the stop points are kept for the tables' walk. A two-class q15
check leaves the step stream's fast loop and costs about six reads (benchmarks/nb_stop_cost.py), so
``numeric='q15'`` (`train nb-stop --numeric q15` / `--target cortex-m0|m3`) prices it at 6; float32 and K-class
walks keep 1.5, and a float32 model is the one trained before round 39."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from dict_round_trip import assert_same_tables
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import train_test_split

from compiler.nb.stop_cost import DEFAULT_STOP_COST, STOP_COSTS, default_stop_cost, export_note
from compiler.nb.train import NaiveBayesBudget
from pyruntime import format as fmt


def _split(loader: object, seed: int = 0) -> tuple[np.ndarray, ...]:
    X, y = loader(return_X_y=True)  # type: ignore[operator]
    Xa, _, ya, _ = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    return tuple(train_test_split(Xa, ya, test_size=0.25, stratify=ya, random_state=seed))


def test_default_stop_cost_per_numeric_type() -> None:
    assert {default_stop_cost(n, k) for n in ("float32", "q15") for k in (2, 3, 26)} == {DEFAULT_STOP_COST,
                                                                                          STOP_COSTS["q15", False]}
    assert default_stop_cost("q15", 2) > default_stop_cost("float32", 2) == default_stop_cost("q15", 10)
    with pytest.raises(ValueError, match="numeric must be one of float32, q15, got 'int8'"):
        default_stop_cost("int8", 2)


def test_two_class_q15_keeps_the_stop_points_its_checks_pay_for() -> None:
    """numeric='q15' is stop_cost=6 (fewer stop points, each paying for a dearer check); numeric='float32' is the
    model trained before round 39 (stop_cost 1.5); an explicit stop_cost wins over the numeric type."""
    Xr, Xv, yr, yv = _split(load_breast_cancer)
    fit = lambda **p: NaiveBayesBudget(budget=30, **p).fit(Xr, yr, eval_set=(Xv, yv))  # noqa: E731
    f32, q15 = fit(), fit(numeric="q15")
    assert (f32.stop_cost_, q15.stop_cost_) == (DEFAULT_STOP_COST, STOP_COSTS["q15", False])
    assert_same_tables(f32.model_, fit(stop_cost=DEFAULT_STOP_COST).model_)
    assert_same_tables(q15.model_, fit(stop_cost=STOP_COSTS["q15", False]).model_)
    assert_same_tables(f32.model_, fit(numeric="q15", stop_cost=DEFAULT_STOP_COST).model_)
    assert 0 < q15.model_.n_stops < f32.model_.n_stops
    # the tables are the same; the stop points differ (and so may the threshold, tuned on the rows none stops)
    for key in ("order", "edges", "d", "d0"):
        assert np.array_equal(np.asarray(getattr(f32.model_, key)), np.asarray(getattr(q15.model_, key))), key
    assert set(np.asarray(q15.model_.stop_at).tolist()) != set(np.asarray(f32.model_.stop_at).tolist())


def test_k_class_q15_prices_a_check_as_float32() -> None:
    Xr, Xv, yr, yv = _split(load_wine)
    a = NaiveBayesBudget().fit(Xr, yr, eval_set=(Xv, yv))
    b = NaiveBayesBudget(numeric="q15").fit(Xr, yr, eval_set=(Xv, yv))
    assert a.stop_cost_ == b.stop_cost_ == DEFAULT_STOP_COST
    assert_same_tables(a.model_, b.model_)


def test_bad_numeric_is_refused_at_fit() -> None:
    Xr, Xv, yr, yv = _split(load_breast_cancer)
    with pytest.raises(ValueError, match="numeric must be one of float32, q15, got 'int8'"):
        NaiveBayesBudget(numeric="int8").fit(Xr, yr, eval_set=(Xv, yv))
    with pytest.raises(ValueError, match="stop_cost must be a finite number >= 0 or None"):
        NaiveBayesBudget(stop_cost=float("nan")).fit(Xr, yr, eval_set=(Xv, yv))


def test_cli_records_the_walk_and_export_notes_the_other(tmp_path: Path) -> None:
    f32, q15 = tmp_path / "f32.msgpack", tmp_path / "q15.msgpack"
    assert run("train", "nb-stop", "sklearn:breast_cancer", "-o", f32)[0] == 0
    code, _, err = run("train", "nb-stop", "sklearn:breast_cancer", "--target", "cortex-m3", "-o", q15)
    assert code == 0, err
    tr = fmt.load(q15).meta["training"]
    assert (tr["stop_numeric"], tr["stop_cost_chosen"], tr["target"]) == ("q15", STOP_COSTS["q15", False],
                                                                         "cortex-m3")
    assert fmt.load(f32).meta["training"]["stop_numeric"] == "float32"
    assert fmt.load(q15).tables.n_stops < fmt.load(f32).tables.n_stops
    code, _, err = run("train", "nb-stop", "sklearn:breast_cancer", "--numeric", "q15", "-o", tmp_path / "n.msgpack")
    assert code == 0 and fmt.load(tmp_path / "n.msgpack").tables.n_stops == fmt.load(q15).tables.n_stops

    def note(model: Path, *args: str) -> list[str]:
        code, _, err = run("export-c", model, "-o", tmp_path / "m.h", *args)
        assert code == 0, err
        return [line for line in err.splitlines() if line.startswith("note: the stop points")]

    assert note(f32, "--numeric", "q15") == [
        "note: the stop points were kept for float32 tables (a q15 stop check costs more feature reads): train "
        "with --numeric q15 (or --target) to keep them for the q15 walk (docs/nb_stop.md)"]
    assert note(q15, "--target", "pi")[0].startswith("note: the stop points were kept for q15 tables (a float32 "
                                                     "stop check costs fewer feature reads)")
    assert note(f32) == [] and note(q15, "--target", "cortex-m0") == []
    given = tmp_path / "given.msgpack"  # a stop cost the user chose is theirs: no note
    assert run("train", "nb-stop", "sklearn:breast_cancer", "--stop-cost", "2", "-o", given)[0] == 0
    assert note(given, "--numeric", "q15") == []
    static = tmp_path / "static.msgpack"
    assert run("train", "nb-static", "sklearn:breast_cancer", "-o", static)[0] == 0
    assert note(static, "--numeric", "q15") == []
    assert "stop_numeric" not in fmt.load(static).meta["training"]
    # inspect says which walk the stop points were kept for, at what price (text and --json)
    code, out, _ = run("inspect", q15)
    assert code == 0 and f"stop points kept for: q15 tables (a stop check priced {STOP_COSTS['q15', False]:g} " \
        "feature reads)" in out
    kept = json.loads(run("inspect", f32, "--json")[1])["stop_points_kept_for"]
    assert kept == f"float32 tables (a stop check priced {DEFAULT_STOP_COST:g} feature reads)"
    assert "stop_points_kept_for" not in json.loads(run("inspect", static, "--json")[1])


def test_export_note_only_where_the_price_differs(tmp_path: Path) -> None:
    """K classes price a check alike in float32 and q15: their stop points are the same, so no note; nor for a
    model without stop points, a --stop-cost the user gave or a file from before round 39 exported as float32."""
    assert export_note({}, 10, 3, "q15") is None and export_note({"stop_numeric": "float32"}, 3, 2, "q15") is None
    assert export_note({}, 2, 0, "q15") is None and export_note({"stop_cost": 1.5}, 2, 4, "q15") is None
    assert export_note({}, 2, 4, "float32") is None
    assert export_note({}, 2, 4, "q15") == export_note({"stop_numeric": "float32"}, 2, 4, "q15") is not None
    wine = tmp_path / "wine.msgpack"
    assert run("train", "nb-stop", "sklearn:wine", "-o", wine)[0] == 0
    code, _, err = run("export-c", wine, "-o", tmp_path / "w.h", "--numeric", "q15")
    assert code == 0 and "note: the stop points" not in err


def test_cli_bad_numeric_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-stop", "sklearn:breast_cancer", "--numeric", "q16", "-o", out)
    assert code == 2 and not out.exists()
    assert "'q16' is not one of 'float32', 'q15'" in err and len(err.strip().splitlines()) <= 3


def test_folds_error_names_the_label_text() -> None:
    """The small-set rule's folds need every class K times; the estimator's error names the class as given."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.array(["common"] * 60 + ["other"] * 57 + ["rare"] * 3)
    with pytest.raises(ValueError, match="--folds 5: class 'rare' has 3 rows"):
        NaiveBayesBudget(folds=5).fit(X[::2], y[::2], eval_set=(X[1::2], y[1::2]))


@pytest.mark.parametrize("edit", [
    {"stop_cost_chosen": []}, {"stop_cost_chosen": None}, {"stop_cost_chosen": "x"}, {"stop_cost_chosen": {"a": 1}},
    {"stop_cost_chosen": ...}, {"likelihood_chosen": ...},
], ids=["list", "nil", "text", "map", "missing", "no-likelihood"])
def test_inspect_leaves_out_a_training_line_it_cannot_read(tmp_path: Path, edit: dict) -> None:
    """The training record is the trainer's, checked at load for its form only: an edited or foreign file whose
    stop price or table form is of another type, or missing, still inspects (the line left out), where it used to
    end in a traceback."""
    good = tmp_path / "good.msgpack"
    assert run("train", "nb-stop", "sklearn:breast_cancer", "-o", good)[0] == 0
    model = fmt.load(good)
    tr = model.meta["training"]
    assert {"stop_numeric", "stop_cost_chosen", "bins_chosen", "likelihood_chosen"} <= set(tr)
    for key, value in edit.items():
        if value is ...:
            del tr[key]
        else:
            tr[key] = value
    edited = tmp_path / "edited.msgpack"
    fmt.save(model, edited)
    code, out, err = run("inspect", edited, "--json")
    assert code == 0, err
    info = json.loads(out)
    assert ("stop_points_kept_for" in info) == ("stop_cost_chosen" not in edit)
    assert ("table_form" in info) == ("likelihood_chosen" not in edit)
    code, out, err = run("inspect", edited)
    assert code == 0 and "Traceback" not in err, err
