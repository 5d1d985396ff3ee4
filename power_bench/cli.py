"""``frugalml power``: list meters, read one, emulate one, measure joules per prediction."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import NoReturn

import click

from pyruntime.cli_errors import NumberRange, OneLineErrors
from pyruntime.jsontext import json_text

from .emulator import MAX_INTERVAL, CycleValues, Emulator, check_showable
from .energy_counters import find_counters
from .framing import decodes_as
from .measure import Measurement, RunSettings, format_report
from .meters import METERS, UT_D02, find_meter
from .protocols import PROTOCOLS
from .reading import Reading
from .sources import MeterError, PortLost, SerialSource, Source
from .spec import open_spec
from .workload import (
    WorkloadCheckError,
    check_pyruntime_models,
    check_workload,
    pyruntime_workload,
    template_workload,
)

# the longest phase a run takes (a week): beyond it a wait overflows the platform's time_t
MAX_SECONDS = 7 * 24 * 3600.0
METER_HELP = ("METER:PORT (e.g. tenma-72-7730a:/dev/ttyUSB0), emulated:METER, sigrok:DRIVER[:PORT], "
              "powercap[:FILTER], hwmon[:FILTER] or energy[:FILTER] (either Linux energy counter)")
#: bytes `power read` collects before it checks that they are the named meter's packets (6 of the longest)
PROBE_BYTES = 6 * max(p.packet_size for p in PROTOCOLS.values())


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@click.group("power", cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
def power() -> None:
    """Measure joules per prediction with a logging multimeter (or an emulated one).

    \b
    power meters    supported meters, serial settings, cable notes
    power read      print decoded readings from a meter
    power emulate   stream a meter's byte protocol on a pseudo-terminal
    power run       idle + load protocol -> energy per prediction with a 95% interval
    """


@power.command("meters")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per meter.")
def meters_cmd(as_json: bool) -> None:
    """List supported meters: name, protocol family, serial settings, cable notes.

    Optically isolated cables (UT-D02/UT-D04 style) are powered from the port's control lines:
    DTR high, RTS low, set before the port opens; frugalml does this for every meter listed.
    """
    counters = find_counters()
    if as_json:
        for m in METERS:
            click.echo(json_text({"name": m.name, "aliases": list(m.aliases), "vendor": m.vendor,
                                   "model": m.model, "protocol": m.protocol, "serial": m.serial_settings,
                                   "sigrok_driver": m.sigrok_driver, "notes": m.notes}))
        return
    click.echo(f"{'meter':18} {'aliases':15} {'protocol':9} {'serial':26} sigrok driver")
    for m in METERS:
        click.echo(f"{m.name:18} {','.join(m.aliases) or '-':15} {m.protocol:9} {m.serial_settings:26} "
                   f"{m.sigrok_driver}")
    click.echo("")
    click.echo(f"cable: {UT_D02}.")
    for name, proto in PROTOCOLS.items():
        click.echo(f"protocol {name}: {proto.summary}")
    click.echo("other meters: sigrok:DRIVER[:PORT] through sigrok-cli "
               + ("(found)" if shutil.which("sigrok-cli") else "(sigrok-cli not installed)"))
    if counters:
        click.echo("energy counters: " + ", ".join(c.name for c in counters))
    else:
        click.echo("energy counters: none on this machine "
                   "(no /sys/class/powercap/intel-rapl*, no hwmon power sensors)")


def _open(spec: str, **kwargs: object) -> tuple[Source, object]:
    try:
        source, listener = open_spec(spec, **kwargs)  # type: ignore[arg-type]
        source.open()
    except (ValueError, MeterError) as exc:
        _fail(str(exc))
    return source, listener


@power.command("read")
@click.option("--meter", "spec", required=True, metavar="METER", help=METER_HELP)
@click.option("--samples", type=click.IntRange(min=1), help="Stop after N decoded readings.")
@click.option("--seconds", type=NumberRange(min=0, min_open=True, finite=True), help="Stop after S seconds.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per reading.")
def read_cmd(spec: str, samples: int | None, seconds: float | None, as_json: bool) -> None:
    """Print one line per decoded reading: value in base units, unit, AC/DC, then range, flags, time.

    Runs until --samples or --seconds is reached, or Ctrl-C. Dropped (garbage/partial) packets are
    counted and reported on stderr at the end.
    """
    if samples is not None and seconds is not None:
        raise click.UsageError("give --samples or --seconds, not both")
    source, _ = _open(spec)
    t0 = time.monotonic()
    got = 0
    code = 0
    probed = False
    refused: dict[str, int] = {}  # the decoder's reasons for well-framed packets it did not read
    try:
        while (samples is None or got < samples) and (seconds is None or time.monotonic() - t0 < seconds):
            try:
                batch = source.poll(0.1)
            except PortLost as exc:
                batch = exc.samples
                click.echo(f"error: {exc}", err=True)
                code = 1
            for s in batch:
                if s.kind == "undecodable":
                    refused[s.note] = refused.get(s.note, 0) + 1
                if s.reading is None or (samples is not None and got >= samples):
                    continue
                got += 1
                _print_reading(s.reading, s.t - t0, s.raw, as_json)
            if code:
                break
            if not probed and isinstance(source, SerialSource) and len(source.captured) >= PROBE_BYTES:
                probed = True
                _fail_if_other_family(source)
    except KeyboardInterrupt:
        pass
    finally:
        source.close()
    if not code and not probed and isinstance(source, SerialSource):  # stopped before PROBE_BYTES came in
        _fail_if_other_family(source)
    if refused and not got:
        note, n = max(refused.items(), key=lambda kv: kv[1])
        others = sum(refused.values()) - n
        click.echo(f"warning: no reading decoded; {n} well-framed packet{'s' if n > 1 else ''} refused ({note})"
                   f"{f' and {others} for other reasons' if others else ''}: the meter is on a function or state "
                   "power_bench does not read (set the dial to the current or voltage it measures)", err=True)
    stats = source.stats()
    if stats:
        click.echo("; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in stats.items()), err=True)
    sys.exit(code)


def other_family(source: SerialSource) -> str | None:
    """The line naming the meter family the bytes read decode as, when they are not the named meter's packets
    but another family's (``None`` when they are the meter's, or noise)."""
    proto = decodes_as(bytes(source.captured), source.meter.proto, PROTOCOLS.values())
    if proto is None:
        return None
    family = [m.name for m in METERS if m.protocol == proto.name]
    shown = ", ".join(family) if len(family) <= 5 else ", ".join(family[:4]) + f" and {len(family) - 4} more"
    return (f"{source.port} does not send {source.meter.name} ({source.meter.protocol}) packets; these bytes "
            f"decode as {proto.name} ({shown}): try --meter {family[0]}:{source.port}")


def _fail_if_other_family(source: SerialSource) -> None:
    """Exit 2 with one line when the bytes read are not the named meter's packets but another family's."""
    hint = other_family(source)
    if hint is not None:
        _fail(hint)


def _print_reading(r: Reading, t: float, raw: bytes, as_json: bool) -> None:
    if as_json:
        click.echo(json_text({**r.as_dict(), "t": round(t, 4), "raw": raw.hex(" ")}))
    else:
        click.echo(f"{r.describe()} t={t:.3f}s")


@power.command("emulate")
@click.argument("meter")
@click.option("--values", "values_text", help="Values to loop over, e.g. 123.4mA,-0.512A,5V,OLmA.")
@click.option("--profile", type=click.Path(exists=True, dir_okay=False),
              help="File with one VALUE[,REPEAT] per line, looped.")
@click.option("--garbage", type=NumberRange(0, 1, finite=True), default=0.0, show_default=True,
              help="Probability that junk (random bytes, partial or corrupted packet) precedes a packet.")
@click.option("--interval", type=NumberRange(min=0, min_open=True, max=MAX_INTERVAL, finite=True), default=0.5,
              show_default=True,
              help="Seconds between packets (a real meter: 0.05-0.5; faster is fine for tests).")
@click.option("--count", type=click.IntRange(min=1), help="Stop after N packets and close the pty "
              "(what a reader sees when a meter is unplugged).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for garbage.")
def emulate_cmd(meter: str, values_text: str | None, profile: str | None, garbage: float, interval: float,
                count: int | None, seed: int) -> None:
    """Emulate METER on a pseudo-terminal: print its path first, then stream the meter's real byte
    protocol, looping over the values, until stopped (Ctrl-C / SIGTERM) or --count packets."""
    if values_text is not None and profile:
        raise click.UsageError("give --values or --profile, not both")
    try:
        m = find_meter(meter)
        text = "123.4mA" if values_text is None else values_text  # --values "": no values, not the default
        values = CycleValues.from_file(profile) if profile else CycleValues.parse(text)
        for q in values.quantities():
            check_showable(m, q, str(profile) if profile else "--values")  # fail now, with the reason
        emulator = Emulator(m, values, interval=interval, garbage=garbage, seed=seed, count=count)
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
        return

    def _stop(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    click.echo(emulator.open())
    sys.stdout.flush()
    try:
        emulator.run()
    except KeyboardInterrupt:
        pass
    finally:
        emulator.close()


class _Progress:
    """The run's progress (pyruntime.progress): on a terminal a bar counting the phases, with the
    current phase, its time, readings and the last reading after it; otherwise one summary line
    when the run ends."""

    def __init__(self, listener: Callable[[str], None] | None) -> None:
        from pyruntime.progress import Progress  # shared helper; pyruntime never imports compiler

        self.bar = Progress("power run", total=None, unit="phase")
        self.listener = listener

    def phase(self, name: str) -> None:
        """Phase listener of the Measurement: one step per phase started (idle, A, gap, B, ...)."""
        if name != "end":
            self.bar.update()
            self.bar.note(f"[{name}]")
        if self.listener is not None:
            self.listener(name)

    def __call__(self, phase: str, elapsed: float, planned: float, n: int, last: Reading | None) -> None:
        shown = last.describe().split(" range=")[0] if last else "-"
        self.bar.note(f"[{phase}] {elapsed:5.1f}/{planned:.1f} s  {n} readings  last {shown}")


def _say(line: str) -> None:
    """One line on stderr, above the progress bar when one is drawn."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)


def _stop_on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt("SIGTERM")


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM stops a run as Ctrl-C does: the Measurement ends, keeps its logs and reports what it measured
    (only the main thread can take a signal handler; elsewhere SIGTERM keeps its default)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _out_dir_problem(out: Path) -> str:
    """Why the run directory cannot be created or written, without creating anything ('' if it can)."""
    if out.exists():
        if not out.is_dir():
            return f"run directory {out} exists and is not a directory"
        if not os.access(out, os.W_OK | os.X_OK):
            return f"run directory {out} is not writable"
        return ""
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot create run directory {out}: {parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot create run directory {out}: {parent} is not writable"
    return ""


def _make_out_dir(out: Path) -> list[Path]:
    """Create the run directory and missing parents; return the ones created (innermost first)."""
    missing = []
    p = out
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_dirs(missing)
        _fail(f"cannot create run directory {out}: {exc.strerror or exc}")
    return missing


def _remove_dirs(dirs: list[Path]) -> None:
    for d in dirs:  # innermost first; only directories this run created, and only while empty
        try:
            d.rmdir()
        except OSError:
            pass


@power.command("run")
@click.option("--meter", "spec", required=True, metavar="METER", help=METER_HELP)
@click.option("--volts", type=NumberRange(min=0, min_open=True, finite=True),
              help="Supply voltage of the device (required when the meter reads current).")
@click.option("--model", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Model A (msgpack).")
@click.option("--data", required=True, metavar="DATA", help="Data the workload loops over (path or bundled name).")
@click.option("--compare", type=click.Path(exists=True, dir_okay=False),
              help="Model B: runs alternate A B A B ...; the report gives the energy ratio B/A.")
@click.option("--idle-seconds", type=NumberRange(min=0, min_open=True, max=MAX_SECONDS, finite=True), default=10.0,
              show_default=True,
              help="Idle phase before the workload, always run in full; extended when it yields fewer than "
              "--min-samples readings, by at most --max-seconds.")
@click.option("--min-samples", type=click.IntRange(min=2), default=30, show_default=True,
              help="Meter readings needed in the idle phase and per model; fewer -> no figure.")
@click.option("--rounds", type=click.IntRange(min=1), default=None,
              help="Runs per model [default: 1, or 2 with --compare].")
@click.option("--settle-seconds", type=NumberRange(min=0, max=MAX_SECONDS, finite=True), default=0.5, show_default=True,
              help="Readings this soon after a phase starts are left out (meter lag).")
@click.option("--max-seconds", type=NumberRange(min=0, min_open=True, max=MAX_SECONDS, finite=True), default=3600.0,
              show_default=True,
              help="Cap on the workload time per model and on the idle phase's extension (the run then may "
              "rest on too few samples; a capped idle phase says so on stderr).")
@click.option("--numeric", type=click.Choice(["float32", "q15"]), help="Runtime arithmetic of the workload.")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), metavar="RUN_DIR",
              help="Run directory: samples.csv, summary.json, plot.png.")
@click.option("--workload-cmd", help="Workload command template with {model} {data} {seconds} "
              "[default: python -m pyruntime.workload]; its last stdout line must be "
              '{"predictions": N, "seconds": T}.')
@click.option("--emulate", "emulate", help="Current profile for emulated:METER, e.g. "
              "'idle=100mA,A=150mA,B=130mA,noise=0.5mA,interval=0.25'.")
@click.option("--garbage", type=NumberRange(0, 1, finite=True), default=0.0, help="Junk rate for emulated:METER.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for emulated noise.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary JSON instead of the text report.")
@click.option("--quiet", is_flag=True, help="No progress display.")
def run_cmd(spec: str, volts: float | None, model: str, data: str, compare: str | None, idle_seconds: float,
            min_samples: int, rounds: int | None, settle_seconds: float, max_seconds: float,
            numeric: str | None, out_dir: str,
            workload_cmd: str | None, emulate: str | None, garbage: float, seed: int, as_json: bool,
            quiet: bool) -> None:
    """Measure energy per prediction.

    Samples the idle current, then runs the prediction workload (the C runtime in a subprocess) long
    enough to collect --min-samples readings, and reports

    \b
      energy/prediction = (mean load I - mean idle I) x volts x T / N
      (T: workload's prediction time, N: its prediction count)

    with a 95% confidence interval from the spread and count of the samples, and the total including
    the idle draw. With --compare the models alternate to cancel drift. Everything is logged to
    RUN_DIR as it arrives.

    Before anything is measured, the workload is checked: each model loads, the data loads and has the
    model's feature count, and one prediction works (with --workload-cmd: a short trial run of the
    command must report its count). Exit status: 0 full result, 1 partial or no figure (too few
    samples, port lost, workload failed mid-run, a meter of another family: one more line names it;
    logs are kept), 2 bad usage or input (one line on stderr, RUN_DIR not created).
    """
    ctx = click.get_current_context()
    given = [f"--{n}" for n in ("emulate", "garbage", "seed")
             if ctx.get_parameter_source(n) is not click.core.ParameterSource.DEFAULT]
    if given and not spec.lower().startswith("emulated:"):
        _fail(f"{' and '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} to --meter emulated:METER")
    if workload_cmd is not None and numeric is not None:
        _fail("--numeric sets the default workload's arithmetic; a --workload-cmd chooses its own")
    if workload_cmd is not None and not workload_cmd.strip():
        _fail("--workload-cmd: empty workload command")
    try:
        workload = template_workload(workload_cmd) if workload_cmd else pyruntime_workload(numeric)
    except ValueError as exc:
        _fail(f"--workload-cmd: {exc}")
    if not out_dir.strip():
        _fail("-o RUN_DIR is empty: name the run directory (samples.csv, summary.json and plot.png go there)")
    out = Path(out_dir)
    problem = _out_dir_problem(out)
    if problem:
        _fail(problem)
    try:
        source, listener = open_spec(spec, emulate=emulate, seed=seed, garbage=garbage)
    except (ValueError, MeterError) as exc:
        _fail(str(exc))
    if source.expected_unit == "A" and volts is None:
        _fail("--volts is required when the meter measures current (the supply voltage of the device)")
    rounds = rounds or (2 if compare else 1)  # each model's load windows
    if settle_seconds >= max_seconds / rounds:
        _fail(f"--settle-seconds {settle_seconds:g} skips at least each load window's whole length (--max-seconds "
              f"{max_seconds:g} over {rounds} window{'s' if rounds > 1 else ''} per model: "
              f"{max_seconds / rounds:g} s): no reading could count; lower --settle-seconds or raise --max-seconds")
    # everything the workload needs is checked before a single reading is taken: a model that does not fit
    # the data must not cost the user an idle phase, nor leave a run directory behind
    # (the default workload is pyruntime.workload on this interpreter: the same steps run here, in-process;
    # a --workload-cmd may run anywhere, so it gets a short trial run instead)
    paths = [model] + ([compare] if compare else [])
    try:
        if workload_cmd:
            with _sigterm_as_ctrl_c():  # a SIGTERM now must not leave the trial run (maybe over ssh) behind
                check_workload(workload, paths, data)
        else:
            check_pyruntime_models(paths, data, numeric)
    except WorkloadCheckError as exc:
        _fail(str(exc))
    created = _make_out_dir(out)
    try:
        source.open()
    except (ValueError, MeterError, OSError) as exc:
        source.close()
        _remove_dirs(created)
        _fail(str(exc))
    models = [("A", model)] + ([("B", compare)] if compare else [])
    settings = RunSettings(volts=volts, idle_seconds=idle_seconds, min_samples=min_samples,
                           settle_seconds=settle_seconds, rounds=rounds,
                           max_load_seconds=max_seconds)
    progress = None if quiet else _Progress(listener)
    try:
        with _sigterm_as_ctrl_c(), progress.bar if progress is not None else contextlib.nullcontext():
            summary = Measurement(source, models, data, workload, settings, out,
                                  progress.phase if progress is not None else listener,  # type: ignore[arg-type]
                                  progress, _say).run()
    finally:
        source.close()
    click.echo(json_text(summary, indent=2) if as_json else format_report(summary))
    click.echo(f"logs: {out_dir}/samples.csv, {out_dir}/summary.json, {out_dir}/plot.png", err=True)
    if summary["status"] != "ok" and isinstance(source, SerialSource):  # no figure: a meter of another family?
        hint = other_family(source)
        if hint is not None:
            click.echo(f"error: {hint}", err=True)
    sys.exit(0 if summary["status"] == "ok" else 1)
