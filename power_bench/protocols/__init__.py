"""One parser module per meter chip protocol (the libsigrok way).

Every module exposes ``NAME``, ``PACKET_SIZE``, ``SEVEN_BIT``, ``valid(packet) -> bool`` (framing and
flag consistency), ``decode(packet) -> Reading`` (raises DecodeError) and ``encode(Quantity) -> bytes``
(used by the emulator); a chip whose meters give some symbols meanings of their own also ``DETAILS``, the names
``decode(packet, details=NAME)`` takes (libsigrok's per-meter "details" callbacks; a meter row names its own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from ..reading import Quantity, Reading
from . import es51922, fs9721, fs9922, ut71x


@dataclass(frozen=True)
class Protocol:
    name: str
    packet_size: int
    seven_bit: bool
    valid: Callable[[bytes], bool]
    decode: Callable[[bytes], Reading]
    encode: Callable[[Quantity], bytes]
    summary: str
    details: tuple[str, ...] = ()

    def with_details(self, name: str) -> Protocol:
        """The protocol as a meter that gives its chip's symbols the meanings ``name`` (one of ``details``)."""
        if name not in self.details:
            raise KeyError(f"{self.name} has no details {name!r} (it has: {', '.join(self.details) or 'none'})")
        return replace(self, decode=partial(self.decode, details=name))


PROTOCOLS: dict[str, Protocol] = {
    m.NAME: Protocol(m.NAME, m.PACKET_SIZE, m.SEVEN_BIT, m.valid, m.decode, m.encode,
                     (m.__doc__ or "").strip().splitlines()[0], getattr(m, "DETAILS", ()))
    for m in (ut71x, fs9721, fs9922, es51922)
}

__all__ = ["PROTOCOLS", "Protocol"]
