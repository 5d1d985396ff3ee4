"""Every emulated meter, checked against libsigrok: sigrok-cli reads the emulator's pty and must decode the
value, unit and AC/DC that were asked; our decoder must agree with sigrok-cli on the same packets.

sigrok-cli (libserialport 0.1.1) opens only ports with a /sys/class/tty entry and a 7O1 setting that
sticks, which a pty has not: a small LD_PRELOAD shim (tests/fixtures/sigrok_pty_shim.c, built with gcc
here) answers those look-ups for /dev/pts/N only. Skipped with the reason when sigrok-cli or gcc is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from power_bench.emulator import CycleValues, Emulator
from power_bench.meters import METERS, Meter
from power_bench.protocols import ut71x
from power_bench.reading import Quantity, Reading, parse_quantity
from power_bench.sigrok import parse_sigrok_line
from power_bench.sigrok import sigrok_drivers as listed_drivers

SHIM_SOURCE = Path(__file__).parent / "fixtures" / "sigrok_pty_shim.c"
SIGROK = shutil.which("sigrok-cli")
GCC = shutil.which("gcc")

pytestmark = [
    pytest.mark.skipif(SIGROK is None, reason="sigrok-cli is not installed (Debian package sigrok-cli)"),
    pytest.mark.skipif(GCC is None, reason="gcc is not installed (needed to build the pty shim for sigrok-cli)"),
]

# Value classes: positive and negative, small and large magnitudes on different ranges of the mA/uA/A and
# mV/V functions, AC and DC, and values whose leading digit is 0 on a 4-digit display (5.02 V is "05.02",
# the case libsigrok misread while the FS9721 emulator blanked it). Every value is exactly representable on
# every family (<= 4 significant digits, within the UT61E's 22000 counts and the FS9721's 4000 counts).
VOLTS_AMPS = ["12.34uA", "-345.6uA", "1.234mA", "-42.1mA", "-198.7mA", "0.512A", "-3.21A", "123.4mAAC",
              "12.3mV", "-123.4mV", "-1.234V", "5.02V", "23.45V", "389.9V", "230VAC", "1.5VAC"]
OTHER_UNITS = ["120Ohm", "4.7kOhm", "1.234MOhm", "50Hz", "2.2uF", "470nF"]
CANDIDATE_UNITS = ("A", "V", "Ohm", "Hz", "F", "W")

SERIAL_METERS = [m for m in METERS if m.sigrok_driver.endswith("-ser")]


def values_for(meter: Meter) -> list[Quantity]:
    """The value classes this meter's emulator can send (every unit it accepts is covered)."""
    qs = []
    for text in VOLTS_AMPS + OTHER_UNITS:
        q = parse_quantity(text)
        try:
            meter.proto.encode(q)
        except ValueError:
            continue
        qs.append(q)
    sendable = set()
    for unit in CANDIDATE_UNITS:
        try:
            meter.proto.encode(Quantity(1.0, unit))
        except ValueError:
            continue
        sendable.add(unit)
    assert {q.unit for q in qs} == sendable, f"{meter.name}: add test values for {sendable - {q.unit for q in qs}}"
    assert {q.prefix for q in qs if q.unit == "A"} >= {"u", "m", ""}
    assert {q.ac for q in qs} == {True, False} and any(q.value < 0 for q in qs)
    return qs


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sigrok_shim") / "sigrok_pty_shim.so"
    assert GCC is not None
    res = subprocess.run([GCC, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(out),
                          str(SHIM_SOURCE), "-ldl"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="module")
def sigrok_drivers() -> set[str]:
    assert SIGROK is not None
    return listed_drivers(SIGROK)  # what `power` checks a sigrok: spec against


def sigrok_read(meter: Meter, values: list[Quantity], shim: Path, samples: int) -> list[str]:
    """Stream the values on a pty and return sigrok-cli's output lines for `samples` readings."""
    assert SIGROK is not None
    env = dict(os.environ, LD_PRELOAD=str(shim), LC_ALL="C.UTF-8")
    with Emulator(meter, CycleValues([(q, 1) for q in values]), interval=0.01) as emu:
        argv = [SIGROK, "--driver", f"{meter.sigrok_driver}:conn={emu.path}", "--samples", str(samples)]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=20)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"sigrok-cli gave fewer than {samples} readings in 20 s: {exc.stdout!r} {exc.stderr!r}")
    assert res.returncode == 0, res.stderr
    return [line for line in res.stdout.splitlines() if line.strip()]


def _same(a: Reading, value: float, unit: str, ac: bool, dc: bool) -> bool:
    return a.unit == unit and a.ac == ac and a.dc == dc and a.value == pytest.approx(value, rel=1e-9)


def test_every_serial_meter_is_listed() -> None:
    assert len(SERIAL_METERS) == len(METERS) >= 21  # every meter of the table has a libsigrok -ser driver
    assert {m.protocol for m in SERIAL_METERS} == {"ut71x", "fs9721", "fs9922", "es51922"}


@pytest.mark.parametrize("meter", SERIAL_METERS, ids=[m.name for m in SERIAL_METERS])
def test_sigrok_cli_decodes_what_the_emulator_was_asked(meter: Meter, shim: Path, sigrok_drivers: set[str]) -> None:
    assert meter.sigrok_driver in sigrok_drivers, f"libsigrok has no driver {meter.sigrok_driver}"
    values = values_for(meter)
    lines = sigrok_read(meter, values, shim, samples=2 * len(values) + 1)
    readings = [parse_sigrok_line(line) for line in lines]
    assert None not in readings, lines
    decoded = [r for r in readings if r is not None]
    assert len(decoded) == 2 * len(values) + 1, lines

    dc_units = ("V", "A")
    unmatched = []
    for line, r in zip(lines, decoded, strict=True):
        asked = [q for q in values if _same(r, q.value, q.unit, q.ac, not q.ac and q.unit in dc_units)]
        if not asked:
            unmatched.append(line)
            continue
        # the other direction: the packet sigrok-cli accepted, through our decoder, says the same
        ours = meter.proto.decode(meter.proto.encode(asked[0]))
        assert _same(ours, r.value, r.unit, r.ac, r.dc), (line, ours)
    assert not unmatched, f"sigrok-cli decoded values that were never sent: {unmatched}"
    seen = {(q.value, q.unit, q.ac) for q in values
            if any(_same(r, q.value, q.unit, q.ac, not q.ac and q.unit in dc_units) for r in decoded)}
    missing = [q for q in values if (q.value, q.unit, q.ac) not in seen]
    assert not missing, f"sent but never decoded by sigrok-cli: {missing}"


def sigrok_read_packets(driver: str, packets: list[bytes], shim: Path) -> list[str]:
    """Write the packets on a pty in a loop (not through the emulator: byte states it never encodes) and return
    sigrok-cli's output lines for one reading of each."""
    assert SIGROK is not None
    import threading  # noqa: PLC0415 - this test only
    import tty  # noqa: PLC0415

    master, slave = os.openpty()
    tty.setraw(slave)
    stop = threading.Event()

    def pump() -> None:
        while not stop.is_set():
            for p in packets:
                try:
                    os.write(master, p)
                except OSError:
                    return
                stop.wait(0.02)

    feeder = threading.Thread(target=pump, daemon=True)
    feeder.start()
    env = dict(os.environ, LD_PRELOAD=str(shim), LC_ALL="C.UTF-8")
    try:
        res = subprocess.run([SIGROK, "--driver", f"{driver}:conn={os.ttyname(slave)}", "--samples",
                              str(2 * len(packets))], capture_output=True, text=True, env=env, timeout=20)
    finally:
        stop.set()
        feeder.join(timeout=5)
        os.close(master)
        os.close(slave)
    assert res.returncode == 0, res.stderr
    return [line for line in res.stdout.splitlines() if line.strip()]


def _ut71x_packet(digits: str, rng: str, func: str, status: int = 0x32, option: int = 0x31) -> bytes:
    return digits.encode() + rng.encode() + func.encode() + bytes([status, option]) + b"\r\n"


# byte states the UT71x emulator never sends, decoded by libsigrok 0.5.2 and by ours: the 4000-count mode's
# blank last digit (ours read "1234:" as 12.34 mA where 0.5.2 says 123.40 mA) and the resistance ranges
# (ours read range 1 as 4000.0 Ohm where 0.5.2 says 400.00 Ohm); round 61's probe
UT71X_STATES = [_ut71x_packet("1234:", "1", "8"), _ut71x_packet("0512:", "1", "1"),
                _ut71x_packet("1234:", "0", "3", option=0x34)] + [
    _ut71x_packet("12340", str(r), "4", status=0x30) for r in range(1, 7)]


def test_ut71x_states_beyond_the_emulator_decode_as_libsigrok_does(shim: Path) -> None:
    lines = sigrok_read_packets("tenma-72-7730-ser", UT71X_STATES, shim)
    readings = [parse_sigrok_line(line) for line in lines]
    assert len(readings) == 2 * len(UT71X_STATES) and None not in readings, lines
    ours = [ut71x.decode(p) for p in UT71X_STATES]
    seen = set()
    for line, r in zip(lines, readings, strict=True):
        assert r is not None
        match = [i for i, o in enumerate(ours) if _same(o, r.value, r.unit, r.ac, r.dc)]
        assert match, f"sigrok-cli read {line!r}; ours: {[(o.value, o.unit) for o in ours]}"
        seen.update(match)
    assert seen == set(range(len(UT71X_STATES))), [UT71X_STATES[i] for i in set(range(len(ours))) - seen]


def _with_bits(packet: bytes, *edits: tuple[int, int, int]) -> bytes:
    """packet with (byte, clear mask, set mask) edits."""
    b = bytearray(packet)
    for i, clear, put in edits:
        b[i] = (b[i] & ~clear) | put
    return bytes(b)


def _details_states() -> list[tuple[str, list[bytes]]]:
    """Per meter, packets of states the emulator never sends: its own symbols (libsigrok's per-meter details) and
    diode readings whose DC segment is off; round 62's probe found ours reading UT60E / 72-7745 / VC-840 in
    degC as volts, VC-830 in diode mode as no unit, and every diode reading without the DC flag."""
    from power_bench.protocols import fs9721, fs9922  # noqa: PLC0415 - this test only

    volts, milliamps = fs9721.encode(parse_quantity("23.4V")), fs9721.encode(parse_quantity("12.3mA"))
    user = [_with_bits(p, (13, 0x0F, bits)) for p in (volts, milliamps) for bits in (0x1, 0x2, 0x3, 0x8)]
    diode721 = _with_bits(fs9721.encode(parse_quantity("0.512V")), (9, 0, 0x1), (0, 0x4, 0))
    v922 = fs9922.encode(parse_quantity("1.234V"))
    z_bits = [_with_bits(v922, (8, 0, 0x80)), _with_bits(v922, (8, 0, 0x40)), _with_bits(v922, (9, 0, 0x01)),
              _with_bits(v922, (10, 0x80, 0), (8, 0, 0x80)), _with_bits(v922, (7, 0x10, 0), (9, 0, 0x04))]
    return [(name, [*user, diode721]) for name in ("uni-t-ut60a", "uni-t-ut60e", "tenma-72-7745", "voltcraft-vc820",
                                                   "voltcraft-vc840")] + [
        ("voltcraft-vc830", z_bits), ("uni-t-ut61d", [p for i, p in enumerate(z_bits) if i != 3]),
        ("tenma-72-7730a", [_ut71x_packet("05120", "0", ";", status=0x30)]),
        ("uni-t-ut61e", [b"005120" + bytes([0x31, 0x30, 0x30, 0x30, 0x32, 0x30]) + b"\r\n"])]


DETAILS_STATES = _details_states()


@pytest.mark.parametrize(("name", "packets"), DETAILS_STATES, ids=[n for n, _ in DETAILS_STATES])
def test_meters_own_symbols_and_diode_readings_decode_as_libsigrok_does(name: str, packets: list[bytes],
                                                                         shim: Path) -> None:
    meter = next(m for m in METERS if m.name == name)
    lines = sigrok_read_packets(meter.sigrok_driver, packets, shim)
    ours = [meter.proto.decode(p) for p in packets]
    seen = set()
    for line in lines:
        r = parse_sigrok_line(line)
        assert r is not None, line
        match = [i for i, o in enumerate(ours) if _same(o, r.value, r.unit, r.ac, r.dc)
                 and ("diode" in o.flags) == ("DIODE" in r.flags)]
        assert match, f"{name}: sigrok-cli read {line!r}; ours: {[(o.value, o.unit, o.dc, o.flags) for o in ours]}"
        seen.update(match)
    assert seen == set(range(len(packets))), f"{name}: never read by sigrok-cli: {set(range(len(packets))) - seen}"


REPORT = f"{sys.executable} -c \"import json, sys; print(json.dumps({{'predictions': 9, 'seconds': 0.01}}))\""


def test_a_sigrok_driver_or_port_that_does_not_exist_is_refused_before_reading(tmp_path: Path) -> None:
    """`read` exited 1 after sigrok-cli gave up and `run` lost its idle phase to it, then advised running longer;
    now both refuse the spec at once (exit 2, one line, no run directory)."""
    from click.testing import CliRunner  # noqa: PLC0415

    from power_bench.cli import power  # noqa: PLC0415

    (tmp_path / "m.msgpack").write_bytes(b"x")
    for spec, needle in (("sigrok:nosuchdriver:/dev/null", "sigrok-cli has no driver 'nosuchdriver'"),
                         ("sigrok:uni-t-ut61e-ser:/dev/ttyNOPE9", "the port /dev/ttyNOPE9 does not exist")):
        res = CliRunner().invoke(power, ["read", "--meter", spec, "--seconds", "1"])
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and needle in res.stderr, res.output
        res = CliRunner().invoke(power, ["run", "--meter", spec, "--volts", "5", "--model", str(tmp_path / "m.msgpack"),
                                         "--data", "x", "--workload-cmd", REPORT, "-o",
                                         str(tmp_path / "out"), "--quiet"])
        assert res.exit_code == 2 and needle in res.stderr, res.output
        assert not (tmp_path / "out").exists()
