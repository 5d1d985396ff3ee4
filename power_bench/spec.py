"""Turn a ``--meter`` argument into a sample source.

Forms: ``METER:PORT`` (native decoder, e.g. ``tenma-72-7730a:/dev/ttyUSB0``), ``emulated:METER``
(an emulated meter on a pty, started internally), ``sigrok:DRIVER[:PORT]`` (sigrok-cli),
``powercap[:FILTER]``, ``hwmon[:FILTER]``, ``energy[:FILTER]`` (Linux energy counters).
"""

from __future__ import annotations

from pathlib import Path

from .emulator import Emulator, PhaseProfile, ValueSource, check_showable
from .energy_counters import EnergyCounterSource, select_counters
from .measure import PhaseListener
from .meters import Meter, find_meter
from .sigrok import SigrokSource
from .sources import SerialSource, Source

DEFAULT_EMULATION = "idle=100mA,A=150mA,B=130mA,noise=0.5mA,interval=0.25"


class EmulatedSource(SerialSource):
    """A native serial source reading from an emulator it starts and stops itself."""

    def __init__(self, meter: Meter, values: ValueSource, interval: float, garbage: float = 0.0,
                 seed: int = 0) -> None:
        self.emulator = Emulator(meter, values, interval=interval, garbage=garbage, seed=seed)
        super().__init__(meter, "")
        self.label = f"emulated:{meter.name}"

    def open(self) -> None:
        self.port = self.emulator.start()
        super().open()

    def close(self) -> None:
        super().close()
        self.emulator.stop()


def open_spec(spec: str, emulate: str | None = None, seed: int = 0, garbage: float = 0.0,
              energy_root: str | Path = "/sys/class") -> tuple[Source, PhaseListener | None]:
    """Build (unopened) source and, for emulated meters, the listener that drives its current profile.

    Raises ValueError (unknown meter, malformed spec) or MeterError (no counters).
    """
    kind, sep, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "emulated":
        if not rest:
            raise ValueError("expected emulated:METER, e.g. emulated:tenma-72-7730a")
        meter = _meter(rest)
        try:
            profile, interval = PhaseProfile.parse(emulate or DEFAULT_EMULATION, seed=seed)
            for phase, level in profile.levels.items():  # now, not as a traceback in the emulator's thread
                check_showable(meter, level, phase)
                if level.unit != "A":  # a run measures current: a whole run of readings it would leave out
                    raise ValueError(f"{phase}={level.scaled:g}{level.prefix}{level.unit} is in {level.unit}, and a "
                                     "run measures current: give each phase a current (e.g. idle=100mA,A=150mA)")
        except ValueError as exc:
            raise ValueError(f"--emulate: {exc}") from None
        source = EmulatedSource(meter, profile, interval or 0.25, garbage=garbage, seed=seed)
        return source, profile.set_phase
    if kind == "sigrok":
        driver, _, port = rest.partition(":")
        if not driver:
            raise ValueError("expected sigrok:DRIVER[:PORT], e.g. sigrok:uni-t-ut61e-ser:/dev/ttyUSB0")
        return SigrokSource(driver, port or None), None
    if kind in ("powercap", "hwmon", "energy"):
        return EnergyCounterSource(select_counters(spec, energy_root)), None
    if not sep or not rest:
        raise ValueError(f"expected METER:PORT (e.g. tenma-72-7730a:/dev/ttyUSB0), got {spec!r}")
    return SerialSource(_meter(kind), rest), None


def _meter(name: str) -> Meter:
    try:
        return find_meter(name)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from exc
