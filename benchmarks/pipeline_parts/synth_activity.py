"""A synthetic 3-axis accelerometer activity set for benchmarks/pipeline_unseen.py: raw windows that no model or
option of this project was tuned to (the generator and its seed were fixed before the first run).

Each window is 128 samples at a nominal 50 Hz of (x, y, z): gravity on a random tilt, plus the activity's motion
and sensor noise. Rest: a small sway. Walk: a step rhythm of 1.4-2.2 Hz with harmonics, mostly vertical. Run: a
2.2-3.2 Hz rhythm, larger. Stairs: a walking rhythm of 1.2-1.9 Hz with a stronger second harmonic and a slow
drift (the body rising). Frequencies, amplitudes, phases, tilt and noise are drawn per window, so the classes
overlap at their edges.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CLASSES = ("rest", "walk", "run", "stairs")
LENGTH, RATE, PER_CLASS, SEED = 128, 50.0, 40, 20


def window(kind: str, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(LENGTH) / RATE
    tilt = rng.normal(0, 0.25, 2)
    gravity = np.array([np.sin(tilt[0]), np.sin(tilt[1]), np.cos(tilt[0]) * np.cos(tilt[1])])
    x = np.tile(gravity[:, None], (1, LENGTH))
    phase = rng.uniform(0, 2 * np.pi, 3)
    if kind == "rest":
        f, amp, h2 = rng.uniform(0.2, 0.6), rng.uniform(0.01, 0.05), 0.0
    elif kind == "walk":
        f, amp, h2 = rng.uniform(1.4, 2.2), rng.uniform(0.15, 0.35), rng.uniform(0.1, 0.3)
    elif kind == "run":
        f, amp, h2 = rng.uniform(2.2, 3.2), rng.uniform(0.3, 0.7), rng.uniform(0.1, 0.4)
    else:
        f, amp, h2 = rng.uniform(1.2, 1.9), rng.uniform(0.15, 0.35), rng.uniform(0.3, 0.6)
    share = np.array([rng.uniform(0.2, 0.5), rng.uniform(0.1, 0.4), 1.0])  # mostly vertical
    for c in range(3):
        x[c] += share[c] * amp * (np.sin(2 * np.pi * f * t + phase[c]) + h2 * np.sin(4 * np.pi * f * t + 2 * phase[c]))
    if kind == "stairs":
        x[2] += rng.uniform(0.02, 0.08) * t
    x += rng.normal(0, rng.uniform(0.02, 0.08), x.shape)
    return x.astype(np.float32)


def make(seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X, y = [], []
    for kind in CLASSES:
        for _ in range(PER_CLASS):
            X.append(window(kind, rng))
            y.append(kind)
    order = rng.permutation(len(y))
    return np.stack(X)[order], np.array(y)[order]


def write_npz(path: Path, seed: int = SEED) -> Path:
    X, y = make(seed)
    np.savez(path, X=X, y=y)
    return path
