"""power_bench: serial multimeter -> current samples -> joules per prediction.

Meter protocols are decoded natively (one parser per chip protocol in ``power_bench.protocols``,
meters as rows of ``power_bench.meters.METERS``); an emulator streams the same byte protocols on a
pty for tests and for users without hardware. Does not import ``compiler``.
"""

from .emulator import CycleValues, Emulator, PhaseProfile
from .framing import PacketFramer
from .measure import Measurement, RunSettings, analyze, format_report
from .meters import METERS, Meter, find_meter
from .reading import DecodeError, Quantity, Reading, parse_quantity
from .sources import MeterError, PortLost, SerialSource, Source
from .stats import energy_per_prediction, energy_ratio

__all__ = [
    "METERS", "CycleValues", "DecodeError", "Emulator", "Measurement", "Meter", "MeterError", "PacketFramer",
    "PhaseProfile", "PortLost", "Quantity", "Reading", "RunSettings", "SerialSource", "Source", "analyze",
    "energy_per_prediction", "energy_ratio", "find_meter", "format_report", "parse_quantity",
]
