"""Generated-code form of the gated kind (compiler/codegen.py) when every on-device part is a tree
ensemble (ADAPT-GBRT style): the gate's trees, then f1's trees (easy inputs, stage 0) or f0's
(hard inputs, stage 1; FM_LABEL_DEFER with the gate's score when f0 is remote), every part walked
as nested branches (compiler/trees/code.py) with one shared touched-feature record, so n_read and
cost count each distinct feature once, as the tables' shared memo does. Linear parts have no code
form (use --form tables)."""

from __future__ import annotations

from typing import Any

from compiler.codegen import CodeBody, register_code_form
from compiler.trees.code import Ensemble, TreeGen
from pyruntime.gated.model import for_numeric
from pyruntime.trees.ensemble import TreeEnsemble, TreeEnsembleQ15


def gated_code(tables: Any, numeric: str, name: str) -> CodeBody:
    m = for_numeric(tables, numeric)
    q = numeric == "q15"
    for part in ("gate", "f1", "f0"):
        p = getattr(m, part)
        if p is not None and not isinstance(p, (TreeEnsemble, TreeEnsembleQ15)):
            what = "f1's margin" if part == "gate" and type(p).__name__.startswith("MarginGate") else "a linear scorer"
            raise ValueError(f"--form code: the gated model's {part} is {what}; the code form covers "
                             "gated models whose parts are tree ensembles (use --form tables)")
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


register_code_form(("gated",), gated_code)  # tree-ensemble parts only
