"""Exception types of the runtime side (documented in docs/errors.md) and the
C runtime's status codes with their messages (the text of fm_strerror), in one place.

The status codes mirror ``runtime_c/include/core/frugalml.h``; a test checks that
they equal the compiled library's.
"""

from __future__ import annotations

FM_OK = 0
FM_E_ARG = -1
FM_E_READ = -2
FM_E_VALUE = -3
FM_E_MODEL = -4
FM_E_BUDGET = -5
FM_E_WINDOW = -6
FM_E_SAMPLE = -7
FM_E_CHANNEL = -8
FM_E_FEATURE = -9

STATUS_MESSAGES = {
    FM_OK: "success",
    FM_E_ARG: ("bad argument (NULL pointer, wrong input length or scratch size, or a model over the FM_VEC_MAX_* "
               "bounds)"),
    FM_E_READ: "the feature callback failed",
    FM_E_VALUE: "a feature value is NaN or infinite",
    FM_E_MODEL: "inconsistent model tables",
    FM_E_BUDGET: "nothing fits the budget",
    FM_E_WINDOW: "the window is shorter than a feature needs (or longer than its FFT)",
    FM_E_SAMPLE: "a window sample is NaN or infinite",
    FM_E_CHANNEL: "a feature reads a channel the window does not have",
    FM_E_FEATURE: "unknown feature id or parameter",
}


class FrugalmlError(Exception):
    """Base class of every error frugalml raises on purpose."""


class ModelFormatError(FrugalmlError, ValueError):
    """A model file or model IR is truncated, corrupted, of an unknown version or inconsistent."""


class DataError(FrugalmlError, ValueError):
    """A data set or input vector that cannot be used (missing target, NaN, wrong length, ...)."""


class OutputError(FrugalmlError, OSError):
    """A file frugalml writes could not be written (a full disk, a read-only file): the message names it."""


class RuntimeCError(FrugalmlError, RuntimeError):
    """The C runtime returned an error code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


UNKNOWN_STATUS = "unknown status code"


def status_message(rc: int) -> str:
    """The message of a C status code (the same text as the C runtime's fm_strerror)."""
    return STATUS_MESSAGES.get(rc, UNKNOWN_STATUS)


def raise_for(rc: int, what: str) -> None:
    """Raise RuntimeCError (with the code and its message) for a non-FM_OK status."""
    if rc != FM_OK:
        raise RuntimeCError(rc, f"{what}: {status_message(rc)} (code {rc})")
