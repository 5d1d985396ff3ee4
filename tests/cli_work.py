"""What the CLI tests share: the command run in-process, a costs file written, and the synthetic
data sets several kinds' tests train on (each seeded, so a test's data is the same draw as before)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from compiler.cli import cli


def run(*args: object) -> tuple[int, str, str]:
    """``frugalml ARGS`` in this process: exit code, stdout, stderr (exceptions propagate)."""
    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def write_costs(path: Path, costs: Sequence[object] | Sequence[Sequence[object]], names: Sequence[str] | None = None,
                columns: Sequence[str] = ("cost",)) -> Path:
    """A costs CSV: one row a feature (``names``, default 0..d-1), one value (or one tuple) a row."""
    rows = [c if isinstance(c, (list, tuple)) else (c,) for c in costs]
    names = [str(j) for j in range(len(rows))] if names is None else list(names)
    path.write_text(",".join(["feature", *columns]) + "\n"
                    + "".join(",".join([n, *map(str, r)]) + "\n" for n, r in zip(names, rows, strict=True)))
    return path


def cheap_and_clean(n: int, seed: int, n_views: int, cheap: tuple[float, float],
                    clean: tuple[float, float] = (2.0, 0.7)) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels and ``n_views`` cheap views then ``n_views`` clean ones of the label: a view is
    ``signal * (2y - 1) + noise * N(0, 1)``, with (signal, noise) of ``cheap`` and ``clean``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    s = 2.0 * y - 1.0
    views = [sig * s[:, None] + noise * rng.normal(size=(n, n_views)) for sig, noise in (cheap, clean)]
    return np.column_stack(views), y


def shifted_binary(n: int, seed: int, shift: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels and N(0, 1) features, feature j shifted by ``shift[j] * (2y - 1)``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(size=(n, len(shift))) + np.outer(2.0 * y - 1.0, shift), y


def strict_json(text: str) -> Any:
    """json.loads refusing NaN and Infinity (Python's json writes them; JSON.parse, jq and others refuse)."""
    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)
