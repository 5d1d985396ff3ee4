"""The frugalml model file: a versioned, checksummed msgpack container.

Layout (little endian)::

    offset  size  field
    0       8     magic b"FRUGALML"
    8       2     format version (uint16), currently 1
    10      2     flags (uint16), 0
    12      4     body length in bytes (uint32)
    16      4     CRC-32 of the body (uint32)
    20      n     body: msgpack map {"kind": str, "tables": map, "meta": map}

numpy arrays inside ``tables`` are maps {"nd": dtype string, "shape": [...],
"data": raw little-endian bytes}. Every failure to read raises
ModelFormatError with a one-line reason; nothing is returned half-checked.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgpack
import numpy as np

from pyruntime.errors import ModelFormatError

MAGIC = b"FRUGALML"
FORMAT_VERSION = 1
HEADER = struct.Struct("<8sHHII")
ALLOWED_DTYPES = {"<f4", "<f8", "<i4", "<u4", "<i2", "<u2", "|u1", "|i1", "<i8", "<u8"}


class Tables(Protocol):
    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tables: ...


KINDS: dict[str, type] = {}


def register_kind(kind: str, cls: type) -> None:
    """Make a model kind readable: cls has to_dict() and classmethod from_dict()."""
    KINDS[kind] = cls


@dataclass
class ModelFile:
    """A model kind's tables plus metadata (feature names, classes, training record)."""

    kind: str
    tables: Any
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def feature_names(self) -> list[str]:
        names = self.meta.get("feature_names")
        n = int(self.tables.n_features)
        return list(names) if names else [f"x{j}" for j in range(n)]

    @property
    def classes(self) -> list[str]:
        return [str(c) for c in self.meta.get("classes", ["0", "1"])]


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


def _decode(obj: Any, path: str = "") -> Any:
    if isinstance(obj, dict):
        if set(obj) == {"nd", "shape", "data"}:
            dtype, shape, data = obj["nd"], obj["shape"], obj["data"]
            if dtype not in ALLOWED_DTYPES:
                raise ModelFormatError(f"array {path}: unsupported dtype {dtype!r}")
            if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
                raise ModelFormatError(f"array {path}: bad shape {shape!r}")
            if not isinstance(data, bytes):
                raise ModelFormatError(f"array {path}: data is not bytes")
            size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            if size != len(data):
                raise ModelFormatError(f"array {path}: {len(data)} bytes for shape {shape} of {dtype}")
            return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
        return {k: _decode(v, f"{path}.{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    return obj


def dumps(model: ModelFile) -> bytes:
    """Serialize a model file to bytes."""
    if model.kind not in KINDS:
        raise ModelFormatError(f"unknown model kind {model.kind!r}")
    body = msgpack.packb(
        {"kind": model.kind, "tables": _encode(model.tables.to_dict()), "meta": _encode(model.meta)},
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
    if version != FORMAT_VERSION:
        raise ModelFormatError(
            f"{source}: format version {version} is not supported (this frugalml reads version {FORMAT_VERSION})"
        )
    body = blob[HEADER.size :]
    if len(body) < length:
        raise ModelFormatError(f"{source}: truncated ({len(body)} of {length} body bytes)")
    if len(body) > length:
        raise ModelFormatError(f"{source}: {len(body) - length} unexpected bytes after the body")
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
    tables = _decode(raw["tables"], "tables")
    meta = _decode(raw["meta"], "meta")
    try:
        obj = KINDS[kind].from_dict(tables)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{source}: {exc}") from None
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise ModelFormatError(f"{source}: inconsistent tables ({exc})") from None
    return ModelFile(kind=kind, tables=obj, meta=meta)


def save(model: ModelFile, path: str | Path) -> int:
    """Write atomically (temp file, then rename); return the number of bytes."""
    blob = dumps(model)
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_bytes(blob)
    tmp.replace(p)
    return len(blob)


def load(path: str | Path) -> ModelFile:
    p = Path(path)
    try:
        blob = p.read_bytes()
    except FileNotFoundError:
        raise ModelFormatError(f"model file not found: {p}") from None
    except IsADirectoryError:
        raise ModelFormatError(f"model path is a directory: {p}") from None
    return loads(blob, source=str(p))
