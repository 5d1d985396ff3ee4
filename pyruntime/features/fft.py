"""The feature library's FFT in numpy, butterfly by butterfly as runtime_c/src/features/fm_feat_{f32,q15}.c:
radix-2, decimation in time, input in bit-reversed order, W = exp(-2 pi i k / n) from the quarter-wave table of
twiddle.py; q15 halves after every stage and rounds products to nearest. Vectorised over windows and over the
butterflies of a stage (they are independent), so every value has the C's bits."""

from __future__ import annotations

import numpy as np

from pyruntime.features.twiddle import MAX_FFT, QUARTER, cos_f32, cos_q15


def nfft_of(length: int) -> int:
    """Power of two >= length (at least 2), or 0 when length > MAX_FFT (as the C)."""
    if length > MAX_FFT:
        return 0
    n = 1
    while n < length:
        n *= 2
    return max(n, 2)


def block_means_f32(x: np.ndarray, shift: int) -> np.ndarray:
    """The block means of 2^shift samples of float32 windows x (W, L), the last L mod 2^shift samples dropped: each
    block summed in order, then divided by 2^shift (exact), as block_centred in fm_feat_f32.c; shift 0 gives x."""
    size = 1 << shift
    m = x.shape[1] >> shift
    acc = x[:, 0: m * size: size].astype(np.float32)
    for j in range(1, size):
        acc = acc + x[:, j: m * size: size]
    return acc / np.float32(size)


def block_means_q15(x: np.ndarray, shift: int) -> np.ndarray:
    """The rounded block means (halves up) of 2^shift int16 samples, as block_mean in fm_feat_q15.c (int64); shift 0
    gives x."""
    size = 1 << shift
    m = x.shape[1] >> shift
    s = x[:, : m * size].astype(np.int64).reshape(x.shape[0], m, size).sum(axis=2)
    return (s + (size >> 1)) >> shift


def bitrev(n: int) -> np.ndarray:
    bits = n.bit_length() - 1
    i = np.arange(n)
    r = np.zeros(n, np.int64)
    for b in range(bits):
        r = (r << 1) | ((i >> b) & 1)
    return r


def _twiddles(size: int, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(size // 2) * (MAX_FFT // size)
    co = np.where(k > QUARTER, -table[np.minimum(MAX_FFT // 2 - k, QUARTER)], table[np.minimum(k, QUARTER)])
    si = table[np.where(k <= QUARTER, QUARTER - k, k - QUARTER)]
    return co, si


def _fft_f32(re: np.ndarray, im: np.ndarray, n: int) -> None:
    """In place: the radix-2 FFT of n points per row of (re, im), input in bit-reversed order (as fft_f32)."""
    size = 2
    while size <= n:
        co, si = _twiddles(size, cos_f32())
        r = re.reshape(-1, n // size, size)
        i = im.reshape(-1, n // size, size)
        h = size // 2
        br, bi = r[..., h:].copy(), i[..., h:].copy()
        tr = co * br + si * bi
        ti = co * bi - si * br
        ar, ai = r[..., :h].copy(), i[..., :h].copy()
        r[..., h:], i[..., h:] = ar - tr, ai - ti
        r[..., :h], i[..., :h] = ar + tr, ai + ti
        size *= 2


def power_f32(d: np.ndarray, n: int) -> np.ndarray:
    """|FFT|^2 of the centred windows d (W, L) float32 at bins 0..n/2, float32: the real window as a complex one of
    half the length (even samples real, odd imaginary), its FFT, then the split into the n-point spectrum (the C's
    spectrum_f32, operation for operation)."""
    f = np.float32
    w, length = d.shape
    h = n // 2
    padded = np.zeros((w, n), f)
    padded[:, :length] = d.astype(f)
    re, im = np.zeros((w, h), f), np.zeros((w, h), f)
    order = bitrev(h)
    re[:, order] = padded[:, 0::2]
    im[:, order] = padded[:, 1::2]
    _fft_f32(re, im, h)
    k = np.arange(h + 1)
    i1, i2 = np.where(k == h, 0, k), np.where(k == 0, 0, h - k)
    ar, ai, br, bi = re[:, i1], im[:, i1], re[:, i2], im[:, i2]
    half = f(0.5)
    er, ei, o_r, oi = half * (ar + br), half * (ai - bi), half * (ai + bi), half * (br - ar)
    co, si = _twiddles(n, cos_f32())
    co = np.append(co, -cos_f32()[0]).astype(f)  # k = h: the angle pi
    si = np.append(si, cos_f32()[QUARTER]).astype(f)
    xr = er + (co * o_r + si * oi)
    xi = ei + (co * oi - si * o_r)
    return xr * xr + xi * xi


def power_q15(d: np.ndarray, n: int) -> np.ndarray:
    """The q15 power spectrum (int64) of the centred integer windows d (W, L), input scaled by 1/4: the real window
    as a complex one of half the length, its halving FFT, the split halved once more (the C's spectrum_q15)."""
    w, length = d.shape
    h = n // 2
    padded = np.zeros((w, n), np.int64)
    padded[:, :length] = d.astype(np.int64) >> 2
    re, im = np.zeros((w, h), np.int64), np.zeros((w, h), np.int64)
    order = bitrev(h)
    re[:, order] = padded[:, 0::2]
    im[:, order] = padded[:, 1::2]
    size = 2
    while size <= h:
        co, si = _twiddles(size, cos_q15().astype(np.int64))
        r = re.reshape(-1, h // size, size)
        i = im.reshape(-1, h // size, size)
        half = size // 2
        br, bi = r[..., half:].copy(), i[..., half:].copy()
        tr = (co * br + si * bi + (1 << 14)) >> 15
        ti = (co * bi - si * br + (1 << 14)) >> 15
        ar, ai = r[..., :half].copy(), i[..., :half].copy()
        r[..., :half], i[..., :half] = (ar + tr) >> 1, (ai + ti) >> 1
        r[..., half:], i[..., half:] = (ar - tr) >> 1, (ai - ti) >> 1
        size *= 2
    k = np.arange(h + 1)
    i1, i2 = np.where(k == h, 0, k), np.where(k == 0, 0, h - k)
    ar, ai, br, bi = re[:, i1], im[:, i1], re[:, i2], im[:, i2]
    er, ei, o_r, oi = (ar + br) >> 1, (ai - bi) >> 1, (ai + bi) >> 1, (br - ar) >> 1
    co, si = _twiddles(n, cos_q15().astype(np.int64))
    co = np.append(co, -int(cos_q15()[0]))
    si = np.append(si, int(cos_q15()[QUARTER]))
    xr = (er + ((co * o_r + si * oi + (1 << 14)) >> 15)) >> 1
    xi = (ei + ((co * oi - si * o_r + (1 << 14)) >> 15)) >> 1
    return xr * xr + xi * xi
