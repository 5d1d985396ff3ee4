"""Inputs of the raw-window commands a new user's trial tripped on: `bench --on` over windows of unequal lengths
(each counted, none dropped), a costs file cut off, a costs file of a wider plan for a subset plan, and an NPZ
whose X has the wrong number of dimensions. Every refusal: exit 2, one line, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_features_cli import one_line_error, run

from compiler.costs import CostsError, load_costs

PLAN = ["c0__mean", "c1__standard_deviation"]
# a costs file as profile-costs writes it (csv line ends \r\n, groups first) for a wider plan than PLAN
WIDE = ("feature,cost,group\r\nwindow__start,225.0,\r\nc0__pass,316.0,\r\nc0__centered,251.0,\r\nc1__pass,317.0,\r\n"
        "c1__centered,252.0,\r\nc1__spectrum,1416.0,\r\nc0__mean,169.0,window__start;c0__pass\r\n"
        "c0__standard_deviation,206.0,window__start;c0__pass;c0__centered\r\nc1__mean,170.0,window__start;c1__pass\r\n"
        "c1__standard_deviation,207.0,window__start;c1__pass;c1__centered\r\n"
        "c1__fft_centroid,318.0,window__start;c1__pass;c1__spectrum\r\n")
WIDE_NAMES = ["c0__mean", "c0__standard_deviation", "c1__mean", "c1__standard_deviation", "c1__fft_centroid"]




def toy_ts(path: Path, lengths: list[int]) -> Path:
    """Two channels, two classes told apart by channel 0's level; window i has lengths[i] samples."""
    rng = np.random.default_rng(0)
    lines = []
    for i, n in enumerate(lengths):
        label = "up" if i % 2 else "down"
        chans = [rng.normal(2.0 if (label == "up" and c == 0) else 0.0, 1.0, n) for c in range(2)]
        lines.append(":".join(",".join(f"{v:.4f}" for v in ch) for ch in chans) + ":" + label)
    equal = "true" if len(set(lengths)) == 1 else "false"
    path.write_text(f"@problemName toy\n@equalLength {equal}\n@classLabel true down up\n@data\n" + "\n".join(lines)
                    + "\n")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A miser model of PLAN (a subset of the default plan) and its plan file."""
    folder = tmp_path_factory.mktemp("m")
    plan = folder / "plan.txt"
    plan.write_text("\n".join(PLAN) + "\n")
    model = folder / "m.msgpack"
    code, _, err = run("train", "miser", toy_ts(folder / "train.ts", [24] * 20), "--features", plan, "--lambda", "0",
                       "-o", model)
    assert code == 0, err
    return model, plan


# ---------------------------------------------------------------- 1. bench over windows of unequal lengths ----
def test_bench_counts_every_window_of_unequal_lengths(trained: tuple[Path, Path], tmp_path: Path) -> None:
    """Windows of 16 and 24 samples alternating: all four counted (before: the two of the first window's length,
    the others dropped without a word), each at its own length: a window's counts equal those of a bench of
    windows of its length alone."""
    from tests.firmware_tools import require_tools  # noqa: PLC0415

    require_tools("gcc", "valgrind")
    from compiler.features.bench import bench  # noqa: PLC0415

    model, _ = trained
    mixed = toy_ts(tmp_path / "mixed.ts", [16, 24, 16, 24])
    code, out, err = run("bench", model, "--data", mixed, "--on", "host", "--rows", "4", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["windows"] == 4 and report["window_lengths"] == [16, 24] and report["window_len"] == 20
    assert err.strip().splitlines() == ["bench: the first 4 windows have 2 lengths, 16 to 24 samples: each length is "
                                        "counted in a build of its own"]
    b = bench(str(model), str(mixed), "host", rows=4)
    alone = bench(str(model), str(toy_ts(tmp_path / "16.ts", [16, 16])), "host", rows=2)
    assert alone.lengths is not None and "window_lengths" not in alone.report() and alone.window_len == 16
    for got, want in ((b.lazy, alone.lazy), (b.eager, alone.eager), (b.model, alone.model)):
        assert np.array_equal(got[[0, 2]], want)
    assert b.lazy[1] != b.lazy[0]  # the 24-sample windows were counted at 24
    code, out, _ = run("bench", model, "--data", mixed, "--on", "host", "--rows", "4")
    assert code == 0 and out.startswith("host (float32), mean over 4 windows of 16 to 24 samples\n"), out


# ------------------------------------------------------------------------- 2. a costs file cut off ----
def test_costs_file_cut_in_a_line_names_the_line_and_the_features_lost(trained: tuple[Path, Path],
                                                                       tmp_path: Path) -> None:
    cut = tmp_path / "cut.csv"
    cut.write_text(WIDE[: WIDE.index("c0__standard_deviation") + 48], newline="")  # in the group list of line 9
    with pytest.raises(CostsError) as exc:
        load_costs(cut, WIDE_NAMES)
    assert str(exc.value) == (
        f"costs file {cut} ends in the middle of line 9 (no newline after 'c0__standard_deviation,206.0,"
        "window__start;c0__p'): it looks cut off, and 4 of the 5 features have no complete row (the first "
        f"'c0__standard_deviation'): write the file again (`frugalml profile-costs ... -o {cut}`) or complete it")
    cut.write_text(WIDE[: WIDE.index("c1__mean") + 5], newline="")  # in a feature's name
    with pytest.raises(CostsError, match="ends in the middle of line 10 .* 3 of the 5 features have no complete row "
                                         r"\(the first 'c1__mean'\)"):
        load_costs(cut, WIDE_NAMES)
    model, plan = trained
    out = tmp_path / "never.msgpack"
    data = toy_ts(tmp_path / "d.ts", [24] * 20)
    cut.write_text(WIDE[: WIDE.index("c0__mean") + 12], newline="")  # in the cost of PLAN's first feature
    one_line_error(run("train", "miser", data, "--features", plan, "--costs", cut, "-o", out),
                   f"costs file {cut} ends in the middle of line 8", "the first 'c0__mean'", "write the file again")
    assert not out.exists()


def test_costs_file_that_lacks_its_last_rows_names_the_features(tmp_path: Path) -> None:
    short = tmp_path / "short.csv"
    short.write_text(WIDE[: WIDE.index("c1__mean")], newline="")  # whole lines, the last three feature rows lost
    with pytest.raises(CostsError) as exc:
        load_costs(short, WIDE_NAMES)
    message = str(exc.value)
    assert message.startswith(f"costs file {short} gives no cost for 3 of the 5 features (c1__mean, "
                              "c1__standard_deviation, c1__fft_centroid): add a row for each"), message
    assert message.endswith("if profile-costs wrote it, it was cut short: write it again") and "\n" not in message


def test_costs_file_without_a_newline_at_its_end_that_reads_fine_is_used(tmp_path: Path) -> None:
    whole = tmp_path / "whole.csv"
    whole.write_text(WIDE, newline="")
    bare = tmp_path / "bare.csv"
    bare.write_text(WIDE.rstrip("\r\n"), newline="")
    a, b = load_costs(whole, WIDE_NAMES), load_costs(bare, WIDE_NAMES)
    assert np.array_equal(a.coef, b.coef) and a.group_names == b.group_names
    assert a.at(0).tolist() == [169 + 225 + 316, 206 + 225 + 316 + 251, 170 + 225 + 317, 207 + 225 + 317 + 252,
                                318 + 225 + 317 + 1416]


# --------------------------------------------------------- 3. costs of a wider plan for a subset plan ----
def test_costs_of_a_wider_plan_price_a_subset_plan_by_name(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    wide.write_text(WIDE, newline="")
    full = load_costs(wide, WIDE_NAMES)
    sub = load_costs(wide, ["c1__standard_deviation", "c0__mean"])  # another order too
    assert np.array_equal(sub.coef, full.coef[[3, 0]]) and np.array_equal(sub.own_coef, full.own_coef[[3, 0]])
    # only the groups the plan's features use, in the file's order; c1__spectrum (the centroid's) left out
    assert sub.group_names == ("window__start", "c0__pass", "c1__pass", "c1__centered")
    assert sub.cost_of([0, 1]) == 207 + 169 + 225 + 316 + 317 + 252
    assert full.cost_of([3, 0]) == sub.cost_of([0, 1])


def test_subset_plan_trains_with_the_wider_costs_and_refuses_a_missing_feature(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    wide.write_text(WIDE, newline="")
    data = toy_ts(tmp_path / "d.ts", [24] * 20)
    plan = tmp_path / "plan.txt"
    plan.write_text("\n".join(PLAN) + "\n")
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", data, "--features", plan, "--costs", wide, "--lambda", "0", "-o", out)
    assert code == 0 and out.is_file(), err
    plan.write_text("c0__mean\nc1__autocorrelation__lag_3\nc1__mean\n")
    out = tmp_path / "never.msgpack"
    line = one_line_error(run("train", "miser", data, "--features", plan, "--costs", wide, "-o", out),
                          f"costs file {wide} gives no cost for 1 of the 3 features (c1__autocorrelation__lag_3); it "
                          "names 3 other features (profiled for another feature plan)",
                          "`frugalml profile-costs --on TARGET --channels N --plan FILE`")
    assert "unknown feature" not in line
    assert not out.exists()


def test_bench_of_a_model_of_a_subset_plan_takes_the_wider_costs(trained: tuple[Path, Path], tmp_path: Path) -> None:
    from tests.firmware_tools import require_tools  # noqa: PLC0415

    require_tools("gcc", "valgrind")
    model, _ = trained
    wide = tmp_path / "wide.csv"
    wide.write_text(WIDE, newline="")
    code, out, err = run("bench", model, "--data", toy_ts(tmp_path / "d.ts", [24] * 2), "--on", "host", "--rows", "1",
                         "--costs", wide, "--json")
    assert code == 0 and err == "", err
    report = json.loads(out)
    # each window reads c0__mean (channel 0's level tells the classes apart) and maybe c1's deviation
    assert report["profiled_extraction_instructions"] in (169 + 225 + 316, 169 + 225 + 316 + 207 + 317 + 252)


# -------------------------------------------------------------- 4. an NPZ of the wrong dimension count ----
@pytest.mark.parametrize("shape", [(10, 2, 16, 3), (10,), ()])
def test_npz_of_the_wrong_dimension_count_says_the_shapes_accepted(tmp_path: Path, shape: tuple[int, ...]) -> None:
    npz = tmp_path / "x.npz"
    np.savez(npz, X=np.zeros(shape), y=np.array(["a", "b"] * 5))
    out = tmp_path / "never.msgpack"
    want = (f"error: {npz}: X has shape {shape} ({len(shape)}-D); an NPZ's X is a feature table of (rows, features) "
            "or raw windows of (rows, channels, length)")
    assert one_line_error(run("train", "miser", npz, "-o", out)) == want
    assert not out.exists()
    bare = tmp_path / "bare.npz"  # no y: predict reads rows without labels (a 0-D X was a TypeError traceback)
    np.savez(bare, X=np.zeros(shape))
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", "sklearn:iris", "--positive", "1", "-o", model)
    assert code == 0, err
    pred = tmp_path / "p.csv"
    assert one_line_error(run("predict", model, bare, "-o", pred)) == want.replace(str(npz), str(bare))
    assert not pred.exists()
