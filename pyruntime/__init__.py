"""frugalml runtime side: model format, loader, C binding, numpy reference.

Nothing here imports scikit-learn or the compiler. Each model family is a
folder (nb, trees, gated, skyline, ...) whose ``kind*.py`` modules register
its kinds with the format and the evaluators; they are imported here.
"""

from __future__ import annotations

import importlib
import pkgutil

from pyruntime.errors import DataError, FrugalmlError, ModelFormatError, RuntimeCError
from pyruntime.format import ModelFile, load, register_kind, save

for _fam in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if _fam.ispkg:  # a family folder: its kind modules register the family's kinds
        _sub = importlib.import_module(f"{__name__}.{_fam.name}")
        for _info in sorted(pkgutil.iter_modules(_sub.__path__), key=lambda i: i.name):
            if _info.name == "kind" or _info.name.startswith("kind_"):
                importlib.import_module(f"{__name__}.{_fam.name}.{_info.name}")

__all__ = ["DataError", "FrugalmlError", "ModelFile", "ModelFormatError", "RuntimeCError", "load", "register_kind",
           "save"]
