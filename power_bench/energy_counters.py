"""Linux energy counters as a meter: powercap (Intel RAPL) and hwmon power/energy sensors, in watts."""

from __future__ import annotations

import glob
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .reading import Reading
from .sources import MeterError, Sample, Source


@dataclass(frozen=True)
class Counter:
    name: str
    path: Path
    kind: str  # "energy" (microjoules, cumulative) or "power" (microwatts, instantaneous)
    wrap: int = 0  # max_energy_range_uj for RAPL counters


def find_counters(root: str | Path = "/sys/class") -> list[Counter]:
    """Package-level RAPL zones and hwmon power/energy inputs under ``root``; empty when there are none."""
    root = Path(root)
    found: list[Counter] = []
    for zone in sorted(glob.glob(str(root / "powercap" / "intel-rapl:*"))):
        if not re.fullmatch(r"intel-rapl:\d+", os.path.basename(zone)):
            continue  # sub-zones (core, uncore, dram) are contained in their package
        energy = Path(zone) / "energy_uj"
        if not energy.exists():
            continue
        name_file = Path(zone) / "name"
        name = name_file.read_text().strip() if name_file.exists() else os.path.basename(zone)
        wrap_file = Path(zone) / "max_energy_range_uj"
        wrap = int(wrap_file.read_text()) if wrap_file.exists() else 0
        found.append(Counter(f"powercap:{os.path.basename(zone)}:{name}", energy, "energy", wrap))
    for hw in sorted(glob.glob(str(root / "hwmon" / "hwmon*"))):
        name_file = Path(hw) / "name"
        name = name_file.read_text().strip() if name_file.exists() else os.path.basename(hw)
        powers = glob.glob(os.path.join(hw, "power*_input")) + glob.glob(os.path.join(hw, "power*_average"))
        for f in sorted(powers):
            found.append(Counter(f"hwmon:{name}:{os.path.basename(f)}", Path(f), "power"))
        for f in sorted(glob.glob(os.path.join(hw, "energy*_input"))):
            found.append(Counter(f"hwmon:{name}:{os.path.basename(f)}", Path(f), "energy"))
    return found


def select_counters(spec: str, root: str | Path = "/sys/class") -> list[Counter]:
    """``powercap`` / ``hwmon`` / ``energy`` (all) optionally followed by ``:SUBSTRING``."""
    kind, _, pattern = spec.partition(":")
    counters = find_counters(root)
    if kind in ("powercap", "hwmon"):
        counters = [c for c in counters if c.name.startswith(kind + ":")]
    if pattern:
        counters = [c for c in counters if pattern in c.name]
    if not counters:
        where = {"powercap": "/sys/class/powercap/intel-rapl*", "hwmon": "/sys/class/hwmon/*/power*"}
        raise MeterError(f"no energy counters found for {spec!r} ({where.get(kind, 'powercap or hwmon')}); "
                         "this machine does not expose them")
    return counters


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text().strip())
    except PermissionError as exc:
        raise MeterError(f"cannot read {path}: permission denied (energy counters are often root-only; "
                         "run as root or make the file readable)") from exc
    except (OSError, ValueError) as exc:
        raise MeterError(f"cannot read {path}: {exc}") from exc


class EnergyCounterSource(Source):
    """Summed power of the selected counters, one reading (in W) per ``interval`` seconds."""

    def __init__(self, counters: list[Counter], interval: float = 0.1) -> None:
        super().__init__(label="+".join(c.name for c in counters), expected_unit="W")
        self.counters = counters
        self.interval = interval
        self._last: tuple[float, list[int]] | None = None
        self._next = 0.0

    def _snapshot(self) -> tuple[float, list[int]]:
        return time.monotonic(), [_read_int(c.path) for c in self.counters]

    def open(self) -> None:
        self._last = self._snapshot()
        self._next = self._last[0] + self.interval

    def poll(self, timeout: float) -> list[Sample]:
        out: list[Sample] = []
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            if now >= self._next:
                t, values = self._snapshot()
                assert self._last is not None
                t_prev, prev = self._last
                watts = 0.0
                for c, v, p in zip(self.counters, values, prev, strict=True):
                    if c.kind == "power":
                        watts += v * 1e-6
                    else:
                        delta = v - p if v >= p else v + c.wrap - p
                        watts += delta * 1e-6 / max(t - t_prev, 1e-9)
                self._last = (t, values)
                self._next += self.interval
                raw = " ".join(str(v) for v in values).encode()
                reading = Reading(watts, "W", dc=True, range="counters")
                out.append(Sample(t, time.time(), "packet", raw, reading))
            if now >= deadline:
                return out
            time.sleep(max(0.0, min(self._next, deadline) - time.monotonic()))
