"""Fortune FS9721 (LP3/B) protocol: 14 bytes of LCD segments at 2400 baud 8N1.

The high nibble of byte i (from 0) is i + 1, which is how a reader finds the packet start.
The low nibbles carry the LCD segments (byte index from 0)::

    0   bit3 AC, bit2 DC, bit1 AUTO, bit0 RS232 (always set)
    1-8 four digits, two bytes each: ((b[1+2i] & 7) << 4) | (b[2+2i] & 15) is the 7-segment code;
        bit3 of b[1] is the minus sign, bit3 of b[3] / b[5] / b[7] a decimal point before digit 2 / 3 / 4
    9   bit3 micro, bit2 nano, bit1 kilo, bit0 diode
    10  bit3 milli, bit2 percent, bit1 mega, bit0 beep
    11  bit3 farad, bit2 ohm, bit1 REL, bit0 HOLD
    12  bit3 ampere, bit2 volt, bit1 hertz, bit0 battery low
    13  user-defined symbols: what they mean is the meter's, not the chip's (libsigrok's per-meter "details");
        ``DETAILS``: "temp_c", bit0 is the degC symbol (UNI-T UT60E, Tenma 72-7745, Voltcraft VC-840)

A digit whose segments are all off (code 0x00) is blank: it is shown as nothing and reads as 0. Only
leading digits are blank on an LCD: a blank after a shown digit ("1 23") is a DecodeError, as is the diode
symbol beside a quantity other than volts. A diode reading is DC (libsigrok's DIODE | DC) whether or not the
DC segment is lit.
Over limit ("0L") is the digit codes 00 7D 68 00.
"""

from __future__ import annotations

from ..reading import PREFIXES, DecodeError, Quantity, Reading
from ._common import bit, diode_volts, pick_decimals, scale_display

NAME = "fs9721"
PACKET_SIZE = 14
SEVEN_BIT = False
MAX_COUNT = 3999
DETAILS = ("temp_c",)

SEGMENTS: dict[int, int] = {
    0x7D: 0, 0x05: 1, 0x5B: 2, 0x1F: 3, 0x27: 4, 0x3E: 5, 0x7E: 6, 0x15: 7, 0x7F: 8, 0x3F: 9,
}
DIGIT_CODES: tuple[int, ...] = tuple(sorted(SEGMENTS, key=SEGMENTS.__getitem__))
BLANK = 0x00
OVER_LIMIT = (0x00, 0x7D, 0x68, 0x00)


def _digit_codes(packet: bytes) -> tuple[int, int, int, int]:
    codes = [(((packet[1 + 2 * i] & 0x07) << 4) | (packet[2 + 2 * i] & 0x0F)) for i in range(4)]
    return codes[0], codes[1], codes[2], codes[3]


def _flags(packet: bytes) -> dict[str, bool]:
    b = packet
    return {
        "ac": bit(b[0], 3), "dc": bit(b[0], 2), "auto": bit(b[0], 1), "rs232": bit(b[0], 0),
        "sign": bit(b[1], 3),
        "micro": bit(b[9], 3), "nano": bit(b[9], 2), "kilo": bit(b[9], 1), "diode": bit(b[9], 0),
        "milli": bit(b[10], 3), "percent": bit(b[10], 2), "mega": bit(b[10], 1), "beep": bit(b[10], 0),
        "farad": bit(b[11], 3), "ohm": bit(b[11], 2), "rel": bit(b[11], 1), "hold": bit(b[11], 0),
        "ampere": bit(b[12], 3), "volt": bit(b[12], 2), "hertz": bit(b[12], 1), "bat": bit(b[12], 0),
    }


def valid(packet: bytes) -> bool:
    """Sync nibbles 1..14, RS232 flag set, at most one multiplier and one quantity, not AC and DC."""
    if len(packet) != PACKET_SIZE or any(packet[i] >> 4 != i + 1 for i in range(PACKET_SIZE)):
        return False
    f = _flags(packet)
    multipliers = f["nano"] + f["micro"] + f["milli"] + f["kilo"] + f["mega"]
    kinds = f["hertz"] + f["ohm"] + f["farad"] + f["ampere"] + f["volt"] + f["percent"]
    return f["rs232"] and multipliers <= 1 and kinds <= 1 and not (f["ac"] and f["dc"])


def decode(packet: bytes, details: str = "") -> Reading:
    """The reading of a packet; ``details`` (one of DETAILS, or ""): how the meter uses byte 13's symbols."""
    if not valid(packet):
        raise DecodeError("not an FS9721 packet")
    f = _flags(packet)
    dc = f["dc"] or f["diode"]
    codes = _digit_codes(packet)
    factor = 1.0
    for name, prefix in (("nano", "n"), ("micro", "u"), ("milli", "m"), ("kilo", "k"), ("mega", "M")):
        if f[name]:
            factor = PREFIXES[prefix]
    unit = ""
    flags: list[str] = []
    for name, u in (("volt", "V"), ("ampere", "A"), ("ohm", "Ohm"), ("hertz", "Hz"), ("farad", "F")):
        if f[name]:
            unit = u
    if f["percent"]:
        unit = "%"
    for name, label in (("diode", "diode"), ("beep", "continuity"), ("hold", "HOLD"), ("rel", "REL"),
                        ("bat", "BAT")):
        if f[name]:
            flags.append(label)
    if f["diode"]:
        unit = diode_volts("FS9721", unit)
    if details == "temp_c" and bit(packet[13], 0):  # the degC symbol names the quantity, whatever else is lit
        unit = "C"
    label = {1e-9: "n", 1e-6: "u", 1e-3: "m", 1.0: "", 1e3: "k", 1e6: "M"}[factor] + unit
    if codes == OVER_LIMIT:
        return Reading(float("inf"), unit, f["ac"], dc, f["auto"], True, label, tuple(flags))
    count = 0
    shown = 0
    for code in codes:
        if code == BLANK:
            if shown:
                raise DecodeError("FS9721: a blank digit after a shown one (an LCD blanks leading digits only)")
            digit = 0
        elif code in SEGMENTS:
            digit = SEGMENTS[code]
            shown += 1
        else:
            raise DecodeError(f"FS9721: invalid 7-segment code 0x{code:02x}")
        count = 10 * count + digit
    if shown == 0:
        raise DecodeError("FS9721: display is blank")
    divisor = 1
    if bit(packet[3], 3):
        divisor = 1000
    elif bit(packet[5], 3):
        divisor = 100
    elif bit(packet[7], 3):
        divisor = 10
    label += f"/{divisor}"  # the decimal point moves when an auto-ranging meter changes range
    value = scale_display(-count if f["sign"] else count, divisor, factor)
    return Reading(value, unit, f["ac"], dc, f["auto"], False, label, tuple(flags))


_UNIT_BITS = {"A": (12, 3), "V": (12, 2), "Hz": (12, 1), "Ohm": (11, 2), "F": (11, 3)}
_PREFIX_BITS = {"u": (9, 3), "n": (9, 2), "k": (9, 1), "m": (10, 3), "M": (10, 1)}


def encode(q: Quantity) -> bytes:
    """Build the LCD-segment packet an FS9721 meter sends when it shows ``q``: four digits, leading zeros
    included (what libsigrok reads correctly; the decoder also accepts blank digits)."""
    if q.unit not in _UNIT_BITS:
        raise ValueError(f"FS9721 emulation supports {sorted(_UNIT_BITS)}, not {q.unit}")
    if q.ac and q.unit not in ("V", "A"):
        raise ValueError(f"FS9721 emulation: AC applies to V and A, not {q.unit}")
    coupling = 0x08 if q.ac else (0x04 if q.unit in ("V", "A") else 0)  # a meter shows DC only on V and A
    low = [0] * PACKET_SIZE
    low[0] = coupling | 0x02 | 0x01
    picked = None if q.overload else pick_decimals(q.scaled, MAX_COUNT)
    if picked is None:
        codes = list(OVER_LIMIT)
        sign = False
        point = 0
    else:
        decimals, count = picked
        # every digit is sent, leading zeros included ("05.02"): libsigrok's fs9721 parser reads a blank
        # digit as a wrong count (5.02 V as -4.98 V), so an emulated meter must not send one
        codes = [DIGIT_CODES[int(ch)] for ch in f"{count:04d}"]
        sign = q.value < 0 and count != 0
        point = {3: 1, 2: 2, 1: 3, 0: 0}[decimals]  # digit index the decimal point precedes
    for i, code in enumerate(codes):
        marker = sign if i == 0 else point == i
        low[1 + 2 * i] = ((code >> 4) & 0x07) | (0x08 if marker else 0)
        low[2 + 2 * i] = code & 0x0F
    byte, n = _UNIT_BITS[q.unit]
    low[byte] |= 1 << n
    if q.prefix:
        byte, n = _PREFIX_BITS[q.prefix]
        low[byte] |= 1 << n
    return bytes(((i + 1) << 4) | low[i] for i in range(PACKET_SIZE))
