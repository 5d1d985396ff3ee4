"""The data sets and split seeds a benchmark runs over: its --sets, --seeds and --quick options
(nb_k_defaults.py, nb_table_forms.py, nb_cost_aware.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from benchmarks.common import figures


@dataclass(frozen=True)
class SetsSeeds:
    """Comma-separated defaults: ``sets`` and ``seeds`` for a full run, ``quick_sets`` and ``quick_seeds`` for
    --quick."""

    sets: str
    seeds: str
    quick_sets: str
    quick_seeds: str

    def add_arguments(self, ap: argparse.ArgumentParser, what: str = "data specs") -> None:
        ap.add_argument("--sets", default=None, help=f"comma-separated {what} [{self.sets}]")
        ap.add_argument("--seeds", default=None, help=f"comma-separated split seeds [{self.seeds}]")
        ap.add_argument("--quick", action="store_true", help=f"{self.quick_sets}, seeds {self.quick_seeds}")

    def parse(self, argv: list[str] | None, description: str, what: str = "data specs"
              ) -> tuple[list[str], list[int]]:
        """A benchmark's whole command line: these three options and --write-docs (benchmarks.common.figures,
        which reads it itself); the sets and seeds it asks for."""
        ap = argparse.ArgumentParser(description=description)
        self.add_arguments(ap, what)
        figures.add_argument(ap)
        return self.chosen(ap.parse_args(argv))

    def chosen(self, args: argparse.Namespace) -> tuple[list[str], list[int]]:
        """The sets and seeds the parsed options ask for: the given ones, else the quick or the full defaults."""
        sets = (args.sets or (self.quick_sets if args.quick else self.sets)).split(",")
        seeds = args.seeds or (self.quick_seeds if args.quick else self.seeds)
        try:
            return sets, [int(s) for s in seeds.split(",")]
        except ValueError:
            raise SystemExit(f"--seeds: comma-separated integers, got {seeds!r}") from None
