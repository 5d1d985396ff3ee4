"""Structure-aware seeds for the libFuzzer harnesses of runtime_c/fuzz.

Usage: python3 tools/fuzz_seeds.py [--out runtime_c/fuzz/corpus]

Random bytes rarely make tables that the checks accept *and* that take a specialised walk: the tree
walks for complete trees of depth 1..4 (fm_trees.depth, implicit layout, node_end[t] = (t + 1) *
(2^depth - 1)) need every node count exact. This script encodes such models in the harnesses' input
format (runtime_c/fuzz/fuzz_common.h: a mode byte per array, small signed bytes in mode 0) for the
trees and cascade harnesses, float32 and q15, and writes them as seed-*.bin files into the corpus
folders. `make -C runtime_c fuzz-merge` keeps those that add coverage (renamed by content hash).
"""

from __future__ import annotations

import argparse
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_NODES = 24  # FZ_MAX_NODES of fuzz_build.h


class Encoder:
    """Bytes read back by the fz_* readers of fuzz_common.h (small mode unless stated)."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def byte(self, v: int) -> Encoder:
        self.buf.append(v & 0xFF)
        return self

    def small(self, values: list[int]) -> Encoder:
        """An array in mode 0: one signed byte per element (u32 arrays keep it modulo 16)."""
        self.byte(0)
        for v in values:
            self.byte(v)
        return self

    def floats(self, values: list[float]) -> Encoder:
        """An array of floats in mode 0: round(v * 8) as a signed byte."""
        return self.small([round(v * 8) for v in values])

    def raw_u32(self, v: int) -> Encoder:
        self.buf += struct.pack("<I", v & 0xFFFFFFFF)
        return self


def trees_block(e: Encoder, q15: bool, depth: int, n_trees: int, nf: int, run: int = 0) -> None:
    """fz_trees / fz_trees_q15 after the costs flag: complete trees, implicit layout; one output, or (run >= 2)
    run outputs with the trees in runs of equal splits, tree j of a run on output j (fm_trees.run)."""
    inner = (1 << depth) - 1
    n_nodes = inner * n_trees
    k = max(run, 1)
    split = [((t // k) * inner + i) for t in range(n_trees) for i in range(inner)]  # a run's trees share splits
    e.byte(k).byte(n_nodes).byte(n_trees)                  # n_outputs, n_nodes, n_trees
    e.small([(t + 1) * inner for t in range(n_trees)])     # node_end (< 16 in mode 0)
    e.small([(3 * i + 1) % nf for i in split])             # feature
    e.small([t % k for t in range(n_trees)])               # tree_output
    e.byte(0)                                              # child: NULL (implicit layout)
    if not q15:
        e.floats([((i % 5) - 2) / 4 for i in split])                     # threshold
        e.floats([((i % 7) - 3) / 8 for i in range(n_nodes + n_trees)])  # leaf
        e.floats([0.0] * k)                                              # base_score
        e.byte(0).byte(0)                                                # decision_threshold 0
        e.byte(depth | (run << 3))                                       # depth (< 64: b & 7), run (bits 3-4)
        e.byte(0)                                                        # exact_costs
    else:
        e.small([100 + 37 * i for i in split])                           # threshold_q
        e.small([(i % 7) - 3 for i in range(n_nodes + n_trees)])         # leaf_q
        e.small([0] * k)                                                 # base_q
        e.raw_u32(0)                                                     # decision_threshold_q
        e.byte(4)                                                        # shift
        e.byte(depth | (run << 3))                                       # depth, run


def rows(e: Encoder, nf: int) -> None:
    for r in range(3):
        e.floats([((r + j) % 5 - 2) / 2 for j in range(nf)])
        e.byte(r)  # the feature the failing reader refuses


def trees_seed(q15: bool, depth: int, n_trees: int, nf: int = 8, run: int = 0) -> bytes:
    e = Encoder().byte(int(q15)).byte(nf).byte(0)  # q, n_features, costs flag: NULL
    trees_block(e, q15, depth, n_trees, nf, run)
    rows(e, nf)
    return bytes(e.buf)


def cascade_seed(q15: bool, depth: int, n_trees: int, nf: int = 8, run: int = 0) -> bytes:
    """Two stages over the trees, exit rule 0 (thresholds) with wide exits; run >= 2: several outputs, exit
    rule 1 (the top-2 margin), the first stage ending inside a run when n_trees / 2 is not a multiple of it."""
    e = Encoder().byte(int(q15)).byte(nf).byte(2).byte(int(run >= 2))  # q, n_features, n_stages, exit_rule
    e.small([n_trees // 2, n_trees])                       # stage_end
    e.byte(0)                                              # costs flag: NULL
    trees_block(e, q15, depth, n_trees, nf, run)
    if not q15:
        e.floats([15.0, 15.0]).floats([-15.0, -15.0])
    else:
        e.small([100, 100]).small([-100, -100])
    rows(e, nf)
    return bytes(e.buf)


def shapes() -> list[tuple[int, int]]:
    """(depth, trees) of 1..4 with one, two (the walks' two-tree step) and three trees whose nodes fit
    FZ_MAX_NODES and whose node_end fits a small-mode u32 (< 16)."""
    return [(d, t) for d in (1, 2, 3, 4) for t in (1, 2, 3) if ((1 << d) - 1) * t <= min(MAX_NODES, 15)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "runtime_c" / "fuzz" / "corpus")
    args = ap.parse_args(argv)
    n = 0
    for q15 in (False, True):
        tag = "q15" if q15 else "f32"
        for depth, n_trees in shapes():
            for harness, make in (("trees", trees_seed), ("cascade", cascade_seed)):
                if harness == "cascade" and n_trees < 2:
                    continue
                d = args.out / harness
                d.mkdir(parents=True, exist_ok=True)
                (d / f"seed-depth{depth}-{n_trees}trees-{tag}.bin").write_bytes(make(q15, depth, n_trees))
                n += 1
        for depth, n_trees, run in ((1, 4, 2), (2, 4, 2), (1, 6, 3), (3, 2, 2), (1, 6, 2)):  # runs of equal trees
            for harness, make in (("trees", trees_seed), ("cascade", cascade_seed)):
                d = args.out / harness
                d.mkdir(parents=True, exist_ok=True)
                (d / f"seed-run{run}-depth{depth}-{n_trees}trees-{tag}.bin").write_bytes(
                    make(q15, depth, n_trees, run=run))
                n += 1
    print(f"{n} seeds written under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
