"""numpy reference of the q15 feature library (runtime_c/src/features/fm_feat_q15.c): int16 samples (q15, -1..1),
integer arithmetic, each value an integer q times 2^-15 (as float32).

Formats and rounding (round = to nearest, halves away from zero; isqrt = floor square root):
  mean = round(sum / len); min, max, peak_to_peak: samples; rms = round(sqrt(round(sum x^2 / len)));
  std = round(sqrt(round(ss / len))), ss = sum (x - mean)^2 with the rounded mean;
  mean_crossing_rate = round(crossings * 2^15 / (len - 1)); autocorrelation = round(num * 2^15 / ss);
  correlation = round(num * 2^15 / (isqrt(ss1) * isqrt(ss2))) clamped to +-2^15;
  spectrum of (x - mean) >> 2 (fft.power_q15): band energy = round(band * 2^15 / energy),
  dominant frequency = k * 2^15 / nfft, centroid = round(sum k P[k] * 2^15 / nfft / energy); with decimate D the
  spectrum of (m - mean) >> 2, m the block means of D samples rounded halves up, and nfft read as nfft * D;
  magnitude m = round(sqrt(x^2 + y^2 + z^2)): mean = round(sum m / len), maximum = max m.
"""

from __future__ import annotations

import numpy as np

from pyruntime.features import catalog as cat
from pyruntime.features.fft import block_means_q15, power_q15
from pyruntime.features.groups import GroupCache, nfft_at
from pyruntime.features.status import window_status

I64 = np.int64
Q15_ONE = 32768


def round_div(num: np.ndarray, den: np.ndarray | int) -> np.ndarray:
    """round(num / den), halves away from zero, den > 0 (fm_feat_round_div)."""
    num = np.asarray(num, I64)
    den = np.asarray(den, I64)
    pos = (num + den // 2) // den
    neg = -((-num + den // 2) // den)
    return np.where(num >= 0, pos, neg)


def isqrt(v: np.ndarray) -> np.ndarray:
    """floor(sqrt(v)) of non-negative integers below 2^52 (fm_feat_isqrt64)."""
    v = np.asarray(v, I64)
    r = np.floor(np.sqrt(v.astype(np.float64))).astype(I64)
    r = np.where(r * r > v, r - 1, r)
    return np.where((r + 1) * (r + 1) <= v, r + 1, r)


def isqrt_round(v: np.ndarray) -> np.ndarray:
    r = isqrt(v)
    return np.where(np.asarray(v, I64) - r * r > r, r + 1, r)


def _safe(den: np.ndarray) -> np.ndarray:
    return np.where(den > 0, den, 1)


class _Window(GroupCache):
    def __init__(self, x: np.ndarray) -> None:
        super().__init__(x)
        self.x = x.astype(I64)

    def _pass(self, c: int) -> dict[str, np.ndarray]:
        xs = self.x[:, c, :]
        s = xs.sum(axis=1)
        return {"sum": s, "sumsq": (xs * xs).sum(axis=1), "min": xs.min(axis=1), "max": xs.max(axis=1),
                "mean": round_div(s, self.len)}

    def _centered(self, c: int) -> dict[str, np.ndarray]:
        d = self.x[:, c, :] - self.group(cat.PASS, c)["mean"][:, None]
        neg = d < 0
        return {"ss": (d * d).sum(axis=1), "crossings": (neg[:, 1:] != neg[:, :-1]).sum(axis=1)}

    def _spectrum(self, c: int, shift: int) -> dict[str, np.ndarray]:
        xs = block_means_q15(self.x[:, c, :], shift)  # shift 0: the window itself
        p = power_q15(xs - self.group(cat.PASS, c)["mean"][:, None], nfft_at(self.len, shift))
        return {"power": p, "energy": p[:, 1:].sum(axis=1)}

    def _magnitude(self, c: int) -> dict[str, np.ndarray]:
        x, y, z = self.x[:, c, :], self.x[:, c + 1, :], self.x[:, c + 2, :]
        m = isqrt_round(x * x + y * y + z * z)
        return {"msum": m.sum(axis=1), "mmax": np.maximum(m.max(axis=1), 0)}

    def lagged(self, c1: int, c2: int, lag: int) -> np.ndarray:
        d1 = self.x[:, c1, :] - self.group(cat.PASS, c1)["mean"][:, None]
        d2 = self.x[:, c2, :] - self.group(cat.PASS, c2)["mean"][:, None]
        return (d1[:, : self.len - lag] * d2[:, lag:]).sum(axis=1)


def _spectral(win: _Window, f: cat.FeatureSpec) -> np.ndarray:
    g, nfft, shift = win.spectrum_of(f)
    p, energy, half = g["power"], g["energy"], nfft // 2
    lg = nfft.bit_length() - 1 + shift  # bin k is k / (nfft 2^shift) cycles per sample
    if f.id == 9:
        best = 1 + np.argmax(p[:, 1: half + 1], axis=1)  # the first of equal maxima, as the C's strict >
        return best.astype(I64) << (15 - lg)
    if f.id == 10:
        acc = (np.arange(1, half + 1, dtype=I64) * p[:, 1: half + 1]).sum(axis=1)
        return np.where(energy > 0, round_div(acc << (15 - lg), _safe(energy)), 0)
    lo, hi = 1 + f.param * half // f.param2, 1 + (f.param + 1) * half // f.param2
    acc = p[:, lo:hi].sum(axis=1)
    return np.where(energy > 0, round_div(acc * Q15_ONE, _safe(energy)), 0)


def _value(win: _Window, f: cat.FeatureSpec) -> np.ndarray:
    c, n = f.channel, win.len
    if f.id in (0, 2, 3, 4, 5):
        g = win.group(cat.PASS, c)
        return {0: lambda: g["mean"], 2: lambda: g["min"], 3: lambda: g["max"],
                4: lambda: isqrt_round(round_div(g["sumsq"], n)), 5: lambda: g["max"] - g["min"]}[f.id]()
    if f.id in (1, 6, 7):
        g = win.group(cat.CENTERED, c)
        if f.id == 1:
            return isqrt_round(round_div(g["ss"], n))
        if f.id == 6:
            return round_div(g["crossings"] * Q15_ONE, n - 1)
        return np.where(g["ss"] > 0, round_div(win.lagged(c, c, f.param) * Q15_ONE, _safe(g["ss"])), 0)
    if f.id in (11, 12):
        g = win.group(cat.MAGNITUDE, c)
        return round_div(g["msum"], n) if f.id == 11 else g["mmax"]
    if f.id == 13:
        den = isqrt(win.group(cat.CENTERED, c)["ss"]) * isqrt(win.group(cat.CENTERED, f.channel2)["ss"])
        q = np.where(den > 0, round_div(win.lagged(c, f.channel2, 0) * Q15_ONE, _safe(den)), 0)
        return np.clip(q, -Q15_ONE, Q15_ONE)
    return _spectral(win, f)


def quantities(x: np.ndarray, specs: list[cat.FeatureSpec] | tuple[cat.FeatureSpec, ...]
               ) -> tuple[np.ndarray, np.ndarray]:
    """(q (W, F) int64, status (W, F) int32) for int16 windows (W, C, L)."""
    x = np.asarray(x)
    if x.dtype != np.int16:
        raise TypeError("q15 windows must be int16")
    win = _Window(x)
    q = np.zeros((win.w, len(specs)), I64)
    status = np.zeros((win.w, len(specs)), np.int32)
    for j, f in enumerate(specs):
        st = window_status(f, win.c, win.len)
        status[:, j] = st
        if st == cat.OK:
            q[:, j] = _value(win, f)
    return q, status


def values(x: np.ndarray, specs: list[cat.FeatureSpec] | tuple[cat.FeatureSpec, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(values (W, F) float32 = q * 2^-15, status (W, F))."""
    q, status = quantities(x, specs)
    return q.astype(np.int32).astype(np.float32) * np.float32(1.0 / 32768.0), status
