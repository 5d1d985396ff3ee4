"""Backend for any meter libsigrok supports: drives ``sigrok-cli`` and parses its analog output."""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import time

from .reading import PREFIXES, Reading
from .sources import MeterError, PortLost, Sample, Source

_LINE_RE = re.compile(
    r"^\s*(?P<ch>[^:]+):\s+(?P<num>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan))\s*(?P<unit>\S*)(?P<rest>.*)$"
)
# libsigrok prints the ohm as U+2126 OHM SIGN; U+03A9 (Greek capital omega) is accepted too
_UNITS = {"A": "A", "V": "V", "\u2126": "Ohm", "\u03a9": "Ohm", "Ohm": "Ohm", "Hz": "Hz", "F": "F", "\u00b0C": "C",
          "\u00b0F": "degF", "W": "W", "%": "%"}

NOT_FOUND = ("sigrok-cli was not found on PATH: install it (e.g. 'apt install sigrok-cli') or use one of "
             "the native drivers listed by 'power meters'")


def parse_sigrok_line(line: str) -> Reading | None:
    """``P1: 123.400000 mA DC AUTO`` -> Reading(0.1234, "A", dc=True, auto=True); None if not a reading."""
    m = _LINE_RE.match(line)
    if m is None:
        return None
    unit_text = m.group("unit")
    prefix = ""
    if unit_text not in _UNITS and unit_text[:1] in PREFIXES and unit_text[1:] in _UNITS:
        prefix, unit_text = unit_text[0], unit_text[1:]
    if unit_text not in _UNITS:
        return None
    flags = m.group("rest").split()
    value = float(m.group("num")) * PREFIXES[prefix]
    overload = value in (float("inf"), float("-inf"))
    other = tuple(f for f in flags if f not in ("AC", "DC", "AUTO"))
    return Reading(value, _UNITS[unit_text], "AC" in flags, "DC" in flags, "AUTO" in flags, overload,
                   prefix + unit_text, other)


def sigrok_drivers(exe: str) -> set[str]:
    """The hardware drivers `sigrok-cli -L` lists (empty when it cannot say: then nothing is refused)."""
    try:
        res = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    drivers: set[str] = set()
    section = False
    for line in res.stdout.splitlines():
        if not line.startswith(" "):
            section = line.strip().lower().startswith("supported hardware drivers")
        elif section and line.split():
            drivers.add(line.split()[0])
    return drivers


class SigrokSource(Source):
    """``sigrok-cli --driver DRIVER[:conn=PORT] --continuous -O analog``, one reading per output line."""

    def __init__(self, driver: str, conn: str | None = None, executable: str = "sigrok-cli") -> None:
        super().__init__(label=f"sigrok:{driver}" + (f":{conn}" if conn else ""), expected_unit="A")
        self.driver = driver
        self.conn = conn
        self.executable = executable
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self.unparsed_lines = 0

    def open(self) -> None:
        exe = shutil.which(self.executable)
        if exe is None:
            raise MeterError(NOT_FOUND)
        # checked before a reading is due: sigrok-cli itself would only say so once the idle phase is lost
        if self.conn and self.conn.startswith("/") and not os.path.exists(self.conn):
            raise MeterError(f"sigrok:{self.driver}: the port {self.conn} does not exist")
        drivers = sigrok_drivers(exe)
        if drivers and self.driver not in drivers:
            serial = sorted(d for d in drivers if d.endswith("-ser"))
            raise MeterError(f"sigrok-cli has no driver {self.driver!r} (`sigrok-cli -L` lists {len(drivers)}; "
                             f"the serial meters' names end in -ser, e.g. {', '.join(serial[:3])})")
        spec = f"{self.driver}:conn={self.conn}" if self.conn else self.driver
        argv = [exe, "--driver", spec, "--continuous", "-O", "analog"]
        try:
            self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise MeterError(f"cannot start sigrok-cli: {exc}") from exc

    def poll(self, timeout: float) -> list[Sample]:
        if self._proc is None or self._proc.stdout is None:
            raise MeterError("sigrok-cli is not running")
        fd = self._proc.stdout.fileno()
        out: list[Sample] = []
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                err = self._proc.stderr.read().decode(errors="replace").strip() if self._proc.stderr else ""
                code = self._proc.wait()
                last = err.splitlines()[-1] if err else ""
                raise PortLost(f"sigrok-cli exited with code {code}: {last}", out)
            self._buf += chunk
            *lines, self._buf = self._buf.split(b"\n")
            t, wall = time.monotonic(), time.time()
            for raw in lines:
                reading = parse_sigrok_line(raw.decode(errors="replace"))
                if reading is None:
                    self.unparsed_lines += 1
                    continue
                out.append(Sample(t, wall, "packet", raw, reading))
        return out

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None

    def stats(self) -> dict[str, int]:
        return {"unparsed_lines": self.unparsed_lines}
