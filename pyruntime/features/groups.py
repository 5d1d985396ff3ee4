"""What the float32 and q15 feature references share: a batch of windows whose groups (pass sums,
centred moments, the spectra at each decimation, magnitude) are computed on first use, like the C's scratch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pyruntime.features import catalog as cat
from pyruntime.features.fft import nfft_of


def nfft_at(length: int, shift: int) -> int:
    """nfft of the spectrum of block means of 2^shift samples (fm_feat_nfft): 0 when it is off."""
    return nfft_of(length >> shift) if length >> shift else 0


def scratch_bound(n_channels: int, length: int) -> int:
    """Bytes that hold fm_feat_scratch_size(n_channels, length) on every target: the channel records counted at
    192 bytes (their size on any ABI is below it), then the spectra of every decimation shift and the FFT work,
    4-byte words (the layout of fm_feat_internal.h)."""
    nffts = [nfft_at(length, s) for s in range(4)]
    return n_channels * 192 + (n_channels * sum(n // 2 + 1 for n in nffts) + 2 * max(nffts)) * 4


class GroupCache:
    """Subclasses set ``x`` and define ``_pass``, ``_centered``, ``_magnitude`` (by channel) and ``_spectrum`` (by
    channel and decimation shift)."""

    _pass: Callable[[int], dict[str, np.ndarray]]
    _centered: Callable[[int], dict[str, np.ndarray]]
    _spectrum: Callable[[int, int], dict[str, np.ndarray]]
    _magnitude: Callable[[int], dict[str, np.ndarray]]

    def __init__(self, x: np.ndarray) -> None:
        self.w, self.c, self.len = x.shape
        self.cache: dict[tuple[int, int], dict[str, np.ndarray]] = {}

    def group(self, kind: int, c: int) -> dict[str, np.ndarray]:
        key = (kind, c)
        if key not in self.cache:
            if kind in cat.SPECTRUM_KINDS:
                self.cache[key] = self._spectrum(c, cat.shift_of(cat.SPECTRUM_KINDS[kind]))
            else:
                self.cache[key] = {cat.PASS: self._pass, cat.CENTERED: self._centered,
                                   cat.MAGNITUDE: self._magnitude}[kind](c)
        return self.cache[key]

    def spectrum_of(self, f: cat.FeatureSpec) -> tuple[dict[str, np.ndarray], int, int]:
        """A spectral feature's spectrum group, its nfft and its shift."""
        shift = cat.shift_of(f.decimate)
        return self.group(cat.spectrum_kind(f.decimate), f.channel), nfft_at(self.len, shift), shift
