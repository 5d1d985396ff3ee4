"""Model file format versions: version-1 and version-2 files written by the code of main before each bump
(tests/data/v1 and v2, made by tests/data/make_old_models.py) still load and predict exactly what that
version predicted; files written now are version 3 and record their writer; a kind that registers a refusal
for version 1 gets one line naming the version that wrote the file and what to do; unknown versions are
refused."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import msgpack
import numpy as np
import pytest

from pyruntime import format as fmt
from pyruntime.data import load_dataset
from pyruntime.errors import ModelFormatError
from pyruntime.evaluators import c_evaluator, reference_evaluator

DATA = Path(__file__).resolve().parent / "data"
V1 = DATA / "v1"
EXPECTED = json.loads((V1 / "expected.json").read_text())
NAMES = sorted(EXPECTED["models"])
OLD = {v: json.loads((DATA / f"v{v}" / "expected.json").read_text()) for v in (1, 2)}
OLD_FILES = [(v, name) for v in OLD for name in sorted(OLD[v]["models"])]


def rows() -> np.ndarray:
    return load_dataset(EXPECTED["data"]).X[EXPECTED["rows"]]


def test_fixtures_are_version_1_files() -> None:
    assert EXPECTED["format_version"] == 1
    assert {p.stem for p in V1.glob("*.msgpack")} == set(NAMES)
    assert {EXPECTED["models"][n]["kind"] for n in NAMES} == {"nb-stop", "miser", "cascade", "gated", "cstc",
                                                              "skyline"}
    for name in NAMES:
        blob = (V1 / f"{name}.msgpack").read_bytes()
        assert struct.unpack_from("<H", blob, 8)[0] == 1
        assert "writer" not in msgpack.unpackb(blob[fmt.HEADER.size:], raw=False)


def test_fixtures_of_version_2_are_version_2_files() -> None:
    assert OLD[2]["format_version"] == 2 and set(OLD[2]["models"]) == set(NAMES)
    for name in NAMES:
        blob = (DATA / "v2" / f"{name}.msgpack").read_bytes()
        assert struct.unpack_from("<H", blob, 8)[0] == 2


@pytest.mark.parametrize(("version", "name"), OLD_FILES)
def test_old_files_load_and_predict_as_their_version_did(version: int, name: str) -> None:
    want = OLD[version]["models"][name]
    model = fmt.load(DATA / f"v{version}" / f"{name}.msgpack")
    assert model.kind == want["kind"] and model.format_version == version
    assert (model.writer is None) == (version == 1)
    assert model.classes == ["0", "1"]
    X = load_dataset(OLD[version]["data"]).X[OLD[version]["rows"]]
    ref = reference_evaluator(model, "float32").predict(X)
    assert ref.label.tolist() == want["label"] and ref.n_read.tolist() == want["n_read"]
    assert ref.stage.tolist() == want["stage"]
    assert np.asarray(ref.score, np.float32).tobytes() == np.asarray(want["score"], np.float32).tobytes()
    assert np.asarray(ref.cost, np.float64).tolist() == want["cost"]
    c = c_evaluator(model, "float32").predict(X)  # the C runtime of this version agrees on the old file
    assert c.label.tolist() == want["label"] and c.n_read.tolist() == want["n_read"]


@pytest.mark.parametrize(("version", "name"), OLD_FILES)
def test_saving_an_old_model_writes_the_current_version(version: int, name: str, tmp_path: Path) -> None:
    model = fmt.load(DATA / f"v{version}" / f"{name}.msgpack")
    out = tmp_path / "m.msgpack"
    fmt.save(model, out)
    blob = out.read_bytes()
    assert struct.unpack_from("<H", blob, 8)[0] == fmt.FORMAT_VERSION == 3
    again = fmt.load(out)
    assert again.format_version == 3 and again.writer == fmt.writer_version()
    X = rows()
    a, b = reference_evaluator(model).predict(X), reference_evaluator(again).predict(X)
    assert a.label.tolist() == b.label.tolist() and a.score.tobytes() == b.score.tobytes()


def test_a_refused_version_1_record_names_its_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "UPGRADES", {})
    fmt.register_upgrade("cstc", 1, "its node tables changed layout in format 2")
    with pytest.raises(ModelFormatError) as err:
        fmt.load(V1 / "cstc.msgpack")
    msg = str(err.value)
    assert "\n" not in msg
    assert "format version 1 cstc file written by frugalml 0.1.0 (before format 2)" in msg
    assert "its node tables changed layout in format 2" in msg and "retrain it" in msg
    fmt.load(V1 / "miser.msgpack")  # other kinds are not affected


def test_an_upgrade_converts_a_version_1_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "UPGRADES", {})
    seen: list[int] = []

    def upgrade(tables: dict) -> dict:
        seen.append(int(tables["n_features"]))
        return {**tables, "threshold": tables["threshold"] + np.float32(1.0)}

    fmt.register_upgrade("cstc", 1, upgrade)
    old = fmt.load(V1 / "cstc.msgpack")
    monkeypatch.setattr(fmt, "UPGRADES", {})
    plain = fmt.load(V1 / "cstc.msgpack")
    assert seen == [30] and np.array_equal(old.tables.threshold, plain.tables.threshold + np.float32(1.0))
    # a current-version file is not upgraded again
    monkeypatch.setattr(fmt, "UPGRADES", {("cstc", 1): upgrade})
    assert np.array_equal(fmt.loads(fmt.dumps(plain)).tables.threshold, plain.tables.threshold)
    assert seen == [30]


def _with_version(blob: bytes, version: int, body: dict | None = None) -> bytes:
    raw = blob[fmt.HEADER.size:] if body is None else msgpack.packb(body, use_bin_type=True)
    return fmt.HEADER.pack(fmt.MAGIC, version, 0, len(raw), zlib.crc32(raw)) + raw


def test_unknown_versions_and_a_bad_writer_are_refused() -> None:
    blob = (V1 / "miser.msgpack").read_bytes()
    with pytest.raises(ModelFormatError, match=r"format version 4 is not supported \(this frugalml reads versions 1 "
                                               r"to 3\) \(written by a newer frugalml: upgrade frugalml\)"):
        fmt.loads(_with_version(blob, 4))
    with pytest.raises(ModelFormatError, match="format version 0 is not supported"):
        fmt.loads(_with_version(blob, 0))
    body = msgpack.unpackb(blob[fmt.HEADER.size:], raw=False)
    with pytest.raises(ModelFormatError, match="writer must be a string"):
        fmt.loads(_with_version(blob, 2, {**body, "writer": 7}))
    assert fmt.loads(_with_version(blob, 2, {**body, "writer": "frugalml 9.9"})).writer == "frugalml 9.9"
