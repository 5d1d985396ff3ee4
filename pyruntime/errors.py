"""Exception types of the runtime side (documented in docs/errors.md)."""


class FrugalmlError(Exception):
    """Base class of every error frugalml raises on purpose."""


class ModelFormatError(FrugalmlError, ValueError):
    """A model file or model IR is truncated, corrupted, of an unknown version or inconsistent."""


class DataError(FrugalmlError, ValueError):
    """A data set or input vector that cannot be used (missing target, NaN, wrong length, ...)."""


class RuntimeCError(FrugalmlError, RuntimeError):
    """The C runtime returned an error code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
