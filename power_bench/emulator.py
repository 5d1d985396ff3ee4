"""An emulated meter: encodes values into a meter's real byte protocol and streams them on a pty."""

from __future__ import annotations

import os
import random
import threading
import time
import tty
from collections.abc import Iterable, Sequence
from pathlib import Path

from pyruntime.numtext import parse_index

from .meters import Meter
from .reading import Quantity, parse_quantity

# the longest wait between packets (a real meter sends several a second; threading waits at most ~9.2e9 s)
MAX_INTERVAL = 3600.0
# the phases a measurement passes through (measure.Measurement), which an emulated current profile may set
PHASES = ("idle", "A", "B", "gap")


def check_showable(meter: Meter, q: Quantity, what: str) -> None:
    """ValueError unless the meter can show ``q`` as a number (or OL when ``q`` is OL): the unit and prefix it
    has, and a magnitude within its ranges (an emulator would send OL for 1e6 A, with no word)."""
    packet = meter.proto.encode(q)  # ValueError naming the unit or prefix the meter lacks
    if meter.proto.decode(packet).overload and not q.overload:
        raise ValueError(f"{what}: {meter.name} shows OL for {q.scaled:g}{q.prefix}{q.unit} (beyond its ranges): "
                         "use a value it can show, or OL")


class ValueSource:
    """Gives the emulator the quantity to show next."""

    def next(self) -> Quantity:  # pragma: no cover - interface
        raise NotImplementedError


class CycleValues(ValueSource):
    """Loop over a fixed list of quantities, each shown ``repeat`` times."""

    def __init__(self, values: Sequence[tuple[Quantity, int]]) -> None:
        if not values:
            raise ValueError("no values to emulate")
        bad = [repeat for _, repeat in values if repeat < 1]
        if bad:
            raise ValueError(f"a value's REPEAT is {bad[0]}: it is shown that many times, at least once")
        self._items = list(values)  # (quantity, repeat), walked in place: a REPEAT of 10^9 costs no memory
        self._i = 0  # the item shown
        self._shown = 0  # times it has been shown

    def quantities(self) -> list[Quantity]:
        """The distinct quantities, in order of first appearance."""
        return list(dict.fromkeys(q for q, _ in self._items))

    def next(self) -> Quantity:
        q, repeat = self._items[self._i]
        self._shown += 1
        if self._shown >= repeat:
            self._i, self._shown = (self._i + 1) % len(self._items), 0
        return q

    @classmethod
    def parse(cls, text: str) -> CycleValues:
        """``123.4mA,-0.512A,5V``."""
        return cls([(parse_quantity(v), 1) for v in text.split(",") if v.strip()])

    @classmethod
    def from_file(cls, path: str | Path) -> CycleValues:
        """One ``VALUE[,REPEAT]`` per line (``#`` starts a comment), e.g. ``120mA,20``."""
        items: list[tuple[Quantity, int]] = []
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text (byte {exc.start}); expected one VALUE[,REPEAT] a line") from None
        for lineno, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split(",")]
            if len(parts) > 2:
                raise ValueError(f"{path}:{lineno}: {line!r} has {len(parts)} fields; expected VALUE[,REPEAT]")
            try:
                repeat = parse_index(parts[1]) if len(parts) > 1 else 1
            except ValueError:
                raise ValueError(f"{path}:{lineno}: REPEAT {parts[1]!r} is not a whole number (VALUE[,REPEAT], "
                                 "e.g. 120mA,20)") from None
            try:
                items.append((parse_quantity(parts[0]), repeat))
            except ValueError as exc:
                raise ValueError(f"{path}:{lineno}: {exc}") from exc
        return cls(items)


class PhaseProfile(ValueSource):
    """A current that follows the measurement phases: a level per phase plus Gaussian noise.

    ``levels`` maps a phase name ("idle", "A", "B", ...) to a quantity; unknown phases use "idle".
    The measurement protocol calls :meth:`set_phase` as it moves from phase to phase, so the emulated
    meter shows a known current profile and the energy figure has a known answer.
    """

    def __init__(self, levels: dict[str, Quantity], noise: float = 0.0, seed: int = 0) -> None:
        if "idle" not in levels:
            raise ValueError("a phase profile needs an 'idle' level")
        self.levels = dict(levels)
        self.noise = noise
        self._rng = random.Random(seed)
        self._phase = "idle"
        self._lock = threading.Lock()

    def set_phase(self, phase: str) -> None:
        with self._lock:
            self._phase = phase

    def next(self) -> Quantity:
        with self._lock:
            q = self.levels.get(self._phase, self.levels["idle"])
        if q.overload or self.noise == 0:
            return q
        value = q.value + self._rng.gauss(0.0, self.noise)
        return Quantity(value, q.unit, q.prefix, q.ac, False)

    @classmethod
    def parse(cls, text: str, seed: int = 0) -> tuple[PhaseProfile, float | None]:
        """``idle=100mA,A=150mA,B=130mA,noise=1mA,interval=0.02`` -> (profile, interval or None)."""
        levels: dict[str, Quantity] = {}
        noise, noise_unit = 0.0, ""
        interval: float | None = None
        for part in text.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ValueError(f"expected NAME=VALUE in emulation profile, got {part!r}")
            key, value = (s.strip() for s in part.split("=", 1))
            if key == "interval":
                try:
                    interval = float(value)
                except ValueError:
                    raise ValueError(f"interval={value}: seconds between packets, a number") from None
                if not 0 < interval <= MAX_INTERVAL:
                    raise ValueError(f"interval={value}: seconds between packets, more than 0 and at most "
                                     f"{MAX_INTERVAL:g}")
            elif key == "noise":
                q = parse_quantity(value)
                if q.overload or q.value < 0:
                    raise ValueError(f"noise={value}: the standard deviation of the level, a value >= 0")
                noise = q.value
                noise_unit = q.unit
            elif key in PHASES:
                levels[key] = parse_quantity(value)
            else:
                raise ValueError(f"{key}={value}: not a phase of a measurement ({', '.join(PHASES)}), noise or "
                                 "interval")
        units = {q.unit for q in levels.values()}
        if len(units) > 1:
            raise ValueError(f"the levels are in {' and '.join(sorted(units))}: one unit, the meter's")
        if noise and units and noise_unit not in units:
            raise ValueError(f"noise is in {noise_unit}, the levels in {units.pop()}")
        return cls(levels, noise, seed), interval


class Emulator:
    """Stream a meter's protocol on a pseudo-terminal.

    ``path`` is the slave side to open like a serial port. ``garbage`` is the probability that a
    packet is preceded by junk: random bytes, a truncated packet or a corrupted copy, so readers must
    resynchronize. ``count`` stops after that many packets and closes the pty, which the reader sees
    as the port disappearing (a meter unplugged mid-run).
    """

    def __init__(self, meter: Meter, values: ValueSource, interval: float = 0.5, garbage: float = 0.0,
                 seed: int = 0, count: int | None = None) -> None:
        if not 0 < interval <= MAX_INTERVAL:
            raise ValueError(f"interval must be more than 0 and at most {MAX_INTERVAL:g} s")
        if not 0.0 <= garbage <= 1.0:
            raise ValueError("garbage must be a probability in [0, 1]")
        self.meter = meter
        self.values = values
        self.interval = interval
        self.garbage = garbage
        self.count = count
        self._rng = random.Random(seed)
        self._master = -1
        self._slave = -1
        self.path = ""
        self.sent_packets = 0
        self.sent_garbage = 0
        self._stop = threading.Event()
        self.finished = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> str:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no CR/LF translation before the reader configures the port
        os.set_blocking(self._master, False)
        self.path = os.ttyname(self._slave)
        return self.path

    def start(self) -> str:
        path = self.open()
        self._thread = threading.Thread(target=self.run, name="meter-emulator", daemon=True)
        self._thread.start()
        return path

    def _junk(self, packet: bytes) -> bytes:
        kind = self._rng.randrange(3)
        size = len(packet)
        if kind == 0:
            junk = bytes(self._rng.randrange(256) for _ in range(self._rng.randint(1, size)))
        elif kind == 1:
            junk = packet[: self._rng.randint(1, size - 1)]
        else:
            pos = self._rng.randrange(size)
            junk = packet[:pos] + bytes([packet[pos] ^ (1 << self._rng.randrange(7))]) + packet[pos + 1 :]
            junk = junk[: size - 1]  # never a complete, possibly valid, corrupted packet
        if self.meter.proto.seven_bit:
            junk = bytes(b & 0x7F for b in junk)
        return junk

    def _write(self, data: bytes) -> None:
        try:
            os.write(self._master, data)
        except BlockingIOError:
            pass  # nobody reads: a real serial line would lose these bytes too

    def packets(self, n: int) -> Iterable[bytes]:
        """The next ``n`` packets (with any junk) without streaming them; for tests and tools."""
        for _ in range(n):
            yield self._next_bytes()

    def _next_bytes(self) -> bytes:
        packet = self.meter.proto.encode(self.values.next())
        if self.garbage and self._rng.random() < self.garbage:
            junk = self._junk(packet)
            self.sent_garbage += 1
            return junk + packet
        return packet

    def run(self) -> None:
        next_time = time.monotonic()
        try:
            while not self._stop.is_set():
                if self.count is not None and self.sent_packets >= self.count:
                    break
                self._write(self._next_bytes())
                self.sent_packets += 1
                next_time += self.interval
                self._stop.wait(max(0.0, next_time - time.monotonic()))
        except OSError:
            pass
        finally:
            if self.count is not None and not self._stop.is_set():
                self.close()
            self.finished.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self.close()

    def close(self) -> None:
        for fd in (self._master, self._slave):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = -1

    def __enter__(self) -> Emulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
