"""UNI-T UT71x protocol: 11 ASCII bytes at 2400 baud 7O1.

Layout (byte index from 0)::

    0-4  five digits '0'..'9' (4000-count mode: byte 4 is ':', the blank last digit of the display,
         which reads as 0: "1234:" on the 400.00 mA range is 123.40 mA), over limit "::0<:",
         under limit ":<0::"
    5    range '0'..'7'          6  function '0'..'?' (0..15)
    7    status: bit1 DC, bit0 AC
    8    option: bit2 SIGN, bit1 MANUAL, bit0 AUTO
    9-10 CR LF

The value is the digit count times 10**exponent, the exponent given by (function, range). A range a
function does not have (None in EXPONENTS) is a corrupt packet: DecodeError, not a reading 10**k off.

Checked against libsigrok 0.5.2 (sigrok-cli on a pty, round 61): the 4000-count mode's blank digit and
the resistance ranges (400.00 Ohm is range 1, 10**-2) as 0.5.2 decodes them; the stored ut71x.c sources
read "1234:" as 12.34 mA and range 1 as 4000.0 Ohm, which 0.5.2 does not.
"""

from __future__ import annotations

from ..reading import DecodeError, Quantity, Reading
from ._common import bit, pick_range, range_exponent, scale

NAME = "ut71x"
PACKET_SIZE = 11
SEVEN_BIT = True
MAX_COUNT = 39999

# function code -> (unit, short name, implied flag)
FUNCTIONS: tuple[tuple[str, str, str], ...] = (
    ("V", "mV AC", ""),
    ("V", "V DC", ""),
    ("V", "V AC", ""),
    ("V", "mV DC", ""),
    ("Ohm", "Ohm", ""),
    ("F", "F", ""),
    ("C", "degC", ""),
    ("A", "uA", ""),
    ("A", "mA", ""),
    ("A", "A", ""),
    ("Ohm", "continuity", "continuity"),
    ("V", "diode", "diode"),
    ("Hz", "Hz", ""),
    ("degF", "degF", ""),
    ("W", "W", ""),
    ("%", "loop", "loop-current"),
)

# exponent of the digit count for each function (rows) and range (columns), from the UT71x
# protocol description (range 1 is the 10 A range, not range 0); None: a range the function does not
# have (400 mV .. 1000 V, 400.00 Ohm .. 40.000 MOhm, 40 nF .. 40 mF, ...), the zero entries of libsigrok's
# older ut71x factor table, which called them invalid
EXPONENTS: tuple[tuple[int | None, ...], ...] = (
    (-5, None, None, None, None, None, None, None),
    (None, -4, -3, -2, -1, None, None, None),
    (None, -4, -3, -2, -1, None, None, None),
    (-5, None, None, None, None, None, None, None),
    (None, -2, -1, 0, 1, 2, 3, None),
    (None, -12, -11, -10, -9, -8, -7, -6),
    (-1, None, None, None, None, None, None, None),
    (-8, -7, None, None, None, None, None, None),
    (-6, -5, None, None, None, None, None, None),
    (None, -3, None, None, None, None, None, None),
    (-1, None, None, None, None, None, None, None),
    (-4, None, None, None, None, None, None, None),
    (-3, -2, -1, 0, 1, 2, 3, 4),
    (-1, None, None, None, None, None, None, None),
    (None, None, None, 0, None, None, None, None),
    (-2, None, None, None, None, None, None, None),
)

OVER_LIMIT = b"::0<:"
UNDER_LIMIT = b":<0::"


def valid(packet: bytes) -> bool:
    """Framing check: length, CR LF, printable digit/range/function bytes, not both AUTO and MANUAL."""
    if len(packet) != PACKET_SIZE or packet[9:11] != b"\r\n":
        return False
    if any(not 0x30 <= b <= 0x3F for b in packet[0:9]):
        return False
    if packet[5] > 0x37:
        return False
    return not (bit(packet[8], 0) and bit(packet[8], 1))


def decode(packet: bytes) -> Reading:
    if not valid(packet):
        raise DecodeError("not a UT71x packet")
    digits = packet[0:5]
    index = packet[5] - 0x30
    function = packet[6] - 0x30
    status, option = packet[7], packet[8]
    ac, dc = bit(status, 0), bit(status, 1)
    auto, manual, sign = bit(option, 0), bit(option, 1), bit(option, 2)
    unit, fname, implied = FUNCTIONS[function]
    dc = dc or fname == "diode"  # a diode reading is DC (libsigrok's DIODE | DC), whatever the status byte says
    flags: list[str] = [implied] if implied else []
    if manual:
        flags.append("MANUAL")
    if function == 12 and sign:  # frequency with the sign bit means duty cycle
        unit, sign = "%", False
        flags.append("duty-cycle")
    exponent = range_exponent("UT71x", fname, EXPONENTS[function], index)
    label = f"{fname} r{index}"
    if digits == OVER_LIMIT or digits == UNDER_LIMIT:
        if digits == UNDER_LIMIT:
            flags.append("UL")
        return Reading(float("inf"), unit, ac, dc, auto, True, label, tuple(flags))
    blank_last = digits[4] == 0x3A  # 4000-count mode: the last digit is blank and reads as 0
    if blank_last:
        digits = digits[0:4]
    if not all(0x30 <= b <= 0x39 for b in digits):
        raise DecodeError(f"UT71x: invalid digits {digits!r}")
    count = int(digits.decode("ascii")) * (10 if blank_last else 1)
    value = scale(-count if sign else count, exponent)
    return Reading(value, unit, ac, dc, auto, False, label, tuple(flags))


# (unit, prefix) -> (function code for DC, function code for AC, [(range, exponent)])
_ENCODINGS: dict[tuple[str, str], tuple[int, int, tuple[tuple[int, int], ...]]] = {
    ("A", "u"): (7, 7, ((0, -8), (1, -7))),
    ("A", "m"): (8, 8, ((0, -6), (1, -5))),
    ("A", ""): (9, 9, ((1, -3),)),
    ("V", "m"): (3, 0, ((0, -5),)),
    ("V", ""): (1, 2, ((1, -4), (2, -3), (3, -2), (4, -1))),
}


def encode(q: Quantity) -> bytes:
    """Build the packet a UT71x meter sends when it shows ``q`` (auto range)."""
    key = (q.unit, q.prefix)
    if key not in _ENCODINGS:
        raise ValueError(f"UT71x emulation supports A (uA/mA/A) and V (mV/V), not {q.prefix}{q.unit}")
    f_dc, f_ac, ranges = _ENCODINGS[key]
    function = f_ac if q.ac else f_dc
    single = q.unit == "V" and q.prefix == "m"  # the mV function has one range: neither AUTO nor MANUAL
    status = 0x30 | (0x01 if q.ac else 0x02)
    picked = None if q.overload else pick_range(q.value, ranges, MAX_COUNT)
    if picked is None:
        index = max(ranges, key=lambda r: r[1])[0]
        digits = OVER_LIMIT
        sign = False
    else:
        index, _, count = picked
        digits = f"{count:05d}".encode("ascii")
        sign = q.value < 0 and count != 0
    option = 0x30 | (0x04 if sign else 0) | (0 if single else 0x01)
    return digits + bytes([0x30 + index, 0x30 + function, status, option]) + b"\r\n"
