"""Cyrustek ES51922 protocol: 14 ASCII bytes at 19200 baud 7O1 (UNI-T UT61E).

Layout (byte index from 0)::

    0     range '0'..'7'
    1-5   five digits '0'..'9'
    6     function: 0x3B V, 0x3D uA, 0x3F mA, 0x30 A, 0x39 manual A, 0x33 Ohm, 0x35 continuity,
          0x31 diode, 0x32 Hz (duty cycle with JUDGE), 0x36 F, 0x34 temperature, others ADP
    7     status: bit3 JUDGE, bit2 SIGN, bit1 BATT, bit0 OL
    8     option 1: bit3 MAX, bit2 MIN, bit1 REL, bit0 RMR
    9     option 2: bit3 UL, bit2 PMAX, bit1 PMIN
    10    option 3: bit3 DC, bit2 AC, bit1 AUTO, bit0 VAHZ
    11    option 4: bit2 VBAR, bit1 HOLD, bit0 LPF
    12-13 CR LF

The value is the five-digit count times 10**exponent, the exponent given by (mode, range). A range the
mode does not have (None in EXPONENTS), or VBAR (an ES51922 wiring no UT61E uses, whose current ranges libsigrok 0.5.2
reads as kA), is a DecodeError, not a reading powers of ten off.
"""

from __future__ import annotations

from ..reading import DecodeError, Quantity, Reading
from ._common import bit, pick_range, range_exponent, scale

NAME = "es51922"
PACKET_SIZE = 14
SEVEN_BIT = True
MAX_COUNT = 21999

# mode -> exponents per range ('0'..'7'); None: a range the mode does not have, the zero entries of
# libsigrok's older es519xx factor table (19200 baud, 14 bytes), which called them invalid
EXPONENTS: dict[str, tuple[int | None, ...]] = {
    "V": (-4, -3, -2, -1, -5, None, None, None),
    "uA": (-8, -7, None, None, None, None, None, None),
    "mA": (-6, -5, None, None, None, None, None, None),
    "A": (-3, None, None, None, None, None, None, None),
    "manual A": (-4, -3, -2, -1, 0, None, None, None),
    "Ohm": (-2, -1, 0, 1, 2, 3, 4, None),
    "Hz": (-2, -1, None, 0, 1, 2, 3, 4),
    "F": (-12, -11, -10, -9, -8, -7, -6, -5),
    "diode": (-4, None, None, None, None, None, None, None),
}

F_VOLT, F_MICRO_A, F_MILLI_A, F_AMP, F_MANUAL_A = 0x3B, 0x3D, 0x3F, 0x30, 0x39
F_OHM, F_CONTINUITY, F_DIODE, F_HZ, F_FARAD, F_TEMP = 0x33, 0x35, 0x31, 0x32, 0x36, 0x34


def valid(packet: bytes) -> bool:
    if len(packet) != PACKET_SIZE or packet[12:14] != b"\r\n":
        return False
    if any(not 0x30 <= b <= 0x3F for b in packet[0:12]):
        return False
    return not (bit(packet[10], 3) and bit(packet[10], 2))


def decode(packet: bytes) -> Reading:
    if not valid(packet):
        raise DecodeError("not an ES51922 packet")
    function, status = packet[6], packet[7]
    judge, sign, ol = bit(status, 3), bit(status, 2), bit(status, 0)
    ul = bit(packet[9], 3)
    dc, ac, auto, vahz = bit(packet[10], 3), bit(packet[10], 2), bit(packet[10], 1), bit(packet[10], 0)
    vbar = bit(packet[11], 2)
    flags: list[str] = []
    for byte, n, label in ((8, 3, "MAX"), (8, 2, "MIN"), (8, 1, "REL"), (9, 2, "PMAX"), (9, 1, "PMIN"),
                           (11, 1, "HOLD"), (7, 1, "BAT")):
        if bit(packet[byte], n):
            flags.append(label)
    if function == F_VOLT:
        mode, unit = "V", "V"
    elif function == F_MICRO_A:
        mode, unit, auto = "uA", "A", True
    elif function == F_MILLI_A:
        mode, unit, auto = "mA", "A", True
    elif function == F_AMP:
        mode, unit, auto = "A", "A", True
    elif function == F_MANUAL_A:
        mode, unit, auto = "manual A", "A", False
    elif function in (F_OHM, F_CONTINUITY):
        mode, unit = "Ohm", "Ohm"
        if function == F_CONTINUITY:
            flags.append("continuity")
    elif function == F_DIODE:
        mode, unit, dc = "diode", "V", True  # DC whatever option 3 says (libsigrok's DIODE | DC)
        flags.append("diode")
    elif function == F_HZ:
        mode, unit = ("duty", "%") if judge else ("Hz", "Hz")
    elif function == F_FARAD:
        mode, unit = "F", "F"
    elif function == F_TEMP:
        raise DecodeError("ES51922: temperature mode carries no range exponent")
    else:
        raise DecodeError(f"ES51922: adapter function 0x{function:02x} has no defined unit")
    if vahz and mode in ("V", "uA", "mA", "A", "manual A"):
        mode, unit = ("duty", "%") if judge else ("Hz", "Hz")
    index = packet[0] - 0x30
    if index > 7:
        raise DecodeError(f"ES51922: invalid range byte 0x{packet[0]:02x}")
    if vbar:
        raise DecodeError("ES51922: VBAR set (not a UT61E state: its current ranges would be read 10**3 off)")
    exponent = -1 if mode == "duty" else range_exponent("ES51922", mode, EXPONENTS[mode], index)
    label = f"{mode} r{index}"
    if ol or ul:
        if ul:
            flags.append("UL")
        return Reading(float("inf"), unit, ac, dc, auto, True, label, tuple(flags))
    digits = packet[1:6]
    if not all(0x30 <= b <= 0x39 for b in digits):
        raise DecodeError(f"ES51922: invalid digits {digits!r}")
    count = int(digits.decode("ascii"))
    value = scale(-count if sign else count, exponent)
    return Reading(value, unit, ac, dc, auto, False, label, tuple(flags))


# (unit, prefix) -> (function, [(range, exponent)])
_ENCODINGS: dict[tuple[str, str], tuple[int, tuple[tuple[int, int], ...]]] = {
    ("A", "u"): (F_MICRO_A, ((0, -8), (1, -7))),
    ("A", "m"): (F_MILLI_A, ((0, -6), (1, -5))),
    ("A", ""): (F_AMP, ((0, -3),)),
    ("V", "m"): (F_VOLT, ((4, -5),)),
    ("V", ""): (F_VOLT, ((0, -4), (1, -3), (2, -2), (3, -1))),
}


def encode(q: Quantity) -> bytes:
    """Build the packet a UT61E (ES51922) sends when it shows ``q`` (auto range); 7-bit bytes only."""
    key = (q.unit, q.prefix)
    if key not in _ENCODINGS:
        raise ValueError(f"ES51922 emulation supports A (uA/mA/A) and V (mV/V), not {q.prefix}{q.unit}")
    function, ranges = _ENCODINGS[key]
    picked = None if q.overload else pick_range(q.value, ranges, MAX_COUNT)
    if picked is None:
        index = max(ranges, key=lambda r: r[1])[0]
        digits, status = b"22580", 0x31
    else:
        index, _, count = picked
        digits = f"{count:05d}".encode("ascii")
        status = 0x30 | (0x04 if q.value < 0 and count != 0 else 0)
    opt3 = 0x30 | (0x04 if q.ac else 0x08) | 0x02
    return bytes([0x30 + index]) + digits + bytes([function, status, 0x30, 0x30, opt3, 0x30]) + b"\r\n"
