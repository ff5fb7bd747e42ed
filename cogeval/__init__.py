"""cogeval: evaluate LLM applications and compare versions with paired statistics."""

from cogeval.errors import (
    CogevalError,
    DatasetError,
    ExecutionError,
    InputError,
    RunFileError,
    RunSkippedWarning,
)

__all__ = [
    "CogevalError",
    "DatasetError",
    "ExecutionError",
    "InputError",
    "RunFileError",
    "RunSkippedWarning",
]
