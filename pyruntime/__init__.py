"""frugalml runtime side: model format, loader, C binding, numpy reference.

Nothing here imports scikit-learn or the compiler.
"""

from __future__ import annotations

from .errors import DataError, FrugalmlError, ModelFormatError, RuntimeCError
from .format import ModelFile, load, register_kind, save
from .nb import NB_KINDS, NBModel

for _kind in NB_KINDS:
    register_kind(_kind, NBModel)

__all__ = ["DataError", "FrugalmlError", "ModelFile", "ModelFormatError", "NBModel", "RuntimeCError", "load",
           "register_kind", "save"]
