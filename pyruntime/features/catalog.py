"""The catalog of the C feature library (runtime_c/include/features/fm_features.h): feature ids, groups,
tsfresh-style names and the facts the C checks (parameters, channels, shortest window).

A feature's name is ``CHANNELS__NAME[__PARAM_VALUE...]``: ``c0__mean``, ``c2__autocorrelation__lag_3``,
``c1__fft_band_energy__band_0__bands_4``, ``c0_c1_c2__magnitude_mean`` (three consecutive channels),
``c0_c3__correlation`` (two channels).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyruntime.errors import DataError

MAX_LEN = 4096
MAX_FFT = 1024
MAX_CHANNELS = 64

# status codes of the feature calls (pyruntime/errors.py mirrors frugalml.h)
OK, E_WINDOW, E_SAMPLE, E_CHANNEL, E_FEATURE, E_VALUE = 0, -6, -7, -8, -9, -3

# group kinds (fm_group_kind): a channel's spectrum at decimation 2, 4, 8 is its own group
PASS, CENTERED, SPECTRUM, MAGNITUDE, SPECTRUM_D2, SPECTRUM_D4, SPECTRUM_D8 = 0, 1, 2, 3, 4, 5, 6
GROUP_NAMES = {PASS: "pass", CENTERED: "centered", SPECTRUM: "spectrum", MAGNITUDE: "magnitude",
               SPECTRUM_D2: "spectrum__decimate_2", SPECTRUM_D4: "spectrum__decimate_4",
               SPECTRUM_D8: "spectrum__decimate_8"}
SPECTRAL_IDS = (8, 9, 10)
# The one table of the spectra: each spectrum group kind and its decimation, the block means of D samples (0: the
# window itself); the decimations, the shift (log2 D, 0 for none) and the kind of a decimation derive from it.
SPECTRUM_KINDS = {SPECTRUM: 0, SPECTRUM_D2: 2, SPECTRUM_D4: 4, SPECTRUM_D8: 8}
# the optional parameter of the spectral features: the spectrum of block means of D samples
DECIMATIONS = tuple(d for d in SPECTRUM_KINDS.values() if d)
_KIND_OF = {d: kind for kind, d in SPECTRUM_KINDS.items()}
_SHIFT_OF = {d: max(d.bit_length() - 1, 0) for d in _KIND_OF}


def shift_of(decimate: int) -> int:
    """log2 of the decimation (0 for none)."""
    return _SHIFT_OF[decimate]


def spectrum_kind(decimate: int) -> int:
    """The group kind of a channel's spectrum at a decimation (fm_feat_spectrum_kind)."""
    return _KIND_OF[decimate]


@dataclass(frozen=True)
class FeatureKind:
    id: int
    name: str
    params: tuple[str, ...]  # parameter names in name order ("lag"; "band", "bands")
    channels: int  # 1 per-channel, 2 a pair, 3 a 3-axis sensor
    tier: int  # 1 one pass, 2 two passes or a product loop, 3 an FFT
    what: str


KINDS = (
    FeatureKind(0, "mean", (), 1, 1, "mean of the window"),
    FeatureKind(1, "standard_deviation", (), 1, 2, "sqrt(mean (x - mean)^2)"),
    FeatureKind(2, "minimum", (), 1, 1, "smallest sample"),
    FeatureKind(3, "maximum", (), 1, 1, "largest sample"),
    FeatureKind(4, "root_mean_square", (), 1, 1, "sqrt(mean x^2)"),
    FeatureKind(5, "peak_to_peak", (), 1, 1, "maximum - minimum"),
    FeatureKind(6, "mean_crossing_rate", (), 1, 2, "sign changes of x - mean per step"),
    FeatureKind(7, "autocorrelation", ("lag",), 1, 2, "sum d[t] d[t+lag] / sum d^2, d = x - mean; lag >= 1"),
    FeatureKind(8, "fft_band_energy", ("band", "bands"), 1, 3,
                "share of the spectrum's energy in band `band` of `bands` equal bands; 0 <= band < bands <= 512"
                "; optional decimate_D (D = 2, 4, 8): the spectrum of the block means of D samples"),
    FeatureKind(9, "fft_dominant_frequency", (), 1, 3, "bin of largest power / nfft (cycles per sample)"
                "; optional decimate_D"),
    FeatureKind(10, "fft_centroid", (), 1, 3, "power-weighted mean bin / nfft (cycles per sample)"
                "; optional decimate_D"),
    FeatureKind(11, "magnitude_mean", (), 3, 2, "mean of sqrt(x^2 + y^2 + z^2) over three consecutive channels"),
    FeatureKind(12, "magnitude_maximum", (), 3, 2, "largest sqrt(x^2 + y^2 + z^2)"),
    FeatureKind(13, "correlation", (), 2, 2, "Pearson correlation of two channels"),
)
BY_NAME = {k.name: k for k in KINDS}
BY_ID = {k.id: k for k in KINDS}
TIER_TEXT = {1: "one pass over a channel (group pass)",
             2: "a second pass over the centred channel, a product loop or a magnitude",
             3: "one FFT of the channel (group spectrum, shared by every spectral feature of the channel; with "
                "decimate_D one FFT of its block means of D samples, group spectrum__decimate_D)"}


@dataclass(frozen=True)
class FeatureSpec:
    """One feature: the fields of the C fm_feat_spec."""

    id: int
    channel: int
    channel2: int = 0
    param: int = 0
    param2: int = 0
    decimate: int = 0  # spectral features: 0 (the window) or 2, 4, 8 (its block means of that many samples)

    @property
    def kind(self) -> FeatureKind:
        return BY_ID[self.id]

    @property
    def name(self) -> str:
        k = self.kind
        if k.channels == 3:
            chans = "_".join(f"c{self.channel + i}" for i in range(3))
        elif k.channels == 2:
            chans = f"c{self.channel}_c{self.channel2}"
        else:
            chans = f"c{self.channel}"
        values = (self.param, self.param2)
        params = "".join(f"__{p}_{values[i]}" for i, p in enumerate(k.params))
        if self.decimate:
            params += f"__decimate_{self.decimate}"
        return f"{chans}__{k.name}{params}"

    def c_init(self) -> str:
        """The C initializer of this fm_feat_spec: ``{id, channel, channel2, param, param2, decimate}``."""
        return (f"{{{self.id}u, {self.channel}u, {self.channel2}u, {self.param}u, {self.param2}u, "
                f"{self.decimate}u}}")

    def channels_read(self) -> tuple[int, ...]:
        k = self.kind
        if k.channels == 3:
            return (self.channel, self.channel + 1, self.channel + 2)
        if k.channels == 2:
            return (self.channel, self.channel2)
        return (self.channel,)

    def min_len(self) -> int:
        """Shortest window the feature accepts (fm_feat_min_len)."""
        if self.id in (0, 2, 3, 4, 5, 11, 12):
            return 1
        if self.id == 7:
            return self.param + 2
        shift = self._shift()
        if self.id == 8:
            p = 2
            while p < 2 * self.param2:
                p *= 2
            return (p // 2 + 1) << shift
        return 2 << shift if self.id in SPECTRAL_IDS else 2

    def max_len(self) -> int:
        """Longest window the feature accepts: MAX_LEN, or for a spectral feature the longest whose spectrum
        (of the window, or of its block means of D samples: len // D of them) has at most MAX_FFT points."""
        if self.id not in SPECTRAL_IDS:
            return MAX_LEN
        return min(((MAX_FFT + 1) << self._shift()) - 1, MAX_LEN)

    def _shift(self) -> int:
        """log2 of the block-mean length D (0: the window itself; an unknown D, refused by check, counts as 0)."""
        return shift_of(self.decimate) if self.decimate in (0, *DECIMATIONS) else 0

    def groups(self) -> tuple[tuple[int, int], ...]:
        """The (group kind, channel) pairs the feature uses, in the order the C runs them (fm_feat_groups)."""
        c = self.channel
        if self.id in (0, 2, 3, 4, 5):
            return ((PASS, c),)
        if self.id in (1, 6, 7):
            return ((PASS, c), (CENTERED, c))
        if self.id in SPECTRAL_IDS:
            return ((PASS, c), (spectrum_kind(self.decimate), c))
        if self.id in (11, 12):
            return ((PASS, c), (PASS, c + 1), (PASS, c + 2), (MAGNITUDE, c))
        return ((PASS, c), (CENTERED, c), (PASS, self.channel2), (CENTERED, self.channel2))

    def check(self, n_channels: int) -> int:
        """fm_feat_check: OK, E_FEATURE (a bad parameter) or E_CHANNEL."""
        if self.id not in BY_ID or (self.id == 7 and self.param == 0):
            return E_FEATURE
        if self.decimate and (self.id not in SPECTRAL_IDS or self.decimate not in DECIMATIONS):
            return E_FEATURE
        if self.id == 8 and (self.param2 == 0 or self.param >= self.param2 or self.param2 > MAX_FFT // 2):
            return E_FEATURE
        if self.id == 13 and self.channel2 == self.channel:
            return E_FEATURE
        return E_CHANNEL if max(self.channels_read()) >= n_channels else OK


def group_name(group: tuple[int, int]) -> str:
    """Name of a group: ``c0__spectrum``, ``c0_c1_c2__magnitude``."""
    kind, c = group
    chans = "_".join(f"c{c + i}" for i in range(3)) if kind == MAGNITUDE else f"c{c}"
    return f"{chans}__{GROUP_NAMES[kind]}"


_GROUP_CHANNELS = re.compile(r"c[0-9]+(?:_c[0-9]+){0,2}")


def looks_like_group_name(text: str) -> bool:
    """Whether text has the form of a group's name (group_name's: one to three channels, a group kind), as a costs
    file profiled for another plan names its groups."""
    chans, _, kind = text.partition("__")
    return bool(_GROUP_CHANNELS.fullmatch(chans)) and kind in GROUP_NAMES.values()


_CHANNELS = re.compile(r"^c[0-9]+(?:_c[0-9]+)*$")  # ASCII digits: int() would take "٣" too


def parse_name(text: str) -> FeatureSpec:
    """The FeatureSpec of a tsfresh-style name; DataError (one line) for an unknown name or parameter."""
    parts = text.strip().split("__")
    if len(parts) < 2 or not _CHANNELS.match(parts[0]):
        raise DataError(f"feature {text!r}: not a feature name (e.g. c0__mean, c1__autocorrelation__lag_2; "
                        "`frugalml features` lists them)")
    chans = [int(c[1:]) for c in parts[0].split("_")]
    kind = BY_NAME.get(parts[1])
    if kind is None:
        raise DataError(f"feature {text!r}: unknown feature {parts[1]!r} (`frugalml features` lists them)")
    given = {}
    optional = ("decimate",) if kind.id in SPECTRAL_IDS else ()
    for part in parts[2:]:
        key, _, value = part.rpartition("_")
        if not key or not (value.isascii() and value.isdigit()):
            raise DataError(f"feature {text!r}: parameter {part!r} is not NAME_INTEGER (e.g. lag_2)")
        if key in optional and key not in given:
            if int(value) not in DECIMATIONS:
                raise DataError(f"feature {text!r}: decimate is 2, 4 or 8 (leave it out for the window itself)")
            given[key] = int(value)
            continue
        if key not in kind.params or key in given:
            takes = (*kind.params, *(f"{o} (optional)" for o in optional))
            raise DataError(f"feature {text!r}: {kind.name} has no parameter {key!r}"
                            + (f" (it takes {', '.join(takes)})" if takes else " (it takes none)"))
        given[key] = int(value)
    missing = [p for p in kind.params if p not in given]
    if missing:
        raise DataError(f"feature {text!r}: {kind.name} needs {', '.join(missing)}")
    if len(chans) != kind.channels:
        raise DataError(f"feature {text!r}: {kind.name} reads {kind.channels} channel(s), the name gives {len(chans)}")
    if kind.channels == 3 and chans != [chans[0], chans[0] + 1, chans[0] + 2]:
        raise DataError(f"feature {text!r}: {kind.name} reads three consecutive channels (e.g. c3_c4_c5)")
    values = [given[p] for p in kind.params] + [0, 0]
    if any(c > 0xFFFF for c in chans) or any(v > 0xFFFF for v in values):
        raise DataError(f"feature {text!r}: a channel or parameter over 65535")
    spec = FeatureSpec(kind.id, chans[0], chans[1] if kind.channels == 2 else 0, values[0], values[1],
                       given.get("decimate", 0))
    if spec.check(MAX_CHANNELS + 0x10000) == E_FEATURE:
        raise DataError(f"feature {text!r}: bad parameter ({kind.what})")
    return spec
