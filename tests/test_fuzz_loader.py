"""Fuzzing the model loader and the C runtime's table check (hypothesis over
bytes, bounded by example counts, derandomized): whatever the bytes, only
ModelFormatError escapes `pyruntime.format.loads`, and every model that loads
is accepted by the C check and evaluated by the C runtime exactly as by the
numpy reference (no reads outside the tables: the C code runs under the same
inputs the reference bounds-checks through numpy indexing)."""

from __future__ import annotations

import zlib
from typing import Any

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyruntime import format as fmt
from pyruntime.errors import ModelFormatError
from pyruntime.nb.binding import CNaiveBayes
from pyruntime.nb.model import NB_KINDS, NBModel

FUZZ = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def seed_models() -> list[bytes]:
    """Valid files to mutate: with and without stops, zero bins and costs."""
    a = NBModel(n_features=3, order=[2, 0], zero_bin=[1, 0], edge_start=[0, 2, 3], edges=np.float32([-1, 1, 0.5]),
                table_start=[0, 4, 6], d=np.float32([0, -2, 0.25, 2, -0.5, 0.5]), d0=0.125, threshold=0.0,
                stop_at=[1], stop_hi=[1.5], stop_lo=[-np.inf], costs=np.float32([1, 2, 3]))
    b = NBModel(n_features=1, order=[0], zero_bin=[0], edge_start=[0, 0], edges=np.zeros(0, np.float32),
                table_start=[0, 1], d=np.float32([3.0]), d0=-1.0, threshold=0.5)
    return [fmt.dumps(fmt.ModelFile(kind, m, {"classes": ["n", "y"]}))
            for kind, m in (("nb-stop", a), ("nb-static", b))]


SEEDS = seed_models()


def with_checksum(body: bytes) -> bytes:
    return fmt.HEADER.pack(fmt.MAGIC, fmt.FORMAT_VERSION, 0, len(body), zlib.crc32(body)) + body


def exercise(blob: bytes) -> None:
    """loads -> ModelFormatError or a model; a loaded NB model must pass the C
    check and agree with the reference, float32 and q15, on awkward inputs."""
    try:
        model = fmt.loads(blob)
    except ModelFormatError:
        return
    if model.kind not in NB_KINDS:
        return
    m = model.tables
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, m.n_features)).astype(np.float32) * np.float32(4)
    X[::3] = 0.0
    if m.edges.size:
        X[1::4] = rng.choice(m.edges, size=X[1::4].shape)
    X[2, :] = np.finfo(np.float32).max
    for numeric, ref in (("float32", m.predict_reference(X)), ("q15", m.q15().predict_reference(X))):
        got = CNaiveBayes(m, numeric).predict(X)  # a ModelFormatError here would be a loader hole
        np.testing.assert_array_equal(got.label, ref.label)
        np.testing.assert_array_equal(got.n_read, ref.n_read)


@FUZZ
@given(blob=st.binary(max_size=400))
def test_random_bytes(blob: bytes) -> None:
    exercise(blob)


@FUZZ
@given(body=st.binary(max_size=300))
def test_random_body_behind_a_valid_header(body: bytes) -> None:
    exercise(with_checksum(body))


@FUZZ
@given(data=st.data())
def test_mutated_files(data: st.DataObject) -> None:
    """Byte flips, inserts and cuts in valid files, with the checksum fixed up or not."""
    blob = bytearray(data.draw(st.sampled_from(SEEDS)))
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        i = data.draw(st.integers(0, len(blob) - 1))
        if op == "flip":
            blob[i] = data.draw(st.integers(0, 255))
        elif op == "insert":
            blob[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        elif len(blob) > fmt.HEADER.size + 1:
            del blob[i]
    if data.draw(st.booleans()):
        blob = bytearray(with_checksum(bytes(blob[fmt.HEADER.size:])))
    exercise(bytes(blob))


msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=8)
    | st.binary(max_size=16),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def array_values(draw: st.DrawFn) -> dict[str, Any]:
    """An encoded array: allowed or odd dtype, shape and byte length that may disagree."""
    dtype = draw(st.sampled_from(["<u4", "<i4", "<f4", "|u1", "<i2", "<u2", "<f8", "|O", ">f4", "x"]))
    shape = draw(st.lists(st.integers(-1, 6), max_size=2))
    data = draw(st.binary(max_size=32))
    return {"nd": dtype, "shape": shape, "data": data}


@FUZZ
@given(data=st.data())
def test_structured_field_fuzz(data: st.DataObject) -> None:
    """Valid envelope and checksum, tables with one or more fields replaced by
    odd values or odd arrays: the validation paths past the checksum."""
    raw = msgpack.unpackb(data.draw(st.sampled_from(SEEDS))[fmt.HEADER.size:], raw=False)
    tables = raw["tables"]
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from(sorted(tables)))
        if data.draw(st.booleans()):
            tables[key] = data.draw(msgpack_values)
        else:
            tables[key] = data.draw(st.composite(array_values)())
    try:
        body = msgpack.packb(raw, use_bin_type=True)
    except (OverflowError, ValueError, TypeError):
        return
    exercise(with_checksum(body))


@FUZZ
@given(kind=msgpack_values.filter(lambda v: not isinstance(v, (list, dict))))
def test_any_hashable_kind(kind: Any) -> None:
    raw = msgpack.unpackb(SEEDS[0][fmt.HEADER.size:], raw=False)
    raw["kind"] = kind
    exercise(with_checksum(msgpack.packb(raw, use_bin_type=True)))


@pytest.mark.parametrize("kind", [[], {}])
def test_unhashable_kind_is_a_format_error(kind: Any) -> None:
    raw = msgpack.unpackb(SEEDS[0][fmt.HEADER.size:], raw=False)
    raw["kind"] = kind
    exercise(with_checksum(msgpack.packb(raw, use_bin_type=True)))
