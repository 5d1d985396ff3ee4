"""The CLI on raw windows: `frugalml features`, train --features, and eval / predict / export-c --embed on .ts
files with the model's plan; each bad input exit 2 with one line and nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compiler.cli import cli
from pyruntime import format as fmt
from pyruntime.data import BUNDLED_WINDOWS, load_dataset
from pyruntime.features import catalog as cat
from pyruntime.features.plan import default_plan

TRAIN_TS = BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TRAIN.ts"
TEST_TS = BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TEST.ts"


def run(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    return r.exit_code, r.stdout, r.stderr


def one_line_error(result: tuple[int, str, str], *needles: str) -> str:
    """The one `error:` line of an exit-2 result, holding every needle."""
    code, _, err = result
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_features_lists_the_catalog_by_tier() -> None:
    code, out, _ = run("features")
    assert code == 0
    assert [m for m in re.findall(r"^tier (\d)", out, re.M)] == ["1", "2", "3"]
    for name in ("cC__mean", "cC__autocorrelation__lag_L", "cC__fft_band_energy__band_B__bands_N",
                 "cC_cC+1_cC+2__magnitude_mean", "cC_cD__correlation", "cC__fft_centroid"):
        assert name in out
    code, out, _ = run("features", "--json")
    data = json.loads(out)
    assert len(data["features"]) == 14 and data["named_sets"] == ["default", "basic"]
    assert "cC__fft_centroid[__decimate_D]" in run("features")[1]
    assert {f["name"]: f["tier"] for f in data["features"]}["fft_dominant_frequency"] == 3


def test_features_lists_a_plan_with_its_groups(tmp_path: Path) -> None:
    code, out, _ = run("features", "--channels", "6", "--json")
    data = json.loads(out)
    # per channel 15 features and the six spectral ones at D = 2, 4, 8; per triple of channels 5
    assert code == 0 and data["features"] == default_plan(6).names and len(data["features"]) == 6 * 33 + 2 * 5
    assert "c0__spectrum" in data["groups"] and "c3_c4_c5__magnitude" in data["groups"]
    f = data["features"].index("c2__fft_centroid")
    assert data["feature_groups"][f] == ["c2__pass", "c2__spectrum"]
    code, out, _ = run("features", "--channels", "3", "--plan", "basic", "--json")
    data = json.loads(out)
    # the basic plan is the default without the spectra of block means
    assert code == 0 and len(data["features"]) == 3 * 15 + 5 and set(data["features"]) < set(default_plan(3).names)
    assert not any("decimate" in n for n in data["features"])
    f = default_plan(3).names.index("c1__fft_band_energy__band_3__bands_4__decimate_8")
    assert [cat.group_name(g) for g in default_plan(3).features[f].groups()] == ["c1__pass", "c1__spectrum__decimate_8"]
    (tmp_path / "p.txt").write_text("c0__nope\n")
    one_line_error(run("features", "--channels", "2", "--plan", tmp_path / "p.txt"), "unknown feature 'nope'")


def test_features_lists_the_default_plan_for_a_window_length() -> None:
    def listed(length: int) -> list[str]:
        code, out, err = run("features", "--channels", "2", "--length", str(length), "--json")
        assert code == 0, err
        return json.loads(out)["features"]

    assert listed(1024) == default_plan(2).names
    long = listed(2000)  # the window's own spectrum would have 2,048 points: only its block means' spectra
    assert "c0__fft_centroid__decimate_2" in long and "c0__fft_centroid" not in long and "c0__mean" in long
    assert "c1__fft_centroid__decimate_2" not in listed(3000) and "c1__fft_centroid__decimate_4" in listed(3000)
    assert "c0__fft_centroid__decimate_8" not in listed(30)
    one_line_error(run("features", "--length", "100"), "--channels")
    code, _, err = run("features", "--channels", "2", "--length", str(cat.MAX_LEN + 1))
    assert code == 2 and "--length" in err
    # round 65: --plan without --channels printed the catalog; a named set listed at a length it cannot run at
    one_line_error(run("features", "--plan", "basic"), "--plan lists a plan: give --channels too")
    one_line_error(run("features", "--channels", "2", "--plan", "basic", "--length", "3"),
                   "--plan basic needs windows of 6 to 1024 samples, not 3")
    assert run("features", "--channels", "2", "--plan", "basic", "--length", "6")[0] == 0


def test_train_takes_windows_over_the_fft_bound_with_the_default_plan(tmp_path: Path) -> None:
    """Windows of 1,025..4,096 samples are the library's (FM_FEAT_MAX_LEN): the default plan trains on them, the
    model's plan has no spectrum over FM_FEAT_MAX_FFT points, and eval reads the windows with it."""
    rng = np.random.default_rng(0)
    t = np.arange(3000)
    y = np.repeat(["slow", "fast"], 20)
    freq = np.where(y == "slow", 0.01, 0.03)[:, None]
    X = np.sin(2 * np.pi * freq * t + rng.uniform(0, 6, (40, 1)))[:, None, :] + rng.normal(0, 0.3, (40, 1, 3000))
    data = tmp_path / "long.npz"
    np.savez(data, X=X, y=y)
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", data, "--positive", "fast", "-o", out)
    assert code == 0, err
    names = fmt.load(out).meta["feature_plan"]["features"]
    assert names == default_plan(1, 3000, 3000).names and "c0__fft_centroid__decimate_4" in names
    code, out_text, err = run("eval", out, data, "--json")
    assert code == 0 and json.loads(out_text)["accuracy"] >= 0.9, err


def test_windows_shorter_than_the_basic_plan_train_on_the_features_they_afford(tmp_path: Path) -> None:
    """Under 6 samples the default plan leaves out what the window is too short for (lag-4 autocorrelation from 6,
    four bands from 5, the second-order statistics and the spectrum from 2): `features --length N` lists exactly
    the plan `train` keeps, and every feature of it computes on such windows."""
    rng = np.random.default_rng(1)
    for length in (1, 2, 4, 5):
        y = np.repeat(["low", "high"], 20)
        X = (rng.normal(0, 1, (40, 1, length)) + np.where(y == "high", 3.0, 0.0)[:, None, None])
        data = tmp_path / f"short{length}.npz"
        np.savez(data, X=X, y=y)
        out = tmp_path / f"m{length}.msgpack"
        code, _, err = run("train", "nb-static", data, "-o", out)
        assert code == 0, err
        names = fmt.load(out).meta["feature_plan"]["features"]
        code, listed, err = run("features", "--channels", "1", "--length", str(length), "--json")
        assert code == 0 and names == json.loads(listed)["features"] == default_plan(1, length, length).names, err
        assert ("c0__autocorrelation__lag_4" in names) == (length >= 6) and "c0__mean" in names
        assert ("c0__fft_band_energy__band_0__bands_4" in names) == (length >= 5)
        assert ("c0__standard_deviation" in names) == (length >= 2)
        code, _, err = run("eval", out, data, "--json")
        assert code == 0, err


def test_samples_that_overflow_float32_are_named_with_a_scale_hint(tmp_path: Path) -> None:
    """Finite samples whose squares overflow float32 (about 1.8e19 and up): one line naming the window, the
    feature, the largest magnitude and what to do; nothing written."""
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (40, 1, 16))
    X[3, 0, 5] = 4e19
    data = tmp_path / "big.npz"
    np.savez(data, X=X, y=np.repeat(["a", "b"], 20))
    out = tmp_path / "m.msgpack"
    line = one_line_error(run("train", "nb-static", data, "-o", out), "window 4 (length 16)")
    assert "float32 overflows" in line and "4e+19" in line and "scale the samples" in line and not out.exists()


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("m") / "m.msgpack"
    code, _, err = run("train", "miser", "uea:BasicMotions", "--positive", "Walking", "-o", out)
    assert code == 0, err
    return out


def test_train_keeps_the_plan_and_eval_predict_export_use_it(model: Path, tmp_path: Path) -> None:
    m = fmt.load(model)
    assert m.meta["feature_plan"] == default_plan(6).to_meta()
    code, out, err = run("eval", model, "uea:BasicMotions", "--json")
    report = json.loads(out)
    assert code == 0 and report["rows"] == "test" and report["n"] == 16 and report["accuracy"] >= 0.8, err
    code, out, _ = run("predict", model, TEST_TS, "--rows", "6")
    assert code == 0 and len(out.strip().splitlines()) == 6
    header = tmp_path / "m.h"
    code, _, err = run("export-c", model, "-o", header, "--embed", TEST_TS, "--rows", "3")
    assert code == 0, err
    text = header.read_text()
    assert "#define FM_N_ROWS 3" in text
    want = load_dataset(str(TEST_TS)).X[:3].astype(np.float32)
    rows = re.search(rf"_rows\[3\]\[{len(default_plan(6).features)}\] = \{{(.*?)\n\}};", text, re.S)
    assert rows is not None
    got = np.array([float(v.rstrip("f")) for v in re.findall(r"[-+0-9.eE]+f", rows.group(1))], np.float32)
    assert np.array_equal(got.reshape(3, -1), want)


def test_train_with_a_feature_file(tmp_path: Path) -> None:
    plan = tmp_path / "plan.txt"
    plan.write_text("c0__standard_deviation\nc1__fft_dominant_frequency\nc3_c4_c5__magnitude_mean\nc0_c1__correlation\n"
                    "c2__autocorrelation__lag_3\nc2__fft_band_energy__band_1__bands_4__decimate_4\n")
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", TRAIN_TS, "--positive", "Running", "--features", plan, "-o", out)
    assert code == 0, err
    m = fmt.load(out)
    assert m.meta["feature_plan"]["features"] == [ln for ln in plan.read_text().splitlines()]
    code, out_text, err = run("eval", out, TEST_TS, "--json")
    assert code == 0 and json.loads(out_text)["rows"] == "all", err


def test_bad_inputs_exit_2_one_line_nothing_written(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.msgpack"
    bad_plan = tmp_path / "plan.txt"
    bad_plan.write_text("c0__mean\nc0__wiggle\n")
    one_line_error(run("train", "miser", "uea:BasicMotions", "--positive", "Walking", "--features", bad_plan,
                        "-o", out), "unknown feature 'wiggle'")
    bad_plan.write_text("c0__autocorrelation__lag_x\n")
    one_line_error(run("train", "miser", "uea:BasicMotions", "--positive", "Walking", "--features", bad_plan,
                        "-o", out), "parameter 'lag_x' is not NAME_INTEGER")
    one_line_error(run("train", "miser", "sklearn:breast_cancer", "--features", "default", "-o", out),
                   "--features applies to raw windows")
    ts = tmp_path / "bad.ts"
    ts.write_text("@problemName x\n@dimensions 0\n@classLabel true a b\n@data\n1,2:a\n")
    one_line_error(run("train", "miser", ts, "-o", out), "@dimensions must be a positive integer")
    assert not out.exists()
    # a window with 3 channels for a 6-channel plan; windows too short for the plan; a NaN sample
    lines = ["1,2,3,4,5,6,7,8:1,2,3,4,5,6,7,8:1,2,3,4,5,6,7,8:Walking"]
    three = tmp_path / "three.ts"
    three.write_text("@classLabel true Walking Running\n@data\n" + "\n".join(lines) + "\n")
    one_line_error(run("eval", model, three), "has 3 channel(s), the feature plan is for 6")
    short = tmp_path / "short.ts"
    short.write_text("@classLabel true Walking Running\n@data\n" + ":".join(["1,2,3"] * 6) + ":Running\n")
    one_line_error(run("predict", model, short), "window 1 (length 3)", "needs windows of at least")
    # longer than the device's FM_FEAT_MAX_LEN: refused on the host as the C library refuses it
    long = tmp_path / "long.ts"
    long.write_text("@classLabel true Walking Running\n@data\n" + ":".join([",".join(["1"] * 4097)] * 6) + ":Running\n")
    one_line_error(run("predict", model, long), "window 1 has 4097 samples", "at most 4096 (FM_FEAT_MAX_LEN)")
    nan = tmp_path / "nan.ts"
    nan.write_text("@classLabel true Walking\n@data\n" + ":".join(["1,2,NaN,4,5,6,7,8"] * 6) + ":Walking\n")
    header = tmp_path / "m.h"
    one_line_error(run("export-c", model, "-o", header, "--embed", nan), "NaN or infinite")
    assert not header.exists()


def _two_class_ts(path: Path, channels: int = 2, length: int = 24, cases: int = 20,
                  sample: str | None = None) -> Path:
    """A small .ts file: two classes told apart by channel 0's level; ``sample`` replaces one sample."""
    rng = np.random.default_rng(0)
    lines = []
    for i in range(cases):
        label = "up" if i % 2 else "down"
        chans = [rng.normal(2.0 if (label == "up" and c == 0) else 0.0, 1.0, length) for c in range(channels)]
        text = [",".join(f"{v:.4f}" for v in ch) for ch in chans]
        if sample is not None and i == 3:
            text[0] = sample + text[0][text[0].index(","):]
        lines.append(":".join(text) + ":" + label)
    path.write_text("@problemName toy\n@classLabel true down up\n@data\n" + "\n".join(lines) + "\n")
    return path


BAD_TRAIN_INPUTS = {
    "short window": ("c0__mean\nc0__autocorrelation__lag_30\n", {}, "needs windows of at least"),
    "NaN sample": ("c0__mean\n", {"sample": "NaN"}, "NaN or infinite"),
    "infinite sample": ("c0__mean\n", {"sample": "inf"}, "NaN or infinite"),
    "channel the data lacks": ("c0__mean\nc3__mean\n", {}, "reads channel 3, the data has 2"),
    "unknown feature": ("c0__mean\nc0__wiggle\n", {}, "unknown feature 'wiggle'"),
    "unknown parameter": ("c0__mean__lag_2\n", {}, "has no parameter 'lag'"),
    "malformed .ts header": ("c0__mean\n", {"header": "@dimensions x\n"}, "@dimensions"),
    "trivial model (fails after profiling)": ("c0__mean\nc1__mean\n", {"lambda": "1e9"}, "trivial"),
}


@pytest.mark.parametrize("case", list(BAD_TRAIN_INPUTS))
def test_failed_train_with_measured_costs_writes_nothing(tmp_path: Path, case: str) -> None:
    """`train --costs measured --on host` on each bad input: exit 2, one line, and neither the model nor its
    costs CSV (nor a temporary file) left behind -- also when the failure comes after the profiling."""
    from tests.firmware_tools import require_tools  # noqa: PLC0415

    require_tools("gcc", "valgrind")
    plan_text, extra, message = BAD_TRAIN_INPUTS[case]
    inputs = tmp_path / "in"
    inputs.mkdir()
    ts = _two_class_ts(inputs / "toy.ts", sample=extra.get("sample"))
    if "header" in extra:
        ts.write_text(extra["header"] + ts.read_text())
    plan = inputs / "plan.txt"
    plan.write_text(plan_text)
    outdir = tmp_path / "out"
    outdir.mkdir()
    args: list[str | Path] = ["train", "miser", ts, "--features", plan, "--costs", "measured", "--on", "host",
                              "-o", outdir / "m.msgpack"]
    if "lambda" in extra:  # the input is fine, training fails: progress lines first, the error last
        args += ["--lambda", extra["lambda"]]
        code, _, err = run(*args)
        assert code == 2 and err.strip().splitlines()[-1].startswith("error: ") and message in err, err
    else:
        one_line_error(run(*args), message)
    assert sorted(p.name for p in outdir.iterdir()) == []


def test_train_with_measured_costs_writes_model_and_costs(tmp_path: Path) -> None:
    from tests.firmware_tools import require_tools  # noqa: PLC0415

    require_tools("gcc", "valgrind")
    ts = _two_class_ts(tmp_path / "toy.ts")
    plan = tmp_path / "plan.txt"
    plan.write_text("c0__mean\nc1__mean\n")
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = run("train", "miser", ts, "--features", plan, "--costs", "measured", "--on", "host",
                       "--lambda", "0", "-o", out / "m.msgpack")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["m.msgpack", "m.msgpack.costs.csv"]


def test_measured_costs_of_unequal_windows_are_written_at_their_median_length(tmp_path: Path) -> None:
    """Windows of 16 to 40 samples: a size fit would leave the trainers its intercept (the cost at size 0, far below
    any window's count); the costs CSV holds one cost a feature, at the median window length, and says so."""
    from tests.firmware_tools import require_tools  # noqa: PLC0415

    require_tools("gcc", "valgrind")
    rng = np.random.default_rng(1)
    lines = []
    for i in range(24):
        label, n = ("up" if i % 2 else "down"), 16 + (i * 24) // 23
        chans = [rng.normal(2.0 if (label == "up" and c == 0) else 0.0, 1.0, n) for c in range(2)]
        lines.append(":".join(",".join(f"{v:.4f}" for v in ch) for ch in chans) + ":" + label)
    ts = tmp_path / "u.ts"
    ts.write_text("@problemName toy\n@equalLength false\n@classLabel true down up\n@data\n" + "\n".join(lines) + "\n")
    plan = tmp_path / "plan.txt"
    plan.write_text("c0__mean\nc1__standard_deviation\n")
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", ts, "--features", plan, "--costs", "measured", "--on", "host",
                       "--lambda", "0", "-o", model)
    assert code == 0, err
    median = int(np.round(np.median([16 + (i * 24) // 23 for i in range(24)])))
    assert f"windows of 16 to 40 samples: the costs are written at their median length, {median}" in err, err
    rows = (tmp_path / "m.msgpack.costs.csv").read_text().splitlines()
    assert rows[0] == "feature,cost,group" and len(rows) > 3
    assert all(float(r.split(",")[1]) > 0 for r in rows[1:])


def test_profile_costs_refuses_to_write_over_its_plan(tmp_path: Path) -> None:
    plan = tmp_path / "plan.txt"
    plan.write_text("c0__mean\n")
    code, _, err = run("profile-costs", "--on", "host", "--channels", "1", "--plan", plan, "--lengths", "16",
                       "--windows", "1", "-o", plan)
    assert code == 2 and "is the plan file: writing it would destroy the input" in err, err
    assert plan.read_text() == "c0__mean\n"
