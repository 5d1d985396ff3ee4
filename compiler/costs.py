"""Per-feature acquisition costs.

A costs file is a CSV with a header: ``feature,cost`` (a constant cost per
feature) or ``feature,c0,c1,c2`` (cost c0 + c1*n + c2*n^2 for an item of size
n). ``feature`` is a feature name or a 0-based column index, or ``*`` for every
feature the file does not name. Every feature needs a cost: a file that leaves
some out without a ``*`` row is an error (listing them), as is a feature named
twice. Rows naming features of the feature library's catalog (and their groups)
that the data do not have are left out: the costs of a wider feature plan price
a plan of some of its features by name. A file that ends in the middle of a line
(no newline at its end) and cannot be used is reported as cut off.

Feature groups: an optional last column ``group`` names the groups a feature
uses (``;`` between several). A row whose name is a group (named in some
group column) gives that group's cost: the cost of an intermediate that
features share (a channel's spectrum, a descriptor), paid once per prediction
however many of its features are read; a feature row then gives the
feature's own cost on top of it::

    feature,cost,group
    c0__spectrum,850,
    c0__fft_centroid,30,c0__spectrum
    c0__fft_dominant_frequency,12,c0__spectrum

``FeatureCosts.coef`` is each feature's cost when read alone (its own cost
plus its groups'), what trainers that charge per feature use (never less
than the truth); ``cost_of`` charges each group once for a set of features.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pyruntime.errors import DataError
from pyruntime.features.catalog import looks_like_group_name, parse_name
from pyruntime.numtext import parse_index, parse_number
from pyruntime.textfiles import not_utf8

START_GROUP = "window__start"  # the window's start: a group every feature uses (compiler/features/profile.py)


class CostsError(ValueError):
    """A costs file that cannot be used."""


@dataclass(frozen=True)
class FeatureCosts:
    """Polynomial cost per feature: coef[j] = (c0, c1, c2), the cost of feature j read alone (with its groups'),
    and, with groups, each feature's own part, the groups' costs and which groups each feature uses."""

    coef: np.ndarray  # shape (n_features, 3), float64
    own_coef: np.ndarray | None = None  # (n_features, 3): the features' own costs (None: coef, no groups)
    group_names: tuple[str, ...] = ()
    group_coef: np.ndarray | None = None  # (n_groups, 3)
    feature_groups: tuple[tuple[int, ...], ...] = ()  # per feature, indices into group_names

    @property
    def has_groups(self) -> bool:
        return bool(self.group_names)

    def cost_of(self, features: list[int] | np.ndarray, size: float = 0.0) -> float:
        """Cost of reading the given features in one prediction: their own costs, each group once."""
        feats = sorted({int(j) for j in np.asarray(features).ravel()})
        if not self.has_groups:
            return float(self.at(size)[feats].sum())
        own = _poly(self.own_coef, size)  # type: ignore[arg-type]
        groups = {g for j in feats for g in self.feature_groups[j]}
        return float(own[feats].sum() + _poly(self.group_coef, size)[sorted(groups)].sum())  # type: ignore[arg-type]

    def marginal(self, chosen: list[int] | np.ndarray, size: float = 0.0) -> np.ndarray:
        """What reading each feature would add to the cost of the ``chosen`` features: its own cost and the
        groups it uses that no chosen feature has paid (a chosen feature: 0)."""
        if not self.has_groups:
            add = self.at(size).copy()
        else:
            paid = {g for j in np.asarray(chosen, dtype=np.int64).ravel() for g in self.feature_groups[int(j)]}
            group = _poly(self.group_coef, size)  # type: ignore[arg-type]
            add = _poly(self.own_coef, size) + np.array(  # type: ignore[arg-type]
                [sum(float(group[g]) for g in gs if g not in paid) for gs in self.feature_groups])
        add[np.asarray(chosen, dtype=np.int64)] = 0.0
        return add

    @classmethod
    def uniform(cls, n_features: int, cost: float = 1.0) -> FeatureCosts:
        return cls.constant(np.full(n_features, float(cost)))

    @classmethod
    def constant(cls, costs: np.ndarray) -> FeatureCosts:
        """Constant costs, one per feature, no groups."""
        c = np.asarray(costs, dtype=np.float64).ravel()
        coef = np.zeros((c.size, 3))
        coef[:, 0] = c
        return cls(coef)

    @property
    def n_features(self) -> int:
        return int(self.coef.shape[0])

    @property
    def is_constant(self) -> bool:
        return bool(np.all(self.coef[:, 1:] == 0))

    @property
    def is_uniform(self) -> bool:
        """Every feature costs the same, whatever the item's size, with no groups."""
        return not self.has_groups and bool(np.all(self.coef == self.coef[:1]))

    def at(self, size: float = 0.0) -> np.ndarray:
        """Cost of every feature (read alone, with its groups) for an item of the given size."""
        return _poly(self.coef, size)


def cost_text(value: float) -> str:
    """A fitted cost as the costs CSV writes it: 12 significant digits, so a fit of whole instruction counts reads
    218, not 217.99999999999997 (far below any count's spread; the trainers read the file's values)."""
    return f"{float(value):.12g}"


def _poly(c: np.ndarray, size: float) -> np.ndarray:
    return c[:, 0] + c[:, 1] * size + c[:, 2] * size * size


def load_costs(path: str | Path, feature_names: list[str]) -> FeatureCosts:
    """Read a costs CSV for a data set with the given feature names. Rows naming features (or groups) of the
    feature library that the data do not have are left out: a file profiled for a wider plan prices a model of
    fewer of its features, taken by name. A file that ends in the middle of a line and cannot be used is
    reported as cut off."""
    p = Path(path)
    if not p.is_file():
        raise CostsError(f"costs file not found: {p}")
    try:
        with p.open(newline="", encoding="utf-8-sig") as fh:  # -sig: a byte-order mark (Excel's CSV) is dropped
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise CostsError(not_utf8(f"costs file {p}", exc)) from None
    rows = list(csv.reader(io.StringIO(text)))
    try:
        return _parse_costs(p, rows, feature_names)
    except CostsError as exc:
        if not text or text.endswith(("\n", "\r")):
            raise
        raise CostsError(_cut_off(p, text, rows, feature_names, str(exc))) from None


def _cut_off(p: Path, text: str, rows: list[list[str]], names: list[str], reason: str) -> str:
    """The error of a file without a newline at its end that cannot be used: most likely cut off (a copy or a
    write interrupted); the features with no complete row (the last line is not one) name what is lost."""
    lines = text.splitlines()
    last = lines[-1] if len(lines[-1]) <= 60 else lines[-1][:57] + "..."
    cut = f"ends in the middle of line {len(lines)} (no newline after {last!r})"
    complete = {r[0].strip() for r in rows[1:-1] if r}
    missing = [n for j, n in enumerate(names) if n not in complete and str(j) not in complete]
    if not missing or "*" in complete:
        return f"{reason}; the file {cut}: if it was cut off, write it again"
    return (f"costs file {p} {cut}: it looks cut off, and {len(missing)} of the {len(names)} features have no "
            f"complete row (the first {missing[0]!r}): write the file again (`frugalml profile-costs ... -o {p}`) or "
            "complete it")


def _parse_costs(p: Path, rows: list[list[str]], feature_names: list[str]) -> FeatureCosts:
    n = len(feature_names)
    coef = FeatureCosts.uniform(n).coef.copy()
    index = {name: j for j, name in enumerate(feature_names)}
    if not rows:
        raise CostsError(f"costs file {p} is empty")
    header = [h.strip().lower() for h in rows[0]]
    grouped = header[-1:] == ["group"]
    if grouped:
        header = header[:-1]
    if header[:2] == ["feature", "cost"] and len(header) == 2:
        cols = 1
    elif header == ["feature", "c0", "c1", "c2"]:
        cols = 3
    else:
        raise CostsError(
            f"costs file {p}: header must be 'feature,cost' or 'feature,c0,c1,c2' (then optionally ',group'), "
            f"got {','.join(rows[0]) or 'an empty first line'}"
        )
    body = [(lineno, row) for lineno, row in enumerate(rows[1:], start=2) if row and any(c.strip() for c in row)]
    for lineno, row in body:
        if len(row) != cols + 1 + grouped:
            raise CostsError(f"costs file {p} line {lineno}: expected {cols + 1 + grouped} fields, got {len(row)}")
    group_names = _group_names(p, body, index) if grouped else []
    gindex = {g: i for i, g in enumerate(group_names)}
    group_coef = np.zeros((len(group_names), 3))
    group_line: dict[int, int] = {}
    feature_groups: dict[int, tuple[int, ...]] = {}
    given: dict[int, int] = {}
    other: list[str] = []  # features and groups of the feature library the data do not use
    default: list[float] | None = None
    default_groups: tuple[int, ...] = ()
    for lineno, row in body:
        name = row[0].strip()
        groups = tuple(gindex[g.strip()] for g in row[-1].split(";") if g.strip()) if grouped else ()
        if name in gindex:
            if groups:
                raise CostsError(f"costs file {p} line {lineno}: group {name!r} is in a group itself (groups do "
                                 "not nest: list every group in the feature's row)")
            if gindex[name] in group_line:
                raise CostsError(f"costs file {p} line {lineno}: group {name!r} already has a cost "
                                 f"(line {group_line[gindex[name]]})")
            group_line[gindex[name]] = lineno
            group_coef[gindex[name], :cols] = _cost_values(p, lineno, row[: cols + 1])
            continue
        if name == "*" and "*" not in index:
            if default is not None:
                raise CostsError(f"costs file {p} line {lineno}: a second '*' row")
            default = _cost_values(p, lineno, row[: cols + 1])
            default_groups = groups
            continue
        if name in index:
            j = index[name]
        else:
            try:
                j = parse_index(name)
            except ValueError:
                if _library_name(name, grouped):
                    other.append(name)
                    continue
                hint = ("; a costs file for raw windows must be profiled for the same feature plan: "
                        "`frugalml profile-costs --on TARGET --channels N --plan FILE`" if "__" in name else "")
                raise CostsError(f"costs file {p} line {lineno}: unknown feature {name!r}{hint}") from None
            if not 0 <= j < n:
                raise CostsError(f"costs file {p} line {lineno}: feature index {j} out of range 0..{n - 1}")
        if j in given:
            raise CostsError(f"costs file {p} line {lineno}: feature {feature_names[j]!r} already has a cost "
                             f"(line {given[j]})")
        given[j] = lineno
        coef[j, :cols] = _cost_values(p, lineno, row[: cols + 1])
        if cols == 1:
            coef[j, 1:] = 0.0
        feature_groups[j] = groups
    missing = [j for j in range(n) if j not in given]
    if missing and default is None:
        raise CostsError(_missing(p, feature_names, missing, other, grouped))
    for j in missing:
        coef[j, :] = 0.0
        coef[j, :cols] = default
        feature_groups[j] = default_groups
    if not grouped:
        return FeatureCosts(coef)
    fg = tuple(feature_groups[j] for j in range(n))
    priced = {group_names[i] for i in group_line}
    if other:  # the groups only the left-out rows use are not the data's
        group_names, group_coef, fg = _used_groups(group_names, group_coef, fg)
    unpriced = [g for g in group_names if g not in priced]
    if unpriced:
        raise CostsError(f"costs file {p}: group {unpriced[0]!r} has no cost row (add a row '{unpriced[0]},COST,')")
    alone = coef + np.array([group_coef[list(g)].sum(axis=0) if g else np.zeros(3) for g in fg])
    return FeatureCosts(alone, coef, tuple(group_names), group_coef, fg)


def _missing(p: Path, names: list[str], missing: list[int], other: list[str], grouped: bool) -> str:
    """The error of features without a cost, the first named first; a file of another (wider) plan, or one cut
    short, says so."""
    listed = ", ".join(names[j] for j in missing[:5]) + (", ..." if len(missing) > 5 else "")
    extra = [n for n in other if not _group_like(n)]
    why = (f"; it names {len(extra)} other feature{'s' * (len(extra) != 1)} (profiled for another feature plan)"
           if extra else "")
    again = ("; or profile this plan: `frugalml profile-costs --on TARGET --channels N --plan FILE`" if extra
             else "; if profile-costs wrote it, it was cut short: write it again" if grouped else "")
    return (f"costs file {p} gives no cost for {len(missing)} of the {len(names)} features ({listed}){why}: add a "
            f"row for each, or a row '*' with the cost of every feature not named{again}")


def _library_name(name: str, grouped: bool) -> bool:
    """A feature of the feature library's catalog (c1__fft_centroid), or in a file with groups one of its groups
    (c1__spectrum, window__start): a costs file profiled for a wider plan names those the data do not use."""
    try:
        parse_name(name)
    except DataError:
        return grouped and _group_like(name)
    return True


def _group_like(name: str) -> bool:
    return name == START_GROUP or looks_like_group_name(name)


def _used_groups(names: list[str], coef: np.ndarray, fg: tuple[tuple[int, ...], ...]
                 ) -> tuple[list[str], np.ndarray, tuple[tuple[int, ...], ...]]:
    """Only the groups some feature uses, in their order, and the features' group indices into them."""
    used = sorted({g for groups in fg for g in groups})
    new = {g: i for i, g in enumerate(used)}
    return [names[g] for g in used], coef[used], tuple(tuple(new[g] for g in groups) for groups in fg)


def _group_names(p: Path, body: list[tuple[int, list[str]]], index: dict[str, int]) -> list[str]:
    """The groups named in the group column, in first-use order; a group may not share a feature's name."""
    names: dict[str, None] = {}
    for lineno, row in body:
        for g in (g.strip() for g in row[-1].split(";")):
            if not g:
                continue
            if g in index or g == "*":
                raise CostsError(f"costs file {p} line {lineno}: group {g!r} has the name of a feature")
            names.setdefault(g, None)
    return list(names)


MAX_COST = 1e30  # a million features at this cost still sum below float32's 3.4e38


def _cost_values(p: Path, lineno: int, row: list[str]) -> list[float]:
    try:
        vals = [parse_number(v) for v in row[1:]]
    except ValueError:
        raise CostsError(f"costs file {p} line {lineno}: cost is not a number") from None
    if not all(np.isfinite(vals)) or any(v < 0 for v in vals):
        raise CostsError(f"costs file {p} line {lineno}: costs must be finite and >= 0")
    if any(v > MAX_COST for v in vals):
        raise CostsError(f"costs file {p} line {lineno}: costs must be at most {MAX_COST:g} (sums of larger ones "
                         "overflow the float32 tables)")
    lost = [v for v in vals if v != 0 and np.float32(v) == 0]
    if lost:  # every cost silently became 0 (round 68)
        raise CostsError(f"costs file {p} line {lineno}: cost {lost[0]:g} rounds to 0 in float32, the tables' "
                         f"precision: give 0 or at least {float(np.finfo(np.float32).smallest_subnormal):.2g}")
    return vals


def cost_vector(costs: FeatureCosts | np.ndarray | list | None, n_features: int, size: float = 0.0) -> np.ndarray:
    """Per-feature cost vector (float64, length n_features) for items of the given size, from None
    (every feature costs 1), FeatureCosts or an array; ValueError on a wrong length or a negative or
    non-finite cost."""
    if costs is None:
        return np.ones(n_features)
    c = costs.at(size) if isinstance(costs, FeatureCosts) else np.asarray(costs, dtype=np.float64).ravel()
    if c.shape != (n_features,):
        raise ValueError(f"costs must have one entry per feature ({n_features}), got {c.shape[0]}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("costs must be finite and >= 0")
    return c.astype(np.float64)
