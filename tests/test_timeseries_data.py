"""Raw sensor windows as data: the UEA/UCR .ts reader (equal and unequal lengths, several channels, each malformed
case one line), 3-D NPZ, the bundled BasicMotions, feature plans, and the matrix they give (equal to the C feature
library on each window)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from pyruntime.data import BUNDLED_WINDOWS, load_dataset
from pyruntime.errors import DataError
from pyruntime.features import cbind
from pyruntime.features.plan import FeaturePlan, basic_plan, default_plan, resolve
from pyruntime.tsdata import read_ts

HEADER = ("#comment\n@problemName Toy\n@timeStamps false\n@missing false\n@univariate false\n@dimensions 2\n"
          "@equalLength false\n@classLabel true up down\n@data\n")


def toy_ts(tmp: Path, body: str | None = None, header: str = HEADER) -> Path:
    rng = np.random.default_rng(0)
    if body is None:
        lines = []
        for i, n in enumerate((12, 20, 12, 33, 9, 20)):
            a, b = rng.normal(size=(2, n)) + (i % 2)
            lines.append(",".join(f"{v:.5f}" for v in a) + ":" + ",".join(f"{v:.5f}" for v in b)
                         + (":up" if i % 2 else ":down"))
        body = "\n".join(lines) + "\n"
    p = tmp / "toy.ts"
    p.write_text(header + body)
    return p


def test_bundled_basicmotions_is_the_archive_file() -> None:
    folder = BUNDLED_WINDOWS / "BasicMotions"
    sums = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.ts")}
    assert sums == {"BasicMotions_TRAIN.ts": "8dc43cc6306cb679c888c01e26f91772ac4441a916da43bac8b79734a538b9d6",
                    "BasicMotions_TEST.ts": "79213102bc6fca1a398ad98ce1185dff0208fa3d1465e687f48288946b0ff8dc"}
    w = read_ts(folder / "BasicMotions_TRAIN.ts")
    assert len(w.series) == 40 and w.n_channels == 6 and set(w.lengths.tolist()) == {100}
    assert sorted(set(w.y.tolist())) == ["Badminton", "Running", "Standing", "Walking"]
    assert w.series[0][0, :3].tolist() == pytest.approx([0.079106, 0.079106, -0.903497])


def test_bundled_name_gives_the_default_plan_matrix_equal_to_the_c() -> None:
    ds = load_dataset("uea:BasicMotions")
    plan = default_plan(6)
    assert ds.X.shape == (80, len(plan.features)) and ds.feature_names == plan.names and ds.plan == plan
    w = read_ts(BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TRAIN.ts")
    c = cbind.run(np.stack(w.series), plan.features)
    assert np.all(c.status == 0)
    assert np.array_equal(ds.X[:40].astype(np.float32).view(np.uint32), c.values.view(np.uint32))


def test_unequal_lengths_and_several_channels(tmp_path: Path) -> None:
    path = toy_ts(tmp_path)
    w = read_ts(path)
    assert w.lengths.tolist() == [12, 20, 12, 33, 9, 20] and w.n_channels == 2
    ds = load_dataset(str(path))
    # the shortest window (9 samples) affords no spectrum of block means: the default plan is the basic one here
    assert ds.X.shape == (6, len(default_plan(2, 9).features)) and ds.feature_names == basic_plan(2).names
    for i, s in enumerate(w.series):  # each window at its own length, equal to the C on that window
        c = cbind.run(s[None], ds.plan.features)
        assert np.array_equal(ds.X[i].astype(np.float32).view(np.uint32), c.values[0].view(np.uint32))


def test_feature_file_plan(tmp_path: Path) -> None:
    spec = tmp_path / "plan.txt"
    spec.write_text("# mine\nc0__mean\nc1__autocorrelation__lag_2\n\nc0_c1__correlation  # pair\n")
    ds = load_dataset(str(toy_ts(tmp_path)), features=str(spec))
    assert ds.feature_names == ["c0__mean", "c1__autocorrelation__lag_2", "c0_c1__correlation"]
    again = load_dataset(str(toy_ts(tmp_path)), features=ds.plan.to_meta())
    assert np.array_equal(ds.X, again.X)


def test_npz_windows(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 3, 16))
    np.savez(tmp_path / "w.npz", X=X, y=np.array(["a", "b"] * 5))
    ds = load_dataset(str(tmp_path / "w.npz"))
    # 16 samples: the default plan's spectra of block means of 2 (10 samples and more), not of 4 or 8
    plan = default_plan(3, 16)
    assert ds.X.shape == (10, 3 * (15 + 6) + 5) and ds.feature_names == plan.names
    assert "c2__fft_centroid__decimate_2" in plan.names and "c2__fft_centroid__decimate_4" not in plan.names
    c = cbind.run(X.astype(np.float32), plan.features)
    assert np.array_equal(ds.X.astype(np.float32).view(np.uint32), c.values.view(np.uint32))
    np.savez(tmp_path / "bad.npz", X=X[:, :, :0], y=np.arange(10))
    with pytest.raises(DataError, match="n x channels x length"):
        load_dataset(str(tmp_path / "bad.npz"))
    np.savez(tmp_path / "nan.npz", X=np.where(X > 2.5, np.nan, X), y=np.arange(10))
    with pytest.raises(DataError, match="NaN or infinite"):
        load_dataset(str(tmp_path / "nan.npz"))


MALFORMED = [
    ("@dimensions two\n@classLabel true a\n@data\n1,2:a\n", "@dimensions must be a positive integer"),
    ("@classLabel true a\n1,2:a\n", "data before @data"),
    ("@classLabel true a\n", "no @data line"),
    ("@classLabel false\n@data\n1,2\n", "@classLabel must be true"),
    ("@classLabel true\n@data\n1,2:a\n", "lists no labels"),
    ("@timeStamps true\n@classLabel true a\n@data\n(1,2):a\n", "@timeStamps true is not supported"),
    ("@equalLength maybe\n@classLabel true a\n@data\n1,2:a\n", "must be true or false"),
    ("@frobnicate 3\n@classLabel true a\n@data\n1,2:a\n", "unknown header entry @frobnicate"),
    ("@dimensions 2\n@classLabel true a\n@data\n1,2:a\n", "1 channels, the header says @dimensions 2"),
    ("@classLabel true a\n@data\n1,2:b\n", "label 'b' is not one of @classLabel"),
    ("@classLabel true a\n@data\n1,?:a\n", "missing values"),
    ("@classLabel true a\n@data\n1,x:a\n", "not a number"),
    ("@classLabel true a\n@data\n1,2:1,2,3:a\n", "different lengths"),
    ("@equalLength true\n@seriesLength 3\n@classLabel true a\n@data\n1,2:a\n", "@seriesLength 3"),
    ("@classLabel true a\n@data\n1,nan:a\n", "NaN or infinite"),
    ("@classLabel true a\n@data\n", "no cases"),
    ("@classLabel true a\n@data\n1,1e-50:a\n", "a sample is 1e-50, which float32 rounds to 0"),  # was read as 0
    # round 61: these were read without a word
    ("@univariate true\n@classLabel true a\n@data\n1,2:3,4:a\n", "2 channels, the header says @univariate true"),
    ("@univariate true\n@dimensions 2\n@classLabel true a\n@data\n1,2:a\n", "@univariate true with @dimensions 2"),
    ("@equalLength true\n@classLabel true a\n@data\n1,2,3:a\n1,2:a\n", "where the first case's is 3"),
    ("@\n@classLabel true a\n@data\n1,2:a\n", "unknown header entry @$"),  # a bare '@' (not an IndexError)
    # round 64: @seriesLength alone was not checked; the other two named neither the value nor the comment rule
    ("@seriesLength 3\n@classLabel true a\n@data\n1,2,3:a\n1,2,3,4:a\n", "series of length 4, the header says "
     "@seriesLength 3"),
    ("@classLabel true a b\n@data\n1,2,3:a # c\n", "'#' starts a comment only at the beginning of a line"),
    ("@classLabel true a\n@data\n1,2,3,:a\n", r"not a number: an empty value \(a doubled or trailing comma\?\)"),
    ("@classLabel true a\n@data\n1,2x,3:a\n", "not a number: value '2x'"),
    ("@seriesLength \uff13\n@classLabel true a\n@data\n1,2,3:a\n", "@serieslength must be a positive integer"),
    # round 66: a form feed inside a line split it in two (str.splitlines); text after @data was dropped
    ("@classLabel true a\n@data\n1,2\f3:a\n", r"line 3: a value is not a number: value '2\\x0c3'"),
    ("@classLabel true a\n@data junk\n1,2:a\n", r"line 2: text after @data \('junk'\)"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_ts_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "bad.ts"
    p.write_text(text)
    with pytest.raises(DataError, match=message) as exc:
        read_ts(p)
    assert "\n" not in str(exc.value)


def test_plan_errors_are_one_line(tmp_path: Path) -> None:
    path = str(toy_ts(tmp_path))
    bad = tmp_path / "plan.txt"
    cases = {"c0__meen\n": "unknown feature 'meen'", "c0__autocorrelation\n": "needs lag",
             "c0__mean__lag_2\n": "has no parameter 'lag'", "c5__mean\n": "reads channel 5, the data has 2",
             "c0__mean\nc0__mean\n": "listed twice", "c0__autocorrelation__lag_0\n": "bad parameter",
             "c0_c1_c2__magnitude_mean\n": "reads channel 2", "c0_c2__magnitude_mean\n": "reads 3 channel",
             "c0__fft_band_energy__band_4__bands_4\n": "bad parameter", "\n# nothing\n": "no features listed",
             "mean\n": "not a feature name"}
    for text, message in cases.items():
        bad.write_text(text)
        with pytest.raises(DataError, match=message):
            load_dataset(path, features=str(bad))
    with pytest.raises(DataError, match="neither a named set"):
        resolve("fancy", 2)
    bad.write_text("c0__autocorrelation__lag_10\n")  # the 9-sample window is too short
    with pytest.raises(DataError, match=r"window 5 \(length 9\): feature c0__autocorrelation__lag_10: needs "
                                        "windows of at least 12 samples"):
        load_dataset(path, features=str(bad))
    with pytest.raises(DataError, match="--features applies to raw windows"):
        load_dataset("sklearn:iris", features="default")
    with pytest.raises(DataError, match="has 2 channel"):
        load_dataset(path, features=default_plan(6).to_meta())
    with pytest.raises(DataError, match="feature plan is malformed"):
        FeaturePlan.from_meta({"features": ["c0__mean"]})


def test_unlabelled_ts_predicts_as_the_labelled_file(tmp_path: Path) -> None:
    """A .ts file of windows from the device, @classLabel false (lines of channels only): predict and
    --embed take it, giving the labelled file's lines; eval says it needs labels; train still refuses it."""
    from cli_work import run

    test = BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TEST.ts"
    lines = test.read_text().splitlines()
    at = next(i for i, t in enumerate(lines) if t.lower().startswith("@data"))
    head = ["@classLabel false" if t.lower().startswith("@classlabel") else t for t in lines[:at + 1]]
    (tmp_path / "x.ts").write_text("\n".join(head + [t.rsplit(":", 1)[0] for t in lines[at + 1:at + 11]]) + "\n")
    code, _, err = run("train", "nb-static", "uea:BasicMotions", "-o", tmp_path / "m.msgpack")
    assert code == 0, err
    code, want, err = run("predict", tmp_path / "m.msgpack", test, "--rows", 10)
    assert code == 0, err
    code, got, err = run("predict", tmp_path / "m.msgpack", tmp_path / "x.ts")
    assert code == 0 and got == want and len(got.splitlines()) == 10, err
    code, _, err = run("export-c", tmp_path / "m.msgpack", "-o", tmp_path / "m.h", "--embed", tmp_path / "x.ts")
    assert code == 0 and "#define FM_N_ROWS 10u" in (tmp_path / "m.h").read_text(), err
    code, _, err = run("eval", tmp_path / "m.msgpack", tmp_path / "x.ts")
    assert code == 2 and "has no labels" in err
    code, _, err = run("train", "nb-static", tmp_path / "x.ts", "-o", tmp_path / "t.msgpack")
    assert code == 2 and "@classLabel must be true" in err and not (tmp_path / "t.msgpack").exists()


@pytest.mark.parametrize("head, said", [
    ("@univariate true\n", "it has no @classLabel line"),
    ("", "it has no @classLabel line"),
    ("@classLabel false\n", "not @classLabel false"),
])
def test_labels_without_a_class_label_line_are_named_as_labels(tmp_path: Path, head: str, said: str) -> None:
    """Cases that end in a label under a header that declares none: read for predict, the label is named and the
    header line that would take it, not counted as a channel (or a value that is not a number)."""
    path = tmp_path / "x.ts"
    path.write_text(f"@problemName x\n{head}@data\n1,2,3,4:walk\n4,3,2,1:run\n")
    line = 3 + head.count("\n")
    with pytest.raises(DataError, match=f"line {line}: the last field 'walk' is not a series of numbers") as err:
        read_ts(path, labels_needed=False)
    assert "@classLabel true LABEL..." in str(err.value) and said in str(err.value)
    path.write_text(f"@problemName x\n{head.replace('@univariate true', '@dimensions 2')}@data\n"
                    "1,2,3,4:5,6,7,8\n4,3,2,1:1,1,1,1\n")
    assert read_ts(path, labels_needed=False).n_channels == 2  # two channels of numbers stay two channels


@pytest.mark.parametrize("last, said", [
    ("5,6,?,8", "missing values ('?') are not supported"),
    ("5,6,7x,8", "a value is not a number: value '7x'"),
    ("?", "missing values ('?') are not supported"),
])
def test_a_bad_last_channel_of_an_unlabelled_file_is_a_channel_error(tmp_path: Path, last: str, said: str) -> None:
    """Only one word that is not a number can be a label: a series with a '?' or a typo in the last channel is
    named as such, not taken for a label the header forgot (round 64's hint fired on both)."""
    path = tmp_path / "x.ts"
    path.write_text(f"@problemName x\n@dimensions 2\n@data\n1,2,3,4:{last}\n")
    with pytest.raises(DataError, match="line 4: ") as err:
        read_ts(path, labels_needed=False)
    assert said in str(err.value) and "@classLabel" not in str(err.value)


def test_default_plan_takes_the_decimations_the_shortest_window_affords() -> None:
    """Four bands of the block means of D samples need 5 D samples: the default plan drops the rest, so it accepts
    every window the basic plan accepts."""
    def decimations(min_len: int | None) -> set[int]:
        return {f.decimate for f in resolve("default", 3, min_len).features}

    assert decimations(None) == decimations(40) == {0, 2, 4, 8}
    assert decimations(39) == {0, 2, 4} and decimations(20) == {0, 2, 4}
    assert decimations(19) == {0, 2} and decimations(10) == {0, 2} and decimations(9) == {0}
    assert resolve("basic", 3, 200).names == basic_plan(3).names
    for n in (6, 10, 20, 40):
        assert default_plan(3, n).min_len <= max(n, basic_plan(3).min_len)


def test_a_label_with_a_question_mark_is_a_label_not_a_missing_value(tmp_path: Path) -> None:
    p = tmp_path / "q.ts"
    p.write_text("@classLabel true why? ok\n@data\n1,2,3:why?\n3,2,1:ok\n")
    assert read_ts(p).y.tolist() == ["why?", "ok"]
    p.write_text("@problemName\tq\n@univariate\ttrue\n@classLabel\ttrue a b\n@data\n1,2:a\n2,1:b\n")  # tabs
    assert read_ts(p).y.tolist() == ["a", "b"]


def test_more_channels_than_the_device_library_takes_are_refused(tmp_path: Path) -> None:
    """65 channels trained, predicted and exported with exit 0, then the C library refused every window (FM_E_ARG);
    64 still load (round 61's probe)."""
    rng = np.random.default_rng(3)
    for n_ch, ok in ((64, True), (65, False)):
        np.savez(tmp_path / f"c{n_ch}.npz", X=rng.normal(size=(6, n_ch, 8)), y=np.array(["a", "b"] * 3))
        if ok:
            assert load_dataset(str(tmp_path / f"c{n_ch}.npz"), features="basic").X.shape[0] == 6
        else:
            for spec in ("default", "basic"):
                with pytest.raises(DataError, match="65 channels; the device's feature library takes at most 64"):
                    load_dataset(str(tmp_path / f"c{n_ch}.npz"), features=spec)


def test_npz_labels_as_a_column_are_read_and_empty_labels_refused(tmp_path: Path) -> None:
    """y of shape (n, 1) became the labels "['a']" (model, predict lines, C label table); an empty label became a
    class whose predict lines begin with a space (round 61's probe). Windows and tables alike."""
    rng = np.random.default_rng(4)
    y = np.array(["a", "b"] * 4)
    for X in (rng.normal(size=(8, 2, 16)), rng.normal(size=(8, 3))):
        np.savez(tmp_path / "col.npz", X=X, y=y[:, None])
        assert load_dataset(str(tmp_path / "col.npz")).y.tolist() == y.tolist()
        np.savez(tmp_path / "wide.npz", X=X, y=np.stack([y, y], axis=1))
        with pytest.raises(DataError, match=r"y has shape \(8, 2\); it holds one label a row"):
            load_dataset(str(tmp_path / "wide.npz"))
        np.savez(tmp_path / "empty.npz", X=X, y=np.where(np.arange(8) == 5, "", y))
        with pytest.raises(DataError, match="y row 6: the label is empty"):
            load_dataset(str(tmp_path / "empty.npz"))


def test_a_plan_file_with_a_byte_order_mark_or_not_utf8(tmp_path: Path) -> None:
    path = str(toy_ts(tmp_path))
    plan = tmp_path / "plan.txt"
    plan.write_bytes("\ufeffc0__mean\r\nc1__maximum\r\n".encode())
    assert load_dataset(path, features=str(plan)).feature_names == ["c0__mean", "c1__maximum"]
    plan.write_bytes("c0__mean # d\xe9but\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"feature plan .*plan.txt is not UTF-8 text"):
        load_dataset(path, features=str(plan))
