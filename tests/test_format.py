"""The msgpack model file: round trip, and a clear ModelFormatError for every defect."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nb_strategies import nb_models

from pyruntime import format as fmt
from pyruntime.errors import ModelFormatError
from pyruntime.nb.model import NBModel


def small_model() -> fmt.ModelFile:
    m = NBModel(n_features=2, order=[1, 0], zero_bin=[1, 0], edge_start=[0, 2, 3], edges=np.float32([-1, 1, 0.5]),
                table_start=[0, 4, 6], d=np.float32([0, -2, 0.25, 2, -0.5, 0.5]), d0=0.125, threshold=0.0,
                stop_at=[1], stop_hi=[1.5], stop_lo=[-np.inf])
    return fmt.ModelFile(kind="nb-stop", tables=m, meta={"feature_names": ["a", "b"], "classes": ["no", "yes"]})


def small_body() -> dict:
    """small_model()'s file body as msgpack decodes it (maps and raw arrays), for the tests to spoil."""
    return msgpack.unpackb(fmt.dumps(small_model())[fmt.HEADER.size:], raw=False)


def rebuild(body: dict) -> bytes:
    """A file with a valid header and checksum around an arbitrary body."""
    raw = msgpack.packb(body, use_bin_type=True)
    return fmt.HEADER.pack(fmt.MAGIC, fmt.FORMAT_VERSION, 0, len(raw), zlib.crc32(raw)) + raw


@settings(max_examples=30, deadline=None)
@given(model=nb_models())
def test_round_trip_is_exact(model: NBModel) -> None:
    back = fmt.loads(fmt.dumps(fmt.ModelFile("nb-stop", model, {"x": [1, 2]})))
    for key, value in model.to_dict().items():
        got = getattr(back.tables, key)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype
            np.testing.assert_array_equal(got, value)
        else:
            assert got == value
    assert back.meta == {"x": [1, 2]}


def test_file_starts_with_magic_and_version(tmp_path) -> None:
    path = tmp_path / "m.msgpack"
    n = fmt.save(small_model(), path)
    blob = path.read_bytes()
    assert len(blob) == n and blob[:8] == b"FRUGALML" and struct.unpack_from("<H", blob, 8)[0] == 3
    back = fmt.load(path)
    assert back.meta["classes"] == ["no", "yes"]
    assert back.format_version == 3 and back.writer is not None and back.writer.startswith("frugalml ")


@pytest.mark.parametrize("cut", [0, 5, 19, 20, 40, -1])
def test_truncated(cut: int) -> None:
    blob = fmt.dumps(small_model())
    with pytest.raises(ModelFormatError, match="too short|truncated"):
        fmt.loads(blob[:cut] if cut >= 0 else blob[:-1])


def test_corrupted_byte_fails_checksum() -> None:
    blob = bytearray(fmt.dumps(small_model()))
    blob[len(blob) // 2] ^= 0x40
    with pytest.raises(ModelFormatError, match="checksum"):
        fmt.loads(bytes(blob))


def test_wrong_magic_version_and_trailing_bytes() -> None:
    blob = fmt.dumps(small_model())
    with pytest.raises(ModelFormatError, match="bad magic"):
        fmt.loads(b"NOTAMODL" + blob[8:])
    with pytest.raises(ModelFormatError, match="version 7 is not supported"):
        fmt.loads(blob[:8] + struct.pack("<H", 7) + blob[10:])
    with pytest.raises(ModelFormatError, match="unexpected bytes"):
        fmt.loads(blob + b"\x00")


@pytest.mark.parametrize("case", ["trailing", "truncated", "magic", "version", "whole"])
def test_load_decides_size_magic_and_version_before_reading_the_body(tmp_path: Path, case: str) -> None:
    """A 64 MiB file (sparse) is refused from its header and its size, without reading it in full: the peak of
    Python's allocations stays far under its size; a well-formed file still loads."""
    import tracemalloc

    blob = fmt.dumps(small_model())
    path = tmp_path / "m.msgpack"
    head = {"magic": b"NOTAMODL" + blob[8:], "version": blob[:8] + struct.pack("<H", 7) + blob[10:],
            "truncated": blob[:-1]}.get(case, blob)
    path.write_bytes(head)
    if case != "truncated" and case != "whole":
        with path.open("r+b") as fh:
            fh.truncate(64 << 20)
    tracemalloc.start()
    try:
        if case == "whole":
            assert fmt.load(path).kind == small_model().kind
        else:
            want = {"trailing": "unexpected bytes after the body", "truncated": "truncated",
                    "magic": "bad magic", "version": "version 7 is not supported"}[case]
            with pytest.raises(ModelFormatError, match=want):
                fmt.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_inconsistent_bodies() -> None:
    good = small_body()
    bad_kind = {**good, "kind": "nb-magic"}
    with pytest.raises(ModelFormatError, match="unknown model kind"):
        fmt.loads(rebuild(bad_kind))
    with pytest.raises(ModelFormatError, match="must hold kind"):
        fmt.loads(rebuild({"kind": "nb-stop"}))
    tables = dict(good["tables"])
    tables["order"] = {**tables["order"], "data": np.uint32([1, 9]).tobytes()}
    with pytest.raises(ModelFormatError, match="out of range"):
        fmt.loads(rebuild({**good, "tables": tables}))
    tables = dict(good["tables"])
    tables["d"] = {**tables["d"], "data": tables["d"]["data"][:-4]}
    with pytest.raises(ModelFormatError, match="bytes for shape"):
        fmt.loads(rebuild({**good, "tables": tables}))
    tables = dict(good["tables"])
    tables["stop_at"] = {"nd": "<u4", "shape": [2], "data": np.uint32([1, 1]).tobytes()}
    with pytest.raises(ModelFormatError, match="differ in length|strictly"):
        fmt.loads(rebuild({**good, "tables": tables}))
    tables = dict(good["tables"])
    del tables["threshold"]
    with pytest.raises(ModelFormatError, match="miss fields: threshold"):
        fmt.loads(rebuild({**good, "tables": tables}))
    tables = dict(good["tables"])
    tables["edges"] = {"nd": "O", "shape": [3], "data": b"abc"}
    with pytest.raises(ModelFormatError, match="unsupported dtype"):
        fmt.loads(rebuild({**good, "tables": tables}))


@pytest.mark.parametrize("shape, data, message", [
    ([True], b"\0" * 4, "bad shape"),  # a bool is an int to isinstance
    ([2**40, 2**40], b"", "bytes for shape"),  # the element count overflowed int64 to 0 and passed the size check
    ([0, 2**62], b"\0" * 4, "bytes for shape"),
    ([0, 2**62], b"", "bad shape"),  # zero elements, as the data says, but numpy cannot index the shape
])
def test_array_shapes_that_are_not_counts(shape: list, data: bytes, message: str) -> None:
    good = small_body()
    tables = {**good["tables"], "d": {"nd": "<f4", "shape": shape, "data": data}}
    with pytest.raises(ModelFormatError, match=message):
        fmt.loads(rebuild({**good, "tables": tables}))


@pytest.mark.parametrize("key, value, message", [
    ("classes", None, None),  # None stands for absent: the default labels
    ("classes", [["a"], ["b"]], "meta classes must be a list of at least 2 labels"),
    ("classes", ["only"], "meta classes must be a list of at least 2 labels"),
    ("labels", [["no"], "yes"], "meta labels must be a list of labels"),
    ("feature_names", [["a"], ["b"]], "meta feature_names must be 2 strings, one per feature"),
    ("feature_names", ["a", "b", "c"], "meta feature_names must be 2 strings"),
    ("split", [], "meta split must be a map, got list"),
    ("split", {"train": 0.6, "validation": 0.2}, "meta split must hold an integer seed"),
    ("split", {"seed": 0, "train": 1.5, "validation": 0.2}, "fractions in \\(0, 1\\)"),
    ("dataset", None, "meta dataset must be a map, got NoneType"),
    ("training", ["nb-stop"], "meta training must be a map, got list"),
    ("training", {"code_hints": [1]}, "meta training.code_hints must map names to lists of numbers"),
    # an infinite or huge hint loaded, and export-c --form code died converting it to int64 (round 63)
    ("training", {"code_hints": {"left_percent": [50, float("inf")]}}, "training.code_hints must map names"),
    ("training", {"code_hints": {"left_percent": [1e300]}}, "within \\+-1e\\+09"),
    ("training", {"code_hints": {"left_percent": [float("nan")]}}, "training.code_hints must map names"),
    ("positive", {"a": 1}, "meta positive must be a label"),
    ("target_column", 3, "meta target_column must be a string"),
    ("validation_class_counts", [1.5, 2], "meta validation_class_counts must be a list of integers"),
])
def test_meta_of_the_wrong_type_is_refused_at_load(key: str, value: object, message: str | None) -> None:
    """Each of these used to load and then raise a TypeError, KeyError or AttributeError inside eval, inspect
    or export-c (a traceback, exit 1)."""
    good = small_body()
    blob = rebuild({**good, "meta": {**good["meta"], key: value}})
    if message is None:
        assert fmt.loads(blob).classes == ["0", "1"]
        return
    with pytest.raises(ModelFormatError, match=message):
        fmt.loads(blob)


def test_feature_counts_beyond_the_runtimes_uint32_are_refused() -> None:
    good = small_body()
    meta = {k: v for k, v in good["meta"].items() if k != "feature_names"}
    for n in (2**32, 2**63 - 1):  # export-c wrote 4294967296u into a uint32_t field; predict overflowed
        with pytest.raises(ModelFormatError, match=f"{n} features is out of range"):
            fmt.loads(rebuild({**good, "meta": meta, "tables": {**good["tables"], "n_features": n}}))


def test_not_msgpack_body() -> None:
    raw = b"\xc1\xc1\xc1"
    blob = fmt.HEADER.pack(fmt.MAGIC, 1, 0, len(raw), zlib.crc32(raw)) + raw
    with pytest.raises(ModelFormatError, match="not valid msgpack"):
        fmt.loads(blob)


def test_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(ModelFormatError, match="not found"):
        fmt.load(tmp_path / "nope.msgpack")
    with pytest.raises(ModelFormatError, match="directory"):
        fmt.load(tmp_path)
    if Path("/dev/zero").exists():  # a device never ends: refused before reading
        with pytest.raises(ModelFormatError, match="not a regular file: /dev/zero"):
            fmt.load("/dev/zero")


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fuzzed_files_never_crash(data) -> None:
    """Random mutations of a valid file (with or without a fixed-up checksum):
    either a valid model or ModelFormatError, never another exception."""
    blob = bytearray(fmt.dumps(small_model()))
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        body = bytes(blob[fmt.HEADER.size:])
        blob[:fmt.HEADER.size] = fmt.HEADER.pack(fmt.MAGIC, 1, 0, len(body), zlib.crc32(body))
    try:
        model = fmt.loads(bytes(blob))
    except ModelFormatError:
        return
    model.tables.validate()


@pytest.mark.parametrize("dtype", [[1], {"a": 1}, None, 3])
def test_an_array_whose_dtype_is_not_a_string_is_a_format_error(dtype: object) -> None:
    """The fuzz test above drew a file whose array dtype had become a msgpack list: 'unhashable type' escaped as a
    TypeError (round 60's CI)."""
    with pytest.raises(ModelFormatError, match="unsupported dtype"):
        fmt._decode({"x": {"nd": dtype, "shape": [1], "data": b"\0\0\0\0"}})


META_KEYS = ("classes", "labels", "feature_names", "positive", "target_column", "dataset", "split", "training",
             "feature_plan", "validation_class_counts")
_scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats() | st.text(max_size=4)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["seed", "kind", "code_hints", "zero_share", "features",
                                                          "fingerprint", "x"]), inner, max_size=3), max_leaves=8)


_nested = st.builds(lambda k, v: {k: v}, st.sampled_from(["code_hints", "kind", "fingerprint", "seed"]), _values)


@settings(max_examples=120, deadline=None)
@given(key=st.sampled_from(META_KEYS), value=_values | _nested)
def test_any_meta_value_loads_cleanly_or_is_refused(tmp_path_factory: pytest.TempPathFactory, key: str,
                                                    value: object) -> None:
    """Whatever a meta field holds, a model command either works or refuses in one line (exit 2): no traceback
    from inspect or export-c, which read the meta after load."""
    from click.testing import CliRunner

    from compiler.cli import cli

    good = small_body()
    d = tmp_path_factory.mktemp("meta")
    path = d / "m.msgpack"
    path.write_bytes(rebuild({**good, "meta": {**good["meta"], key: value}}))
    try:
        fmt.load(path)
    except ModelFormatError:
        pass
    for argv in (["inspect", path], ["inspect", "--json", path], ["export-c", path, "-o", d / "m.h"],
                 ["export-c", path, "--form", "code", "-o", d / "c.h"]):
        res = CliRunner().invoke(cli, [str(a) for a in argv])
        assert res.exit_code in (0, 2) and (res.exception is None or isinstance(res.exception, SystemExit)), (
            argv, key, value, res.output, res.exception)


@pytest.mark.parametrize("field", ["threshold", "d0"])
def test_table_scalars_beyond_float32_are_refused(field: str) -> None:
    """1e300 became an infinite float32 with only a RuntimeWarning on stderr."""
    good = small_body()
    with pytest.raises(ModelFormatError, match=f"{field} is -1e\\+300, beyond float32"):
        fmt.loads(rebuild({**good, "tables": {**good["tables"], field: -1e300}}))
    assert getattr(fmt.loads(rebuild({**good, "tables": {**good["tables"], field: 3.0e38}})).tables, field) == \
        float(np.float32(3.0e38))


def test_f32_scalar() -> None:
    from pyruntime.arrays import f32_scalar

    assert f32_scalar(1.5, "bias") == 1.5 and f32_scalar(0.1, "bias") == float(np.float32(0.1))
    assert f32_scalar(float("inf"), "bias") == float("inf")  # infinite by intent: left to the kind's own check
    with pytest.raises(ModelFormatError, match=r"bias is 1e\+300, beyond float32"):
        f32_scalar(1e300, "bias")


def test_maps_and_lists_nested_too_deep_are_refused_in_one_line() -> None:
    """Lists nested 1,000 deep in meta (valid msgpack, right checksum) ended every reading command in a
    RecursionError traceback."""
    body = small_body()
    deep: object = 0
    for _ in range(1000):
        deep = [deep]
    body["meta"]["training"] = {"deep": deep}
    with pytest.raises(ModelFormatError, match="nested deeper than 32 levels"):
        fmt.loads(rebuild(body))
    body["meta"]["training"] = {"ok": [[[[0]]]]}
    assert fmt.loads(rebuild(body)).meta["training"]["ok"] == [[[[0]]]]


def test_a_map_key_that_is_not_text_is_refused() -> None:
    """A bin key (bytes) passed strict_map_key, loaded, and `inspect --json` died on it (json has no bytes keys)."""
    body = small_body()
    body["meta"]["training"] = {b"note": 1}
    with pytest.raises(ModelFormatError, match="key b'note' is not a string"):
        fmt.loads(rebuild(body))


def test_numeric_labels_are_read_as_their_text() -> None:
    """meta labels mixing texts and numbers (["0", 1]) passed the check and made eval's sorted() raise a TypeError;
    numbers are read as the text the data readers give them, so every label list sorts and matches the data."""
    body = small_body()
    body["meta"].update({"classes": [0, 1.0], "labels": ["0", 1, 2.5], "positive": 1})
    m = fmt.loads(rebuild(body))
    assert m.meta["classes"] == ["0", "1"] and m.meta["labels"] == ["0", "1", "2.5"] and m.meta["positive"] == "1"
    assert sorted(m.meta["labels"]) == ["0", "1", "2.5"]
