"""Generated-code form of the gated kind (compiler/codegen.py) when every on-device part is a tree
ensemble (ADAPT-GBRT style): the gate's trees, then f1's trees (easy inputs, stage 0) or f0's
(hard inputs, stage 1; FM_LABEL_DEFER with the gate's score when f0 is remote), every part walked
as nested branches (compiler/trees/code.py) with one shared touched-feature record, so n_read and
cost count each distinct feature once, as the tables' shared memo does. With f1's own margin as the
gate (K > 2 classes), f1's trees first, then its largest score minus the largest other against the
gate's threshold, as fm_gated.c's margin_eval. Linear parts have no code form (use --form tables)."""

from __future__ import annotations

from typing import Any

from compiler.codegen import CodeBody, register_code_form
from compiler.header import c_float, c_int
from compiler.trees.code import Ensemble, TreeGen
from pyruntime.gated.model import MarginGate, MarginGateQ15, for_numeric
from pyruntime.trees.ensemble import TreeEnsemble, TreeEnsembleQ15


def gated_code(tables: Any, numeric: str, name: str) -> CodeBody:
    m = for_numeric(tables, numeric)
    q = numeric == "q15"
    margin = isinstance(m.gate, (MarginGate, MarginGateQ15))
    for part in ("gate", "f1", "f0"):
        p = getattr(m, part)
        if p is not None and not isinstance(p, (TreeEnsemble, TreeEnsembleQ15)) and not (part == "gate" and margin):
            raise ValueError(f"--form code: the gated model's {part} is a linear scorer; the code form covers "
                             "gated models whose parts are tree ensembles (use --form tables)")
    if margin:
        return _margin_code(m, q, name)
    gate = Ensemble(m.gate, q, "g")
    f1 = Ensemble(m.f1, q, "a")
    f0 = None if m.f0 is None else Ensemble(m.f0, q, "b")
    costs = m.gate.costs  # the shared cost vector (q15: the shared units)
    g = TreeGen(name, q, int(m.n_features), costs, [e for e in (gate, f1, f0) if e is not None],
             gate.root_features(0, gate.n_trees))
    sc = "int32_t" if q else "float"
    L = g.declarations() + ["int32_t lab;", f"{sc} sco;", "uint32_t stage;"] + g.start()
    L += g.trees(gate, 0, gate.n_trees)
    L += g.finish(gate, "lab", "sco")
    hard = "lab == 1" if m.gate_above == "f0" else "lab == 0"
    L += [f"if (!({hard})) {{", "    stage = 0u;"]
    after_gate = g.snapshot()
    L += g.trees(f1, 0, f1.n_trees, "    ") + g.finish(f1, "lab", "sco", "    ")
    L += ["} else {", "    stage = 1u;"]
    if f0 is None:
        L.append("    lab = FM_LABEL_DEFER;")
    else:
        g.restore(after_gate)  # f1's walks do not run on this branch
        L += g.trees(f0, 0, f0.n_trees, "    ") + g.finish(f0, "lab", "sco", "    ")
    L.append("}")
    acc, cost, cost_q = g.accounting()
    L += acc + g.result("stage", cost, cost_q)
    return CodeBody(lines=L, helpers=g.helpers())


def _margin_code(m: Any, q: bool, name: str) -> CodeBody:
    """f1's trees, its top-2 margin against the gate's threshold (fm_gated.c margin_eval: the first largest
    score, the largest of the others; float32 subtraction, q15 in int64), then f1's answer or f0's trees."""
    f1 = Ensemble(m.f1, q, "a")
    f0 = None if m.f0 is None else Ensemble(m.f0, q, "b")
    g = TreeGen(name, q, int(m.n_features), m.f1.costs, [e for e in (f1, f0) if e is not None],
                f1.root_features(0, f1.n_trees))
    sc = "int32_t" if q else "float"
    mg = "int64_t" if q else "float"
    thr = c_int(m.gate.threshold_q) if q else c_float(m.gate.threshold)
    L = g.declarations() + ["int32_t lab = 0;", f"{sc} sco;", "uint32_t stage;", f"{sc} second;", f"{mg} mg;"]
    L += g.start() + g.trees(f1, 0, f1.n_trees)
    L += ["sco = a0;", "second = a1;"]
    for o in range(1, f1.n_outputs):
        runner = [f"}} else if (a{o} > second) {{", f"    second = a{o};"] if o > 1 else []
        L += [f"if (a{o} > sco) {{", "    second = sco;", f"    sco = a{o};", f"    lab = {o};", *runner, "}"]
    L.append("mg = (int64_t)sco - (int64_t)second;" if q else "mg = sco - second;")
    L += [f"if (mg > {thr}) {{", "    stage = 0u;", "} else {", "    stage = 1u;"]
    if f0 is None:
        L += ["    lab = FM_LABEL_DEFER;", "    sco = mg > (int64_t)INT32_MAX ? INT32_MAX : (int32_t)mg;" if q
              else "    sco = mg;"]
    else:
        L += g.trees(f0, 0, f0.n_trees, "    ") + g.finish(f0, "lab", "sco", "    ")
    L.append("}")
    acc, cost, cost_q = g.accounting()
    L += acc + g.result("stage", cost, cost_q)
    return CodeBody(lines=L, helpers=g.helpers())


register_code_form(("gated",), gated_code)  # tree-ensemble parts only
