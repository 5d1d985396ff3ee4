"""Cut a byte stream into protocol packets, resynchronizing on garbage and counting what is dropped."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .protocols import Protocol
from .reading import DecodeError, Reading


@dataclass(frozen=True)
class Frame:
    """One framed piece of the stream: a decoded packet, an undecodable packet, or dropped bytes."""

    kind: str  # "packet" | "undecodable" | "dropped"
    raw: bytes
    reading: Reading | None = None
    note: str = ""


class PacketFramer:
    """Feed bytes as they arrive; get back whole packets.

    The framer slides over the stream one byte at a time until a window passes the protocol's
    ``valid`` check (sync nibbles, CR LF, flag consistency), so partial, misaligned and garbage bytes
    are skipped. Every stretch of skipped bytes is reported once as a ``dropped`` frame and counted as
    ``ceil(len / packet size)`` dropped packets. For 7-bit protocols the 8th bit is cleared first, as a
    7O1 UART would deliver it.
    """

    def __init__(self, protocol: Protocol, max_pending: int | None = None) -> None:
        self.protocol = protocol
        self._buf = bytearray()
        self._skipped = bytearray()
        self._max_pending = max_pending or 4 * protocol.packet_size
        self.packets = 0
        self.undecodable = 0
        self.dropped_packets = 0
        self.garbage_bytes = 0

    def _flush_skipped(self) -> list[Frame]:
        if not self._skipped:
            return []
        raw = bytes(self._skipped)
        self._skipped.clear()
        self.garbage_bytes += len(raw)
        self.dropped_packets += math.ceil(len(raw) / self.protocol.packet_size)
        return [Frame("dropped", raw, None, f"{len(raw)} unreadable bytes skipped")]

    def feed(self, data: bytes) -> list[Frame]:
        if self.protocol.seven_bit:
            data = bytes(b & 0x7F for b in data)
        self._buf += data
        size = self.protocol.packet_size
        frames: list[Frame] = []
        i = 0
        while len(self._buf) - i >= size:
            window = bytes(self._buf[i : i + size])
            if not self.protocol.valid(window):
                self._skipped.append(self._buf[i])
                i += 1
                if len(self._skipped) >= self._max_pending:
                    frames += self._flush_skipped()
                continue
            frames += self._flush_skipped()
            try:
                reading = self.protocol.decode(window)
            except DecodeError as exc:
                self.undecodable += 1
                frames.append(Frame("undecodable", window, None, str(exc)))
            else:
                self.packets += 1
                frames.append(Frame("packet", window, reading))
            i += size
        del self._buf[:i]
        return frames

    def finish(self) -> list[Frame]:
        """End of stream: whatever is left (a partial packet) counts as dropped."""
        self._skipped += self._buf
        self._buf.clear()
        return self._flush_skipped()

    def stats(self) -> dict[str, int]:
        return {
            "packets": self.packets,
            "undecodable_packets": self.undecodable,
            "dropped_packets": self.dropped_packets,
            "garbage_bytes": self.garbage_bytes,
        }


def coverage(protocol: Protocol, raw: bytes, framed: bool = False) -> tuple[int, float]:
    """(packets decoded, share of ``raw``'s bytes inside them) when ``raw`` is framed as ``protocol``; with
    ``framed``, the packets its decoder refused count too (well-framed packets of a state it does not read)."""
    framer = PacketFramer(protocol)
    framer.feed(raw)
    packets = framer.packets + (framer.undecodable if framed else 0)
    return packets, packets * protocol.packet_size / max(len(raw), 1)


def decodes_as(raw: bytes, named: Protocol, candidates: Iterable[Protocol], min_packets: int = 3,
               share: float = 0.5) -> Protocol | None:
    """The protocol ``raw`` really is when it does not read as ``named``: ``None`` while ``named`` decodes at
    least ``share`` of the bytes; else the candidate decoding the largest share (at least ``share`` and
    ``min_packets`` packets), if any. Tells a meter of another family from a line of noise. A candidate must
    also decode more of the bytes than ``named`` frames: packets framed as ``named`` but refused by its decoder
    (a dial position it does not read, e.g. temperature) are its own, though a shorter protocol may decode their
    tails."""
    if coverage(named, raw)[1] >= share:
        return None
    own = coverage(named, raw, framed=True)[1]
    best: tuple[float, Protocol] | None = None
    for proto in candidates:
        if proto.name == named.name:
            continue
        packets, covered = coverage(proto, raw)
        if packets >= min_packets and covered >= share and covered > own and (best is None or covered > best[0]):
            best = (covered, proto)
    return best[1] if best else None
