"""The status a feature call returns before it reads a sample (fm_feat_prepare's checks), shared by both
references."""

from __future__ import annotations

from pyruntime.features import catalog as cat

SPECTRAL = (8, 9, 10)


def window_status(f: cat.FeatureSpec, n_channels: int, length: int, nfft: int) -> int:
    """OK, E_FEATURE, E_CHANNEL or E_WINDOW for a window of n_channels x length (nfft 0: no FFT possible)."""
    st = f.check(n_channels)
    if st != cat.OK:
        return st
    if length < f.min_len() or (f.id in SPECTRAL and nfft == 0):
        return cat.E_WINDOW
    return cat.OK
