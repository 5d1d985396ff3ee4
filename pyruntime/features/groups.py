"""What the float32 and q15 feature references share: a batch of windows whose groups (pass sums,
centred moments, spectrum, magnitude) are computed on first use, like the C's scratch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pyruntime.features.fft import nfft_of


class GroupCache:
    """Subclasses set ``x`` and define ``_pass``, ``_centered``, ``_spectrum`` and ``_magnitude`` (by channel)."""

    _pass: Callable[[int], dict[str, np.ndarray]]
    _centered: Callable[[int], dict[str, np.ndarray]]
    _spectrum: Callable[[int], dict[str, np.ndarray]]
    _magnitude: Callable[[int], dict[str, np.ndarray]]

    def __init__(self, x: np.ndarray) -> None:
        self.w, self.c, self.len = x.shape
        self.nfft = nfft_of(self.len)
        self.cache: dict[tuple[int, int], dict[str, np.ndarray]] = {}

    def group(self, kind: int, c: int) -> dict[str, np.ndarray]:
        key = (kind, c)
        if key not in self.cache:
            self.cache[key] = (self._pass, self._centered, self._spectrum, self._magnitude)[kind](c)
        return self.cache[key]
