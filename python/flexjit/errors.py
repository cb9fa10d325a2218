"""Exceptions: one class per error kind of the C++ library (`flexjit::Error` and its subclasses),
carrying the library's full message (for expressions: `mod:line:col`, the text, a caret line and
a hint)."""


class FlexjitError(Exception):
    """Base of every error flexjit raises. `kind` is the C++ class name ("ExprError", ...),
    `status` the C API status code, `message` the full text."""

    kind = "Error"
    status = -1

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class ExprError(FlexjitError, ValueError):
    """A score_mod / mask_mod failed to parse or type-check."""
    kind, status = "ExprError", 1


class TemplateError(FlexjitError):
    """A kernel template failed to render."""
    kind, status = "TemplateError", 2


class CompileError(FlexjitError):
    """NVRTC rejected a generated kernel (the message has the log)."""
    kind, status = "CompileError", 3


class DriverError(FlexjitError):
    """No CUDA driver or GPU, or a driver call failed."""
    kind, status = "DriverError", 4


class ShapeError(FlexjitError, ValueError):
    """A tensor's device, dtype, shape or strides do not fit."""
    kind, status = "ShapeError", 5


class CacheError(FlexjitError):
    """The on-disk cache could not be read or written."""
    kind, status = "CacheError", 6


class UsageError(FlexjitError, ValueError):
    """An invalid argument or option."""
    kind, status = "UsageError", 7


class InternalError(FlexjitError):
    """Anything else the library reported (out of memory, a bug)."""
    kind, status = "InternalError", 8


class LibraryNotFound(FlexjitError, ImportError):
    """libflexjit.so could not be loaded (or is too old)."""
    kind = "LibraryNotFound"


_BY_STATUS = {cls.status: cls for cls in (ExprError, TemplateError, CompileError, DriverError, ShapeError,
                                          CacheError, UsageError, InternalError)}


def error_for_status(status, message):
    """The exception for a C API status code."""
    return _BY_STATUS.get(status, InternalError)(message)
