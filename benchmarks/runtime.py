"""Runtime cost side by side: frugalml's tree tables against emlearn's forests of the same shape.

Usage: .venv/bin/python benchmarks/runtime.py [--data keel:satimage] [--positive 1] [--trees 100]
       [--depth 3] [--rows 200] [--no-peer] [--no-qemu]

Trains `frugalml train miser --lambda 0 --trees T --depth D` (one output, 3 nodes per tree walked
at depth 3), exports it with `export-c` in float32 and q15 (tables form) with the first --rows
rows embedded, and counts x86-64 -O2 instructions of the prediction call only (valgrind callgrind,
--toggle-collect on the FM_PREDICT_VEC function; benchmarks/c/nb_count.c harness; repeatable
counts, not times). The peer: emlearn (installed in the benchmark-only venv benchmarks/.venv, made
by this script on first use) converts a scikit-learn RandomForestClassifier with the same number
of trees and depth, trained on the same rows, to its inline and loadable C forms; the same rows
(cast to int16, emlearn's input type) are counted the same way (benchmarks/c/em_trees_count.c).
Table bytes: frugalml's MODEL_TABLE_BYTES; emlearn loadable: 8 bytes per node, 4 per root, 1 per
leaf class (its arrays).

K classes (issue 19): a 10-class forest (--classes-data, default sklearn:digits; none with
--no-multiclass): `train miser --lambda 0` with the same --trees rounds of K trees of --depth (the
multi-class log-loss, one tree per class a round), both forms, float32 and q15, counted on x86 as
above, beside emlearn's RandomForestClassifier of --trees trees of --depth on the same K-class rows, and of
--trees x K trees (as many trees as frugalml's ensemble, the same depth): issue 19's K-class bar, printed after
that table, compares the code form with the latter's inline code and the tables with its loadable form, in
instructions per prediction and bytes (tables: table bytes; code: the compiled prediction's sections, code_bytes).

Both forms of `export-c`: tables (default) and generated code (`--form code`; its function is
compiled noinline/noclone so callgrind can count the call alone). Cortex-M rows (unless --no-qemu):
Cortex-M3 q15 and Cortex-M4F float32 instructions per prediction under QEMU with the repository's
counting plugin (benchmarks/common/qemu_count.py: REPEAT=2 minus REPEAT=1 images over --qemu-rows rows; the
count includes the self-test's row loop, a few instructions per row) and the image's flash bytes; emlearn's
inline forest is counted the same way on Cortex-M3 (benchmarks/c/em_trees_selftest.c, its int16 rows
embedded).

The floor (issue 21 item 6), printed last: the code form against emlearn's inline code (x86 float32 and
q15, Cortex-M3 q15: at or below), the tables against emlearn's loadable forest (x86 float32: <= 0.5x),
and NB's table form per feature read on Cortex-M3 q15 (nb-static --nb-data, default
sklearn:breast_cancer, budget from training: <= 12; --no-nb skips it), each with met / not met.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures, peers  # noqa: E402
from benchmarks.common.args import positive_int  # noqa: E402
from benchmarks.common.cli import frugalml  # noqa: E402
from benchmarks.common.emlearn_m import emlearn_cortex_m  # noqa: E402
from benchmarks.common.qemu_count import count_cortex_m, flash_bytes, missing_tools  # noqa: E402
from benchmarks.nb.callgrind import instructions, runtime_archive  # noqa: E402
from pyruntime.build_cffi import runtime_include_flags  # noqa: E402

RUNTIME = ROOT / "runtime_c"


def count_ours(header: Path, out: Path, rows: int, lib_dir: Path | None = None) -> tuple[float, int]:
    """(instructions per prediction, table bytes) of a generated header with embedded rows; the runtime archive
    (not an input of the header) is compiled once under lib_dir (default: out's parent) and reused."""
    text = header.read_text()
    fn = re.search(r"#define FM_PREDICT_VEC\(x, n, out\) (\w+)\(", text).group(1)  # type: ignore[union-attr]
    table = int(re.search(r"_TABLE_BYTES (\d+)u", text).group(1))  # type: ignore[union-attr]
    exe = out / "count"
    lib = runtime_archive(RUNTIME, lib_dir or out.parent)
    subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", *runtime_include_flags(), f"-I{header.parent}",
                    "-DFM_CODE_FN=__attribute__((noinline, noclone))", str(ROOT / "benchmarks" / "c" / "nb_count.c"),
                    str(lib), "-o", str(exe)], check=True)
    n, _ = instructions([str(exe), str(rows)], fn, out / "cg.out")
    return n / rows, table


def code_bytes(header: Path, out: Path, peer_include: str | None = None) -> int:
    """Bytes of a compiled prediction (x86-64 -O2 object: .text, .rodata and .data sections) of a generated header,
    frugalml's FM_PREDICT_VEC or, with ``peer_include`` (emlearn's C include folder), emlearn's peer_predict;
    called from one exported wrapper, so only what the prediction needs is kept (not the embedded rows)."""
    out.mkdir(parents=True, exist_ok=True)
    if peer_include is None:
        sig = "int fm_bytes_probe(const float *x, uint32_t n, fm_result *out)"
        body = f"{sig};\n{sig} {{ return FM_PREDICT_VEC(x, n, out); }}\n"
        flags = runtime_include_flags()
    else:
        body = ("int32_t fm_bytes_probe(const int16_t *x, int32_t n);\n"
                "int32_t fm_bytes_probe(const int16_t *x, int32_t n) { return peer_predict(x, n); }\n")
        flags = [f"-I{peer_include}"]
    src = out / "bytes_probe.c"
    src.write_text(f'#include <stdint.h>\n#include "{header.resolve()}"\n{body}')
    obj = out / "bytes_probe.o"
    subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", "-w", *flags, "-c", str(src), "-o", str(obj)],
                   check=True)
    sections = subprocess.run(["size", "-A", str(obj)], check=True, capture_output=True, text=True).stdout
    return sum(int(m.group(2)) for m in re.finditer(r"^(\.text\S*|\.rodata\S*|\.data\S*)\s+(\d+)", sections, re.M))


def emlearn_include(py: Path) -> str:
    """emlearn's C include folder in the peers' venv (python ``py``)."""
    return subprocess.run([str(py), "-c", "import emlearn; print(emlearn.includedir)"], check=True,
                          capture_output=True, text=True).stdout.strip()


def count_peer(py: Path, header: Path, rows_bin: Path, out: Path, rows: int) -> float:
    shutil.copy(header, out / "emlearn_model.h")
    inc = emlearn_include(py)
    exe = out / "em_count"
    subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", f"-I{inc}", f"-I{out}",
                    str(ROOT / "benchmarks" / "c" / "em_trees_count.c"), "-o", str(exe), "-lm"], check=True)
    n, _ = instructions([str(exe), str(rows_bin)], "peer_predict", out / "cg.out")
    return n / rows


def loadable_bytes(header: Path) -> int:
    text = header.read_text()
    nodes = int(re.search(r"EmlTreesNode peer_nodes\[(\d+)\]", text).group(1))  # type: ignore[union-attr]
    roots = int(re.search(r"peer_tree_roots\[(\d+)\]", text).group(1))  # type: ignore[union-attr]
    leaves = int(re.search(r"peer_leaves\[(\d+)\]", text).group(1))  # type: ignore[union-attr]
    return 8 * nodes + 4 * roots + leaves


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="keel:satimage")
    ap.add_argument("--positive", default="1")
    ap.add_argument("--trees", type=positive_int, default=None, help="trees (default 100; --quick: 10)")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--rows", type=positive_int, default=None, help="rows counted on x86 (default 200; --quick: 20)")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--no-qemu", action="store_true", help="skip the Cortex-M rows")
    ap.add_argument("--qemu-rows", type=positive_int, default=None,
                    help="rows counted under QEMU (default 50; --quick: 5)")
    ap.add_argument("--classes-data", default="sklearn:digits",
                    help="the K-class forest's data, all classes (default sklearn:digits)")
    ap.add_argument("--no-multiclass", dest="classes_data", action="store_const", const="",
                    help="skip the K-class forest")
    ap.add_argument("--nb-data", default="sklearn:breast_cancer", help="the NB floor line's data (nb-static)")
    ap.add_argument("--no-nb", action="store_true", help="skip the NB floor line")
    ap.add_argument("--quick", action="store_true", help="same tables, 10 trees, fewer rows; peers never installed")
    figures.add_argument(ap)
    a = ap.parse_args(argv)
    a.trees = a.trees or (10 if a.quick else 100)
    a.rows = a.rows or (20 if a.quick else 200)
    a.qemu_rows = a.qemu_rows or (5 if a.quick else 50)
    if shutil.which("valgrind") is None:
        print("note: valgrind not installed: no x86 counts (nothing to print)")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="fm_runtime_bench_"))
    model = tmp / "miser.msgpack"
    table = x86_rows(model, a.data, ["--positive", a.positive], a, tmp / "binary", "frugalml miser")
    if not a.no_qemu and missing_tools():
        print(f"note: Cortex-M rows skipped: {missing_tools()}")
    elif not a.no_qemu:
        # --quick: the Cortex-M3 q15 tables row only (each row builds three firmware images)
        qemu_rows = [("tables", "cortex-m3", "q15")] if a.quick else [
            (form, target, numeric) for form in ("tables", "code")
            for target, numeric in (("cortex-m3", "q15"), ("cortex-m4f", "float32"))]
        for form, target, numeric in qemu_rows:
            h = tmp / f"{form}_{target}.h"
            frugalml("export-c", model, "-o", h, "--target", target, "--embed", a.data, "--rows", str(a.qemu_rows),
                     "--form", form)
            table.append((f"frugalml miser, {form}, {numeric}", f"{target} QEMU", count_cortex_m(h, target),
                          flash_bytes(h, target)))
    py = None if a.no_peer else peers.has("emlearn", create=not a.quick)
    if not a.no_peer and py is None:
        print(peers.skipped("emlearn"))
    if py is not None:
        table += peer_rows(py, a.data, a.positive, a, tmp / "peer")
        if not a.no_qemu and not missing_tools():
            table.append(peer_m3_row(tmp / "peer", a.data, a.qemu_rows))
    print(f"{a.data}: {a.trees} trees x depth {a.depth}, {a.rows} rows; instructions of the prediction call only")
    print("bytes: x86 rows: table bytes, code forms: the compiled prediction (x86-64 -O2 .text + .rodata + .data); "
          "QEMU rows: flash bytes of the whole self-test image")
    print_table(table)
    nb = None if a.no_nb or a.no_qemu or missing_tools() else nb_floor_figure(a.nb_data, tmp / "nb", a.qemu_rows,
                                                                               lib_dir=tmp)
    if a.classes_data:
        k_table = x86_rows(tmp / "miser_k.msgpack", a.classes_data, [], a, tmp / "multiclass", "frugalml miser K")
        from compiler.tasks import prepare  # noqa: PLC0415 - imports scikit-learn

        n_trees = a.trees * prepare(a.classes_data).n_classes  # frugalml's trees: one per class a round
        if py is not None:
            k_table += peer_rows(py, a.classes_data, None, a, tmp / "peer_k")
            k_table += peer_rows(py, a.classes_data, None, a, tmp / "peer_k_same", trees=n_trees)
        print()
        print(f"{a.classes_data}, all classes: miser {a.trees} rounds x K trees x depth {a.depth} (one tree per class "
              f"a round, {n_trees} trees); emlearn {a.trees} trees x depth {a.depth}, and {n_trees} trees x depth "
              f"{a.depth} (the same number of trees); {a.rows} rows; x86-64 callgrind")
        print_table(k_table)
        print_k_floor(k_table, n_trees)
    print()
    print_floor(table, nb, a.nb_data)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def row_of(table: list[tuple[str, str, float, int]], name: str, where: str) -> float | None:
    return next((per for n, w, per, _ in table if n == name and w.startswith(where)), None)


def print_floor(table: list[tuple[str, str, float, int]], nb: tuple[float, float] | None, nb_data: str) -> None:
    """The three floor figures of issue 21 item 6 beside their targets."""
    print("floor (issue 21 item 6): figure, target, met")

    def line(what: str, ours: float | None, peer: float | None, limit: float, unit: str = "x") -> None:
        if ours is None or peer is None:
            print(f"  {what:58s} not measured here")
            return
        ratio = ours / peer
        print(f"  {what:58s} {ours:7.0f} / {peer:7.0f} = {ratio:5.2f}{unit} (<= {limit:.2f}{unit}): "
              f"{'met' if ratio <= limit else 'not met'}")

    em_inline, em_loadable = "emlearn 0.23 RandomForest, inline", "emlearn 0.23 RandomForest, loadable"
    for numeric in ("float32", "q15"):
        line(f"code form / emlearn inline, x86 {numeric}", row_of(table, f"frugalml miser, code, {numeric}", "x86"),
             row_of(table, em_inline, "x86"), 1.0)
    line("code form / emlearn inline, Cortex-M3 q15", row_of(table, "frugalml miser, code, q15", "cortex-m3"),
         row_of(table, em_inline, "cortex-m3"), 1.0)
    line("tables / emlearn loadable, x86 float32", row_of(table, "frugalml miser, tables, float32", "x86"),
         row_of(table, em_loadable, "x86"), 0.5)
    if nb is None:
        print(f"  {'NB tables, Cortex-M3 q15, per feature read':58s} not measured here")
    else:
        per, feats = nb
        print(f"  {'NB tables, Cortex-M3 q15, per feature read':58s} {per:7.0f} / {feats:7.2f} = {per / feats:5.2f} "
              f"(<= 12): {'met' if per / feats <= 12 else 'not met'} (nb-static {nb_data})")


def peer_m3_row(peer: Path, data: str, rows: int) -> tuple[str, str, float, int]:
    """emlearn's inline forest (peer/inline.h) on Cortex-M3 under QEMU: the same data's first rows as int16."""
    from pyruntime.data import load_dataset  # noqa: PLC0415

    per, nbytes = emlearn_cortex_m(peer / "inline.h", np.asarray(load_dataset(data).X[:rows]), "int16_t", "cortex-m3",
                                   peer / "m3")
    return ("emlearn 0.23 RandomForest, inline", "cortex-m3 QEMU", per, nbytes)


def nb_floor_figure(data: str, work: Path, rows: int, lib_dir: Path | None = None) -> tuple[float, float]:
    """(Cortex-M3 q15 instructions per prediction, features read per prediction) of nb-static's table form on
    data (budget from training), as benchmarks/nb_floor.py counts them; with lib_dir, the x86 harness links the
    runtime archive already compiled there (count_ours) instead of compiling the runtime again."""
    from benchmarks import nb_floor  # noqa: PLC0415
    from benchmarks.nb_floor import export, train, x86_count  # noqa: PLC0415

    work.mkdir()
    if lib_dir is not None:  # nb_floor's harness looks its archive up by (runtime, work): the same file
        nb_floor.callgrind._ARCHIVES[(RUNTIME.resolve(), work.resolve())] = runtime_archive(RUNTIME, lib_dir)
    model = train(data, "nb-static", work, [])
    _, feats = x86_count(export(model, "q15", data, rows, work))
    header = work / "m3" / "model.h"
    header.parent.mkdir()
    frugalml("export-c", model, "-o", header, "--target", "cortex-m3", "--embed", data, "--rows", str(rows),
             echo_stderr=False)
    return count_cortex_m(header, "cortex-m3"), feats


def print_k_floor(table: list[tuple[str, str, float, int]], n_trees: int) -> None:
    """Issue 19's K-class forest bar against emlearn's forest of as many trees and the same depth (x86)."""
    print(f"K-class forest (issue 19): frugalml against emlearn with the same {n_trees} trees, figure, target, met")
    em = f"emlearn 0.23 RandomForest {n_trees} trees"
    checks = [(f"code form {n} / emlearn inline, instructions", row_of(table, f"frugalml miser K, code, {n}", "x86"),
               row_of(table, f"{em}, inline", "x86")) for n in ("float32", "q15")]
    checks += [(f"tables {n} / emlearn loadable, instructions", row_of(table, f"frugalml miser K, tables, {n}", "x86"),
                row_of(table, f"{em}, loadable", "x86")) for n in ("float32", "q15")]
    nbytes = {name: b for name, _, _, b in table}
    checks += [(f"tables {n} / emlearn loadable, table bytes", nbytes.get(f"frugalml miser K, tables, {n}"),
                nbytes.get(f"{em}, loadable")) for n in ("float32", "q15")]
    checks += [(f"code form {n} / emlearn inline, code bytes", nbytes.get(f"frugalml miser K, code, {n}"),
                nbytes.get(f"{em}, inline")) for n in ("float32", "q15")]
    for what, ours, peer in checks:
        if ours is None or peer is None:
            print(f"  {what:58s} not measured here")
            continue
        print(f"  {what:58s} {ours:7.0f} / {peer:7.0f} = {ours / peer:5.2f}x (<= 1.00x): "
              f"{'met' if ours <= peer else 'not met'}")


def print_table(table: list[tuple[str, str, float, int]]) -> None:
    width = max(44, *(len(name) for name, _, _, _ in table))
    print(f"{'model':{width}s} {'where':18s} {'instr/prediction':>17s} {'bytes':>12s}")
    for name, where, per, nbytes in table:
        print(f"{name:{width}s} {where:18s} {per:17.0f} {nbytes if nbytes else '-':>12}")


def x86_rows(model: Path, data: str, target: list[str], a: argparse.Namespace, work: Path,
             label: str) -> list[tuple[str, str, float, int]]:
    """Trains miser --lambda 0 on data (target: --positive or nothing for all classes) into model and counts
    both forms, float32 and q15, on x86."""
    work.mkdir()
    frugalml("train", "miser", data, *target, "--lambda", "0", "--trees", str(a.trees), "--depth", str(a.depth),
             "-o", model)
    table = []
    for form in ("tables", "code"):
        for numeric in ("float32", "q15"):
            d = work / f"{form}_{numeric}"
            d.mkdir()
            frugalml("export-c", model, "-o", d / "model.h", "--numeric", numeric, "--embed", data, "--rows",
                     str(a.rows), "--form", form)
            per, nbytes = count_ours(d / "model.h", d, a.rows, lib_dir=work.parent)  # one archive for both tables
            if form == "code":
                nbytes = code_bytes(d / "model.h", d / "bytes")
            table.append((f"{label}, {form}, {numeric}", "x86-64 callgrind", per, nbytes))
    return table


def peer_rows(py: Path, data: str, positive: str | None, a: argparse.Namespace,
              peer: Path, trees: int | None = None) -> list[tuple[str, str, float, int]]:
    """emlearn's RandomForestClassifier (``trees``, default a.trees, x a.depth) on the same training rows, inline and
    loadable; rows named "emlearn 0.23 RandomForest[ N trees], FORM" (N when ``trees`` is given)."""
    from compiler.tasks import prepare, split  # noqa: PLC0415 - imports scikit-learn
    from pyruntime.data import load_dataset  # noqa: PLC0415

    Xtr, ytr, _, _ = split(prepare(data, positive=positive))
    peer.mkdir()
    np.savez(peer / "data.npz", Xtr=Xtr, ytr=ytr)
    X = np.asarray(load_dataset(data).X[: a.rows])
    rows_bin = peer / "rows.bin"
    with rows_bin.open("wb") as fh:
        fh.write(np.array(X.shape, np.uint32).tobytes())
        fh.write(np.clip(np.round(X), -32768, 32767).astype(np.int16).tobytes())
    subprocess.run([str(py), str(ROOT / "benchmarks" / "common" / "emlearn_forest.py"), str(peer / "data.npz"),
                    str(peer), str(trees or a.trees), str(a.depth)], check=True, stdout=subprocess.DEVNULL)
    table = []
    for form in ("inline", "loadable"):
        d = peer / form
        d.mkdir()
        per = count_peer(py, peer / f"{form}.h", rows_bin, d, a.rows)
        if form == "loadable":
            nbytes = loadable_bytes(peer / "loadable.h")
        else:
            nbytes = code_bytes(peer / "inline.h", d / "bytes", emlearn_include(py))
        table.append((f"emlearn 0.23 RandomForest{f' {trees} trees' if trees else ''}, {form}", "x86-64 callgrind",
                      per, nbytes))
    return table


if __name__ == "__main__":
    figures.run_main(main, __file__, extra_sources=("compiler", "pyruntime", "firmware_examples/cortex_m"))
