"""Raw windows -> the feature matrix of a plan, with the float32 reference (bit-exact with the C library), windows
of one length at a time. A window the plan cannot use (too short, NaN samples, a feature that overflows) is a
DataError naming the window and the feature."""

from __future__ import annotations

import numpy as np

from pyruntime.errors import DataError, status_message
from pyruntime.features import catalog as cat
from pyruntime.features import f32
from pyruntime.features.plan import FeaturePlan
from pyruntime.tsdata import Windows


def check_channels(windows: Windows, plan: FeaturePlan) -> None:
    if windows.n_channels != plan.n_channels:
        raise DataError(f"{windows.name} has {windows.n_channels} channel(s), the feature plan is for "
                        f"{plan.n_channels}")


def extract(windows: Windows, plan: FeaturePlan) -> np.ndarray:
    """(n, n_features) float32."""
    check_channels(windows, plan)
    lengths = windows.lengths
    if np.any(lengths > cat.MAX_LEN):
        i = int(np.argmax(lengths > cat.MAX_LEN))
        raise DataError(f"{windows.name}: window {i + 1} has {int(lengths[i])} samples; the device's feature library "
                        f"takes at most {cat.MAX_LEN} (FM_FEAT_MAX_LEN): cut the series into shorter windows")
    out = np.zeros((len(windows.series), len(plan.features)), np.float32)
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        values, status = f32.values(np.stack([windows.series[i] for i in rows]), plan.features)
        bad = np.argwhere(status != cat.OK)
        if bad.size:
            r, j = bad[0]
            f = plan.features[j]
            st = int(status[r, j])
            why = status_message(st)
            if st == cat.E_WINDOW:
                why = f"needs windows of at least {f.min_len()} samples" + (
                    f" and at most {f.max_len()}" if f.id in cat.SPECTRAL_IDS else "")
            elif st == cat.E_VALUE:  # finite samples (else E_SAMPLE): a float32 sum, square or power overflowed
                top = float(np.max(np.abs(windows.series[rows[r]])))
                why += (f": float32 overflows on this window's samples (largest magnitude {top:.3g}); scale the "
                        "samples, e.g. to physical units or to -1..1")
            raise DataError(f"{windows.name}: window {rows[r] + 1} (length {length}): feature {f.name}: {why}")
        out[rows] = values
    return out
