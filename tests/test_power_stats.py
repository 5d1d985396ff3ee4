"""Energy arithmetic and its confidence interval on synthetic current profiles with known answers."""

from __future__ import annotations

import math
import random

import pytest

from power_bench.logs import CsvLog
from power_bench.reading import Reading
from power_bench.sources import Sample
from power_bench.stats import PhaseStats, energy_per_prediction, energy_ratio, t975


def test_t975_table() -> None:
    assert t975(1) == pytest.approx(12.706)
    assert t975(10) == pytest.approx(2.228)
    assert t975(11) == pytest.approx(2.228)  # between rows: the smaller df, a wider interval
    assert t975(10_000) == pytest.approx(1.96)
    assert math.isinf(t975(0.5))


def test_phase_stats() -> None:
    s = PhaseStats.of([1.0, 2.0, 3.0, 4.0])
    assert (s.n, s.mean) == (4, 2.5)
    assert s.std == pytest.approx(math.sqrt(5 / 3))
    assert s.sem == pytest.approx(math.sqrt(5 / 3) / 2)


def test_energy_formula_by_hand() -> None:
    load = PhaseStats(100, 0.150, 0.002)
    idle = PhaseStats(100, 0.100, 0.002)
    est = energy_per_prediction(load, idle, scale=5.0, seconds=10.0, predictions=1000)
    # (0.150 - 0.100) A x 5 V x 10 s / 1000 predictions
    assert est.joules_per_prediction == pytest.approx(2.5e-3)
    assert est.total_joules_per_prediction == pytest.approx(7.5e-3)
    sem = math.sqrt(2) * 0.002 / 10
    assert est.delta_sem == pytest.approx(sem)
    assert est.df == pytest.approx(198)
    half = t975(198) * sem * 5.0 * 10.0 / 1000
    assert (est.ci95_low, est.ci95_high) == (pytest.approx(2.5e-3 - half), pytest.approx(2.5e-3 + half))
    assert est.significant


def test_interval_narrows_with_samples_and_widens_with_spread() -> None:
    def width(n: int, sd: float) -> float:
        e = energy_per_prediction(PhaseStats(n, 0.15, sd), PhaseStats(n, 0.1, sd), 5.0, 10.0, 1000)
        return e.ci95_high - e.ci95_low

    assert width(400, 0.002) < width(100, 0.002) < width(25, 0.002)
    assert width(100, 0.004) == pytest.approx(2 * width(100, 0.002))


def test_not_significant_when_load_equals_idle() -> None:
    est = energy_per_prediction(PhaseStats(30, 0.1001, 0.002), PhaseStats(30, 0.1, 0.002), 5.0, 1.0, 100)
    assert not est.significant and est.ci95_low < 0 < est.ci95_high


def test_refuses_degenerate_inputs() -> None:
    with pytest.raises(ValueError):
        energy_per_prediction(PhaseStats(1, 0.2, math.nan), PhaseStats(30, 0.1, 0.01), 5.0, 1.0, 100)
    with pytest.raises(ValueError):
        energy_per_prediction(PhaseStats(30, 0.2, 0.01), PhaseStats(30, 0.1, 0.01), 5.0, 1.0, 0)


def test_interval_coverage_on_simulated_profiles() -> None:
    """Across many simulated runs with a known answer, the 95% interval covers it about 95% of the time."""
    rng = random.Random(12345)
    truth = (0.130 - 0.100) * 5.0 * 2.0 / 500
    covered = 0
    runs = 400
    for _ in range(runs):
        idle = [0.100 + rng.gauss(0, 0.003) for _ in range(30)]
        load = [0.130 + rng.gauss(0, 0.004) for _ in range(25)]
        est = energy_per_prediction(PhaseStats.of(load), PhaseStats.of(idle), 5.0, 2.0, 500)
        covered += est.ci95_low <= truth <= est.ci95_high
    assert 0.91 <= covered / runs <= 0.99


def test_ratio_and_its_interval() -> None:
    idle = PhaseStats(60, 0.100, 0.002)
    a = energy_per_prediction(PhaseStats(60, 0.150, 0.002), idle, 5.0, 10.0, 1000)
    b = energy_per_prediction(PhaseStats(60, 0.125, 0.002), idle, 5.0, 10.0, 1000)
    r = energy_ratio(b, a, idle)
    assert r is not None
    assert r.value == pytest.approx(0.5)
    assert r.ci95_low < 0.5 < r.ci95_high
    # shared idle makes the two figures move together: the ratio interval is narrower than if independent
    var_indep = (b.delta_sem / b.delta) ** 2 + (a.delta_sem / a.delta) ** 2
    assert math.log(r.ci95_high / r.value) < t975(min(a.df, b.df)) * math.sqrt(var_indep)
    negative = energy_per_prediction(PhaseStats(60, 0.090, 0.002), idle, 5.0, 10.0, 1000)
    assert energy_ratio(negative, a, idle) is None


def test_csv_log_is_flushed_per_line(tmp_path) -> None:
    log = CsvLog(tmp_path / "s.csv", t0=100.0)
    log.write(Sample(100.5, 0.0, "packet", b"\x31\x32", Reading(0.1234, "A", dc=True, range="mA r1")), "idle")
    text = (tmp_path / "s.csv").read_text()  # read before close: the row must already be on disk
    assert "0.5000" in text and "31 32" in text and "0.1234" in text and ",idle," in text
    log.write(Sample(101.0, 0.0, "dropped", b"\xff", None, "1 unreadable bytes skipped"), "A")
    assert (tmp_path / "s.csv").read_text().count("\n") == 3
    log.close()


def test_flat_phases_of_one_value_give_zero_energy_not_rounding_noise() -> None:
    """A frozen meter (or a load change under one count) reads the same value in both phases: fsum(values) / n
    left a last-bit difference, 1.3e-19 J "significant" (round 65's probe); about the first value it is 0."""
    idle, load = PhaseStats.of([0.12] * 30), PhaseStats.of([0.12] * 27)
    assert (idle.mean, idle.std, load.mean, load.std) == (0.12, 0.0, 0.12, 0.0)
    est = energy_per_prediction(load, idle, 5.0, 1.869, 1000)
    assert est.joules_per_prediction == 0.0 and not est.significant
    spread = PhaseStats.of([0.1, 0.3, 0.2, 0.4])
    assert spread.mean == pytest.approx(0.25) and spread.std == pytest.approx(math.sqrt(5 / 3) / 10)


@pytest.mark.parametrize("flag", ["HOLD", "MAX", "MIN", "PMAX", "PMIN", "REL", "REF", "AVG"])
def test_held_extreme_relative_or_averaged_readings_are_left_out(flag: str) -> None:
    """A display in HOLD, MAX/MIN, REL or AVG shows (and sends) something else than the present current: such
    readings went into the energy figure without a word (round 65's probe)."""
    from power_bench.measure import RunSettings, Segment, analyze, classify

    plain = Reading(0.1, "A", dc=True)
    held = Reading(0.1, "A", dc=True, flags=(flag, "BAT"))
    assert classify(plain, "A") == "" and classify(held, "A") == f"mode {flag}"
    assert classify(Reading(math.nan, "A", dc=True), "A") == "nan"
    samples = [Sample(t * 0.1, 0.0, "packet", b"", held if t % 2 else plain) for t in range(80)]
    out = analyze(samples, (0.0, 3.9), [Segment("A", "m", 4.0, 8.0, 1000, 4.0, True)],
                  RunSettings(volts=5.0, min_samples=5, settle_seconds=0.0), "A")
    told = [w for w in out["warnings"] if f"with {flag} on" in w]
    assert len(told) == 1 and told[0].startswith("40 readings were taken") and f"turn {flag} off" in told[0]
