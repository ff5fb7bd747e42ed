"""The bundled demo dataset (``questions.jsonl``) and the capitals it holds, read once."""

from __future__ import annotations

import functools
from importlib import resources

from cogeval.data import Dataset


@functools.cache
def questions() -> Dataset:
    """The bundled demo dataset."""
    path = resources.files("cogeval.examples") / "questions.jsonl"
    with resources.as_file(path) as file:
        return Dataset.from_jsonl(file, name="questions")


@functools.cache
def capitals() -> dict[str, str]:
    """Country → capital, read from the dataset (the targets' shared knowledge)."""
    prefix = "What is the capital of "
    return {c.input[len(prefix):-1]: c.expected for c in questions() if c.input.startswith(prefix)}
