"""Bundled offline demo data and two deterministic targets to compare.

>>> len(questions())
40
>>> assistant_v1("What is 12 + 30?"), assistant_v2("What is 12 + 30?")
('The answer is 42.', '42')
"""

from __future__ import annotations

from importlib import resources

from cogeval.data import Dataset
from cogeval.examples.targets import assistant_v1, assistant_v2

__all__ = ["assistant_v1", "assistant_v2", "questions"]


def questions() -> Dataset:
    """40 short questions (geography, arithmetic, counting) with expected answers."""
    path = resources.files("cogeval.examples") / "questions.jsonl"
    with resources.as_file(path) as file:
        return Dataset.from_jsonl(file, name="questions")
