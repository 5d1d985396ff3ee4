"""Fortune FS9922-DMM3/DMM4 protocol: 14 ASCII-framed bytes at 2400 baud 8N1.

Layout (byte index from 0)::

    0     sign '+' or '-'
    1-4   four digits '0'..'9'; over limit "?0:?"
    5     ' '
    6     decimal point: '0' none, '1' x.xxx, '2' xx.xx, '4' xxx.x (datasheets wrongly say '3')
    7     SB1: bit5 AUTO, bit4 DC, bit3 AC, bit2 REL, bit1 HOLD, bit0 bargraph shown
    8     SB2: bit7 Z1, bit6 Z2, bit5 MAX, bit4 MIN, bit3 APO, bit2 BAT, bit1 nano, bit0 Z3
    9     SB3: bit7 micro, bit6 milli, bit5 kilo, bit4 mega, bit3 beep, bit2 diode, bit1 %, bit0 Z4
    10    SB4: bit7 V, bit6 A, bit5 Ohm, bit4 hFE, bit3 Hz, bit2 F, bit1 degC, bit0 degF
    11    bargraph: bit7 sign, bits 6..0 value
    12-13 CR LF

Z1..Z4 are the meter's own symbols (libsigrok's per-meter "details"); ``DETAILS``: "z1_diode", Z1 is the diode
symbol (Voltcraft VC-830). A diode reading is volts and DC (libsigrok's DIODE | DC) whether or not V and DC are lit.
"""

from __future__ import annotations

from ..reading import PREFIXES, DecodeError, Quantity, Reading
from ._common import bit, diode_volts, pick_decimals, scale_display

NAME = "fs9922"
PACKET_SIZE = 14
SEVEN_BIT = False
MAX_COUNT = 5999
DETAILS = ("z1_diode",)

OVER_LIMIT = b"?0:?"
_DIVISORS = {0x30: 1, 0x31: 1000, 0x32: 100, 0x34: 10}


def _flags(b: bytes) -> dict[str, bool]:
    return {
        "auto": bit(b[7], 5), "dc": bit(b[7], 4), "ac": bit(b[7], 3), "rel": bit(b[7], 2),
        "hold": bit(b[7], 1), "bar": bit(b[7], 0),
        "max": bit(b[8], 5), "min": bit(b[8], 4), "bat": bit(b[8], 2), "nano": bit(b[8], 1),
        "micro": bit(b[9], 7), "milli": bit(b[9], 6), "kilo": bit(b[9], 5), "mega": bit(b[9], 4),
        "beep": bit(b[9], 3), "diode": bit(b[9], 2), "percent": bit(b[9], 1),
        "volt": bit(b[10], 7), "ampere": bit(b[10], 6), "ohm": bit(b[10], 5), "hfe": bit(b[10], 4),
        "hertz": bit(b[10], 3), "farad": bit(b[10], 2), "celsius": bit(b[10], 1), "fahrenheit": bit(b[10], 0),
    }


def valid(packet: bytes) -> bool:
    if len(packet) != PACKET_SIZE or packet[0] not in b"+-" or packet[12:14] != b"\r\n":
        return False
    f = _flags(packet)
    multipliers = f["nano"] + f["micro"] + f["milli"] + f["kilo"] + f["mega"]
    kinds = (f["percent"] + f["volt"] + f["ampere"] + f["ohm"] + f["hfe"] + f["hertz"] + f["farad"]
             + f["celsius"] + f["fahrenheit"])
    return (multipliers <= 1 and kinds <= 1 and not (f["ac"] and f["dc"])
            and not (f["celsius"] and f["fahrenheit"]))


def decode(packet: bytes, details: str = "") -> Reading:
    """The reading of a packet; ``details`` (one of DETAILS, or ""): how the meter uses the Z1..Z4 symbols."""
    if not valid(packet):
        raise DecodeError("not an FS9922 packet")
    f = _flags(packet)
    f["diode"] = f["diode"] or (details == "z1_diode" and bit(packet[8], 7))
    dc = f["dc"] or f["diode"]
    prefix = ""
    for name, p in (("nano", "n"), ("micro", "u"), ("milli", "m"), ("kilo", "k"), ("mega", "M")):
        if f[name]:
            prefix = p
    unit = ""
    for name, u in (("volt", "V"), ("ampere", "A"), ("ohm", "Ohm"), ("hfe", "hFE"), ("hertz", "Hz"),
                    ("farad", "F"), ("celsius", "C"), ("fahrenheit", "degF"), ("percent", "%")):
        if f[name]:
            unit = u
    flags: list[str] = []
    if f["diode"]:
        unit = diode_volts("FS9922", unit)
    for name, label in (("diode", "diode"), ("beep", "continuity"), ("hold", "HOLD"), ("rel", "REL"),
                        ("max", "MAX"), ("min", "MIN"), ("bat", "BAT")):
        if f[name]:
            flags.append(label)
    label = prefix + unit
    if packet[1:5] == OVER_LIMIT:
        return Reading(float("inf"), unit, f["ac"], dc, f["auto"], True, label, tuple(flags))
    if not all(0x30 <= b <= 0x39 for b in packet[1:5]):
        raise DecodeError(f"FS9922: invalid digits {packet[1:5]!r}")
    if packet[6] not in _DIVISORS:
        raise DecodeError(f"FS9922: invalid decimal point byte 0x{packet[6]:02x}")
    count = int(packet[1:5].decode("ascii"))
    factor = PREFIXES[prefix]
    value = scale_display(-count if packet[0] == 0x2D else count, _DIVISORS[packet[6]], factor)
    label += f"/{chr(packet[6])}"
    return Reading(value, unit, f["ac"], dc, f["auto"], False, label, tuple(flags))


_UNIT_BITS = {"V": 7, "A": 6, "Ohm": 5, "Hz": 3, "F": 2}
_PREFIX_BITS = {"n": (8, 1), "u": (9, 7), "m": (9, 6), "k": (9, 5), "M": (9, 4)}


def encode(q: Quantity) -> bytes:
    """Build the packet an FS9922 meter sends when it shows ``q`` (auto range)."""
    if q.unit not in _UNIT_BITS:
        raise ValueError(f"FS9922 emulation supports {sorted(_UNIT_BITS)}, not {q.unit}")
    if q.ac and q.unit not in ("V", "A"):
        raise ValueError(f"FS9922 emulation: AC applies to V and A, not {q.unit}")
    coupling = 0x08 if q.ac else (0x10 if q.unit in ("V", "A") else 0)  # a meter shows DC only on V and A
    picked = None if q.overload else pick_decimals(q.scaled, MAX_COUNT)
    if picked is None:
        digits, point, sign = OVER_LIMIT, b"0", b"+"
    else:
        decimals, count = picked
        digits = f"{count:04d}".encode("ascii")
        point = {3: b"1", 2: b"2", 1: b"4", 0: b"0"}[decimals]
        sign = b"-" if q.value < 0 and count != 0 else b"+"
    sb = [0x20 | coupling, 0, 0, 1 << _UNIT_BITS[q.unit]]
    if q.prefix:
        byte, n = _PREFIX_BITS[q.prefix]
        sb[byte - 7] |= 1 << n
    return sign + digits + b" " + point + bytes(sb) + b"\x00\r\n"
