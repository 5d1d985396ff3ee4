"""List every doc figure whose generating code changed after the figure was written.

A figure is a block of README.md or docs/*.md between `<!-- figure: COMMAND | commit C | DATE -->` and
`<!-- /figure -->` (benchmarks/common/figures.py). docs/figures.json holds, per COMMAND, the content hash
of every repository file the run loaded; a figure is stale when one of those files changed or is gone,
or when it has no record (never written by its command).

    .venv/bin/python tools/check_figures.py [--root DIR] [--strict] [--commands] [--environment]
                                            [--touching PATH ...]

Prints one line per stale figure (doc:line, command, the changed files) and a summary. Exit 0 unless
--strict and something is stale (1), or a marker is malformed / the record unreadable (2).
--commands prints only the distinct commands of the stale figures, one a line (what `make figures`
reruns with --write-docs).
--environment prints instead, per figure command, where the environment its run recorded (Python, numpy, scipy,
scikit-learn, cffi, msgpack, the C compiler, the machine, the CPU and its BLAS kernels) differs from this one: not
staleness (the code is the same), but the first thing to look at when a rerun moves a figure.
--touching PATH ... prints, before a change is made, the figure commands that a change to any of these files would
make stale (each figure's recorded sources), one a line, and how many of all: a file every CLI run imports (the kind
registry, compiler/options.py) restales every figure, one family's kind module only the figures that ran it (since
round 49 the CLI imports a kind's module when that kind is used, compiler/kinds.py; before, every kind module was
in every figure's sources: round 47 learned it at merge time).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common.figures import FigureError, all_blocks, environment, file_hash, read_manifest  # noqa: E402


@dataclass(frozen=True)
class Stale:
    where: str
    command: str
    reason: str


def stale_figures(root: Path) -> tuple[list[Stale], int]:
    """(stale figures, number of figures) under root."""
    manifest = read_manifest(root / "docs" / "figures.json")
    found = all_blocks(root)
    out: list[Stale] = []
    for b in found:
        where = f"{b.doc.relative_to(root)}:{b.begin + 1}"
        rec = manifest.get(b.command)
        if rec is None:
            out.append(Stale(where, b.command, "never written by its command (no record in docs/figures.json)"))
            continue
        changed = [f for f, h in rec["sources"].items()
                   if not (root / f).is_file() or file_hash(root / f) != h]
        if changed:
            shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
            out.append(Stale(where, b.command, f"changed since {rec['commit']} ({rec['date']}): {shown}"))
    return out, len(found)


def figures_touching(root: Path, paths: list[str]) -> tuple[list[str], int]:
    """(the figure commands whose recorded sources include any of ``paths``, the number of recorded commands).
    ``paths``: repository paths, relative to ``root`` or absolute inside it; one outside it raises ValueError."""
    manifest = read_manifest(root / "docs" / "figures.json")
    wanted = set()
    for p in paths:
        q = Path(p)
        full = (q if q.is_absolute() else root / q).resolve()
        try:
            wanted.add(full.relative_to(root).as_posix())
        except ValueError:
            raise ValueError(f"{p} is not inside the repository {root}") from None
    hits = [command for command, rec in sorted(manifest.items()) if wanted & set(rec.get("sources", {}))]
    return hits, len(manifest)


def environment_changes(root: Path, now: dict[str, str] | None = None) -> list[str]:
    """One line per figure command whose recorded environment differs from ``now`` (default: this one's)."""
    now = environment() if now is None else now
    out = []
    for command, rec in sorted(read_manifest(root / "docs" / "figures.json").items()):
        then = rec.get("environment")
        if then is None:
            out.append(f"{command}: no environment recorded (written before figures recorded one)")
            continue
        diff = [f"{k} {then.get(k, 'absent')} -> {now.get(k, 'absent')}" for k in sorted(set(then) | set(now))
                if then.get(k) != now.get(k)]
        if diff:
            out.append(f"{command}: " + "; ".join(diff))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this one)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a figure is stale")
    ap.add_argument("--commands", action="store_true", help="print only the stale figures' commands, one a line")
    ap.add_argument("--environment", action="store_true",
                    help="print where each figure's recorded environment (packages, compiler, machine) differs "
                         "from this one")
    ap.add_argument("--touching", nargs="+", metavar="PATH",
                    help="print the figure commands a change to any of these files would make stale")
    args = ap.parse_args(argv)
    if args.touching:
        try:
            hits, total = figures_touching(args.root.resolve(), args.touching)
        except (ValueError, json.JSONDecodeError, KeyError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for command in hits:
            print(command)
        print(f"{len(hits)} of {total} figure commands read {', '.join(args.touching)}")
        return 0
    if args.environment:
        try:
            lines = environment_changes(args.root.resolve())
        except (json.JSONDecodeError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print("\n".join(lines) if lines else "every figure was written in this environment")
        return 0
    try:
        stale, total = stale_figures(args.root.resolve())
    except (FigureError, json.JSONDecodeError, KeyError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.commands:
        for command in dict.fromkeys(s.command for s in stale):
            print(command)
        return 1 if stale and args.strict else 0
    for s in stale:
        print(f"{s.where}: {s.command}: {s.reason}")
    print(f"{len(stale)} of {total} doc figures stale")
    return 1 if stale and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
