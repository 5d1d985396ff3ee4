"""The q15 input shift of the linear kinds (cstc, the linear gated kinds) is set by the features a model reads:
a column of large magnitude the model never reads must not cost the others their fixed-point resolution (a
cstc tree on such data fell to chance in q15 while float32 kept 0.95)."""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from compiler.cstc.kind import cstc_model_tables
from compiler.gated.kind import f0_tables, gated_tables
from compiler.gated.l1_gate import L1GateClassifier
from pyruntime.evaluators import c_evaluator
from pyruntime.format import ModelFile


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three classes on features 1-4; feature 0 is noise of magnitude 1e9."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 600)
    X = rng.normal(size=(600, 5))
    X[:, 1:4] += 1.5 * np.eye(3)[y]
    X[:, 0] = 1e9 * rng.normal(size=600)
    return X, y


def test_cstc_tables_take_the_largest_input_of_the_features_read() -> None:
    X, _ = data()
    ir = {"n_features": 5, "term_start": np.array([0, 2], np.uint32), "feature": np.array([1, 3], np.int32),
          "weight": np.array([0.5, -1.0], np.float32), "bias": np.zeros(1, np.float32),
          "threshold": np.zeros(1, np.float32), "upper": np.array([-1], np.int32), "lower": np.array([-1], np.int32)}
    t = cstc_model_tables(ir, X)
    assert t.input_absmax == float(np.abs(X[:, [1, 3]]).max())
    assert t.input_absmax < 10.0


def test_gated_linear_parts_take_the_largest_input_of_the_features_they_read() -> None:
    X, y = data(1)
    m = L1GateClassifier(hpc=RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0), p_full=0.2,
                         gamma=0.05).fit(X, y)
    read = np.unique(np.concatenate([m.gate_.feature, *(s.feature for s in m.f1_k_)]))
    assert 0 not in read.tolist()  # the noise column is not read (else this test proves nothing)
    f0 = f0_tables(m.f0_.estimator, np.ones(5), "rf", False)
    per_column = np.abs(X).max(axis=0)
    t = gated_tables(m, f0, np.ones(5), per_column, "rf")
    assert t.input_absmax == float(per_column[read].max())
    # a single number is taken as given (the old form)
    assert gated_tables(m, f0, np.ones(5), 7.5, "rf").input_absmax == 7.5
    # q15 now answers as float32 on nearly every row
    mf = ModelFile(kind="gated", tables=t, meta={})
    f32 = c_evaluator(mf, "float32").predict(X).label
    q15 = c_evaluator(mf, "q15").predict(X).label
    assert np.mean(f32 == q15) >= 0.97


def test_cli_cstc_q15_keeps_its_answers_beside_an_unread_huge_column(tmp_path: object) -> None:
    from pathlib import Path  # noqa: PLC0415

    from cli_work import run  # noqa: PLC0415
    from test_multiclass import write_csv  # noqa: PLC0415

    from pyruntime import format as fmt  # noqa: PLC0415

    X, y = data(2)
    csv = write_csv(Path(str(tmp_path)) / "big.csv", X, [f"k{v}" for v in y])
    out = Path(str(tmp_path)) / "m.msgpack"
    code, _, err = run("train", "cstc", csv, "-o", out)
    assert code == 0, err
    m = fmt.load(out)
    assert 0 not in m.tables.feature.tolist()  # the tree does not read the huge column
    f32 = c_evaluator(m, "float32").predict(X).label
    q15 = c_evaluator(m, "q15").predict(X).label
    assert np.mean(f32 == q15) >= 0.99  # before: one input shift for 1e9 sent every row to one class


def test_cli_linear_kinds_q15_answer_as_float32_on_inputs_of_order_1e6(tmp_path: object) -> None:
    """Every feature of order 1e6 and read: the linear parts' weights are of order 1e-6 and their weight shift
    must keep the score (not only the weights) in int32 (before: q15 gave float32's label on 30-64% of the rows
    and export-c warned)."""
    from pathlib import Path  # noqa: PLC0415

    from cli_work import run  # noqa: PLC0415
    from test_multiclass import write_csv  # noqa: PLC0415

    from pyruntime import format as fmt  # noqa: PLC0415

    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 400)
    X = (rng.normal(size=(400, 5)) + 0.8 * y[:, None]) * 1e6
    csv = write_csv(Path(str(tmp_path)) / "big.csv", X, [f"c{v}" for v in y])
    for kind, opts in (("adapt-lin", ()), ("l1-gate", ()), ("skyline", ("--base", "linear"))):
        out = Path(str(tmp_path)) / f"{kind}.msgpack"
        code, _, err = run("train", kind, csv, "-o", out, *opts)
        assert code == 0, err
        m = fmt.load(out)
        f32 = c_evaluator(m, "float32").predict(X).label
        q15 = c_evaluator(m, "q15").predict(X).label
        assert np.mean(f32 == q15) >= 0.99, kind
        code, _, err = run("export-c", out, "-o", Path(str(tmp_path)) / f"{kind}.h", "--numeric", "q15",
                           "--embed", csv)
        assert code == 0 and "warning" not in err, (kind, err)


def test_q15_input_scale_floors_absmax_at_one_and_keeps_no_saturation_above() -> None:
    from pyruntime.fixedpoint import INT32_MAX  # noqa: PLC0415
    from pyruntime.linear import in_shift_for, q15_input_scale  # noqa: PLC0415

    assert q15_input_scale(0.0) == q15_input_scale(0.25) == q15_input_scale(1.0) == (30, 1.0)
    for absmax in (1.5, 1000.0, 3.0e6, 1.0e9):
        shift, amax = q15_input_scale(absmax)
        assert amax == absmax and shift == in_shift_for(absmax)
        assert absmax * 2.0**shift < 2**31 and (shift == 30 or absmax * 2.0 ** (shift + 1) > INT32_MAX - 1)


def test_scorers_weight_shift_is_the_largest_that_holds_every_scorer() -> None:
    """One shift for scorers sharing an accumulator: no weight leaves int16, no scorer's score bound leaves half
    the int32 range, and one more bit would break one of the two (the bound or the weights)."""
    from pyruntime.fixedpoint import INT32_MAX, score_bound, scorers_weight_shift  # noqa: PLC0415

    rng = np.random.default_rng(4)
    for absmax in (None, 1.0, 250.0, 4.0e6):
        parts = [(float(rng.normal()), float(rng.normal()), rng.normal(size=6) * 10.0 ** rng.integers(-7, 2))
                 for _ in range(3)]
        shift = scorers_weight_shift(parts, absmax)
        wmax = max(float(np.abs(w).max()) for _, _, w in parts)
        assert round(wmax * 2.0**shift) <= 32767
        bounds = [] if absmax is None else [score_bound(b, t, w, absmax) for b, t, w in parts]
        assert all(bd * 2.0**shift <= INT32_MAX // 2 + 0.5 for bd in bounds)
        if shift < 30:
            assert round(wmax * 2.0 ** (shift + 1)) > 32767 or any(
                round(bd * 2.0 ** (shift + 1)) > INT32_MAX // 2 for bd in bounds)
