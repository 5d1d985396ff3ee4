"""Decoders of the four meter protocol families, byte-exact from hand-written packets."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from power_bench.framing import PacketFramer
from power_bench.protocols import PROTOCOLS, es51922, fs9721, fs9922, ut71x
from power_bench.reading import DecodeError, Quantity, parse_quantity

# meters.md: each of these decodes to 123.4 mA DC, auto range
MD_EXAMPLES = {
    "ut71x": "31 32 33 34 30 31 38 32 31 0d 0a",
    "fs9721": "17 20 35 45 5b 61 7f 8a 97 a0 b8 c0 d8 e0",
    "fs9922": "2b 31 32 33 34 20 34 30 00 40 40 00 0d 0a",
    "es51922": "31 31 32 33 34 30 3f 30 30 30 3a 30 0d 0a",
}


@pytest.mark.parametrize("name", sorted(MD_EXAMPLES))
def test_meters_md_examples_decode_to_123_4_ma_dc_auto(name: str) -> None:
    r = PROTOCOLS[name].decode(bytes.fromhex(MD_EXAMPLES[name]))
    assert r.value == pytest.approx(0.1234, rel=1e-12)
    assert (r.unit, r.dc, r.ac, r.auto, r.overload) == ("A", True, False, True, False)
    assert r.describe().startswith("0.1234 A DC")


@pytest.mark.parametrize("name", sorted(MD_EXAMPLES))
def test_encoder_reproduces_meters_md_example(name: str) -> None:
    assert PROTOCOLS[name].encode(parse_quantity("123.4mA")) == bytes.fromhex(MD_EXAMPLES[name])


def test_ut71x_negative_example_from_meters_md() -> None:
    packet = bytes.fromhex("30 30 35 31 32 31 39 32 35 0d 0a")
    r = ut71x.decode(packet)
    assert r.value == pytest.approx(-0.512, rel=1e-12)
    assert (r.unit, r.dc, r.auto) == ("A", True, True)
    assert ut71x.encode(parse_quantity("-0.512A")) == packet


# ---------------------------------------------------------------- UT71x


def _ut71x(digits: str, rng: str, func: str, status: int, option: int) -> bytes:
    return digits.encode() + rng.encode() + func.encode() + bytes([status, option]) + b"\r\n"


@pytest.mark.parametrize(
    ("digits", "rng", "func", "status", "option", "value", "unit", "ac"),
    [
        ("12340", "0", "8", 0x32, 0x31, 0.01234, "A", False),  # 40.000 mA range
        ("05000", "2", "1", 0x32, 0x31, 5.0, "V", False),  # 40.000 V range, 10^-3
        ("23000", "3", "2", 0x31, 0x31, 230.0, "V", True),  # AC V, 400.00 V range
        ("15000", "0", "3", 0x32, 0x30, 0.15, "V", False),  # DC mV, single range: neither auto nor manual
        ("01200", "0", "7", 0x32, 0x31, 12e-6, "A", False),  # uA range 0 = 10^-8
        ("00512", "1", "9", 0x32, 0x35, -0.512, "A", False),  # 10 A range is index 1; sign bit
        ("04567", "1", "8", 0x32, 0x36, -0.04567, "A", False),  # manual range + sign
    ],
)
def test_ut71x_layout(digits: str, rng: str, func: str, status: int, option: int, value: float, unit: str,
                      ac: bool) -> None:
    r = ut71x.decode(_ut71x(digits, rng, func, status, option))
    assert r.value == pytest.approx(value, rel=1e-12)
    assert r.unit == unit and r.ac == ac and r.dc == (not ac)
    assert r.auto == bool(option & 1)
    assert ("MANUAL" in r.flags) == bool(option & 2)


def test_ut71x_over_and_under_limit() -> None:
    over = ut71x.decode(_ut71x("::0<:", "1", "8", 0x32, 0x31))
    under = ut71x.decode(_ut71x(":<0::", "1", "8", 0x32, 0x31))
    for r in (over, under):
        assert r.overload and math.isinf(r.value) and r.unit == "A"
    assert "UL" in under.flags
    assert ut71x.encode(parse_quantity("OLmA"))[:5] == b"::0<:"


def test_ut71x_4000_count_mode_reads_the_blank_last_digit_as_0() -> None:
    # the 400.00 mA range in 4000-count mode shows 123.4 mA: libsigrok 0.5.2 prints "123.40 mA DC AUTO"
    # (round 61's probe; this test asserted 12.34 mA before)
    r = ut71x.decode(_ut71x("1234:", "1", "8", 0x32, 0x31))
    assert r.value == pytest.approx(0.1234, rel=1e-12) and r.unit == "A"
    assert ut71x.decode(_ut71x("0512:", "1", "1", 0x32, 0x31)).value == pytest.approx(0.512, rel=1e-12)
    with pytest.raises(DecodeError):
        ut71x.decode(_ut71x("12:4:", "1", "8", 0x32, 0x31))


@pytest.mark.parametrize(("rng", "value"), [("1", 123.40), ("2", 1234.0), ("3", 12340.0), ("6", 12340e3)])
def test_ut71x_resistance_ranges_start_at_400_ohm(rng: str, value: float) -> None:
    # 40,000 counts: range 1 is 400.00 Ohm (10^-2) .. range 6 40.000 MOhm, as libsigrok 0.5.2 decodes them
    r = ut71x.decode(_ut71x("12340", rng, "4", 0x30, 0x31))
    assert r.value == pytest.approx(value, rel=1e-12) and r.unit == "Ohm"


@pytest.mark.parametrize(("rng", "func"), [("2", "8"), ("0", "9"), ("5", "1"), ("0", "4"), ("7", "4"), ("1", "0"),
                                           ("0", ">")])
def test_ut71x_a_range_the_function_lacks_is_refused(rng: str, func: str) -> None:
    # mA range 2 read as 12,340 A, the 10 A function's range 0 as 512 A: corrupt bytes, not readings
    with pytest.raises(DecodeError, match="has no range"):
        ut71x.decode(_ut71x("12340", rng, func, 0x32, 0x31))
    with pytest.raises(DecodeError, match="has no range"):
        ut71x.decode(_ut71x("::0<:", rng, func, 0x32, 0x31))


def test_ut71x_rejects_bad_packets() -> None:
    assert not ut71x.valid(_ut71x("12340", "1", "8", 0x32, 0x33))  # AUTO and MANUAL together
    assert not ut71x.valid(_ut71x("12340", "1", "8", 0x32, 0x31)[:-1] + b"\r")
    with pytest.raises(DecodeError):
        ut71x.decode(_ut71x("12;40", "1", "8", 0x32, 0x31))


# ---------------------------------------------------------------- FS9721

SEG = {0: 0x7D, 1: 0x05, 2: 0x5B, 3: 0x1F, 4: 0x27, 5: 0x3E, 6: 0x7E, 7: 0x15, 8: 0x7F, 9: 0x3F, None: 0x00}


def _fs9721(digits: list[int | None], point: int = 0, minus: bool = False, b0: int = 0x7,
            b9: int = 0, b10: int = 0, b11: int = 0, b12: int = 0x8) -> bytes:
    """Hand-assemble a packet from the datasheet layout: point = index of the digit a dp precedes."""
    low = [b0] + [0] * 8 + [b9, b10, b11, b12, 0]
    for i, d in enumerate(digits):
        code = SEG[d]
        flag = minus if i == 0 else point == i
        low[1 + 2 * i] = ((code >> 4) & 0x7) | (0x8 if flag else 0)
        low[2 + 2 * i] = code & 0xF
    return bytes(((i + 1) << 4) | v for i, v in enumerate(low))


@pytest.mark.parametrize(
    ("digits", "point", "minus", "b9", "b10", "b12", "value", "unit"),
    [
        ([1, 2, 3, 4], 3, False, 0, 0x8, 0x8, 0.1234, "A"),  # 123.4 mA
        ([0, 5, 1, 2], 1, True, 0, 0, 0x8, -0.512, "A"),  # -0.512 A: minus in byte 1
        ([None, None, 4, 2], 0, False, 0, 0, 0x4, 42.0, "V"),  # two blank leading digits
        ([None, 9, 8, 7], 0, False, 0x8, 0, 0x8, 987e-6, "A"),  # blank + micro
        ([1, 2, 3, 4], 2, False, 0, 0x8, 0x4, 0.01234, "V"),  # 12.34 mV
        ([3, 9, 9, 9], 0, False, 0x2, 0, 0x0, 3999e3, ""),  # kilo, no unit symbol
    ],
)
def test_fs9721_layout(digits: list[int | None], point: int, minus: bool, b9: int, b10: int, b12: int,
                       value: float, unit: str) -> None:
    r = fs9721.decode(_fs9721(digits, point, minus, b9=b9, b10=b10, b12=b12))
    assert r.value == pytest.approx(value, rel=1e-12)
    assert r.unit == unit


def test_fs9721_blank_digit_is_not_read_as_a_digit() -> None:
    # a blank first digit must not make the packet invalid or turn into a number
    r = fs9721.decode(_fs9721([None, 5, 1, 2], 0, False, b12=0x4))
    assert r.value == 512.0
    assert fs9721.decode(_fs9721([None, None, None, 5], 0, True, b12=0x4)).value == -5.0  # "-   5"
    with pytest.raises(DecodeError):
        fs9721.decode(_fs9721([None, None, None, None]))


@pytest.mark.parametrize("digits", [[1, None, 2, 3], [1, 2, None, None], [None, 1, None, 2]])
def test_fs9721_a_blank_after_a_shown_digit_is_refused(digits: list[int | None]) -> None:
    # "1 23" read as 1.023 V before; an LCD blanks leading zeros only (libsigrok 0.5.2 reads 923 mV)
    with pytest.raises(DecodeError, match="blank digit after a shown one"):
        fs9721.decode(_fs9721(digits, 1, False, b12=0x4))


def test_diode_beside_another_quantity_is_refused() -> None:
    # diode mode shows volts: diode + percent (FS9721) or + ampere (FS9922) is no meter's state
    with pytest.raises(DecodeError, match="diode symbol beside %"):
        fs9721.decode(_fs9721([0, 5, 0, 0], 0, False, b9=0x1, b10=0x4, b12=0x0))
    assert fs9721.decode(_fs9721([0, 5, 1, 2], 1, False, b9=0x1, b12=0x4)).unit == "V"
    with pytest.raises(DecodeError, match="diode symbol beside A"):
        fs9922.decode(_fs9922("+", "0512", "1", 0x30, 0, 0x04, 0x40))
    assert fs9922.decode(_fs9922("+", "0512", "1", 0x30, 0, 0x04, 0x80)).unit == "V"


@pytest.mark.parametrize(
    ("text", "digits", "point", "minus"),
    [
        ("5.02V", [0, 5, 0, 2], 2, False),  # a real meter shows "05.02", libsigrok reads blanks wrongly
        ("-42.1mA", [0, 4, 2, 1], 3, True),
        ("0.001A", [0, 0, 0, 1], 1, False),
        ("0.05mA", [0, 0, 5, 0], 1, False),
    ],
)
def test_fs9721_encoder_sends_every_digit(text: str, digits: list[int], point: int, minus: bool) -> None:
    q = parse_quantity(text)
    packet = fs9721.encode(q)
    assert all(code != fs9721.BLANK for code in fs9721._digit_codes(packet))
    unit_bits = {"V": 0x4, "A": 0x8}[q.unit]
    b10 = 0x8 if q.prefix == "m" else 0
    assert packet == _fs9721(digits, point, minus, b10=b10, b12=unit_bits)
    assert fs9721.decode(packet).value == pytest.approx(q.value, rel=1e-12)


def test_fs9721_overload_ac_and_flags() -> None:
    ol = bytes.fromhex("17 20 30 47 5d 66 78 80 90 a0 b8 c0 d8 e0")
    r = fs9721.decode(ol)
    assert r.overload and math.isinf(r.value) and r.unit == "A"
    ac = fs9721.decode(_fs9721([2, 3, 0, 0], 3, b0=0xB, b12=0x4))
    assert ac.ac and not ac.dc and ac.value == pytest.approx(230.0)
    hold = fs9721.decode(_fs9721([1, 0, 0, 0], 1, b11=0x1))
    assert "HOLD" in hold.flags


def test_fs9721_sync_nibbles_and_flag_checks() -> None:
    good = bytearray(bytes.fromhex(MD_EXAMPLES["fs9721"]))
    assert fs9721.valid(bytes(good))
    bad = bytearray(good)
    bad[5] = 0x11  # wrong sync nibble
    assert not fs9721.valid(bytes(bad))
    assert not fs9721.valid(_fs9721([1, 2, 3, 4], b0=0x6))  # RS232 flag clear
    assert not fs9721.valid(_fs9721([1, 2, 3, 4], b0=0xF))  # AC and DC
    assert not fs9721.valid(_fs9721([1, 2, 3, 4], b12=0xC))  # A and V


# ---------------------------------------------------------------- FS9922


def _fs9922(sign: str, digits: str, dp: str, sb1: int, sb2: int, sb3: int, sb4: int) -> bytes:
    return (sign + digits + " " + dp).encode() + bytes([sb1, sb2, sb3, sb4, 0]) + b"\r\n"


@pytest.mark.parametrize(
    ("sign", "digits", "dp", "sb1", "sb2", "sb3", "sb4", "value", "unit", "ac"),
    [
        ("-", "0512", "1", 0x30, 0, 0x00, 0x40, -0.512, "A", False),
        ("+", "1234", "2", 0x30, 0, 0x40, 0x80, 0.01234, "V", False),  # 12.34 mV
        ("+", "2300", "4", 0x28, 0, 0x00, 0x80, 230.0, "V", True),
        ("+", "0123", "0", 0x30, 0, 0x80, 0x40, 123e-6, "A", False),
        ("+", "0042", "1", 0x30, 0x02, 0x00, 0x04, 0.042e-9, "F", False),  # nano farad
    ],
)
def test_fs9922_layout(sign: str, digits: str, dp: str, sb1: int, sb2: int, sb3: int, sb4: int,
                       value: float, unit: str, ac: bool) -> None:
    r = fs9922.decode(_fs9922(sign, digits, dp, sb1, sb2, sb3, sb4))
    assert r.value == pytest.approx(value, rel=1e-12)
    assert (r.unit, r.ac) == (unit, ac)
    assert r.auto == bool(sb1 & 0x20)


def test_fs9922_overload_and_bad_decimal_point() -> None:
    r = fs9922.decode(_fs9922("+", "?0:?", "0", 0x30, 0, 0x40, 0x40))
    assert r.overload and math.isinf(r.value) and r.unit == "A"
    with pytest.raises(DecodeError):
        fs9922.decode(_fs9922("+", "1234", "3", 0x30, 0, 0x40, 0x40))  # '3' is the datasheet typo
    assert not fs9922.valid(_fs9922(" ", "1234", "4", 0x30, 0, 0x40, 0x40))
    assert not fs9922.valid(_fs9922("+", "1234", "4", 0x38 | 0x10, 0, 0x40, 0x40))  # AC and DC


# ---------------------------------------------------------------- ES51922


def _es(rng: str, digits: str, func: int, status: int = 0x30, opt2: int = 0x30, opt3: int = 0x3A) -> bytes:
    return (rng + digits).encode() + bytes([func, status, 0x30, opt2, opt3, 0x30]) + b"\r\n"


@pytest.mark.parametrize(
    ("rng", "digits", "func", "status", "opt3", "value", "unit", "ac"),
    [
        ("0", "12340", 0x3F, 0x30, 0x3A, 0.01234, "A", False),  # 22.000 mA range
        ("0", "00512", 0x30, 0x34, 0x3A, -0.512, "A", False),  # A, sign in status bit 2
        ("1", "05000", 0x3B, 0x30, 0x3A, 5.0, "V", False),  # 22.000 V
        ("4", "15000", 0x3B, 0x30, 0x3A, 0.15, "V", False),  # 220.00 mV range is index 4
        ("3", "02300", 0x3B, 0x30, 0x36, 230.0, "V", True),  # AC
        ("0", "01200", 0x3D, 0x30, 0x3A, 12e-6, "A", False),  # uA
    ],
)
def test_es51922_layout(rng: str, digits: str, func: int, status: int, opt3: int, value: float, unit: str,
                        ac: bool) -> None:
    r = es51922.decode(_es(rng, digits, func, status, opt3=opt3))
    assert r.value == pytest.approx(value, rel=1e-12)
    assert (r.unit, r.ac, r.dc) == (unit, ac, not ac)


def test_es51922_overload_underflow_and_bad_function() -> None:
    for r in (es51922.decode(_es("1", "22580", 0x3F, status=0x31)),
              es51922.decode(_es("1", "00000", 0x3F, opt2=0x38))):
        assert r.overload and math.isinf(r.value) and r.unit == "A"
    with pytest.raises(DecodeError):
        es51922.decode(_es("1", "02500", 0x34))  # temperature: no range exponent
    assert not es51922.valid(_es("1", "12340", 0x3F, opt3=0x3E))  # AC and DC


@pytest.mark.parametrize(("rng", "func"), [("2", 0x3F), ("2", 0x3D), ("1", 0x30), ("5", 0x3B), ("7", 0x33),
                                           ("1", 0x31), ("2", 0x32), ("5", 0x39)])
def test_es51922_a_range_the_mode_lacks_is_refused(rng: str, func: int) -> None:
    # mA range 2 read as 12,345 A (libsigrok 0.5.2 prints 12.345 kA): corrupt bytes, not a reading
    with pytest.raises(DecodeError, match="has no range"):
        es51922.decode(_es(rng, "12345", func))


def test_es51922_vbar_is_refused() -> None:
    # VBAR is no UT61E state: uA with VBAR read as 1234.5 A, V as 1.234 V where libsigrok 0.5.2 says kV
    for rng, func in (("0", 0x3D), ("1", 0x3F), ("1", 0x3B), ("0", 0x30)):
        packet = (rng + "12345").encode() + bytes([func, 0x30, 0x30, 0x30, 0x3A, 0x34]) + b"\r\n"
        with pytest.raises(DecodeError, match="VBAR"):
            es51922.decode(packet)


# ---------------------------------------------------------------- round trips and framing

QUANTITIES = {
    "ut71x": ["123.4mA", "-0.512A", "5V", "12.34uA", "-39.999mA", "1.5mV", "230VAC", "0A"],
    "fs9721": ["123.4mA", "-0.512A", "5V", "12.34uA", "-3.999A", "230VAC", "0.001A"],
    "fs9922": ["123.4mA", "-0.512A", "5V", "12.34uA", "-5.999A", "230VAC", "0.001A"],
    "es51922": ["123.4mA", "-0.512A", "5V", "12.34uA", "-21.999mA", "230VAC", "150mV"],
}


@pytest.mark.parametrize("name", sorted(QUANTITIES))
def test_encode_decode_round_trip(name: str) -> None:
    proto = PROTOCOLS[name]
    for text in QUANTITIES[name]:
        q = parse_quantity(text)
        packet = proto.encode(q)
        assert len(packet) == proto.packet_size and proto.valid(packet)
        if proto.seven_bit:
            assert all(b < 0x80 for b in packet)
        r = proto.decode(packet)
        assert r.value == pytest.approx(q.value, rel=1e-9, abs=1e-15), text
        assert (r.unit, r.ac) == (q.unit, q.ac)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(QUANTITIES)), count=st.integers(-2199, 2199),
       prefix=st.sampled_from(["u", "m", ""]), unit=st.sampled_from(["A", "V"]))
def test_round_trip_property(name: str, count: int, prefix: str, unit: str) -> None:
    if unit == "V" and prefix == "u":
        prefix = "m"
    scale = {"u": 1e-6, "m": 1e-3, "": 1.0}[prefix]
    q = Quantity(count / 100 * scale, unit, prefix)  # 0.01 of the prefixed unit: every family resolves it
    r = PROTOCOLS[name].decode(PROTOCOLS[name].encode(q))
    assert r.value == pytest.approx(q.value, rel=1e-9, abs=1e-15)
    assert r.unit == unit


@pytest.mark.parametrize("name", sorted(MD_EXAMPLES))
def test_framer_resynchronizes_on_garbage_partial_and_misaligned(name: str) -> None:
    proto = PROTOCOLS[name]
    good = bytes.fromhex(MD_EXAMPLES[name])
    framer = PacketFramer(proto)
    stream = (good[3:]  # starts mid-packet (misaligned)
              + good + b"\x00\xff\x13garbage" + good[:5]  # garbage, then a truncated packet
              + good + good)
    frames = []
    for i in range(0, len(stream), 3):  # arrives in small chunks
        frames += framer.feed(stream[i : i + 3])
    frames += framer.finish()
    readings = [f.reading for f in frames if f.kind == "packet"]
    assert len(readings) == 3 and all(r is not None and r.value == pytest.approx(0.1234) for r in readings)
    assert framer.packets == 3
    assert framer.dropped_packets >= 2
    assert framer.garbage_bytes == len(stream) - 3 * len(good)


def test_framer_strips_parity_bit_for_seven_bit_protocols() -> None:
    good = bytes.fromhex(MD_EXAMPLES["ut71x"])
    noisy = bytes(b | 0x80 for b in good)  # bit 7 set as an 8N1 read of a 7O1 line may show
    frames = PacketFramer(PROTOCOLS["ut71x"]).feed(noisy)
    assert [f.kind for f in frames] == ["packet"]


def test_parse_quantity() -> None:
    assert parse_quantity("123.4mA") == Quantity(pytest.approx(0.1234), "A", "m")
    assert parse_quantity("-0.512A").value == -0.512
    assert parse_quantity("230VAC").ac
    assert parse_quantity("OLmA").overload
    with pytest.raises(ValueError):
        parse_quantity("12 parsecs")


# the largest magnitude a UT71x or UT61E shows in each unit, with every digit 9: 10 A range 99.999 A, 1000 V
# range 9999.9 V (a corrupt range byte used to give 12,340 A; round 61)
PLAUSIBLE = {"A": 100.0, "V": 1e4}


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(["ut71x", "es51922"]), data=st.data())
def test_any_packet_decodes_to_an_error_or_a_reading_a_meter_can_show(name: str, data: st.DataObject) -> None:
    """Packets of the protocol's byte alphabet (ASCII fields 0x30..0x3f, a CR LF end): decode raises DecodeError
    or returns a reading whose amperes and volts a meter's display can hold; never another exception."""
    proto = PROTOCOLS[name]
    body = data.draw(st.lists(st.integers(0x30, 0x3F), min_size=proto.packet_size - 2,
                              max_size=proto.packet_size - 2))
    try:
        r = proto.decode(bytes(body) + b"\r\n")
    except DecodeError:
        return
    if r.overload:
        assert math.isinf(r.value)
    elif r.unit in PLAUSIBLE:
        assert abs(r.value) <= PLAUSIBLE[r.unit], (bytes(body), r)


# ---------------------------------------------------------------- diode readings and per-meter details


def test_a_diode_reading_is_dc_whatever_the_dc_segment_says() -> None:
    # libsigrok 0.5.2 gives every diode reading DIODE | DC (tests/test_power_sigrok.py asks sigrok-cli)
    readings = [fs9721.decode(_fs9721([0, 5, 1, 2], 1, False, b0=0x3, b9=0x1, b12=0x4)),  # DC segment off
                fs9922.decode(_fs9922("+", "0512", "1", 0x20, 0, 0x04, 0x80)),
                ut71x.decode(b"05120" + b"0;" + bytes([0x30, 0x31]) + b"\r\n"),
                es51922.decode(_es("0", "05120", 0x31, opt3=0x32))]
    for r in readings:
        assert (r.value, r.unit, r.ac, r.dc, "diode" in r.flags) == (pytest.approx(0.512), "V", False, True, True)
    assert not fs9721.decode(_fs9721([0, 5, 1, 2], 1, False, b0=0x3, b12=0x4)).dc  # not a diode: as lit


def test_fs9721_temp_c_details_read_byte_13_bit_0_as_degrees_celsius() -> None:
    packet = bytearray(_fs9721([0, 2, 3, 4], 2, False, b12=0x4))  # 2.34 V
    packet[13] |= 0x1
    assert fs9721.decode(bytes(packet)).unit == "V"  # the chip alone: a user symbol, no quantity
    temp = PROTOCOLS["fs9721"].with_details("temp_c").decode(bytes(packet))
    assert (temp.value, temp.unit, temp.dc) == (pytest.approx(2.34), "C", True)
    packet[13] ^= 0x1 | 0x2  # another user symbol: no temperature
    assert PROTOCOLS["fs9721"].with_details("temp_c").decode(bytes(packet)).unit == "V"
    with pytest.raises(KeyError, match="fs9721 has no details 'z1_diode'"):
        PROTOCOLS["fs9721"].with_details("z1_diode")


def test_fs9922_z1_diode_details_read_z1_as_the_diode_symbol() -> None:
    packet = _fs9922("+", "0512", "1", 0x20, 0x80, 0x00, 0x00)  # Z1, no unit or DC segment lit
    plain = fs9922.decode(packet)
    assert (plain.unit, plain.dc, plain.flags) == ("", False, ())
    vc830 = PROTOCOLS["fs9922"].with_details("z1_diode").decode(packet)
    assert (vc830.value, vc830.unit, vc830.dc, vc830.flags) == (pytest.approx(0.512), "V", True, ("diode",))
    with pytest.raises(DecodeError, match="diode symbol beside A"):
        PROTOCOLS["fs9922"].with_details("z1_diode").decode(_fs9922("+", "0512", "1", 0x30, 0x80, 0x00, 0x40))


def test_every_meter_names_details_its_chip_has() -> None:
    from power_bench.meters import METERS, find_meter  # noqa: PLC0415

    for m in METERS:
        assert m.proto.name == m.protocol  # raises KeyError for details the chip lacks
    assert find_meter("voltcraft-vc830").proto.decode(_fs9922("+", "0512", "1", 0x20, 0x80, 0x00, 0x00)).unit == "V"
    assert find_meter("uni-t-ut61d").proto.decode(_fs9922("+", "0512", "1", 0x20, 0x80, 0x00, 0x00)).unit == ""
