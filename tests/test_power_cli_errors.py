"""`power run` on bad input: exit 2, one line on stderr, nothing measured and no run directory left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from compiler.cli import cli as frugalml_cli
from power_bench import cli as power_cli
from power_bench.cli import power
from power_bench.workload import WorkloadCheckError, check_pyruntime_models, check_workload, template_workload
from pyruntime.data import make_sparse_binary

ROOT = Path(__file__).resolve().parents[1]
FEATURES = 24
REPORT = "import json, sys; print(json.dumps({'predictions': 10, 'seconds': float(sys.argv[1])}))"


def _csv(path: Path, rows: int, features: int, seed: int) -> Path:
    X, y = make_sparse_binary(rows, features, seed=seed)
    header = ",".join([f"w{j}" for j in range(features)] + ["label"])
    lines = [",".join([*(f"{v:g}" for v in x), "spam" if t else "ham"]) for x, t in zip(X, y, strict=True)]
    path.write_text(header + "\n" + "\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real nb-static model on 24 features, its data, and data of another width."""
    d = tmp_path_factory.mktemp("power_cli")
    _csv(d / "right.csv", 600, FEATURES, seed=1)
    _csv(d / "wide.csv", 50, FEATURES + 9, seed=2)
    res = CliRunner().invoke(frugalml_cli, ["train", "nb-static", str(d / "right.csv"), "-o", str(d / "m.msgpack")])
    assert res.exit_code == 0, res.output
    (d / "junk.msgpack").write_bytes(b"not a model at all")
    (d / "a_file").write_text("x")
    return d


@pytest.fixture
def no_measuring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if `power run` gets as far as measuring."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("power run started measuring although its input was bad")

    monkeypatch.setattr(power_cli, "Measurement", refuse)


def invoke(work: Path, *extra: str, out: Path | None = None, data: str | None = None,
           model: str | None = None, meter: str = "emulated:uni-t-ut61e") -> Result:
    args = ["run", "--meter", meter, "--model", model or str(work / "m.msgpack"),
            "--data", data or str(work / "right.csv"), "--idle-seconds", "30", "--quiet",
            "-o", str(out if out is not None else work / "never" / "run"), *extra]
    return CliRunner().invoke(power, args)


def assert_one_line_exit_2(res: Result, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    err = res.stderr
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in res.output and res.stdout == ""
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# ------------------------------------------------------------- the run directory


def test_run_dir_under_a_file_is_one_line_exit_2(work: Path, no_measuring: None) -> None:
    out = work / "a_file" / "run"
    res = invoke(work, "--volts", "5", out=out)
    assert_one_line_exit_2(res, "cannot create run directory", str(out), "not a directory")
    assert (work / "a_file").is_file()


def test_run_dir_that_is_a_file_is_one_line_exit_2(work: Path, no_measuring: None) -> None:
    res = invoke(work, "--volts", "5", out=work / "a_file")
    assert_one_line_exit_2(res, "a_file")
    assert (work / "a_file").read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_run_dir_in_read_only_directory_is_one_line_exit_2(work: Path, tmp_path: Path, no_measuring: None) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        res = invoke(work, "--volts", "5", out=locked / "run")
        assert_one_line_exit_2(res, "not writable")
        assert not (locked / "run").exists()
    finally:
        locked.chmod(0o700)


def test_run_dir_that_cannot_be_created_in_a_real_process(work: Path) -> None:
    """Through the installed command line (no CliRunner): the exit code and stderr a user sees."""
    out = work / "a_file" / "deeper" / "run"
    common = ["--meter", "emulated:uni-t-ut61e", "--volts", "5", "--model", str(work / "m.msgpack"),
              "--data", str(work / "right.csv"), "--quiet", "-o", str(out)]
    for argv in ([sys.executable, "-m", "compiler.cli", "power", "run", *common],
                 [sys.executable, "-m", "power_bench", "run", *common]):
        res = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert res.returncode == 2, res.stderr
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: cannot create run directory")
        assert "Traceback" not in res.stderr and res.stdout == ""


def test_unopenable_port_removes_the_directories_it_created(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "run"
    res = invoke(work, "--volts", "5", out=out, meter="uni-t-ut61e:/nonexistent/tty")
    assert_one_line_exit_2(res, "cannot open /nonexistent/tty")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------- the workload, checked before measuring


def test_wrong_feature_count_fails_before_measuring(work: Path, tmp_path: Path, no_measuring: None) -> None:
    out = tmp_path / "run"
    res = invoke(work, "--volts", "5", out=out, data=str(work / "wide.csv"))
    assert_one_line_exit_2(res, f"has {FEATURES + 9} features", f"expects {FEATURES}", "m.msgpack")
    assert not out.exists()


def test_compare_model_that_does_not_fit_is_named(work: Path, tmp_path: Path, no_measuring: None) -> None:
    res = invoke(work, "--volts", "5", "--compare", str(work / "junk.msgpack"), out=tmp_path / "run")
    assert_one_line_exit_2(res, "cannot load model", "junk.msgpack")
    assert not (tmp_path / "run").exists()


def test_model_that_is_not_a_model_fails_before_measuring(work: Path, tmp_path: Path, no_measuring: None) -> None:
    res = invoke(work, "--volts", "5", out=tmp_path / "run", model=str(work / "junk.msgpack"))
    assert_one_line_exit_2(res, "cannot load model", "junk.msgpack")


@pytest.mark.parametrize("data", ["missing.csv", "sklearn:no_such_set"])
def test_data_that_does_not_load_fails_before_measuring(work: Path, tmp_path: Path, no_measuring: None,
                                                        data: str) -> None:
    res = invoke(work, "--volts", "5", out=tmp_path / "run", data=data)
    assert_one_line_exit_2(res, "cannot load data", data)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("command", "needle"),
    [
        (f"{sys.executable} -c \"import sys; sys.exit('no such model on the device')\" {{seconds}}",
         "no such model on the device"),
        (f"{sys.executable} -c \"print('hello')\" {{seconds}}", "cannot read the workload's last line"),
        (f"{sys.executable} -c \"import sys; sys.exit(3)\" {{seconds}}", "exited with code 3, no output on stderr"),
        ("/nonexistent/bench {model} {data} {seconds}", "cannot start the workload"),
    ],
)
def test_workload_command_gets_a_trial_run_before_measuring(work: Path, tmp_path: Path, no_measuring: None,
                                                           command: str, needle: str) -> None:
    res = invoke(work, "--volts", "5", "--workload-cmd", command, out=tmp_path / "run")
    assert_one_line_exit_2(res, "trial run", needle)
    assert not (tmp_path / "run").exists()


def test_check_functions_accept_what_works(work: Path) -> None:
    check_pyruntime_models([str(work / "m.msgpack")], str(work / "right.csv"))
    check_pyruntime_models([str(work / "m.msgpack")], str(work / "right.csv"), "q15")
    check_workload(template_workload(f"{sys.executable} -c \"{REPORT}\" {{seconds}}"), ["a", "b"], "d")
    with pytest.raises(WorkloadCheckError, match="expects"):
        check_pyruntime_models([str(work / "m.msgpack")], str(work / "wide.csv"))


def test_valid_run_with_the_real_workload_still_measures(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = invoke(work, "--volts", "5", "--idle-seconds", "0.5", "--settle-seconds", "0.05", "--min-samples", "10",
                 "--emulate", "idle=100mA,A=150mA,noise=0.5mA,interval=0.01", out=out)
    assert res.exit_code == 0, res.output
    assert "status: ok" in res.stdout
    assert {p.name for p in out.iterdir()} == {"samples.csv", "summary.json", "plot.png"}


# ------------------------------------------------------------- usage errors, one line each


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ([], "--volts is required"),
        (["--volts", "5", "--meter", "emulated:fluke-87"], "unknown meter"),
        (["--volts", "5", "--meter", "uni-t-ut61e"], "METER:PORT"),
        (["--volts", "5", "--emulate", "idle=100"], "100"),
        (["--volts", "5", "--meter", "uni-t-ut61e:/dev/null", "--emulate", "idle=1mA"], "--emulate only applies to"),
        (["--volts", "5", "--workload-cmd", "  "], "empty workload command"),
        # round 62's probe: options a run would ignore, emulated profiles a thread crashed on, waits that overflow
        (["--volts", "5", "--meter", "uni-t-ut61e:/dev/null", "--garbage", "0.2", "--seed", "3"],
         "--garbage and --seed only apply"),
        (["--volts", "5", "--workload-cmd", ""], "empty workload command"),
        (["--volts", "5", "--workload-cmd", "x {seconds}", "--numeric", "q15"], "--numeric sets the default"),
        (["--volts", "5", "--emulate", "idle=100mA,a=150mA"], "a=150mA: not a phase of a measurement"),
        (["--volts", "5", "--emulate", "idle=5kV"], "--emulate: "),
        (["--volts", "5", "--emulate", "idle=100mA,A=50A"], "A: uni-t-ut61e shows OL for 50A"),
        (["--volts", "5", "--emulate", "idle=100mA,noise=OLmA"], "noise=OLmA"),
        (["--volts", "5", "--emulate", "idle=100mA,noise=3V"], "noise is in V, the levels in A"),
        (["--volts", "5", "--emulate", "idle=100mA,interval=0"], "interval=0: seconds between packets"),
        (["--volts", "5", "--emulate", "idle=100mA,interval=1e300"], "at most 3600"),
        (["--volts", "5", "--emulate", "idle=100mA,interval=abc"], "interval=abc: seconds between packets"),
        # round 66's probe: a profile of volts measured the whole run and ended "no usable readings", exit 1
        (["--volts", "5", "--emulate", "idle=5V,A=6V"], "idle=5V is in V, and a run measures current"),
        (["--volts", "5", "--idle-seconds", "1e300"], "--idle-seconds"),
        (["--volts", "5", "--settle-seconds", "1e300"], "--settle-seconds"),
        (["--volts", "-5"], "--volts"),
        (["--volts", "5", "--numeric", "float16"], "--numeric"),
    ],
)
def test_usage_errors_are_one_line(work: Path, tmp_path: Path, no_measuring: None, extra: list[str],
                                   needle: str) -> None:
    res = invoke(work, *extra, out=tmp_path / "run")
    assert_one_line_exit_2(res, needle)
    assert not (tmp_path / "run").exists()


def test_missing_or_nonexistent_model_is_one_line(work: Path, tmp_path: Path) -> None:
    res = invoke(work, "--volts", "5", out=tmp_path / "run", model=str(tmp_path / "nope.msgpack"))
    assert_one_line_exit_2(res, "--model", "nope.msgpack")
    res = CliRunner().invoke(power, ["run", "--meter", "emulated:uni-t-ut61e", "--data", "x", "-o", "y"])
    assert_one_line_exit_2(res, "--model")


def test_the_workload_reads_the_models_columns_as_predict_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model trained with --target-column in the middle of the CSV, and one on raw windows with a feature plan
    of its own: the pre-check and the workload both feed the C runtime the rows `predict` reads (they used to
    load DATA without the model's target column and plan: wrong columns, exit 0)."""
    import numpy as np

    from pyruntime import workload
    from pyruntime.data import load_for_model
    from pyruntime.format import load

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4))
    lines = ["a,b,cls,c,d"] + [f"{r[0]:.4f},{r[1]:.4f},{'up' if r[0] + r[3] > 0 else 'down'},{r[2]:.4f},{r[3]:.4f}"
                               for r in X]
    (tmp_path / "tc.csv").write_text("\n".join(lines) + "\n")
    plan = tmp_path / "plan.txt"
    plan.write_text("c1__mean\nc0__maximum\nc2__standard_deviation\n")
    runner = CliRunner()
    seen: list[np.ndarray] = []
    for name, data, extra in (("tc", str(tmp_path / "tc.csv"), ["--target-column", "cls"]),
                              ("win", "uea:BasicMotions", ["--features", str(plan)])):
        model = tmp_path / f"{name}.msgpack"
        res = runner.invoke(frugalml_cli, ["train", "miser", data, "--trees", "5", "-o", str(model), *extra])
        assert res.exit_code == 0, res.output
        check_pyruntime_models([str(model)], data)
        seen.clear()
        real = workload.c_evaluator

        def spy(m: object, numeric: str, _real: object = real) -> object:
            ev = _real(m, numeric)  # type: ignore[operator]
            predict = ev.predict

            def record(X: np.ndarray, _predict: object = predict) -> object:
                seen.append(np.array(X, copy=True))
                return _predict(X)  # type: ignore[operator]

            ev.predict = record
            return ev

        monkeypatch.setattr(workload, "c_evaluator", spy)
        assert workload.main([str(model), data, "--seconds", "0"]) == 0
        expected = load_for_model(data, load(str(model)).meta).X
        assert np.array_equal(seen[-1], expected), name
        assert seen[-1].shape[1] == (4 if name == "tc" else 3)


@pytest.mark.parametrize("args, needle", [
    (["read", "emulated:tenma-72-7730a", "--seconds", "nan"], "Invalid value for '--seconds': 'nan' is not a number"),
    (["emulate", "tenma-72-7730a", "--values", "1e400V", "--count", "2"],
     "'1e400V' is out of range (an overload is written OL, e.g. OLmA)"),
    # round 66's probe: --values "" emulated the default 123.4mA without a word
    (["emulate", "tenma-72-7730a", "--values", "", "--count", "2"], "no values to emulate"),
])
def test_numbers_out_of_float_range(args: list[str], needle: str) -> None:
    """click's FloatRange lets NaN through (--volts nan measured "nan J" and said ok); 1e400 parsed to inf and
    failed in the meter encoders with an OverflowError traceback."""
    res = CliRunner().invoke(power, args)
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit), res.exception  # no traceback
    assert needle in res.stderr, res.stderr


def test_an_empty_run_directory_is_refused(work: Path, tmp_path: Path, no_measuring: None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # -o "" wrote samples.csv, summary.json and plot.png here, over any of that name
    res = CliRunner().invoke(power, ["run", "--meter", "emulated:uni-t-ut61e", "--volts", "5", "--model",
                                     str(work / "m.msgpack"), "--data", str(work / "right.csv"), "-o", ""])
    assert_one_line_exit_2(res, "-o RUN_DIR is empty")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("line", "needle"), [
    ('{"predictions": 10, "seconds": NaN}', '"seconds" is nan'),
    ('{"predictions": 10, "seconds": Infinity}', '"seconds" is inf'),
    ('{"predictions": 1e400, "seconds": 1}', '"predictions" is inf'),
    ('{"predictions": true, "seconds": 1}', '"predictions" is true'),
    ('{"predictions": 1.9, "seconds": 1}', "1.9 predictions: a count is a whole number"),
    ('[10, 1]', "not a JSON object"),
])
def test_a_workload_report_that_is_no_count_and_time_is_refused(line: str, needle: str) -> None:
    from power_bench.workload import WorkloadError, parse_report  # noqa: PLC0415

    with pytest.raises(WorkloadError, match=re.escape(needle)):
        parse_report(line)
    assert parse_report('{"predictions": 10.0, "seconds": "0.5"}') == (10, 0.5)


def test_a_workload_reporting_more_time_than_it_ran_is_refused() -> None:
    from power_bench.workload import WorkloadError, run_workload  # noqa: PLC0415

    claim = "import json; print(json.dumps({'predictions': 1000, 'seconds': 100}))"
    with pytest.raises(WorkloadError, match="in 100 s but ran for"):
        run_workload([sys.executable, "-c", claim])  # a 77x too large figure with status ok, round 62's probe


def test_emulate_refuses_values_and_profiles_it_cannot_send(tmp_path: Path) -> None:
    from power_bench.emulator import CycleValues  # noqa: PLC0415
    from power_bench.reading import parse_quantity  # noqa: PLC0415

    runner = CliRunner()
    for args, needle in ((["--values", "1e6A"], "shows OL for 1e+06A"), (["--interval", "1e10"], "--interval"),
                         (["--values", "12mA", "--interval", "0"], "--interval")):
        res = runner.invoke(power, ["emulate", "uni-t-ut61e", *args, "--count", "1"])
        assert_one_line_exit_2(res, needle)
    (tmp_path / "zero.txt").write_text("120mA,0\n")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe120mA\n")
    (tmp_path / "word.txt").write_text("120mA,abc\n")  # was Python's "invalid literal for int() with base 10"
    (tmp_path / "three.txt").write_text("120mA,2,5\n")  # the third field was dropped without a word
    for name, needle in (("zero.txt", "REPEAT is 0"), ("bin.txt", "bin.txt: not UTF-8 text"),
                         ("word.txt", "word.txt:1: REPEAT 'abc' is not a whole number"),
                         ("three.txt", "three.txt:1: '120mA,2,5' has 3 fields; expected VALUE[,REPEAT]")):
        res = runner.invoke(power, ["emulate", "uni-t-ut61e", "--profile", str(tmp_path / name), "--count", "1"])
        assert_one_line_exit_2(res, needle)
    a, b = parse_quantity("1mA"), parse_quantity("2mA")
    values = CycleValues([(a, 10**12), (b, 1)])  # walked in place: no list of 10^12 entries
    assert [values.next() for _ in range(3)] == [a, a, a]
    values = CycleValues([(a, 2), (b, 1)])
    assert [values.next() for _ in range(5)] == [a, a, b, a, a]


@pytest.mark.parametrize("args", [["-h"], ["read", "-h"], ["run", "-h"]])
def test_dash_h_is_help_as_in_frugalml(args: list[str]) -> None:
    """`python -m power_bench -h` works as `frugalml power -h` does (round 64: "No such option '-h'")."""
    res = CliRunner().invoke(power, args)
    assert res.exit_code == 0 and res.output.startswith("Usage: ") and "--help" in res.output, res.output


def test_settle_time_over_the_load_window_is_refused_before_measuring(work: Path) -> None:
    """--settle-seconds 10 with --max-seconds 3 waited 19 s and ended "too few samples (idle 0, A 0)": every
    load window is skipped whole (round 65's probe)."""
    out = work / "settle" / "run"
    res = invoke(work, "--volts", "5", "--settle-seconds", "10", "--max-seconds", "3", out=out)
    assert_one_line_exit_2(res, "--settle-seconds 10 skips at least each load window's whole length",
                           "(--max-seconds 3 over 1 window per model: 3 s)")
    res = invoke(work, "--volts", "5", "--settle-seconds", "2", "--max-seconds", "3", "--rounds", "2", out=out)
    assert_one_line_exit_2(res, "over 2 windows per model: 1.5 s")
    assert not out.parent.exists()
