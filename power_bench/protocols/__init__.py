"""One parser module per meter chip protocol (the libsigrok way).

Every module exposes ``NAME``, ``PACKET_SIZE``, ``SEVEN_BIT``, ``valid(packet) -> bool`` (framing and
flag consistency), ``decode(packet) -> Reading`` (raises DecodeError) and ``encode(Quantity) -> bytes``
(used by the emulator).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


PROTOCOLS: dict[str, Protocol] = {
    m.NAME: Protocol(m.NAME, m.PACKET_SIZE, m.SEVEN_BIT, m.valid, m.decode, m.encode,
                     (m.__doc__ or "").strip().splitlines()[0])
    for m in (ut71x, fs9721, fs9922, es51922)
}

__all__ = ["PROTOCOLS", "Protocol"]
