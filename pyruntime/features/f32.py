"""numpy reference of the float32 feature library (runtime_c/src/features/fm_feat_f32.c), step by step: every sum
runs in sample (or bin) order from 0.0 in float32, vectorised over windows only, so each value has the C's bits.

``values(windows, specs)`` takes windows of one length, shape (W, C, L) float32, and returns (values (W, F) float32,
status (W, F) int32: 0 or the C status code).
"""

from __future__ import annotations

import numpy as np

from pyruntime.features import catalog as cat
from pyruntime.features.fft import block_means_f32, power_f32
from pyruntime.features.groups import GroupCache, nfft_at
from pyruntime.features.status import window_status

F32 = np.float32


class _Window(GroupCache):
    """The groups of a batch of windows, computed on first use (like the C's scratch)."""

    def __init__(self, x: np.ndarray) -> None:
        super().__init__(x)
        self.x = x

    def _pass(self, c: int) -> dict[str, np.ndarray]:
        xs = self.x[:, c, :]
        s = np.zeros(self.w, F32)
        sq = np.zeros(self.w, F32)
        lo, hi = xs[:, 0].copy(), xs[:, 0].copy()
        for t in range(self.len):
            v = xs[:, t]
            s = s + v
            sq = sq + v * v
            lo = np.where(v < lo, v, lo)
            hi = np.where(v > hi, v, hi)
        bad = ~np.all(np.isfinite(xs), axis=1)
        mean = np.where(lo == hi, lo, s / F32(self.len))  # a constant window's mean is its value (fm_feat_f32.c)
        return {"sum": s, "sumsq": sq, "min": lo, "max": hi, "mean": mean, "bad": bad}

    def _centered(self, c: int) -> dict[str, np.ndarray]:
        xs, mean = self.x[:, c, :], self.group(cat.PASS, c)["mean"]
        ss = np.zeros(self.w, F32)
        crossings = np.zeros(self.w, np.int64)
        below = (xs[:, 0] - mean) < 0
        for t in range(self.len):
            d = xs[:, t] - mean
            b = d < 0
            ss = ss + d * d
            crossings += b != below
            below = b
        return {"ss": ss, "crossings": crossings}

    def _spectrum(self, c: int, shift: int) -> dict[str, np.ndarray]:
        xs, mean = self.x[:, c, :], self.group(cat.PASS, c)["mean"][:, None]
        d = block_means_f32(xs, shift) - mean  # shift 0: the window itself
        n = nfft_at(self.len, shift)
        p = power_f32(d, n)
        energy = np.zeros(self.w, F32)
        for k in range(1, n // 2 + 1):
            energy = energy + p[:, k]
        return {"power": p, "energy": energy}

    def _magnitude(self, c: int) -> dict[str, np.ndarray]:
        x, y, z = self.x[:, c, :], self.x[:, c + 1, :], self.x[:, c + 2, :]
        m = np.sqrt(x * x + y * y + z * z)
        s = np.zeros(self.w, F32)
        hi = np.zeros(self.w, F32)
        for t in range(self.len):
            s = s + m[:, t]
            hi = np.where(m[:, t] > hi, m[:, t], hi)
        return {"msum": s, "mmax": hi}

    def lagged(self, c1: int, c2: int, lag: int) -> np.ndarray:
        m1, m2 = self.group(cat.PASS, c1)["mean"], self.group(cat.PASS, c2)["mean"]
        num = np.zeros(self.w, F32)
        for t in range(self.len - lag):
            num = num + (self.x[:, c1, t] - m1) * (self.x[:, c2, t + lag] - m2)
        return num


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den where den > 0, else 0 (float32); NaN (FM_E_VALUE) where den overflowed, as the C library says."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, F32(1)), F32(0)).astype(F32)
    return _unless_overflowed(out, den)


def _unless_overflowed(v: np.ndarray, intermediate: np.ndarray) -> np.ndarray:
    """v, NaN where the intermediate it derives from (a mean, a sum of squares, a spectrum's energy) is not finite:
    the C library's FM_E_VALUE, not a guard's 0 or an infinite spectrum's bin."""
    return np.where(np.isfinite(intermediate), v, F32(np.nan)).astype(F32)


def _spectral(win: _Window, f: cat.FeatureSpec) -> np.ndarray:
    """Frequencies in cycles per sample of the window: bin k at decimation shift s is k / (nfft 2^s)."""
    g, nfft, shift = win.spectrum_of(f)
    p, energy, half, scale = g["power"], g["energy"], nfft // 2, F32(nfft << shift)
    acc = np.zeros(win.w, F32)
    if f.id == 9:
        best = np.ones(win.w, np.int64)
        rows = np.arange(win.w)
        for k in range(2, half + 1):
            best = np.where(p[:, k] > p[rows, best], k, best)
        return _unless_overflowed(best.astype(F32) / scale, energy)
    if f.id == 10:
        for k in range(1, half + 1):
            acc = acc + F32(k) * p[:, k]
        return _ratio(acc, energy) / scale
    for k in range(1 + f.param * half // f.param2, 1 + (f.param + 1) * half // f.param2):
        acc = acc + p[:, k]
    return _ratio(acc, energy)


def _value(win: _Window, f: cat.FeatureSpec) -> np.ndarray:
    c, n = f.channel, F32(win.len)
    if f.id in (0, 2, 3, 4, 5):
        g = win.group(cat.PASS, c)
        return {0: lambda: g["mean"], 2: lambda: g["min"], 3: lambda: g["max"],
                4: lambda: np.sqrt(g["sumsq"] / n), 5: lambda: g["max"] - g["min"]}[f.id]()
    if f.id in (1, 6, 7):
        g = win.group(cat.CENTERED, c)
        if f.id == 1:
            return np.sqrt(g["ss"] / n)
        if f.id == 6:
            mean = win.group(cat.PASS, c)["mean"]
            return _unless_overflowed(g["crossings"].astype(F32) / F32(win.len - 1), mean)
        return _ratio(win.lagged(c, c, f.param), g["ss"])
    if f.id in (11, 12):
        g = win.group(cat.MAGNITUDE, c)
        return g["msum"] / n if f.id == 11 else g["mmax"]
    if f.id == 13:
        s2 = np.sqrt(win.group(cat.CENTERED, c)["ss"]) * np.sqrt(win.group(cat.CENTERED, f.channel2)["ss"])
        return _ratio(win.lagged(c, f.channel2, 0), s2)
    return _spectral(win, f)


def values(x: np.ndarray, specs: list[cat.FeatureSpec] | tuple[cat.FeatureSpec, ...]) -> tuple[np.ndarray, np.ndarray]:
    x = np.ascontiguousarray(x, dtype=F32)
    win = _Window(x)
    out = np.zeros((win.w, len(specs)), F32)
    status = np.zeros((win.w, len(specs)), np.int32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        _fill(win, specs, out, status)
    out[status != cat.OK] = 0
    return out, status


def _fill(win: _Window, specs: list[cat.FeatureSpec] | tuple[cat.FeatureSpec, ...], out: np.ndarray,
          status: np.ndarray) -> None:
    for j, f in enumerate(specs):
        st = window_status(f, win.c, win.len)
        if st != cat.OK:
            status[:, j] = st
            continue
        bad = np.zeros(win.w, bool)
        for kind, ch in f.groups():
            if kind == cat.PASS:
                bad |= win.group(cat.PASS, ch)["bad"]
        v = np.asarray(_value(win, f), F32)
        out[:, j] = np.where(bad, F32(0), v)
        status[:, j] = np.where(bad, cat.E_SAMPLE, np.where(np.isfinite(v), cat.OK, cat.E_VALUE))
