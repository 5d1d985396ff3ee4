"""NB at the floor (issue 11): the specialised mean-std walk equals the reference bit for bit, catches
non-finite values only among the features read, and its instruction counts stay within budget
(valgrind callgrind of the FM_PREDICT_VEC call: counts, never times)."""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_nb_runtime import assert_same

from pyruntime.build_cffi import runtime_include_flags
from pyruntime.errors import RuntimeCError
from pyruntime.nb.binding import CNaiveBayes
from pyruntime.nb.model import NBModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))


def mean_std_model(k: int = 6, n_features: int = 8, seed: int = 0, d0: float = 0.25) -> NBModel:
    """The default layout: every position has a zero bin and two edges; stops after 2 and 4."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_features)[:k]
    lo = rng.normal(size=k).astype(np.float32)
    edges = np.stack([lo, lo + np.float32(1.5)], axis=1).ravel()
    return NBModel(n_features=n_features, order=order, zero_bin=np.ones(k), edge_start=np.arange(k + 1) * 2,
                   edges=edges, table_start=np.arange(k + 1) * 4, d=rng.normal(size=4 * k).astype(np.float32),
                   d0=d0, threshold=0.1, stop_at=[2, 4], stop_hi=[1.0, 0.8], stop_lo=[-1.0, -0.8])


def rows_for(m: NBModel, n: int = 400, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m.n_features)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = 0.0
    X[rng.random(X.shape) < 0.05] = -0.0
    mask = rng.random(X.shape) < 0.15
    X[mask] = rng.choice(m.edges, size=int(mask.sum()))
    return X


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_mean_std_walk_equals_reference(numeric: str) -> None:
    for seed in range(5):
        m = mean_std_model(seed=seed)
        X = rows_for(m, seed=seed)
        ref = m.predict_reference(X) if numeric == "float32" else m.q15().predict_reference(X)
        got = CNaiveBayes(m, numeric).predict(X)
        assert_same(got, ref)
        assert 0 < np.mean(got.stage > 0) < 1  # both stop answers and final answers happen


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_non_finite_fails_only_when_read(numeric: str) -> None:
    m = mean_std_model()
    c = CNaiveBayes(m, numeric)
    X = rows_for(m, 200)
    p = c.predict(X)
    stopped = int(np.flatnonzero(p.n_read < m.n_used)[0])
    unread = int(m.order[p.n_read[stopped]])  # the first feature the stopped row never reads
    row = X[stopped].copy()
    for bad in (np.nan, np.inf, -np.inf):
        row[unread] = bad
        one = c.predict_raw(row[None, :])  # straight to C: the Python check rejects any NaN
        assert one.n_read[0] == p.n_read[stopped] and one.label[0] == p.label[stopped]
        read = row.copy()
        read[unread] = X[stopped, unread]
        read[int(m.order[0])] = bad
        with pytest.raises(RuntimeCError, match="NaN or infinite"):
            c.predict_raw(read[None, :])


def short_edges_model(seed: int = 0) -> NBModel:
    """Positions with two, one and no edges (mean-std bins of a constant column), and feature costs: the
    record layout repeats the last edge (0 when none) and reads the cost from cum_cost."""
    rng = np.random.default_rng(seed)
    n_edges = [2, 1, 0, 2, 1]
    k = len(n_edges)
    edge_start = np.concatenate([[0], np.cumsum(n_edges)])
    edges = np.concatenate([np.sort(rng.normal(size=n)).astype(np.float32) for n in n_edges])
    table_start = np.concatenate([[0], np.cumsum(np.array(n_edges) + 2)])
    return NBModel(n_features=7, order=rng.permutation(7)[:k], zero_bin=np.ones(k), edge_start=edge_start,
                   edges=edges, table_start=table_start, d=rng.normal(size=int(table_start[-1])).astype(np.float32),
                   d0=0.1, threshold=0.0, stop_at=[1, 3], stop_hi=[1.5, 1.0], stop_lo=[-1.5, -1.0],
                   costs=rng.uniform(0.5, 3.0, size=7).astype(np.float32))


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_record_layout_short_positions_costs_and_non_finite(numeric: str) -> None:
    from pyruntime.nb.binding import pos_records

    for seed in range(4):
        m = short_edges_model(seed)
        q = m.q15() if numeric == "q15" else None
        rec = pos_records(m, q)
        assert rec is not None and np.all(np.isfinite(m.records()[1]))  # the walk runs on records
        X = rows_for(m, seed=seed)
        ref = m.predict_reference(X) if q is None else q.predict_reference(X)
        c = CNaiveBayes(m, numeric)
        assert_same(c.predict(X), ref)
        for bad in (np.nan, np.inf, -np.inf, -np.nan):
            for p in range(m.n_used):  # a bad value in every position is caught when read, never otherwise
                row = X[:1].copy()
                row[0, int(m.order[p])] = bad
                first = c.predict(X[:1])
                if first.n_read[0] > p:
                    with pytest.raises(RuntimeCError, match="NaN or infinite"):
                        c.predict_raw(row)
                else:
                    assert_same(c.predict_raw(row), first)


def bit_edges_model() -> NBModel:
    """q15 step-stream corner cases: edges at -0.0, +0.0, negative, the smallest subnormal and FLT_MAX,
    positions with and without a zero bin, stop points after 1, 2 and 5 positions."""
    tiny, big = np.float32(1e-45), np.finfo(np.float32).max
    pairs = [(-0.0, 0.0), (0.0, tiny), (-2.0, -1.0), (-1.0, 0.5), (tiny, big), (0.25, 0.25), (1.0, big)]
    k = len(pairs)
    zero_bin = np.array([1, 1, 0, 1, 1, 0, 1], np.uint8)
    sizes = 3 + zero_bin
    rng = np.random.default_rng(7)
    return NBModel(n_features=9, order=[3, 0, 8, 5, 1, 7, 2], zero_bin=zero_bin,
                   edge_start=np.arange(k + 1) * 2, edges=np.float32(pairs).ravel(),
                   table_start=np.concatenate([[0], np.cumsum(sizes)]),
                   d=rng.normal(size=int(sizes.sum())).astype(np.float32), d0=0.05, threshold=0.0,
                   stop_at=[1, 2, 5], stop_hi=[2.0, 1.5, 1.0], stop_lo=[-2.0, -1.5, -1.0])


def bit_edges_rows(m: NBModel, n: int = 300, seed: int = 3) -> np.ndarray:
    """Rows of the values the raw-bit compares must get right: +-0, subnormals, FLT_MAX, the edges themselves
    and their float neighbours, negatives."""
    f32 = np.finfo(np.float32)
    e = m.edges.astype(np.float32)
    pool = np.concatenate([e, np.nextafter(e, f32.max), np.nextafter(e, -f32.max),
                           np.float32([0.0, -0.0, 1e-45, -1e-45, 2e-45, f32.tiny, f32.max, -f32.max, 3.5, -3.5])])
    rng = np.random.default_rng(seed)
    X = rng.choice(pool, size=(n, m.n_features)).astype(np.float32)
    mask = rng.random(X.shape) < 0.3
    X[mask] = (rng.normal(size=int(mask.sum())) * 2).astype(np.float32)
    return X


def test_q15_step_stream_at_the_bit_edges() -> None:
    """The q15 step stream (raw-bit thresholds, a stop point marked in its next step) equals the reference on
    the values where bits and floats part: signed zeros, subnormals, FLT_MAX, edges and their neighbours."""
    m = bit_edges_model()
    X = bit_edges_rows(m)
    c = CNaiveBayes(m, "q15")
    assert c.struct.hot != c.ffi.NULL
    got = c.predict(X)
    assert_same(got, m.q15().predict_reference(X))
    assert len(set(got.n_read.tolist())) >= 3  # rows stop at several stop points and at the end
    for bad in (np.nan, np.inf, -np.inf):
        for p in range(m.n_used):
            row = X[:1].copy()
            row[0, int(m.order[p])] = bad
            if got.n_read[0] > p:
                with pytest.raises(RuntimeCError, match="NaN or infinite"):
                    c.predict_raw(row)
            else:
                assert_same(c.predict_raw(row), c.predict(X[:1]))


def test_record_tables_are_checked() -> None:
    """fm_nb_check / fm_nb_q15_check on records (float32 fm_nb_pos, q15 fm_nb_q15_hot steps): a bad feature
    index, a repeated feature, an edge out of range, costs beside records, a decreasing cum_cost, a q15 record
    model that could saturate, a stop point whose step does not leave, no end step."""
    from pyruntime._frugalml_c import ffi, lib

    m = short_edges_model()
    c = CNaiveBayes(m, "float32")
    s = c.struct
    assert lib.fm_nb_check(s) == 0 and s.pos != ffi.NULL and s.cum_cost != ffi.NULL
    q = CNaiveBayes(m, "q15").struct
    assert lib.fm_nb_q15_check(q) == 0 and q.pos == ffi.NULL and q.hot != ffi.NULL and q.cum_cost != ffi.NULL
    hot = q.hot
    assert hot[1].above[1] == 0 and hot[3].above[1] == 0 and hot[m.n_used].above[1] == 0  # stops after 1, 3
    f32_bad = [(s.pos[1], "feature", 7), (s.pos[1], "feature", s.pos[0].feature), (s.pos[2].edge, 1, float("inf"))]
    q15_bad = [(hot[1], "feature", 7), (hot[1], "feature", hot[0].feature), (hot[2].above, 1, 0x7F800001),
               (hot[2].above, 0, hot[2].above[1] + 1), (hot[3].above, 1, 5), (hot[m.n_used].above, 1, 1),
               (hot[m.n_used], "feature", 7), (hot[0], "key", -1)]
    for struct, check, cases in ((s, lib.fm_nb_check, f32_bad), (q, lib.fm_nb_q15_check, q15_bad)):
        for obj, key, value in cases:
            get = (lambda o=obj, k=key: o[k]) if isinstance(key, int) else (lambda o=obj, k=key: getattr(o, k))
            keep = get()
            if isinstance(key, int):
                obj[key] = value
            else:
                setattr(obj, key, value)
            assert check(struct) != 0, (key, value)
            if isinstance(key, int):
                obj[key] = keep
            else:
                setattr(obj, key, keep)
            assert check(struct) == 0
        cum = struct.cum_cost
        top = cum[2]
        cum[2] = 0
        assert check(struct) != 0
        cum[2] = top
        assert check(struct) == 0
    d0 = q.d0
    q.d0 = 2**31 - 1000
    assert lib.fm_nb_q15_check(q) != 0
    q.d0 = d0
    q.pos = ffi.cast("const fm_nb_q15_pos *", hot)  # records and steps together: one layout only
    assert lib.fm_nb_q15_check(q) != 0
    q.pos = ffi.NULL
    assert lib.fm_nb_q15_check(q) == 0


def test_float32_sum_overflow_of_finite_values_is_not_an_error() -> None:
    """The per-prediction finiteness test sums the values read; a finite sum overflow must rescan, not fail."""
    m = mean_std_model()
    X = np.full((3, m.n_features), 3e38, dtype=np.float32)
    X[1] *= -1
    assert_same(CNaiveBayes(m, "float32").predict(X), m.predict_reference(X))


def test_q15_model_that_can_saturate_uses_saturating_adds() -> None:
    m = mean_std_model(d0=1.0)
    q = m.q15()
    peak = float(np.max(np.abs(m.d)))
    # d0 close to the int32 edge in table units: the plain-add walk cannot be used
    m2 = mean_std_model(d0=float(2**31 - 40000) / 2.0**q.shift)
    assert abs(m2.q15().d0) + 32768 * m2.n_used > 2**31 - 1 and peak > 0
    X = rows_for(m2)
    assert_same(CNaiveBayes(m2, "q15").predict(X), m2.q15().predict_reference(X))


# ---------- instruction budgets (callgrind counts) ----------

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="valgrind and cc needed")
ROWS = 60
# Budgets per feature read (x86-64 -O2, prediction call incl. per-prediction overhead) on digits static
# NB (64 features), measured 13.41 (float32) and 15.48 (q15) on the record layout when set (17.4 and
# 23.1 before it); a small margin above.
F32_PER_FEATURE = 13.7
Q15_PER_FEATURE = 15.8
# Instructions per prediction of static NB (per-prediction overhead counts at k = 10), measured on
# spambase 181.3 (float32) and 202.2 (q15) when set (233 and 300 before the record layout).
PER_PREDICTION = {("keel:spambase", "float32"): 185.0, ("keel:spambase", "q15"): 207.0}


def count(model, numeric: str, rows: np.ndarray, out: Path) -> tuple[float, float]:
    from nb import callgrind

    from compiler.header import render_header

    header = out / f"{model.kind}_{numeric}" / "model.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text(render_header(model, numeric, "model", rows))
    fn = re.search(r"#define FM_PREDICT_VEC\(x, n, out\) (\w+)\(", header.read_text())
    assert fn is not None
    exe = callgrind.build_counter(header, header.parent)
    ir, stdout = callgrind.instructions([str(exe), str(rows.shape[0])], fn.group(1), header.parent / "cg.out")
    return ir / rows.shape[0], int(stdout.split()[0]) / rows.shape[0]


@needs_valgrind
@pytest.mark.parametrize(("spec", "positive"), [("sklearn:digits", "8"), ("keel:spambase", None)])
def test_instruction_budget_and_stop_never_costs_more_than_static(tmp_path: Path, spec: str,
                                                                   positive: str | None) -> None:
    from compiler import tasks
    from compiler.nb.kind import train_nb
    from pyruntime.errors import DataError

    try:
        task = tasks.prepare(spec, positive, None, 0)
    except DataError as exc:
        pytest.skip(f"{spec} unavailable: {exc}")
    static = train_nb("nb-static", task, {}, None)
    stop = train_nb("nb-stop", task, {"budget": static.tables.n_used}, None)  # the same budget
    rows = task.data.X[task.test][:ROWS]
    for numeric, per_feature in (("float32", F32_PER_FEATURE), ("q15", Q15_PER_FEATURE)):
        ir_static, f_static = count(static, numeric, rows, tmp_path)
        ir_stop, f_stop = count(stop, numeric, rows, tmp_path)
        assert f_stop < f_static  # the stop points do stop some rows
        assert ir_stop <= ir_static, (numeric, ir_stop, ir_static)
        if spec == "sklearn:digits":  # 64 features read: per-prediction overhead is amortized
            assert ir_static / f_static <= per_feature, (numeric, ir_static / f_static)
        else:
            assert ir_static <= PER_PREDICTION[spec, numeric], (numeric, ir_static)


# Generated-code form (export-c --form code), x86-64 -O2 callgrind of the prediction function, static NB
# trained as the CLI trains it (with its zero-share code hints: the exact-zero test sits in the zero's
# interval where zeros are rare; non-finite values tested in the outer intervals' leaves and failed at
# once). Per feature read, measured when set (60 rows, float32 / q15): digits 6.36 / 6.36, breast_cancer
# 7.58 / 7.64, magic 9.71 / 10.04; the budgets are a small margin above, and magic's float32 one is issue
# 11's floor (<= 10 on x86-64 float32), which its 5 reads per prediction reach only because the per-call
# work is small (history: breast_cancer 10.64 with the zero test in
# front of every read, 13.0 before the finiteness test moved into the outer leaves).
CODE_PER_FEATURE = {("sklearn:digits", "float32"): 6.7, ("sklearn:digits", "q15"): 6.7,
                    ("sklearn:breast_cancer", "float32"): 7.8, ("sklearn:breast_cancer", "q15"): 7.9,
                    ("keel:magic", "float32"): 10.0, ("keel:magic", "q15"): 10.5}


def code_header(spec: str, positive: str | None, numeric: str, out: Path, target: str | None = None
                ) -> tuple[Path, int]:
    """The code-form header of static NB on spec (test rows embedded) and the features it reads per row."""
    from compiler import tasks
    from compiler.codegen import render_code_header
    from compiler.nb.kind import train_nb
    from pyruntime.errors import DataError

    try:
        task = tasks.prepare(spec, positive, None, 0)
    except DataError as exc:
        pytest.skip(f"{spec} unavailable: {exc}")
    static = train_nb("nb-static", task, {}, None)
    assert static.meta["training"]["code_hints"]["zero_share"]
    header = out / f"{spec.replace(':', '_')}_{numeric}" / "model.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text(render_code_header(static, numeric, "model", task.data.X[task.test][:ROWS], target))
    return header, int(static.tables.n_used)


@needs_valgrind
@pytest.mark.parametrize(("spec", "positive"), [("sklearn:digits", "8"), ("sklearn:breast_cancer", None),
                                                ("keel:magic", None)])
def test_code_form_instruction_budget(tmp_path: Path, spec: str, positive: str | None) -> None:
    import subprocess

    from nb import callgrind

    for numeric in ("float32", "q15"):
        header, _ = code_header(spec, positive, numeric, tmp_path)
        exe = header.parent / "count"
        subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", *runtime_include_flags(),
                        f"-I{header.parent}", "-DFM_CODE_FN=__attribute__((noinline, noclone))",
                        str(ROOT / "benchmarks" / "c" / "nb_count.c"), "-o", str(exe)], check=True)
        ir, stdout = callgrind.instructions([str(exe), str(ROWS)], "model_predict_vec", header.parent / "cg.out")
        per_feature = ir / int(stdout.split()[0])
        print(f"{spec} {numeric} code form: {per_feature:.2f} instructions per feature read")
        assert per_feature <= CODE_PER_FEATURE[spec, numeric], (numeric, per_feature)


# Cortex-M3 q15 tables (QEMU, benchmarks/common/qemu_count.py: the prediction call plus the self-test's row loop),
# static NB on test rows, per feature read: digits pos 8 measured 10.43 and breast_cancer 10.90 with the step
# stream (r10-nbm3; 15.34 and 19.6 with the records, 22.4 and 29.1 before them). Issue 21 item 6: <= 12.
M3_Q15_PER_FEATURE = {"sklearn:digits": 10.6, "sklearn:breast_cancer": 11.2}
needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None
                                or shutil.which("valgrind") is None,
                                reason="qemu-system-arm, arm-none-eabi-gcc and valgrind needed")


@needs_qemu
@pytest.mark.parametrize(("spec", "positive"), [("sklearn:digits", "8"), ("sklearn:breast_cancer", None)])
def test_cortex_m3_q15_instruction_budget(tmp_path: Path, spec: str, positive: str | None) -> None:
    from benchmarks.common.qemu_count import count_cortex_m
    from compiler import tasks
    from compiler.nb.kind import train_nb

    task = tasks.prepare(spec, positive, None, 0)
    static = train_nb("nb-static", task, {}, None)
    rows = task.data.X[task.test][:ROWS]
    _, feats = count(static, "q15", rows, tmp_path)  # x86 run: features read per prediction (same tables)
    per = count_cortex_m(tmp_path / f"{static.kind}_q15" / "model.h", "cortex-m3")
    print(f"{spec} static, Cortex-M3 q15 tables: {per / feats:.2f} per feature read")
    assert per / feats <= M3_Q15_PER_FEATURE[spec], per / feats


# Issue 11's floor for NB on Cortex-M3 q15 (<= 12 instructions per feature read), code form: measured
# (QEMU, the prediction call plus the self-test's row loop) 9.9 on breast_cancer (30 features), 7.6 on
# digits (64) and 10.1 on magic (5) when set.
M3_CODE_PER_FEATURE = 12.0


@needs_qemu
@pytest.mark.parametrize(("spec", "positive"), [("sklearn:digits", "8"), ("sklearn:breast_cancer", None),
                                                ("keel:magic", None)])
def test_cortex_m3_q15_code_form_at_the_floor(tmp_path: Path, spec: str, positive: str | None) -> None:
    from benchmarks.common.qemu_count import count_cortex_m

    header, features = code_header(spec, positive, "q15", tmp_path, "cortex-m3")
    per = count_cortex_m(header, "cortex-m3")
    assert per / features <= M3_CODE_PER_FEATURE, per / features  # static NB reads all its budget


@needs_qemu
@pytest.mark.parametrize(("target", "machine", "cflags"), [
    ("cortex-m0", "mps2-an385", None), ("cortex-m3", "mps2-an385", None), ("cortex-m4f", "mps2-an386", None),
    ("cortex-m33", "mps2-an505", None),
    # unoptimised, r7 held as the frame pointer: the Thumb-1 loop's operands must still find low registers
    ("cortex-m0", "mps2-an385", "-O0 -fno-omit-frame-pointer")])
def test_q15_step_stream_on_cortex_m_at_the_bit_edges(tmp_path: Path, target: str, machine: str,
                                                      cflags: str | None) -> None:
    """The step loop (FM_NB_HOT_RUN: Thumb-2 on the M3/M4F/M33, Thumb-1 on the M0) prints what the reference answers
    on the bit-edge rows."""
    from firmware_tools import CORTEX_M, expected_lines, make

    import compiler.nb.kind  # noqa: F401  (registers the NB header emitter)
    from compiler.header import render_header
    from pyruntime.format import ModelFile

    model = ModelFile("nb-stop", bit_edges_model())
    m = model.tables
    X = bit_edges_rows(m, n=120)
    # a last row that reaches position 3 (no stop point before it, an edge above 0: its step stays in the loop)
    # with +inf there: the loop's own exponent test must let it out to the error
    deep = int(np.flatnonzero(m.q15().predict_reference(X).n_read > 3)[0])
    bad = X[deep:deep + 1].copy()
    bad[0, int(m.order[3])] = np.inf
    header = tmp_path / "model.h"
    header.write_text(render_header(model, "q15", "model", np.concatenate([X, bad]), target))
    assert "fm_nb_q15_hot" in header.read_text()
    p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"MACHINE={machine}", f"BUILD={tmp_path / 'b'}",
             *([f"CFLAGS={cflags}"] if cflags else []), "run", check=False)
    lines = p.stdout.splitlines()
    assert lines[:-1] == expected_lines(model, "q15", X)
    assert lines[-1].startswith(f"error {len(X)} ") and p.returncode != 0, (lines[-1], p.stderr)


# Issue 19's K-class bar (Cortex-M3 q15, per feature read <= 2K + 8): nb-stop on digits (10 classes, trained as
# the CLI trains it: budget 50, 17 stop points), the first test rows. Measured (QEMU, the prediction call plus
# the self-test's row loop; 20.17 features read a row) 162.3 before the r10-nbk round (generic walk: 3,273.7 a
# prediction), 121.0 with FM_NBK_ADD (3 instructions a class), the one-test runner-up pass and the +0 branch /
# two-edge slot search, 117.9 with the plain walk apart from the saturating one, 104.9 with a walk for two
# edges a position (the count known), 103.3 with the runner-up pass two classes a turn. Round 12 (r12-nbk, the
# packed K-class q15 format: two classes a 32-bit word): 95.5 with the packed adds, 82.7 with the runner-up pass
# on the lanes as they decode, 81.8 (1,650.0 a prediction) with the eager two-edge walk (a segment a loop, the
# finiteness flag tested a segment) and FM_NBK_ADD on word pairs (four scratch registers: fewer spills), 80.2
# with the runner-up pass walking the words by pointer, 72.0 (1,451.0 a prediction) with FM_NBK_SEG (the
# two-edge segment in Thumb-2 assembly: the walk's state in registers, no spills). Still far above 2K + 8 = 28:
# what is left is in docs/benchmarks.md (issue 19, r12-nbk). The budget pins today's walk.
M3_Q15_K_PER_FEATURE = 73.5
# The Cortex-M0 on the same model: 103.64 per feature read with GCC's Thumb-1 code of the C segment walk (its state
# on the stack), 83.23 (1,191.6 a prediction) with round 43's Thumb-1 FM_NBK_SEG (fm_port.h) adding a word a loop
# turn, 77.25 (1,105.9) with its eight unrolled words entered part-way.
M0_Q15_K_PER_FEATURE = 79.0


@needs_qemu
def test_cortex_m_q15_k_class_instruction_budget(tmp_path: Path) -> None:
    from benchmarks.common.qemu_count import count_cortex_m
    from compiler import tasks
    from compiler.header import render_header
    from compiler.nb.kind import train_nb

    task = tasks.prepare("sklearn:digits", None, None, 0)
    model = train_nb("nb-stop", task, {}, None)
    assert model.tables.n_classes == 10
    rows = task.data.X[task.test][:ROWS]
    feats = float(np.mean(model.tables.q15().predict_reference(rows).n_read))
    header = tmp_path / "model.h"
    header.write_text(render_header(model, "q15", "model", rows))
    for target, budget in (("cortex-m3", M3_Q15_K_PER_FEATURE), ("cortex-m0", M0_Q15_K_PER_FEATURE)):
        per = count_cortex_m(header, target)
        print(f"digits nb-stop K=10, {target} q15 tables: {per:.1f} per prediction, {per / feats:.2f} per feature read")
        assert per / feats <= budget, (target, per / feats)


# The same model as code (export-c --form code, compiler/nb/code.py nbk_code): the K scores as locals (GCC keeps
# most of the ten in registers on the M3), a class's add is its constant (the packed format's centred lanes are
# small: one Thumb-2 immediate each), the stop points' leader pass unrolled. Measured on these rows: 35.79 per
# feature read with the full-range int16 entries (721.7 a prediction), 33.11 with the packed lanes (667.7, the
# tables 1,451.0); r13-nb28: 27.11 (546.7) with the positions between stop points nested in pairs, a leaf adding
# the two rows' sum (NBK_GROUP: 10 adds for two feature reads instead of 20), 26.56 (535.5) with the stop points'
# margin in int32 (no two scores can differ by more). Issue 19's 2K + 8 = 28 holds; the budget pins it with about
# 3 % to spare.
M3_Q15_K_CODE_PER_FEATURE = 27.4


@needs_qemu
def test_cortex_m3_q15_k_class_code_form_instruction_budget(tmp_path: Path) -> None:
    from benchmarks.common.qemu_count import count_cortex_m
    from compiler import tasks
    from compiler.codegen import render_code_header
    from compiler.nb.kind import train_nb

    task = tasks.prepare("sklearn:digits", None, None, 0)
    model = train_nb("nb-stop", task, {}, None)
    rows = task.data.X[task.test][:ROWS]
    feats = float(np.mean(model.tables.q15().predict_reference(rows).n_read))
    header = tmp_path / "model.h"
    header.write_text(render_code_header(model, "q15", "model", rows, "cortex-m3"))
    per = count_cortex_m(header, "cortex-m3")
    print(f"digits nb-stop K=10, Cortex-M3 q15 code form: {per:.1f} per prediction, {per / feats:.2f} per feature "
          "read")
    assert per / feats <= M3_Q15_K_CODE_PER_FEATURE, per / feats


@needs_qemu
@pytest.mark.parametrize(("n_classes", "target", "machine"), [(7, "cortex-m3", "mps2-an385"),
                                                              (10, "cortex-m4f", "mps2-an386"),
                                                              (7, "cortex-m33", "mps2-an505")])
def test_k_class_q15_adds_on_cortex_m_equal_the_reference(tmp_path: Path, n_classes: int, target: str,
                                                          machine: str) -> None:
    """FM_NBK_ADD (Thumb-2 groups of four, then a pair and a single: K = 7 takes all three, K = 10 two) prints
    what the reference answers: labels, stop points, features read, scores."""
    from firmware_tools import CORTEX_M, expected_lines, make
    from sklearn.datasets import load_digits

    from compiler import tasks
    from compiler.header import render_header
    from compiler.nb.kind import train_nb

    X, y = load_digits(return_X_y=True)
    keep = y < n_classes
    np.savez(tmp_path / "d.npz", X=X[keep].astype(np.float32), y=y[keep])
    task = tasks.prepare(str(tmp_path / "d.npz"), None, None, 0)
    model = train_nb("nb-stop", task, {}, None)
    assert model.tables.n_classes == n_classes
    rows = task.data.X[task.test][:40]
    header = tmp_path / "model.h"
    header.write_text(render_header(model, "q15", "model", rows, target))
    p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"MACHINE={machine}", f"BUILD={tmp_path / 'b'}",
             "run", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected_lines(model, "q15", rows)


@needs_qemu
@pytest.mark.parametrize(("target", "cflags"), [
    ("cortex-m3", None), ("cortex-m0", None),
    # unoptimised, r7 held as the frame pointer: the Thumb-1 walk's pinned r0-r4 and high registers still fit
    ("cortex-m0", "-O0 -fno-omit-frame-pointer")])
def test_k_class_q15_segment_walk_on_cortex_m_signs_zeros_and_non_finite(tmp_path: Path, target: str,
                                                                         cflags: str | None) -> None:
    """FM_NBK_SEG (the two-edge segment walk: Thumb-2 on the M3, Thumb-1 on the M0) on data with negative values
    and negative edges (digits minus 8), +0 and -0, NaN and infinities among the features not read (no error)
    and a NaN read (the firmware's error line for that row): the lines before it are the reference's."""
    from firmware_tools import CORTEX_M, expected_lines, make
    from sklearn.datasets import load_digits

    from compiler import tasks
    from compiler.header import render_header
    from compiler.nb.kind import train_nb

    X, y = load_digits(return_X_y=True)
    np.savez(tmp_path / "d.npz", X=(X - 8.0).astype(np.float32), y=y)
    task = tasks.prepare(str(tmp_path / "d.npz"), None, None, 0)
    # two edges a position (the segment walk's layout); the two-class bound (0.02) lets this split stop early
    model = train_nb("nb-stop", task, {"bins": "mean-std", "disagreement": 0.02}, None)
    m = model.tables
    assert m.n_classes == 10 and float(np.min(m.edges)) < 0 and m.strided()[0] == 2
    rows = task.data.X[task.test][:30].copy()
    rows[rows == 0] = np.float32(-0.0)
    rows[::3][rows[::3] == -0.0] = np.float32(0.0)
    edges = m.strided()[1].reshape(-1, 2)  # position j's two edges; a value equal to an edge is not above it
    for r in range(1, 20, 2):
        for j in range(r % 3, m.n_used, 3):
            if np.isfinite(edges[j, (r + j) % 2]):
                rows[r, m.order[j]] = edges[j, (r + j) % 2]
    clean = rows.copy()  # the reference refuses non-finite inputs even where they are not read
    ref = model.tables.q15().predict_reference(rows)
    early = np.flatnonzero(ref.n_read[:20] < m.n_used)
    assert early.size >= 3
    for r, v in zip(early[:3], (np.nan, -np.inf, np.inf)):  # past where these rows stop: never read
        rows[r, m.order[int(ref.n_read[r])]] = v
    rows[early[0], m.order[-1]] = -np.inf
    bad = 20
    rows[bad, m.order[3]] = np.nan
    header = tmp_path / "model.h"
    header.write_text(render_header(model, "q15", "model", rows, target))
    p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", "MACHINE=mps2-an385", f"BUILD={tmp_path / 'b'}",
             *([f"CFLAGS={cflags}"] if cflags else []), "run", check=False)
    lines = p.stdout.splitlines()
    assert lines[:bad] == expected_lines(model, "q15", clean[:bad])
    assert lines[bad].startswith(f"error {bad} ") and p.returncode != 0, (lines[bad:], p.stderr)


# What one stop check costs a two-class q15 walk that goes on past it (the step stream leaves its loop, runs the
# stop test and reads the leaving position): static NB on breast cancer against the same tables with a stop point
# every third position whose bounds never answer, so every row pays every check. Measured when set (60 test rows,
# 9 checks a row), round 41: Cortex-M3 39.45, Cortex-M0 44.84, x86-64 30.75 instructions a check (round 40: 45.40,
# 52.66, 38.12: the leaving position's key computed for every value; before round 40's walk 57.42 on the M3 and
# 47.21 on x86: the position's multiply, a stop_at lookup and a call per check), and the static walk itself on the
# Cortex-M0 468.3 instructions a prediction since round 42's Thumb-1 step loop (fm_port.h: 11 instructions a middle
# interval where GCC's code of the C loop takes 13; 526.7 in round 41, 589.2 in round 40, when that code kept a copy
# of the step pointer, one register move a read). The M0's check rose to 46.68 with it: a check still leaves the
# loop and reads its step as before, and what it is measured against, the loop's step it replaces, got cheaper
# (a row with its 9 checks: 888.4 instructions, 930.3 in round 41). The budgets are a small margin above.
STOP_CHECK_M3 = 40.5
STOP_CHECK_M0 = 47.5
STOP_CHECK_X86 = 31.5
STATIC_M0 = 480.0


def never_stopping(model: Any, every: int = 3) -> Any:
    """model (static NB) with a stop point every `every` positions whose bounds no score passes."""
    t = model.tables
    at = np.arange(every, t.n_used, every, dtype=np.uint32)
    big = np.full(at.size, np.inf, dtype=np.float32)
    return replace(model, kind="nb-stop", tables=replace(t, stop_at=at, stop_hi=big, stop_lo=-big))


@needs_qemu
def test_q15_stop_check_and_m0_walk_budgets(tmp_path: Path) -> None:
    """What a never-answering stop check adds to the two-class q15 walk (Cortex-M3, Cortex-M0, x86), and what the
    static walk costs the Cortex-M0, whose step loop is its own Thumb-1 one (budgets above)."""
    from benchmarks.common.qemu_count import count_cortex_m
    from compiler import tasks
    from compiler.nb.kind import train_nb

    task = tasks.prepare("sklearn:breast_cancer", None, None, 0)
    static = train_nb("nb-static", task, {}, None)
    stops = never_stopping(static)
    n_checks = int(stops.tables.n_stops)
    rows = task.data.X[task.test][:ROWS]
    ir_static, f_static = count(static, "q15", rows, tmp_path)
    ir_stops, f_stops = count(stops, "q15", rows, tmp_path / "s")
    assert f_static == f_stops == static.tables.n_used  # no row stops: the same reads, plus the checks
    headers = [tmp_path / f"{static.kind}_q15" / "model.h", tmp_path / "s" / f"{stops.kind}_q15" / "model.h"]
    on = {cpu: [count_cortex_m(h, cpu) for h in headers] for cpu in ("cortex-m3", "cortex-m0")}
    x86 = (ir_stops - ir_static) / n_checks
    m3, m0 = ((on[cpu][1] - on[cpu][0]) / n_checks for cpu in ("cortex-m3", "cortex-m0"))
    print(f"q15 stop check, {n_checks} a row: Cortex-M3 {m3:.2f}, Cortex-M0 {m0:.2f}, x86 {x86:.2f} instructions; "
          f"static NB on the Cortex-M0 {on['cortex-m0'][0]:.1f} a prediction")
    assert m3 <= STOP_CHECK_M3 and m0 <= STOP_CHECK_M0 and x86 <= STOP_CHECK_X86, (m3, m0, x86)
    assert on["cortex-m0"][0] <= STATIC_M0, on["cortex-m0"][0]


@needs_qemu
@pytest.mark.parametrize("n_classes", [3, 16, 17, 26])
def test_k_class_q15_segment_walk_on_cortex_m0_for_every_row_width(tmp_path: Path, n_classes: int) -> None:
    """The Thumb-1 FM_NBK_SEG adds a row in a block of eight unrolled words entered part-way: rows of 2, 8, 9 and
    13 words (3, 16, 17 and 26 classes: the first pass short, exactly one full pass, a full pass after one word,
    two passes after five) print the reference's lines."""
    from firmware_tools import CORTEX_M, expected_lines, make

    from compiler import tasks
    from compiler.header import render_header
    from compiler.nb.kind import train_nb

    rng = np.random.default_rng(n_classes)
    y = np.repeat(np.arange(n_classes), 40)
    X = rng.normal(scale=2.0, size=(n_classes, 12))[y] + rng.normal(size=(y.size, 12))
    X[rng.random(X.shape) < 0.1] = 0.0  # exact zeros: slot 0
    np.savez(tmp_path / "k.npz", X=X.astype(np.float32), y=y)
    task = tasks.prepare(str(tmp_path / "k.npz"), None, None, 0)
    model = train_nb("nb-stop", task, {"bins": "mean-std"}, None)
    assert model.tables.n_classes == n_classes and model.tables.strided()[0] == 2
    rows = task.data.X[task.test][:40]
    header = tmp_path / "model.h"
    header.write_text(render_header(model, "q15", "model", rows, "cortex-m0"))
    p = make(CORTEX_M, f"MODEL={header}", "TARGET=cortex-m0", "MACHINE=mps2-an385", f"BUILD={tmp_path / 'b'}", "run")
    assert p.stdout.splitlines() == expected_lines(model, "q15", rows)
