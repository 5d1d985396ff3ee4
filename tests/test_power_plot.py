"""The run plot names the models by file, shows J per prediction with its interval and the B/A ratio, and keeps
its legend off the data. Checked on the matplotlib figure's texts and layout, not on pixels."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from power_bench import measure
from power_bench.emulator import Emulator, PhaseProfile
from power_bench.logs import plot_run
from power_bench.measure import Measurement, RunSettings
from power_bench.meters import find_meter
from power_bench.reading import parse_quantity
from power_bench.sources import SerialSource

PNG = b"\x89PNG\r\n\x1a\n"


def figure_texts(fig: Figure) -> tuple[str, list[str]]:
    ax = fig.axes[0]
    legend = ax.get_legend()
    return ax.get_title(), [t.get_text() for t in legend.get_texts()] if legend else []


def legend_clear_of_data(fig: Figure) -> bool:
    renderer = FigureCanvasAgg(fig).get_renderer()  # the figure was closed: give it a canvas to lay out on
    fig.draw(renderer)
    ax = fig.axes[0]
    legend = ax.get_legend()
    return not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


Points = list[tuple[float, float, bool]]


def synthetic(n: int = 200) -> tuple[Points, tuple[float, float], list[tuple[str, float, float]]]:
    points = [(i * 0.05, 0.1 + (0.05 if 80 <= i < 120 else 0.02 if 140 <= i < 180 else 0.0), i != 50)
              for i in range(n)]
    return points, (0.0, 3.0), [("A", 4.0, 6.0), ("B", 7.0, 9.0)]


def test_plot_names_models_energy_interval_and_ratio(tmp_path: Path) -> None:
    points, idle, segments = synthetic()
    models: dict[str, Any] = {
        "A": {"model": "/models/stop_nb.msgpack", "energy_per_prediction_j": 5.443e-8, "ci95_j": [5.421e-8, 5.465e-8]},
        "B": {"model": "/other/static_nb.msgpack", "energy_per_prediction_j": 2.366e-6,
              "ci95_j": [2.342e-6, 2.39e-6]},
    }
    ratio = {"value": 43.47, "ci95_low": 43.14, "ci95_high": 43.8}
    fig = plot_run(tmp_path / "plot.png", points, idle, segments, "A", "emulated:uni-t-ut61e: ok", models, ratio)
    assert (tmp_path / "plot.png").read_bytes()[:8] == PNG
    title, legend = figure_texts(fig)
    assert "stop_nb.msgpack" in title and "static_nb.msgpack" in title and "/models/" not in title
    assert "B/A" in title and "43.47" in title and "43.14" in title and "43.8" in title
    a = next(t for t in legend if "stop_nb.msgpack" in t)
    b = next(t for t in legend if "static_nb.msgpack" in t)
    assert "54.43 nJ" in a and "54.21 nJ" in a and "54.65 nJ" in a and "95% CI" in a and "/prediction" in a
    assert "2.366 \u00b5J" in b and "2.342 \u00b5J" in b and "2.39 \u00b5J" in b
    assert fig.axes[0].get_ylabel() == "current (A)"
    assert legend_clear_of_data(fig)


def test_plot_without_figures_says_so_and_has_no_ratio(tmp_path: Path) -> None:
    points, idle, segments = synthetic()
    models = {"A": {"model": "a/m.msgpack", "energy_per_prediction_j": None, "ci95_j": None},
              "B": {"model": "b/m.msgpack", "energy_per_prediction_j": None, "ci95_j": None}}
    fig = plot_run(tmp_path / "p.png", points, idle, segments, "W", "powercap: insufficient", models, None)
    title, legend = figure_texts(fig)
    assert "ratio" not in title
    # two models with the same file name are told apart by their paths
    assert any("a/m.msgpack" in t and "no energy figure" in t for t in legend)
    assert any("b/m.msgpack" in t and "no energy figure" in t for t in legend)
    assert fig.axes[0].get_ylabel() == "power (W)"
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG


FAKE = ("import json, sys, time; s = float(sys.argv[1]); time.sleep(s); "
        "print(json.dumps({'predictions': 1000, 'seconds': s}))")


def test_measurement_plot_carries_the_summary_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    figures: list[Figure] = []
    real = measure.plot_run

    def keep(*args: Any, **kwargs: Any) -> Figure:
        fig = real(*args, **kwargs)
        figures.append(fig)
        return fig

    monkeypatch.setattr(measure, "plot_run", keep)
    meter = find_meter("uni-t-ut61d")
    profile = PhaseProfile({k: parse_quantity(v) for k, v in {"idle": "100mA", "A": "150mA", "B": "125mA"}.items()},
                           noise=0.0005, seed=2)
    settings = RunSettings(volts=5.0, idle_seconds=0.5, min_samples=15, settle_seconds=0.05, rounds=2)
    with Emulator(meter, profile, interval=0.01) as emu:
        source = SerialSource(meter, emu.path)
        source.open()
        try:
            summary = Measurement(source, [("A", "models/early.msgpack"), ("B", "models/static.msgpack")],
                                  "data.csv", lambda m, d, s: [sys.executable, "-c", FAKE, f"{s:.3f}"], settings,
                                  tmp_path / "run", profile.set_phase).run()
        finally:
            source.close()
    assert summary["status"] == "ok", summary["errors"]
    assert (tmp_path / "run" / "plot.png").read_bytes()[:8] == PNG
    title, legend = figure_texts(figures[0])
    assert "early.msgpack" in title and "static.msgpack" in title
    ratio = summary["ratio"]
    assert f"{ratio['value']:.4g}" in title and f"{ratio['ci95_low']:.4g}" in title
    assert ratio["value"] == pytest.approx(0.5, rel=0.05)
    for label, name in (("A", "early.msgpack"), ("B", "static.msgpack")):
        entry = summary["models"][label]
        joules, (lo, hi) = entry["energy_per_prediction_j"], entry["ci95_j"]
        assert 1e-6 <= lo <= joules <= hi < 1e-3  # 25-50 mA x 5 V x ~1 s / 1000 predictions: the uJ scale
        text = next(t for t in legend if name in t)
        for x in (joules, lo, hi):
            assert f"{x * 1e6:.4g} \u00b5J" in text, (x, text)
    assert legend_clear_of_data(figures[0])
