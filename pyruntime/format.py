"""The frugalml model file: a versioned, checksummed msgpack container.

Layout (little endian)::

    offset  size  field
    0       8     magic b"FRUGALML"
    8       2     format version (uint16), currently 3 (versions 1 to 3 are read)
    10      2     flags (uint16), 0
    12      4     body length in bytes (uint32)
    16      4     CRC-32 of the body (uint32)
    20      n     body: msgpack map {"kind": str, "tables": map, "meta": map, "writer": str}

Format versions (docs/deploy.md, "Model file versions"):

* 1: body {kind, tables, meta}; written by frugalml 0.1.0 up to the C API round (issue 11).
* 2: adds "writer" (the frugalml version that wrote the file, e.g. "frugalml 0.1.0"). The tables
  records of every kind are unchanged, so a version-1 file is read as it is (``ModelFile.format_version``
  says 1, ``writer`` is None). A kind whose record changes registers an upgrade from the older
  version, or a refusal with the reason, with ``register_upgrade``: an old file is then converted or
  rejected with one line naming the version that wrote it and what to do -- never read wrongly.
* 3: K-class models (issue 19): meta "classes" holds the K label texts in class-index order (the runtime's
  label is an index into it; two entries for a binary or one-vs-rest model, as before) and
  "validation_class_counts" K counts; tables whose class has ``n_classes`` must agree with it. Binary
  tables records are unchanged, so version-1 and version-2 files are read as they are.

numpy arrays inside ``tables`` are maps {"nd": dtype string, "shape": [...],
"data": raw little-endian bytes}. Every failure to read raises
ModelFormatError with a one-line reason; nothing is returned half-checked.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgpack
import numpy as np

from pyruntime.errors import ModelFormatError
from pyruntime.fixedpoint import UINT32_MAX
from pyruntime.outfiles import write_file

MAGIC = b"FRUGALML"
FORMAT_VERSION = 3
READ_VERSIONS = (1, 2, 3)
HEADER = struct.Struct("<8sHHII")
ALLOWED_DTYPES = {"<f4", "<f8", "<i4", "<u4", "<i2", "<u2", "|u1", "|i1", "<i8", "<u8"}


class Tables(Protocol):
    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tables: ...


KINDS: dict[str, type] = {}
# (kind, version) -> upgrade of that kind's tables record from `version` to version + 1
UPGRADES: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}


def register_kind(kind: str, cls: type) -> None:
    """Make a model kind readable: cls has to_dict() and classmethod from_dict()."""
    KINDS[kind] = cls


def register_upgrade(kind: str, from_version: int, upgrade: Callable[[dict[str, Any]], dict[str, Any]] | str) -> None:
    """How a kind's tables record of format `from_version` becomes the next version's: a function of the
    decoded tables map, or a string -- the reason such files cannot be converted (they are then refused with
    one line naming the version that wrote them and asking to retrain or re-export)."""
    if isinstance(upgrade, str):
        reason = upgrade

        def refuse(_tables: dict[str, Any]) -> dict[str, Any]:
            raise ModelFormatError(reason)

        UPGRADES[(kind, from_version)] = refuse
    else:
        UPGRADES[(kind, from_version)] = upgrade


def writer_version() -> str:
    """'frugalml X.Y.Z' of the installed distribution (recorded in every file written)."""
    try:
        from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

        return f"frugalml {version('frugalml')}"
    except (ImportError, PackageNotFoundError):
        return "frugalml (unknown version)"


def written_by(version: int, writer: str | None) -> str:
    """Who wrote a file of this format version, for messages."""
    if writer:
        return writer
    return "frugalml 0.1.0 (before format 2)" if version == 1 else f"a frugalml writing format {version}"


@dataclass
class ModelFile:
    """A model kind's tables plus metadata (feature names, classes, training record)."""

    kind: str
    tables: Any
    meta: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION  # the version the file was read from (FORMAT_VERSION when built)
    writer: str | None = None  # "frugalml X.Y.Z" that wrote the file (None: version-1 file, or not read)

    @property
    def feature_names(self) -> list[str]:
        names = self.meta.get("feature_names")
        n = int(self.tables.n_features)
        return list(names) if names else [f"x{j}" for j in range(n)]

    @property
    def classes(self) -> list[str]:
        return [str(c) for c in self.meta.get("classes") or ["0", "1"]]


def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder not in ("|", "<", "=") else arr.dtype
        arr = arr.astype(dt, copy=False)
        return {"nd": arr.dtype.str, "shape": list(arr.shape), "data": arr.tobytes()}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {str(k): _encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    return obj


# maps and lists nest at most this deep (frugalml writes at most 6, K-class adapt-lin): a deeper file is refused
MAX_DEPTH = 32


def _decode(obj: Any, path: str = "", depth: int = 0) -> Any:
    if depth > MAX_DEPTH and isinstance(obj, (dict, list)):
        where = path if len(path) <= 40 else path[:40] + "..."
        raise ModelFormatError(f"{where}: maps and lists nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, dict):
        key = next((k for k in obj if not isinstance(k, str)), None)
        if key is not None:
            raise ModelFormatError(f"map {path}: key {key!r} is not a string")
        if set(obj) == {"nd", "shape", "data"}:
            dtype, shape, data = obj["nd"], obj["shape"], obj["data"]
            if not isinstance(dtype, str) or dtype not in ALLOWED_DTYPES:  # a list or a map is not hashable
                raise ModelFormatError(f"array {path}: unsupported dtype {dtype!r}")
            # type(s) is int: a bool is an int to isinstance; math.prod: np.prod's int64 wraps on huge shapes
            if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
                raise ModelFormatError(f"array {path}: bad shape {shape!r}")
            if not isinstance(data, bytes):
                raise ModelFormatError(f"array {path}: data is not bytes")
            size = math.prod(shape) * np.dtype(dtype).itemsize
            if size != len(data):
                raise ModelFormatError(f"array {path}: {len(data)} bytes for shape {shape} of {dtype}")
            try:
                return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
            except ValueError:  # a zero-size array with a dimension numpy cannot index, e.g. [0, 2**62]
                raise ModelFormatError(f"array {path}: bad shape {shape!r}") from None
        return {k: _decode(v, f"{path}.{k}", depth + 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)]
    return obj


def dumps(model: ModelFile) -> bytes:
    """Serialize a model file to bytes."""
    if model.kind not in KINDS:
        raise ModelFormatError(f"unknown model kind {model.kind!r}")
    body = msgpack.packb(
        {"kind": model.kind, "tables": _encode(model.tables.to_dict()), "meta": _encode(model.meta),
         "writer": writer_version()},
        use_bin_type=True,
    )
    return HEADER.pack(MAGIC, FORMAT_VERSION, 0, len(body), zlib.crc32(body)) + body


def loads(blob: bytes, source: str = "model") -> ModelFile:
    """Parse and check a model file; raise ModelFormatError on any defect."""
    if len(blob) < HEADER.size:
        raise ModelFormatError(f"{source}: too short to be a frugalml model ({len(blob)} bytes)")
    magic, version, _flags, length, crc = HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise ModelFormatError(f"{source}: not a frugalml model file (bad magic)")
    if version not in READ_VERSIONS:
        newer = " (written by a newer frugalml: upgrade frugalml)" if version > FORMAT_VERSION else ""
        raise ModelFormatError(f"{source}: format version {version} is not supported (this frugalml reads versions "
                               f"{READ_VERSIONS[0]} to {READ_VERSIONS[-1]}){newer}")
    body = blob[HEADER.size :]
    _check_length(len(body), length, source)
    if zlib.crc32(body) != crc:
        raise ModelFormatError(f"{source}: checksum mismatch (file corrupted)")
    try:
        raw = msgpack.unpackb(body, raw=False, strict_map_key=True)
    except Exception as exc:  # noqa: BLE001 - msgpack raises several unrelated types
        raise ModelFormatError(f"{source}: body is not valid msgpack ({type(exc).__name__})") from None
    if not isinstance(raw, dict) or not {"kind", "tables", "meta"} <= set(raw):
        raise ModelFormatError(f"{source}: body must hold kind, tables and meta")
    kind = raw["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise ModelFormatError(f"{source}: unknown model kind {kind!r}")
    if not isinstance(raw["tables"], dict) or not isinstance(raw["meta"], dict):
        raise ModelFormatError(f"{source}: tables and meta must be maps")
    writer = raw.get("writer") if version >= 2 else None
    if writer is not None and not isinstance(writer, str):
        raise ModelFormatError(f"{source}: the writer must be a string")
    try:
        tables = _decode(raw["tables"], "tables")
        meta = _decode(raw["meta"], "meta")
    except ModelFormatError as exc:
        raise ModelFormatError(f"{source}: {exc}") from None
    for v in range(version, FORMAT_VERSION):
        upgrade = UPGRADES.get((kind, v))
        if upgrade is None:
            continue
        try:
            tables = upgrade(tables)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{source}: a format version {version} {kind} file written by "
                                   f"{written_by(version, writer)}: {exc}; retrain it, or re-export it with the "
                                   f"frugalml that wrote it") from None
    try:
        obj = KINDS[kind].from_dict(tables)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{source}: {exc}") from None
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise ModelFormatError(f"{source}: inconsistent tables ({exc})") from None
    _check_meta(meta, int(obj.n_features), source)
    classes = meta.get("classes")
    n_classes = getattr(obj, "n_classes", None)
    if classes is not None and n_classes is not None and len(classes) != int(n_classes):
        raise ModelFormatError(f"{source}: {len(classes)} class labels for tables of {n_classes} classes")
    if classes is not None:
        seen: set[str] = set()
        twice = next((c for c in map(str, classes) if c in seen or seen.add(c)), None)
        if twice is not None:  # two class indices would print one label text (round 68: accepted)
            raise ModelFormatError(f"{source}: class label {twice!r} is listed twice in meta 'classes'")
    return ModelFile(kind=kind, tables=obj, meta=meta, format_version=version, writer=writer)


MAX_FEATURES = UINT32_MAX  # the C runtime's feature counts and indices are uint32_t
MAX_HINT = 1e9  # a code hint (a branch's share in percent, a count) beyond this is no hint frugalml writes
_LABEL = (str, int, float)
# meta entries the readers (eval, predict, inspect, export-c) take as maps: each may be absent, not None
_META_MAPS = ("dataset", "split", "training", "feature_plan")


def label_text(v: str | int | float) -> str:
    """A label of a model file as text: a string as it is, an integer-valued number without a decimal point."""
    if isinstance(v, str):
        return v
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _check_meta(meta: dict[str, Any], n_features: int, source: str) -> None:
    """The meta fields a reader uses have the types the writer gives them (a file written by frugalml always
    passes; this stops a hand-edited or foreign file before it reaches eval, inspect or export-c)."""
    if not 0 <= n_features <= MAX_FEATURES:
        raise ModelFormatError(f"{source}: {n_features} features is out of range (at most {MAX_FEATURES})")

    def labels(key: str, at_least: int) -> None:
        v = meta.get(key)
        if v is not None and (not isinstance(v, list) or len(v) < at_least
                              or not all(isinstance(c, _LABEL) for c in v)):
            least = f"at least {at_least} " if at_least else ""
            raise ModelFormatError(f"{source}: meta {key} must be a list of {least}labels (strings or numbers)")

    labels("classes", 2)
    labels("labels", 0)
    for key in ("classes", "labels"):  # a number as its text, as the data readers give labels (so they sort)
        if meta.get(key) is not None:
            meta[key] = [label_text(c) for c in meta[key]]
    if isinstance(meta.get("positive"), (int, float)):
        meta["positive"] = label_text(meta["positive"])
    names = meta.get("feature_names")
    if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)
                              or len(names) != n_features):
        raise ModelFormatError(f"{source}: meta feature_names must be {n_features} strings, one per feature")
    for key in _META_MAPS:
        if key in meta and not isinstance(meta[key], dict):
            raise ModelFormatError(f"{source}: meta {key} must be a map, got {type(meta[key]).__name__}")
    if meta.get("positive") is not None and not isinstance(meta["positive"], _LABEL):
        raise ModelFormatError(f"{source}: meta positive must be a label (a string or a number)")
    if meta.get("target_column") is not None and not isinstance(meta["target_column"], str):
        raise ModelFormatError(f"{source}: meta target_column must be a string")
    split = meta.get("split")
    if split is not None and not (type(split.get("seed")) is int
                                  and all(isinstance(split.get(k), (int, float)) and 0 < split[k] < 1
                                          for k in ("train", "validation"))):
        raise ModelFormatError(f"{source}: meta split must hold an integer seed and train and validation "
                               "fractions in (0, 1)")
    hints = meta.get("training", {}).get("code_hints")
    if hints is not None and not (isinstance(hints, dict) and all(
            isinstance(v, list) and all(isinstance(x, (int, float)) and abs(x) <= MAX_HINT for x in v)
            for v in hints.values())):  # abs(nan) <= MAX_HINT is False: NaN and infinities are refused too
        raise ModelFormatError(f"{source}: meta training.code_hints must map names to lists of numbers within "
                               f"+-{MAX_HINT:g} (shares and counts the code generator reads)")
    counts = meta.get("validation_class_counts")
    if counts is not None and (not isinstance(counts, list) or not all(type(c) is int for c in counts)):
        raise ModelFormatError(f"{source}: meta validation_class_counts must be a list of integers")


def save(model: ModelFile, path: str | Path) -> int:
    """Write atomically (outfiles.write_file: temp file, then rename); return the number of bytes."""
    return write_file(path, dumps(model))


def _check_size(head: bytes, body_bytes: int, source: str) -> None:
    """The checks of loads() that the header and the file's size decide, before the body is read: a file that is no
    model, or a multi-gigabyte one, is refused without being read in full."""
    if len(head) < HEADER.size:
        return  # loads() says too short
    magic, version, _flags, length, _crc = HEADER.unpack(head)
    if magic != MAGIC or version not in READ_VERSIONS:
        loads(head, source)  # raises: bad magic, or the version
    _check_length(body_bytes, length, source)


def _check_length(body_bytes: int, length: int, source: str) -> None:
    """The body's size against the header's length: a cut file, or bytes appended to a model."""
    if body_bytes < length:
        raise ModelFormatError(f"{source}: truncated ({body_bytes} of {length} body bytes)")
    if body_bytes > length:
        raise ModelFormatError(f"{source}: {body_bytes - length} unexpected bytes after the body")


def load(path: str | Path) -> ModelFile:
    p = Path(path)
    try:
        if p.exists() and not p.is_dir() and not p.is_file():  # /dev/zero, a FIFO: read_bytes would never end
            raise ModelFormatError(f"model path is not a regular file: {p}")
        with p.open("rb") as fh:
            head = fh.read(HEADER.size)
            _check_size(head, os.fstat(fh.fileno()).st_size - HEADER.size, str(p))
            blob = head + fh.read()
    except FileNotFoundError:
        raise ModelFormatError(f"model file not found: {p}") from None
    except IsADirectoryError:
        raise ModelFormatError(f"model path is a directory: {p}") from None
    return loads(blob, source=str(p))
