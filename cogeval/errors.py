"""Exceptions raised by cogeval.

Every error subclasses :class:`CogevalError` *and* the built-in it refines, so
``except ValueError`` keeps working for callers who do not know cogeval.

>>> from cogeval.errors import InputError
>>> issubclass(InputError, ValueError)
True
"""

from __future__ import annotations

__all__ = [
    "CogevalError",
    "DatasetError",
    "ExecutionError",
    "InputError",
    "RunFileError",
    "RunSkippedWarning",
    "SelfPreferenceWarning",
]


class CogevalError(Exception):
    """Base class of every error cogeval raises on purpose."""


class InputError(CogevalError, ValueError):
    """An argument or a value in user data is not what cogeval can use."""


class DatasetError(InputError):
    """A dataset file, line, row or record is malformed; the message names it."""


class RunFileError(InputError):
    """A run file cannot be read or fails validation; the message names the file and field."""


class ExecutionError(CogevalError, RuntimeError):
    """Running a target, a judge or a suite failed as a whole."""


class RunSkippedWarning(UserWarning):
    """A file in a run store was skipped because it could not be read as a run."""


class SelfPreferenceWarning(UserWarning):
    """An LLM judge is the same model as a target it judges, and tends to prefer that target's answers."""
