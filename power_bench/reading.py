"""A decoded multimeter reading and the quantity notation used on the command line."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

#: SI prefixes a handheld meter shows, with their factor.
# every SI prefix a reading may carry: the decoders' n..M, and sigrok-cli's p and G (686 pA, 3.242 GOhm)
PREFIXES: dict[str, float] = {"": 1.0, "p": 1e-12, "n": 1e-9, "u": 1e-6, "\u00b5": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6,
                              "G": 1e9}

#: Units the decoders can report (base units only; the prefix is folded into the value).
UNITS = ("A", "V", "Ohm", "Hz", "F", "C", "degF", "%", "W", "hFE", "")


class DecodeError(ValueError):
    """Raised when a packet is well framed but its content cannot be decoded."""


@dataclass(frozen=True)
class Reading:
    """One reading of a meter, in base units.

    ``value`` is ``inf`` (or ``-inf``) when the meter shows OL; ``overload`` is then True.
    ``range`` is a protocol-specific label of the meter's range (changes when the meter
    switches ranges). ``flags`` holds anything else the packet says (HOLD, REL, diode, ...).
    """

    value: float
    unit: str
    ac: bool = False
    dc: bool = False
    auto: bool = False
    overload: bool = False
    range: str = ""
    flags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def coupling(self) -> str:
        if self.ac and self.dc:
            return "AC+DC"
        if self.ac:
            return "AC"
        if self.dc:
            return "DC"
        return ""

    def describe(self) -> str:
        """``0.1234 A DC range=... auto`` -- value in base units first, then the rest."""
        if self.overload:
            text = f"{'-' if self.value < 0 else ''}OL {self.unit}"
        else:
            text = f"{self.value:.6g} {self.unit}"
        parts = [text.rstrip()]
        if self.coupling:
            parts.append(self.coupling)
        if self.range:
            parts.append(f"range={self.range}")
        parts.append("auto" if self.auto else "manual")
        parts.extend(self.flags)
        return " ".join(parts)

    def as_dict(self) -> dict[str, object]:
        value: object = self.value
        if math.isinf(self.value):
            value = None
        return {
            "value": value,
            "unit": self.unit,
            "coupling": self.coupling,
            "overload": self.overload,
            "auto": self.auto,
            "range": self.range,
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class Quantity:
    """A value as a user writes it for the emulator: ``123.4mA``, ``-0.512A``, ``5V``, ``OLmA``, ``1.2VAC``.

    ``prefix`` is kept because it says which dial position a meter would be on (mA vs A).
    """

    value: float  # base units; inf when overload
    unit: str
    prefix: str = ""
    ac: bool = False
    overload: bool = False

    @property
    def scaled(self) -> float:
        """The value in the prefixed unit (123.4 for 123.4 mA)."""
        return self.value / PREFIXES[self.prefix]


_QUANTITY_RE = re.compile(
    r"^\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?OL)\s*"
    r"(?P<prefix>[numkM\u00b5]?)(?P<unit>A|V|Ohm|Hz|F|W)\s*(?P<cpl>AC|DC)?\s*$"
)


def parse_quantity(text: str) -> Quantity:
    """Parse ``123.4mA`` / ``-0.512A`` / ``5V`` / ``OLmA`` / ``230VAC`` into a :class:`Quantity`."""
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise ValueError(f"cannot read {text!r} as a value with unit (examples: 123.4mA, -0.512A, 5V, OLmA)")
    prefix = match.group("prefix").replace("\u00b5", "u")
    unit = match.group("unit")
    ac = match.group("cpl") == "AC"
    num = match.group("num")
    if num.lstrip("+-") == "OL":
        sign = -1.0 if num.startswith("-") else 1.0
        return Quantity(sign * math.inf, unit, prefix, ac, True)
    value = float(num) * PREFIXES[prefix]
    if not math.isfinite(value):  # 1e400V: out of float range (an overload is written OL)
        raise ValueError(f"{text!r} is out of range (an overload is written OL, e.g. OLmA)")
    return Quantity(value, unit, prefix, ac, False)
