"""The status a feature call returns before it reads a sample (fm_feat_prepare's checks), shared by both
references."""

from __future__ import annotations

from pyruntime.features import catalog as cat
from pyruntime.features.groups import nfft_at


def window_status(f: cat.FeatureSpec, n_channels: int, length: int) -> int:
    """OK, E_FEATURE, E_CHANNEL or E_WINDOW for a window of n_channels x length (a spectral feature's FFT over
    MAX_FFT points: E_WINDOW)."""
    st = f.check(n_channels)
    if st != cat.OK:
        return st
    if length < f.min_len() or (f.id in cat.SPECTRAL_IDS and nfft_at(length, cat.shift_of(f.decimate)) == 0):
        return cat.E_WINDOW
    return cat.OK
