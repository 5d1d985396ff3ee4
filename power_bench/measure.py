"""The measurement protocol: idle phase, load phase(s), A/B alternation, energy per prediction.

Timeline::

    idle (idle_seconds) | A | gap | B | gap | A | gap | B ...   (rounds x models)

The idle phase also measures the meter's sample rate, which sets how long each workload must run to
collect ``min_samples`` readings per model. Readings are assigned to phases by arrival time; the first
``settle_seconds`` of each window are skipped (the meter's display lags the load). A load window is the
last ``seconds`` (as reported by the workload) before the workload process exited, so process start-up
is not counted as prediction time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .logs import CsvLog, plot_run, write_summary
from .reading import Reading
from .sources import MeterError, PortLost, Sample, Source
from .stats import EnergyEstimate, PhaseStats, energy_per_prediction, energy_ratio
from .workload import ArgvBuilder, WorkloadError, WorkloadInterrupted, run_workload

ProgressFn = Callable[[str, float, float, int, "Reading | None"], None]
PhaseListener = Callable[[str], None]
NoticeFn = Callable[[str], None]


@dataclass
class RunSettings:
    volts: float | None = None  # supply voltage; required when the meter reads current
    idle_seconds: float = 10.0
    min_samples: int = 30
    settle_seconds: float = 0.5
    rounds: int = 1  # how many times each model runs (A B A B ... with --compare)
    margin: float = 1.3  # run this much longer than the sample rate says is needed
    min_load_seconds: float = 1.0
    max_load_seconds: float = 3600.0


@dataclass
class Segment:
    label: str
    model: str
    t_start: float
    t_end: float
    predictions: int = 0
    seconds: float = 0.0
    complete: bool = False
    error: str = ""

    def window(self, settle: float) -> tuple[float, float]:
        start = max(self.t_start, self.t_end - self.seconds) if self.complete else self.t_start
        return start + settle, self.t_end


class Recorder(threading.Thread):
    """Polls the source in the background, logs every sample to CSV as it arrives, notices a lost port."""

    def __init__(self, source: Source, log: CsvLog | None, progress: ProgressFn | None = None) -> None:
        super().__init__(name="meter-recorder", daemon=True)
        self.source = source
        self.log = log
        self.progress = progress
        self.samples: list[tuple[Sample, str]] = []
        self.lost = threading.Event()
        self.lost_message = ""
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self._phase = "start"
        self._phase_t = time.monotonic()
        self._planned = 0.0
        self._phase_n = 0
        self._last: Reading | None = None
        self._last_progress = 0.0

    def set_phase(self, phase: str, planned: float = 0.0) -> None:
        with self._lock:
            self._phase, self._phase_t, self._planned, self._phase_n = phase, time.monotonic(), planned, 0

    def _add(self, samples: list[Sample]) -> None:
        with self._lock:
            phase = self._phase
            for s in samples:
                self.samples.append((s, phase))
                if s.reading is not None:
                    self._phase_n += 1
                    self._last = s.reading
        if self.log is not None:
            for s in samples:
                self.log.write(s, phase)

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                got = self.source.poll(0.1)
            except PortLost as exc:
                self._add(exc.samples)
                self.lost_message = str(exc)
                self.lost.set()
                return
            except MeterError as exc:
                self.lost_message = str(exc)
                self.lost.set()
                return
            self._add(got)
            now = time.monotonic()
            if self.progress is not None and now - self._last_progress >= 1.0:
                self._last_progress = now
                with self._lock:
                    args = (self._phase, now - self._phase_t, self._planned, self._phase_n, self._last)
                self.progress(*args)

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)


# display modes whose shown (and sent) value is not the present one: a frozen display (HOLD), a running extreme
# (MAX, MIN, the peak PMAX/PMIN), an offset against a stored reference (REL, sigrok's REF) or an average (AVG)
NOT_PRESENT = ("HOLD", "MAX", "MIN", "PMAX", "PMIN", "REL", "REF", "AVG")


def classify(reading: Reading, expected_unit: str) -> str:
    """'' when the reading can enter the energy figure, else the reason it cannot."""
    if reading.unit != expected_unit:
        return f"unit {reading.unit or '?'}"
    if math.isnan(reading.value):
        return "nan"
    if reading.overload:
        return "overload"
    if expected_unit == "A" and reading.ac and not reading.dc:
        return "AC"
    mode = next((f for f in reading.flags if f in NOT_PRESENT), "")
    return f"mode {mode}" if mode else ""


def _wait(seconds: float, lost: threading.Event) -> None:
    lost.wait(max(0.0, seconds))


def analyze(samples: Sequence[Sample], idle_window: tuple[float, float] | None, segments: Sequence[Segment],
            settings: RunSettings, expected_unit: str) -> dict[str, Any]:
    """Turn samples and phase windows into the figures, warnings and status of a run (pure function)."""
    warnings: list[str] = []
    errors: list[str] = []
    readings = [(s.t, s.reading) for s in samples if s.reading is not None]
    usable = [(t, r) for t, r in readings if not classify(r, expected_unit)]
    reasons: dict[str, int] = {}
    for _t, r in readings:
        why = classify(r, expected_unit)
        if why:
            reasons[why] = reasons.get(why, 0) + 1
    for why, n in sorted(reasons.items()):
        if why.startswith("unit"):
            unit = why.split(" ", 1)[1]
            dial = "mA/A" if expected_unit == "A" else expected_unit
            warnings.append(f"{n} readings were in {unit}, not {expected_unit}: the meter is on the wrong "
                            f"function (set the dial to {dial}); they are left out of the energy figure")
        elif why == "overload":
            warnings.append(f"{n} readings were OL (overload): the current is beyond the meter's range; "
                            "use a higher range; they are left out of the energy figure")
        elif why == "AC":
            warnings.append(f"{n} readings were AC: switch the meter to DC; "
                            "they are left out of the energy figure")
        elif why == "nan":
            warnings.append(f"{n} readings were not a number (a blank or dashed display); "
                            "they are left out of the energy figure")
        elif why.startswith("mode"):
            mode = why.split(" ", 1)[1]
            warnings.append(f"{n} readings were taken with {mode} on: the meter shows a held, extreme, relative or "
                            f"averaged value, not the present one; turn {mode} off (press its button again); "
                            "they are left out of the energy figure")
    pairs = zip(usable, usable[1:], strict=False)
    changes = [(t, a.range, b.range) for (_t0, a), (t, b) in pairs if a.range != b.range]
    if changes:
        t_first, old, new = changes[0]
        t0 = samples[0].t if samples else 0.0
        warnings.append(f"the meter changed range {len(changes)} time(s) mid-run (first {old} -> {new} at "
                        f"{t_first - t0:.1f} s): readings mix two ranges with different shunts; "
                        "fix the range by hand (RANGE button) for a cleaner figure")

    def values(lo: float, hi: float) -> list[float]:
        return [r.value for t, r in usable if lo <= t <= hi]

    idle_stats = PhaseStats.of(values(idle_window[0] + settings.settle_seconds, idle_window[1])
                               if idle_window else [])
    scale = 1.0 if expected_unit == "W" else (settings.volts or math.nan)
    reversed_leads = idle_stats.n > 0 and idle_stats.mean < 0  # a meter in the supply line the wrong way round
    labels = list(dict.fromkeys(s.label for s in segments))
    models: dict[str, Any] = {}
    estimates: dict[str, EnergyEstimate] = {}
    short: list[str] = []
    if idle_window is not None and idle_stats.n < settings.min_samples:
        short.append(f"idle {idle_stats.n}")
    for label in labels:
        done = [s for s in segments if s.label == label and s.complete]
        vals: list[float] = []
        for seg in done:
            vals += values(*seg.window(settings.settle_seconds))
        load = PhaseStats.of(vals)
        entry: dict[str, Any] = {
            "model": next(s.model for s in segments if s.label == label),
            "segments": len(done), "samples": load.n, "mean": load.mean, "std": load.std,
            "predictions": sum(s.predictions for s in done), "seconds": sum(s.seconds for s in done),
            "energy_per_prediction_j": None, "ci95_j": None, "total_energy_per_prediction_j": None,
        }
        models[label] = entry
        if not done:
            continue
        if load.n < settings.min_samples:
            short.append(f"{label} {load.n}")
            continue
        if idle_stats.n < settings.min_samples:
            continue
        est = energy_per_prediction(load, idle_stats, scale, entry["seconds"], entry["predictions"])
        estimates[label] = est
        entry.update(energy_per_prediction_j=est.joules_per_prediction, ci95_j=[est.ci95_low, est.ci95_high],
                     total_energy_per_prediction_j=est.total_joules_per_prediction,
                     delta=est.delta, significant=est.significant)
        if not est.significant:
            warnings.append(f"{label}: the load {expected_unit} is not distinguishable from idle at 95% "
                            "confidence; run longer or use a finer range")
        elif est.joules_per_prediction < 0 and not reversed_leads:  # reversed: said once, below
            warnings.append(f"{label}: the load {expected_unit} is below idle (energy per prediction "
                            f"{est.joules_per_prediction:.4g} J): something else drew more during the idle phase")
    if reversed_leads:
        warnings.insert(0, f"the meter reads a negative {expected_unit} at idle (mean {idle_stats.mean:.6g}): its "
                        "leads are reversed (swap them), so every energy has the wrong sign")
    if short:
        errors.append(f"too few samples for a meaningful figure ({', '.join(short)}; need "
                      f"{settings.min_samples} each): run longer (--idle-seconds, --rounds, --max-seconds), "
                      "lower --min-samples or skip less of each window (--settle-seconds)")
    if readings and not usable:
        errors.insert(0, "no usable readings: " + "; ".join(warnings[:1]))
    ratio = None
    if "A" in estimates and "B" in estimates:
        r = energy_ratio(estimates["B"], estimates["A"], idle_stats)
        if r is not None:
            ratio = {"definition": "energy per prediction of B (--compare) / of A (--model)", **r.as_dict()}
    return {
        "idle": {"samples": idle_stats.n, "mean": idle_stats.mean, "std": idle_stats.std},
        "models": models, "ratio": ratio, "warnings": warnings, "errors": errors,
        "readings": {"total": len(readings), "usable": len(usable), "left_out": reasons,
                     "range_changes": len(changes)},
    }


@dataclass
class Measurement:
    """Runs the protocol against an opened source and writes RUN_DIR/{samples.csv,summary.json,plot.png}."""

    source: Source
    models: Sequence[tuple[str, str]]  # [("A", model path), ("B", other model path)]
    data: str
    workload: ArgvBuilder
    settings: RunSettings = field(default_factory=RunSettings)
    out_dir: Path = Path("power-run")
    phase_listener: PhaseListener | None = None
    progress: ProgressFn | None = None
    notice: NoticeFn | None = None  # told (one line) when the run deviates from what was asked
    notes: list[str] = field(default_factory=list, init=False)  # those lines (summary.json's "notes" too)

    def _phase(self, recorder: Recorder, name: str, planned: float = 0.0) -> None:
        recorder.set_phase(name, planned)
        if self.phase_listener is not None:
            self.phase_listener(name)

    def run(self) -> dict[str, Any]:
        st = self.settings
        expected = self.source.expected_unit
        if expected == "A" and not st.volts:
            raise ValueError("--volts is required when the meter measures current")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.notes = []
        t0 = time.monotonic()
        log = CsvLog(self.out_dir / "samples.csv", t0)
        recorder = Recorder(self.source, log, self.progress)
        segments: list[Segment] = []
        errors: list[str] = []
        idle_window: tuple[float, float] | None = None
        interrupted = False
        try:
            self._phase(recorder, "idle", st.idle_seconds)
            recorder.start()
            idle_start = time.monotonic()
            _wait(st.idle_seconds, recorder.lost)
            rate, usable = self._idle_counts(recorder, idle_start, expected)
            if usable < st.min_samples and rate > 0:  # a slow meter or a short idle phase: extend it
                unsettled = max(0.0, idle_start + st.settle_seconds - time.monotonic())  # idle <= settle time
                extra = self._idle_extension(st.margin * (st.min_samples - usable) / rate + unsettled)
                self._phase(recorder, "idle", st.idle_seconds + extra)
                _wait(extra, recorder.lost)
                rate, usable = self._idle_counts(recorder, idle_start, expected)
            idle_window = (idle_start, time.monotonic())
            if recorder.lost.is_set():
                pass
            elif rate == 0:
                errors.append("no readings from the meter during the idle phase: check the port, the meter's "
                              "RS232/PC mode, and that the cable is powered (DTR=1, RTS=0)")
            else:
                # every run pays the settle time; together they must collect min_samples per model
                needed = st.margin * st.min_samples / rate / st.rounds + st.settle_seconds
                floor = max(st.min_load_seconds / st.rounds, st.settle_seconds + 2.0 / rate)
                per_segment = min(max(floor, needed), st.max_load_seconds / st.rounds)
                self._run_segments(recorder, segments, errors, per_segment)
        except KeyboardInterrupt as exc:  # Ctrl-C, or a signal handler raising KeyboardInterrupt("SIGTERM")
            interrupted = True
            errors.append(f"interrupted ({exc.args[0] if exc.args else 'Ctrl-C'}); "
                          "the result covers what was measured before")
        finally:
            self._phase(recorder, "end")
            recorder.stop()
            log.close()
        samples = [s for s, _p in recorder.samples]
        result = analyze(samples, idle_window, segments, st, expected)
        status = "ok"
        if recorder.lost.is_set() or interrupted:
            status = "partial"
        if errors or result["errors"]:
            status = "partial" if status == "partial" else ("insufficient" if result["errors"] and not errors
                                                           else "error")
        if recorder.lost.is_set():
            errors.insert(0, f"{recorder.lost_message}; stopped, keeping everything logged so far")
        summary: dict[str, Any] = {
            "status": status,
            "meter": self.source.label,
            "unit": expected,
            "volts": st.volts,
            "settings": asdict(st),
            "data": self.data,
            **result,
            "errors": errors + result["errors"],
            "segments": [{**asdict(s), "t_start": s.t_start - t0, "t_end": s.t_end - t0} for s in segments],
            "idle_window_s": [idle_window[0] - t0, idle_window[1] - t0] if idle_window else None,
            "meter_stats": self.source.stats(),
            "notes": list(self.source.notes) + self.notes,
            "files": {"csv": "samples.csv", "summary": "summary.json", "plot": "plot.png"},
        }
        write_summary(self.out_dir / "summary.json", summary)
        points = []
        for s in samples:
            if s.reading is not None and math.isfinite(s.reading.value):
                points.append((s.t - t0, s.reading.value, not classify(s.reading, expected)))
            elif s.reading is not None:
                points.append((s.t - t0, 0.0, False))
        plot_run(self.out_dir / "plot.png", points,
                 (idle_window[0] - t0, idle_window[1] - t0) if idle_window else None,
                 [(s.label, s.window(st.settle_seconds)[0] - t0, s.t_end - t0)
                  for s in segments if s.complete],
                 expected, f"{self.source.label}: {status}", summary["models"], summary["ratio"])
        return summary

    def _idle_extension(self, needed: float) -> float:
        """Seconds to extend the idle phase by: ``needed``, capped by max_load_seconds (--max-seconds),
        with a notice when the cap cuts it short."""
        st = self.settings
        if needed <= st.max_load_seconds:
            return needed
        self._note(f"warning: the idle phase is extended by {st.max_load_seconds:g} s, not the {needed:.3g} s "
                   f"that {st.min_samples} idle readings (--min-samples) need: --max-seconds "
                   f"{st.max_load_seconds:g} caps the extension; raise --max-seconds or --idle-seconds")
        return st.max_load_seconds

    def _note(self, line: str) -> None:
        self.notes.append(line)
        if self.notice is not None:
            self.notice(line)

    def _idle_counts(self, recorder: Recorder, idle_start: float, expected: str) -> tuple[float, int]:
        """(readings per second since idle_start, usable readings after the settle time)."""
        now = time.monotonic()
        readings = [s for s, _p in list(recorder.samples) if s.reading is not None and s.t >= idle_start]
        settled = idle_start + self.settings.settle_seconds
        usable = sum(1 for s in readings if s.t >= settled and not classify(s.reading, expected))  # type: ignore[arg-type]
        return len(readings) / max(now - idle_start, 1e-9), usable

    def _run_segments(self, recorder: Recorder, segments: list[Segment], errors: list[str],
                      per_segment: float) -> None:
        st = self.settings
        for _round in range(st.rounds):
            for label, model in self.models:
                if recorder.lost.is_set():
                    return
                self._phase(recorder, label, per_segment)
                argv = self.workload(model, self.data, per_segment)
                t_start = time.monotonic()
                try:
                    res = run_workload(argv, stop=recorder.lost, timeout=3 * per_segment + 60)
                except WorkloadInterrupted as exc:
                    segments.append(Segment(label, model, t_start, time.monotonic(), error=str(exc)))
                    return
                except WorkloadError as exc:
                    segments.append(Segment(label, model, t_start, time.monotonic(), error=str(exc)))
                    errors.append(f"workload for {label} ({model}) failed: {exc}")
                    return
                segments.append(
                    Segment(label, model, res.t_start, res.t_end, res.predictions, res.seconds, True))
                self._phase(recorder, "gap", st.settle_seconds)
                _wait(st.settle_seconds, recorder.lost)


def format_report(summary: dict[str, Any]) -> str:
    """Human-readable report of a run summary."""
    unit = summary["unit"]
    lines = [f"meter {summary['meter']}" + (f", supply {summary['volts']} V" if unit == "A" else "")]
    idle = summary["idle"]
    if idle["samples"]:
        lines.append(f"idle: mean {idle['mean']:.6g} {unit} over {idle['samples']} samples "
                     f"(sd {idle['std']:.3g})")
    for label, m in summary["models"].items():
        lines.append(f"{label} ({m['model']}): {m['samples']} load samples, mean {m['mean']:.6g} {unit}; "
                     f"{m['predictions']} predictions in {m['seconds']:.3f} s over {m['segments']} run(s)")
        if m["energy_per_prediction_j"] is not None:
            lo, hi = m["ci95_j"]
            lines.append(f"  energy per prediction: {m['energy_per_prediction_j']:.4g} J "
                         f"(95% CI {lo:.4g} .. {hi:.4g} J; "
                         f"{m['samples']} load + {idle['samples']} idle samples); "
                         f"including idle draw {m['total_energy_per_prediction_j']:.4g} J")
        else:
            lines.append("  energy per prediction: no figure (see errors)")
    if summary.get("ratio"):
        r = summary["ratio"]
        lines.append(f"energy ratio B/A: {r['value']:.4g} "
                     f"(95% CI {r['ci95_low']:.4g} .. {r['ci95_high']:.4g})")
    stats = summary.get("meter_stats") or {}
    if stats.get("dropped_packets") or stats.get("undecodable_packets"):
        lines.append(f"dropped packets: {stats.get('dropped_packets', 0)} ({stats.get('garbage_bytes', 0)} "
                     f"unreadable bytes), undecodable packets: {stats.get('undecodable_packets', 0)}")
    lines += [f"warning: {w}" for w in summary["warnings"]]
    lines += [f"error: {e}" for e in summary["errors"]]
    lines.append(f"status: {summary['status']}")
    return "\n".join(lines)
