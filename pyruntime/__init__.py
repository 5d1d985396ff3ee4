"""frugalml runtime side: model format, loader, C binding, numpy reference.

Nothing here imports scikit-learn or the compiler. Each model kind registers
itself from a module ``pyruntime/kind_<name>.py``, imported here.
"""

from __future__ import annotations

import importlib
import pkgutil

from .errors import DataError, FrugalmlError, ModelFormatError, RuntimeCError
from .format import ModelFile, load, register_kind, save

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if _info.name.startswith("kind_"):
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["DataError", "FrugalmlError", "ModelFile", "ModelFormatError", "RuntimeCError", "load", "register_kind",
           "save"]
