"""Raw sensor windows: the UEA/UCR ``.ts`` format and NPZ with a 3-D X (n x channels x length).

A ``.ts`` file has ``#`` comments, a header of ``@`` lines (``@problemName``, ``@timeStamps false``,
``@missing``, ``@univariate``, ``@dimensions N``, ``@equalLength true|false``, ``@seriesLength L``,
``@classLabel true LABEL...``) and after ``@data`` one line per case: the channels separated by ``:``, each a
comma-separated series, then the class label. Series may have different lengths from case to case (the channels
of one case have one length). Every problem raises DataError with one line: a malformed or missing header entry,
time stamps, missing values (``?``), a case with another channel count or a declared length it breaks, a label
not declared, a value that is not a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pyruntime.arrays import float32_zeroed, float32_zeroed_text
from pyruntime.errors import DataError
from pyruntime.numtext import is_number, parse_index, parse_number
from pyruntime.textfiles import not_utf8

BOOL_KEYS = ("timestamps", "missing", "univariate", "equallength", "classlabel")


@dataclass
class Windows:
    """Raw windows of one data set: series[i] is (channels, length_i) float32."""

    series: list[np.ndarray]
    y: np.ndarray  # labels as given (strings)
    n_channels: int
    name: str

    @property
    def lengths(self) -> np.ndarray:
        return np.array([s.shape[1] for s in self.series], dtype=np.int64)


def _flag(path: Path, lineno: int, key: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise DataError(f"{path} line {lineno}: @{key} must be true or false, got {value.strip()!r}")
    return v == "true"


def _header(path: Path, lines: list[str]) -> tuple[dict[str, object], int]:
    """The header entries and the index of the first data line."""
    head: dict[str, object] = {}
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not line.startswith("@"):
            raise DataError(f"{path} line {i + 1}: data before @data (a .ts header ends with a line @data)")
        parts = line[1:].split(None, 1) or [""]  # a tab after the key separates as a space does; "@" alone: no key
        key, value = parts[0].lower(), (parts[1] if len(parts) > 1 else "")
        if key == "data":
            if value.strip():
                raise DataError(f"{path} line {i + 1}: text after @data ({value.strip()[:40]!r}): the cases start "
                                "on the next line")
            return head, i + 1
        if key in ("timestamps", "missing", "univariate", "equallength"):
            head[key] = _flag(path, i + 1, key, value)
        elif key == "classlabel":
            parts = value.split()
            if not parts:
                raise DataError(f"{path} line {i + 1}: @classLabel needs true LABEL... or false")
            head[key] = _flag(path, i + 1, key, parts[0])
            head["labels"] = parts[1:]
            if head[key] and not parts[1:]:
                raise DataError(f"{path} line {i + 1}: @classLabel true lists no labels")
        elif key in ("dimensions", "serieslength"):
            try:
                n = parse_index(value)
            except ValueError:
                raise DataError(f"{path} line {i + 1}: @{key} must be a positive integer, got "
                                f"{value.strip()!r}") from None
            if n < 1:
                raise DataError(f"{path} line {i + 1}: @{key} must be a positive integer, got {n}")
            head[key] = n
        elif key in ("problemname", "targetlabel"):
            head[key] = value.strip()
        else:
            raise DataError(f"{path} line {i + 1}: unknown header entry @{key}")
    raise DataError(f"{path}: no @data line (not a .ts file?)")


def read_ts(path: Path, labels_needed: bool = True) -> Windows:
    """The windows of a UEA/UCR .ts file. With ``labels_needed`` False (predict, --embed), a file with
    @classLabel false is read too: its lines hold the channels only, every label is ""."""
    try:
        # -sig: a byte-order mark is dropped; lines end at \n, \r\n or \r only (str.splitlines also breaks at a
        # form feed, \x1c-\x1e, \x85 or \u2028 inside a line: one case read as two, the later lines misnumbered)
        lines = re.split(r"\r\n|\r|\n", path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DataError(not_utf8(str(path), exc)) from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None
    head, first = _header(path, lines)
    if head.get("timestamps"):
        raise DataError(f"{path}: @timeStamps true is not supported (give the series without time stamps)")
    labelled = bool(head.get("classlabel"))
    if not labelled and labels_needed:
        raise DataError(f"{path}: @classLabel must be true with the class labels (training needs labels)")
    labels = set(head.get("labels", []))  # type: ignore[arg-type]  # no @classLabel line: no labels
    dims = head.get("dimensions")
    if head.get("univariate") and dims not in (None, 1):
        raise DataError(f"{path}: @univariate true with @dimensions {dims}")
    if head.get("univariate"):
        dims = 1
    equal = bool(head.get("equallength", False))
    # @seriesLength binds every case unless the header says @equalLength false (then the length of none)
    length = head.get("serieslength") if head.get("equallength", True) else None
    series: list[np.ndarray] = []
    y: list[str] = []
    for i in range(first, len(lines)):
        line = lines[i].strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(":")
        label, chans = (parts[-1].strip(), parts[:-1]) if labelled else ("", parts)
        where = f"{path} line {i + 1}"
        if not chans:
            raise DataError(f"{where}: expected CHANNEL:...:LABEL")
        # a label candidate is one word that is not a number: a series (commas) or a '?' is a channel's fault
        last = chans[-1].strip()
        if not labelled and len(chans) > 1 and "," not in last and "?" not in last and not is_number(last):
            raise DataError(f"{where}: the last field {last[:40]!r} is not a series of numbers: if it is "
                            "the class label, the header needs '@classLabel true LABEL...' ("
                            f"{'not @classLabel false' if 'classlabel' in head else 'it has no @classLabel line'})")
        if dims is None:
            dims = len(chans)
        if len(chans) != dims:
            said = "@univariate true" if head.get("univariate") else f"@dimensions {dims}"
            raise DataError(f"{where}: {len(chans)} channels, the header says {said}")
        if labelled and label not in labels:
            note = ("; '#' starts a comment only at the beginning of a line" if "#" in label else "")
            raise DataError(f"{where}: label {label!r} is not one of @classLabel ({', '.join(sorted(labels))}){note}")
        if any("?" in c for c in chans):  # in a sample, not in the label
            raise DataError(f"{where}: missing values ('?') are not supported")
        try:
            rows = [np.array([parse_number(v) for v in c.split(",")], dtype=np.float64) for c in chans]
        except ValueError:
            bad = next(v for c in chans for v in c.split(",") if not is_number(v))
            what = ("an empty value (a doubled or trailing comma?)" if not bad.strip()
                    else f"value {bad.strip()[:40]!r}")
            raise DataError(f"{where}: a value is not a number: {what}") from None
        n = {r.size for r in rows}
        if len(n) != 1:
            raise DataError(f"{where}: the channels have different lengths ({', '.join(map(str, sorted(n)))})")
        if length is not None and rows[0].size != length:
            raise DataError(f"{where}: series of length {rows[0].size}, the header says @seriesLength {length}")
        if equal and series and rows[0].size != series[0].shape[1]:
            raise DataError(f"{where}: series of length {rows[0].size} where the first case's is "
                            f"{series[0].shape[1]}; the header says @equalLength true")
        series.append(_float32(np.stack(rows), where))
        y.append(label)
    if not series:
        raise DataError(f"{path}: no cases after @data")
    return Windows(series, np.array(y, dtype=str), int(dims), str(path))  # type: ignore[arg-type]


def _float32(x: np.ndarray, where: str) -> np.ndarray:
    if not np.all(np.isfinite(x)):
        raise DataError(f"{where}: a sample is NaN or infinite")
    with np.errstate(over="ignore"):
        out = x.astype(np.float32)
    if not np.all(np.isfinite(out)):
        raise DataError(f"{where}: a sample is too large for float32")
    lost = float32_zeroed(x, out)
    if np.any(lost):
        raise DataError(f"{where}: a sample " + float32_zeroed_text(x[lost][0], "samples", "scale the series"))
    return out


def windows_from_array(X: np.ndarray, y: np.ndarray, name: str) -> Windows:
    """Windows of a 3-D array (n, channels, length) with n labels."""
    if X.ndim != 3 or min(X.shape) == 0:
        raise DataError(f"{name}: X of raw windows must be n x channels x length, got shape {X.shape}")
    if len(y) != X.shape[0]:
        raise DataError(f"{name}: {X.shape[0]} windows but {len(y)} labels")
    try:
        X = X.astype(np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name}: X is not numeric") from None
    series = [_float32(X[i], f"{name}: window {i + 1}") for i in range(X.shape[0])]
    return Windows(series, np.asarray(y), int(X.shape[1]), name)
