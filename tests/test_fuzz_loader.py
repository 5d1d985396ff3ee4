"""Fuzzing the model loader and the C runtime's table check (hypothesis over
bytes, bounded by example counts, derandomized): whatever the bytes, only
ModelFormatError escapes `pyruntime.format.loads`, and every model that loads
is accepted by the C check and evaluated by the C runtime exactly as by the
numpy reference (no reads outside the tables: the C code runs under the same
inputs the reference bounds-checks through numpy indexing)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nb_strategies import nb_models

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


def with_tables(blob: bytes, **arrays: np.ndarray) -> bytes:
    """A model file's bytes with some table arrays replaced as they would be stored (no validation)."""
    raw = msgpack.unpackb(blob[fmt.HEADER.size:], raw=False)
    for name, arr in arrays.items():
        raw["tables"][name] = {"nd": arr.dtype.str, "shape": list(arr.shape), "data": arr.tobytes()}
    return with_checksum(msgpack.packb(raw, use_bin_type=True))


def exercise(blob: bytes) -> bool:
    """loads -> ModelFormatError or a model; a loaded NB model must pass the C
    check and agree with the reference, float32 and q15, on awkward inputs.
    True when the blob got as far as that comparison."""
    try:
        model = fmt.loads(blob)
    except ModelFormatError:
        return False
    if model.kind not in NB_KINDS:
        return False
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
        np.testing.assert_array_equal(got.score, ref.score)
    return True


@dataclass
class Tally:
    """How many generated examples a fuzz test ran and how many reached the C-vs-numpy comparison."""
    total: int = 0
    reached: int = 0

    def add(self, reached: bool) -> None:
        self.total += 1
        self.reached += int(reached)

    def require(self, share: float) -> None:
        print(f"{self.reached} of {self.total} reached the comparison")
        assert self.total >= 50, f"only {self.total} examples ran"
        assert self.reached >= share * self.total, f"{self.reached} of {self.total} reached the comparison"


def fuzz(share: float, **strategies: st.SearchStrategy) -> Any:
    """A test running `body(**drawn)` -> blob over FUZZ examples; at least `share` of them must reach the
    C-vs-numpy comparison (0: the test is about the error paths; each example must still end in
    ModelFormatError or the comparison)."""
    def wrap(body: Any) -> Any:
        def test() -> None:
            tally = Tally()

            @FUZZ
            @given(**strategies)
            def run(**drawn: Any) -> None:
                blob = body(**drawn)
                if blob is not None:
                    tally.add(exercise(blob))

            run()
            tally.require(share)
        test.__name__ = body.__name__
        test.__doc__ = body.__doc__
        return test
    return wrap


# Shares that reach the comparison, measured (derandomized, 250 examples each): random bytes 0 and random
# body 0 (the magic, checksum and msgpack framing stop them: these two test the error paths only), mutated
# files 29 (11.6%), structured fields 2, mutated values and random valid models 250 of 250. The
# minimums below sit under those counts, so a change that makes the generators miss the comparison fails.
@fuzz(0.0, blob=st.binary(max_size=400))
def test_random_bytes(blob: bytes) -> bytes:
    return blob


@fuzz(0.0, body=st.binary(max_size=300))
def test_random_body_behind_a_valid_header(body: bytes) -> bytes:
    return with_checksum(body)


@fuzz(0.08, data=st.data())
def test_mutated_files(data: st.DataObject) -> bytes:
    """Byte flips, inserts and cuts in valid files, with the checksum fixed up (mostly) or not."""
    blob = bytearray(data.draw(st.sampled_from(SEEDS)))
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        i = data.draw(st.integers(0, len(blob) - 1))
        if op == "flip":
            blob[i] = data.draw(st.integers(0, 255))
        elif op == "insert":
            blob[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        elif len(blob) > fmt.HEADER.size + 1:
            del blob[i]
    if data.draw(st.integers(0, 9)) > 0:  # a stale checksum stops every mutation: fix it up 9 times in 10
        blob = bytearray(with_checksum(bytes(blob[fmt.HEADER.size:])))
    return bytes(blob)


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


@fuzz(0.004, data=st.data())
def test_structured_field_fuzz(data: st.DataObject) -> bytes | None:
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
        return None
    return with_checksum(body)


FLOAT_FIELDS = ("edges", "d", "d0", "threshold", "stop_hi", "stop_lo", "costs")
odd_floats = st.sampled_from([0.0, -0.0, 1e-38, -1e-38, 3.4e38, -3.4e38, 1e30, 0.5, -7.25, 65504.0])


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the reference's float32 sums overflow to inf silently, as C's
@fuzz(1.0, data=st.data())
def test_mutated_values(data: st.DataObject) -> bytes:
    """Valid structure, the float values replaced by extremes, tiny values and signed zeros (finite, costs
    >= 0, edges sorted, as the format requires): every file loads and reaches the comparison."""
    which = data.draw(st.integers(0, len(SEEDS) - 1))
    model = fmt.loads(SEEDS[which])
    fields = model.tables.to_dict()
    for key in FLOAT_FIELDS:
        if fields.get(key) is None or not data.draw(st.booleans()):
            continue
        arr = np.atleast_1d(np.asarray(fields[key], dtype=np.float64)).copy()
        for i in range(arr.size):
            if np.isfinite(arr[i]) and data.draw(st.booleans()):
                v = data.draw(odd_floats)
                # costs: >= 0 and a finite sum; edges: no -0.0 (both known holes, tested below)
                arr[i] = min(abs(v), 1e30) if key == "costs" else (v + 0.0 if key == "edges" else v)
        if key == "edges":
            for a, b in zip(fields["edge_start"][:-1], fields["edge_start"][1:], strict=True):
                arr[a:b] = np.sort(arr[a:b])
        fields[key] = float(arr[0]) if np.ndim(fields[key]) == 0 else arr.astype(np.float32)
    tables = NBModel(**fields)
    return fmt.dumps(fmt.ModelFile(model.kind, tables, model.meta))


@fuzz(1.0, model=nb_models())
def test_random_valid_models(model: NBModel) -> bytes:
    """Random valid NB tables (tests/nb_strategies.py) written and read back: every one reaches the
    comparison."""
    return fmt.dumps(fmt.ModelFile("nb-stop" if model.n_stops else "nb-static", model, {"classes": [0, 1]}))


@FUZZ
@given(kind=msgpack_values.filter(lambda v: not isinstance(v, (list, dict))))
def test_any_hashable_kind(kind: Any) -> None:
    raw = msgpack.unpackb(SEEDS[0][fmt.HEADER.size:], raw=False)
    raw["kind"] = kind
    blob = with_checksum(msgpack.packb(raw, use_bin_type=True))
    if kind in NB_KINDS:
        assert exercise(blob)
    else:
        with pytest.raises(ModelFormatError):
            fmt.loads(blob)


@pytest.mark.parametrize("kind", [[], {}])
def test_unhashable_kind_is_a_format_error(kind: Any) -> None:
    raw = msgpack.unpackb(SEEDS[0][fmt.HEADER.size:], raw=False)
    raw["kind"] = kind
    with pytest.raises(ModelFormatError, match="kind"):
        fmt.loads(with_checksum(msgpack.packb(raw, use_bin_type=True)))


# Two holes the value mutations found (the loader accepted, the C check rejected): the loader now refuses
# both files, and the nearest valid files still load and agree with the reference.
def test_signed_zero_edges_are_refused_at_load() -> None:
    """-0.0 == +0.0 as floats, yet the q15 tables order -0.0 below +0.0 (fm_nb_q15_check refused them after
    the loader had accepted the file): the loader now refuses the file with its reason."""
    fields = fmt.loads(SEEDS[0]).tables.to_dict()
    fields["edges"] = np.float32([0.0, -0.0, 0.5])
    with pytest.raises(ModelFormatError, match=r"-0\.0 after \+0\.0"):
        fmt.loads(with_tables(SEEDS[0], edges=fields["edges"]))
    fields["edges"] = np.float32([-0.0, 0.0, 0.5])  # the right order loads and runs
    assert exercise(fmt.dumps(fmt.ModelFile("nb-stop", NBModel(**fields), {"classes": ["n", "y"]})))


def test_costs_with_an_infinite_sum_are_refused_at_load() -> None:
    """Finite costs whose float32 sum in reading order overflows: the C check refuses the infinite
    cumulative cost, so the loader refuses them first, with its reason."""
    fields = fmt.loads(SEEDS[0]).tables.to_dict()
    fields["costs"] = np.float32([3.4e38, 3.4e38, 3.4e38])
    with pytest.raises(ModelFormatError, match="sum past the float32 range"):
        fmt.loads(with_tables(SEEDS[0], costs=fields["costs"]))
    fields["costs"] = np.float32([3.4e38, 0.0, 0.0])  # one large cost alone still loads and runs
    assert exercise(fmt.dumps(fmt.ModelFile("nb-stop", NBModel(**fields), {"classes": ["n", "y"]})))
