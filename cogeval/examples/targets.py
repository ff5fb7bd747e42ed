"""Two deterministic 'assistants' for the offline demo.

``assistant_v1`` knows fewer capitals, cannot multiply, miscounts long words
and wraps answers in a sentence. ``assistant_v2`` fixes most of that but
thinks a little longer. Neither calls a network.
"""

from __future__ import annotations

import re
import time

__all__ = ["assistant_v1", "assistant_v2"]

_CAPITALS_V1 = {
    "France": "Paris", "Germany": "Berlin", "Italy": "Rome", "Spain": "Madrid", "Japan": "Tokyo",
    "Canada": "Toronto", "Australia": "Sydney", "Egypt": "Cairo", "Norway": "Oslo", "Peru": "Lima",
    "Poland": "Warsaw", "Chile": "Santiago",
}
_CAPITALS_V2 = {**_CAPITALS_V1, "Canada": "Ottawa", "Australia": "Canberra", "Portugal": "Lisbon", "Kenya": "Nairobi", "Turkey": "Ankara"}

_ARITHMETIC = re.compile(r"What is (\d+) ([-+*]) (\d+)\?")
_CAPITAL = re.compile(r"What is the capital of (.+)\?")
_LETTERS = re.compile(r"How many letters are in the word '(\w+)'\?")


def _answer(question: str, capitals: dict[str, str], multiply: bool, long_word_bias: int) -> str:
    if match := _ARITHMETIC.fullmatch(question):
        a, op, b = int(match[1]), match[2], int(match[3])
        if op == "*" and not multiply:
            return str(a + b)
        return str({"+": a + b, "-": a - b, "*": a * b}[op])
    if match := _CAPITAL.fullmatch(question):
        return capitals.get(match[1], "I don't know")
    if match := _LETTERS.fullmatch(question):
        word = match[1]
        return str(len(word) + (long_word_bias if len(word) > 8 else 0))
    return "I don't know"


def assistant_v1(question: str) -> str:
    """The current version: verbose, with gaps."""
    time.sleep(0.002)
    return f"The answer is {_answer(question, _CAPITALS_V1, multiply=False, long_word_bias=1)}."


def assistant_v2(question: str) -> str:
    """The candidate: terse and more often right, slightly slower."""
    time.sleep(0.004)
    return _answer(question, _CAPITALS_V2, multiply=True, long_word_bias=0)
