"""Supported meters as rows of a table: name, aliases, protocol, serial settings, cable notes."""

from __future__ import annotations

from dataclasses import dataclass

from .protocols import PROTOCOLS, Protocol

UT_D02 = "UT-D02/UT-D04 optically isolated cable: powered from DTR=1, RTS=0, set before the port opens"


@dataclass(frozen=True)
class Meter:
    name: str
    vendor: str
    model: str
    protocol: str
    baud: int
    bytesize: int
    parity: str  # "N", "O", "E"
    stopbits: int
    dtr: bool = True
    rts: bool = False
    aliases: tuple[str, ...] = ()
    sigrok_driver: str = ""
    notes: str = UT_D02
    details: str = ""  # what the meter's own symbols mean to its chip's decoder (Protocol.details)

    @property
    def proto(self) -> Protocol:
        base = PROTOCOLS[self.protocol]
        return base.with_details(self.details) if self.details else base

    @property
    def serial_settings(self) -> str:
        frame = f"{self.baud}/{self.bytesize}{self.parity.lower()}{self.stopbits}"
        return f"{frame} dtr={int(self.dtr)} rts={int(self.rts)}"


def _ut71x(name: str, vendor: str, model: str, aliases: tuple[str, ...] = (), driver: str = "") -> Meter:
    return Meter(name, vendor, model, "ut71x", 2400, 7, "O", 1, aliases=aliases,
                 sigrok_driver=driver or f"{name}-ser")


def _fs9721(name: str, vendor: str, model: str, details: str = "") -> Meter:
    return Meter(name, vendor, model, "fs9721", 2400, 8, "N", 1, sigrok_driver=f"{name}-ser", details=details)


def _fs9922(name: str, vendor: str, model: str, details: str = "") -> Meter:
    return Meter(name, vendor, model, "fs9922", 2400, 8, "N", 1, sigrok_driver=f"{name}-ser", details=details)


METERS: tuple[Meter, ...] = (
    _ut71x("tenma-72-7730a", "Tenma", "72-7730A (a UNI-T UT71B; the energy paper's meter)",
           aliases=("tenma-72-7730",), driver="tenma-72-7730-ser"),
    _ut71x("tenma-72-7732", "Tenma", "72-7732"),
    _ut71x("tenma-72-9380a", "Tenma", "72-9380A"),
    _ut71x("uni-t-ut71a", "UNI-T", "UT71A"),
    _ut71x("uni-t-ut71b", "UNI-T", "UT71B"),
    _ut71x("uni-t-ut71c", "UNI-T", "UT71C"),
    _ut71x("uni-t-ut71d", "UNI-T", "UT71D"),
    _ut71x("uni-t-ut71e", "UNI-T", "UT71E"),
    _ut71x("voltcraft-vc920", "Voltcraft", "VC-920"),
    _ut71x("voltcraft-vc940", "Voltcraft", "VC-940"),
    _ut71x("voltcraft-vc960", "Voltcraft", "VC-960"),
    _fs9721("uni-t-ut60a", "UNI-T", "UT60A"),
    # the details as libsigrok 0.5.2 decodes these meters (checked with sigrok-cli, tests/test_power_sigrok.py)
    _fs9721("uni-t-ut60e", "UNI-T", "UT60E", details="temp_c"),
    _fs9721("tenma-72-7745", "Tenma", "72-7745", details="temp_c"),
    _fs9721("voltcraft-vc820", "Voltcraft", "VC-820"),
    _fs9721("voltcraft-vc840", "Voltcraft", "VC-840", details="temp_c"),
    _fs9922("uni-t-ut61b", "UNI-T", "UT61B"),
    _fs9922("uni-t-ut61c", "UNI-T", "UT61C"),
    _fs9922("uni-t-ut61d", "UNI-T", "UT61D"),
    _fs9922("voltcraft-vc830", "Voltcraft", "VC-830", details="z1_diode"),
    Meter("uni-t-ut61e", "UNI-T", "UT61E", "es51922", 19200, 7, "O", 1, sigrok_driver="uni-t-ut61e-ser"),
)


def find_meter(name: str) -> Meter:
    """Look a meter up by name or alias (case-insensitive; a trailing ``-ser`` is accepted)."""
    key = name.strip().lower()
    if key.endswith("-ser"):
        key = key[:-4]
    for meter in METERS:
        if key == meter.name or key in meter.aliases:
            return meter
    known = ", ".join(m.name for m in METERS)
    raise KeyError(f"unknown meter {name!r}; supported: {known} (see 'power meters')")
