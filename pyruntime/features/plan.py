"""A feature plan: which features of a raw window make the columns of the feature matrix.

A plan is a number of channels and a list of features (catalog.FeatureSpec), named tsfresh-style. It is
stored in a model file's meta (``feature_plan``), so ``eval``, ``predict`` and ``export-c --embed`` turn the
same windows into the same columns. ``--features SPEC`` picks it: a named set (``default``) or a file with one
feature name per line (``#`` comments and blank lines ignored).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pyruntime.errors import DataError
from pyruntime.features.catalog import E_CHANNEL, MAX_CHANNELS, MAX_LEN, FeatureSpec, group_name, parse_name
from pyruntime.textfiles import not_utf8

NAMED_SETS = ("default", "basic")
DEFAULT_LAGS = (1, 4)
DEFAULT_BANDS = 4
DEFAULT_DECIMATIONS = (2, 4, 8)


@dataclass(frozen=True)
class FeaturePlan:
    n_channels: int
    features: tuple[FeatureSpec, ...]

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def min_len(self) -> int:
        """The shortest window every feature takes (1 for a plan of no features)."""
        return max((f.min_len() for f in self.features), default=1)

    @property
    def max_len(self) -> int:
        """The longest window every feature takes (MAX_LEN, or less with a spectrum over MAX_FFT points)."""
        return min((f.max_len() for f in self.features), default=MAX_LEN)

    def groups(self) -> list[tuple[int, int]]:
        """Every group some feature uses, in first-use order."""
        seen: dict[tuple[int, int], None] = {}
        for f in self.features:
            for g in f.groups():
                seen.setdefault(g, None)
        return list(seen)

    def group_names(self) -> list[str]:
        return [group_name(g) for g in self.groups()]

    def to_meta(self) -> dict[str, Any]:
        return {"n_channels": self.n_channels, "features": self.names}

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> FeaturePlan:
        try:
            return from_names([str(n) for n in meta["features"]], int(meta["n_channels"]), "the model's feature plan")
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"the model's feature plan is malformed ({exc})") from None


def basic_plan(n_channels: int, decimations: tuple[int, ...] = (), window_spectrum: bool = True) -> FeaturePlan:
    """Per channel: the one-pass statistics, std, mean crossing rate, autocorrelation at lags 1 and 4, four band
    energies, dominant frequency and centroid (and the same six spectral features of the block means of each of
    ``decimations``; without ``window_spectrum`` only those); per full triple of channels (c0-c2, c3-c5, ...):
    magnitude mean and maximum and the three pairwise correlations. Without decimations: the named set ``basic``
    (the default before round 16)."""
    feats: list[FeatureSpec] = []
    for c in range(n_channels):
        feats += [FeatureSpec(i, c) for i in (0, 1, 2, 3, 4, 5, 6)]
        feats += [FeatureSpec(7, c, param=lag) for lag in DEFAULT_LAGS]
        for dec in ((0,) if window_spectrum else ()) + tuple(decimations):
            feats += [FeatureSpec(8, c, param=b, param2=DEFAULT_BANDS, decimate=dec) for b in range(DEFAULT_BANDS)]
            feats += [FeatureSpec(9, c, decimate=dec), FeatureSpec(10, c, decimate=dec)]
    for c in range(0, n_channels - 2, 3):
        feats += [FeatureSpec(11, c), FeatureSpec(12, c)]
        feats += [FeatureSpec(13, a, channel2=b) for a, b in ((c, c + 1), (c, c + 2), (c + 1, c + 2))]
    return FeaturePlan(n_channels, tuple(feats))


def default_plan(n_channels: int, min_len: int | None = None, max_len: int | None = None) -> FeaturePlan:
    """The basic plan with each channel's spectral features also of its block means of 2, 4 and 8 samples: the
    low frequencies at the window's resolution for about 1/2, 1/4, 1/8 of the FFT's work (docs/features.md). A
    model computes on the device only the features it reads, so the wider plan costs a prediction nothing it does
    not use. ``min_len`` (the data's shortest window): only the decimations whose four bands that window affords
    (5 D samples: D = 2 from 10 samples, 4 from 20, 8 from 40); under 6 samples also none of the window's own
    features it is too short for (lag-4 autocorrelation from 6, the four bands from 5, the spectrum, std, crossing
    rate and lag 1 from 2), so the default plan takes every short window the library takes. ``max_len`` (the
    longest): only the spectra of at most MAX_FFT points (the window's own up to 1,024 samples, block means of 2
    up to 2,049), so it takes every window the library does (up to MAX_LEN)."""
    band = FeatureSpec(8, 0, param=0, param2=DEFAULT_BANDS)
    fits = [d for d in DEFAULT_DECIMATIONS
            if (min_len is None or min_len >= replace(band, decimate=d).min_len())
            and (max_len is None or max_len <= replace(band, decimate=d).max_len())]
    plan = basic_plan(n_channels, tuple(fits), max_len is None or max_len <= band.max_len())
    if min_len is None or min_len >= plan.min_len:
        return plan
    return FeaturePlan(n_channels, tuple(f for f in plan.features if f.min_len() <= min_len))


def from_names(names: list[str], n_channels: int, source: str) -> FeaturePlan:
    if not names:
        raise DataError(f"{source}: no features listed")
    feats = []
    for name in names:
        spec = parse_name(name)
        if spec.check(n_channels) == E_CHANNEL:
            raise DataError(f"{source}: feature {name!r} reads channel {max(spec.channels_read())}, the data has "
                            f"{n_channels} channel(s) (c0..c{n_channels - 1})")
        feats.append(spec)
    seen: set[str] = set()
    for f in feats:
        if f.name in seen:
            raise DataError(f"{source}: feature {f.name!r} listed twice")
        seen.add(f.name)
    return FeaturePlan(n_channels, tuple(feats))


def resolve(spec: str | None, n_channels: int, min_len: int | None = None,
            max_len: int | None = None) -> FeaturePlan:
    """The plan of ``--features SPEC`` (None: default) for data with n_channels channels whose shortest window has
    ``min_len`` samples and longest ``max_len`` (None: any length; the default plan's spectra of block means need
    10 to 40, the window's own spectrum at most 1,024)."""
    if n_channels > MAX_CHANNELS:  # the C library refuses every window of more (FM_E_ARG): train nothing it can't run
        raise DataError(f"the windows have {n_channels} channels; the device's feature library takes at most "
                        f"{MAX_CHANNELS} (FM_FEAT_MAX_CHANNELS): keep the channels the task needs, or combine them")
    if spec is None or spec == "default":
        return default_plan(n_channels, min_len, max_len)
    if spec == "basic":
        return basic_plan(n_channels)
    path = Path(spec)
    if not path.is_file():
        raise DataError(f"feature plan {spec!r}: neither a named set ({', '.join(NAMED_SETS)}) nor a file of "
                        "feature names")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is not part of the first name
    except UnicodeDecodeError as exc:
        raise DataError(not_utf8(f"feature plan {spec}", exc)) from None
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return from_names([n for n in lines if n], n_channels, str(path))
