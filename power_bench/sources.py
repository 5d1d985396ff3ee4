"""Sample sources: anything that yields timestamped readings (a serial meter, sigrok-cli, energy counters)."""

from __future__ import annotations

import termios
import time
from dataclasses import dataclass, field

import serial

from .framing import Frame, PacketFramer
from .meters import Meter
from .reading import Reading


class MeterError(RuntimeError):
    """A meter cannot be used (cannot open the port, tool missing, no counters); the message says why."""


class PortLost(MeterError):
    """The port disappeared while reading (meter unplugged, emulator stopped).

    ``samples`` holds what was framed in the same poll before the port went away.
    """

    def __init__(self, message: str, samples: list[Sample] | None = None) -> None:
        super().__init__(message)
        self.samples = samples or []


@dataclass(frozen=True)
class Sample:
    """A framed piece of the stream with the time it arrived (``time.monotonic()`` and wall clock)."""

    t: float
    wall: float
    kind: str  # "packet" | "undecodable" | "dropped"
    raw: bytes
    reading: Reading | None = None
    note: str = ""

    @classmethod
    def from_frame(cls, frame: Frame, t: float, wall: float) -> Sample:
        return cls(t, wall, frame.kind, frame.raw, frame.reading, frame.note)


@dataclass
class Source:
    """Base class. ``poll(timeout)`` returns what arrived within about ``timeout`` seconds."""

    label: str = ""
    expected_unit: str = "A"
    notes: list[str] = field(default_factory=list)

    def open(self) -> None:  # pragma: no cover - trivial
        pass

    def poll(self, timeout: float) -> list[Sample]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - trivial
        pass

    def stats(self) -> dict[str, int]:
        return {}

    def __enter__(self) -> Source:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialSource(Source):
    """A meter on a serial port, decoded natively with pyserial.

    DTR and RTS are set on the unopened ``serial.Serial`` object, so they are applied while the port
    opens: optically isolated cables draw their power from DTR and would otherwise stay dark. When a
    7-bit (7O1) open is refused, as on a pseudo-terminal, the port is opened 8N1 and the framer clears
    bit 7 of every byte, which is what a 7O1 UART delivers.
    """

    #: how many of the first bytes read are kept in ``captured`` (as read, before any bit is cleared)
    CAPTURE_BYTES = 4096

    def __init__(self, meter: Meter, port: str) -> None:
        super().__init__(label=f"{meter.name}:{port}", expected_unit="A")
        self.meter = meter
        self.port = port
        self.framer = PacketFramer(meter.proto)
        self.captured = bytearray()  # e.g. to tell which protocol the bytes are when they are not the meter's
        self._serial: serial.Serial | None = None

    def _make(self, bytesize: int, parity: str) -> serial.Serial:
        ser = serial.Serial()
        ser.port = self.port
        ser.baudrate = self.meter.baud
        ser.bytesize = bytesize
        ser.parity = parity
        ser.stopbits = self.meter.stopbits
        ser.timeout = 0.05
        ser.dtr = self.meter.dtr
        ser.rts = self.meter.rts
        return ser

    def open(self) -> None:
        ser = self._make(self.meter.bytesize, self.meter.parity)
        try:
            ser.open()
        except (serial.SerialException, OSError, ValueError, termios.error) as exc:
            if self.meter.bytesize == 8:
                raise MeterError(f"cannot open {self.port}: {exc}") from exc
            ser = self._make(8, serial.PARITY_NONE)
            try:
                ser.open()
            except (serial.SerialException, OSError, ValueError, termios.error) as exc2:
                raise MeterError(f"cannot open {self.port}: {exc2}") from exc2
            self.notes.append(f"{self.port} refused 7-bit framing; opened 8N1 and stripping bit 7")
        self._serial = ser

    def poll(self, timeout: float) -> list[Sample]:
        if self._serial is None:
            raise MeterError("port is not open")
        deadline = time.monotonic() + timeout
        out: list[Sample] = []
        while True:
            try:
                waiting = self._serial.in_waiting
                data = self._serial.read(max(1, waiting))
            except (serial.SerialException, OSError) as exc:
                t, wall = time.monotonic(), time.time()
                out += [Sample.from_frame(f, t, wall) for f in self.framer.finish()]
                raise PortLost(f"lost {self.port} while reading: {exc}", out) from exc
            if data:
                self.captured += data[: max(0, self.CAPTURE_BYTES - len(self.captured))]
                t, wall = time.monotonic(), time.time()
                out += [Sample.from_frame(f, t, wall) for f in self.framer.feed(data)]
            if time.monotonic() >= deadline:
                return out

    def close(self) -> None:
        if self._serial is not None:
            try:
                self._serial.close()
            except (serial.SerialException, OSError):
                pass
            self._serial = None

    def stats(self) -> dict[str, int]:
        return self.framer.stats()
