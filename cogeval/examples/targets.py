"""Two deterministic 'assistants' for the offline demo, with different error patterns.

- ``assistant_v1`` (the current version) answers geography in a full sentence,
  knows fewer capitals, multiplies only by small numbers and miscounts long words.
- ``assistant_v2`` (the candidate) answers tersely, knows more capitals,
  multiplies and counts right, but has a new bug: it converts more than
  24 hours to minutes wrongly. It also thinks longer about arithmetic.

Neither calls a network nor sleeps. Each returns a
:class:`~cogeval.execution.TargetResponse` whose ``duration_s`` is a simulated
latency, so the demo's latency comparison is the same on every machine and
under any load:

- ``assistant_v1``: 0.20 s + 0.01 s per word of its answer;
- ``assistant_v2``: 0.22 s + 0.01 s per word of its answer, plus 0.15 s on
  arithmetic questions (it works the sum out).

So v2 is faster on most geography questions (its answers are a word or
two, v1's a sentence) and slower elsewhere, most of all on arithmetic.

>>> v1 = assistant_v1("What is the capital of France?")
>>> v1.output, v1.duration_s
('The capital of France is Paris.', 0.26)
>>> assistant_v2("What is the capital of France?").duration_s, assistant_v2("What is 2 + 3?").duration_s
(0.23, 0.38)
"""

from __future__ import annotations

import re

from cogeval.examples.data import capitals
from cogeval.execution import TargetResponse

_UNKNOWN_TO_V1 = {"Australia", "Canada", "Brazil", "Switzerland", "Nigeria", "Tanzania", "South Africa",
                  "Pakistan", "Mongolia", "Morocco", "Iceland", "New Zealand", "Turkey", "Kenya", "Ukraine"}
_WRONG_IN_V1 = {"Australia": "Sydney", "Canada": "Toronto", "Brazil": "Rio de Janeiro", "Switzerland": "Zurich",
                "Nigeria": "Lagos", "Tanzania": "Dar es Salaam", "Turkey": "Istanbul", "Morocco": "Casablanca"}
_UNKNOWN_TO_V2 = {"Tanzania", "South Africa", "Mongolia", "Iceland", "Nepal"}

_ARITHMETIC = re.compile(r"What is (\d+) ([-+*]) (\d+)\?")
_CAPITAL = re.compile(r"What is the capital of (.+)\?")
_LETTERS = re.compile(r"How many letters are in the word '(\w+)'\?")
_MINUTES = re.compile(r"How many minutes are in (\d+) hours\?")


def _capital(country: str) -> str | None:
    return capitals().get(country)


def _simulated(answer: str, milliseconds: int) -> TargetResponse:
    """``answer`` with a latency of ``milliseconds`` + 10 ms per word (whole milliseconds, so exact in seconds)."""
    return TargetResponse(answer, duration_s=(milliseconds + 10 * len(answer.split())) / 1000)


def assistant_v1(question: str) -> TargetResponse:
    """The current version: verbose on geography, with gaps; 0.20 s + 0.01 s per word."""
    return _simulated(_answer_v1(question), 200)


def assistant_v2(question: str) -> TargetResponse:
    """The candidate: terse, more often right, breaks conversions past a day; 0.22 s + 0.01 s a word, +0.15 s on sums."""
    return _simulated(_answer_v2(question), 220 + (150 if _ARITHMETIC.fullmatch(question) else 0))


def _answer_v1(question: str) -> str:
    if match := _CAPITAL.fullmatch(question):
        country = match[1]
        if country in _UNKNOWN_TO_V1:
            city = _WRONG_IN_V1.get(country)
            return f"I think the capital of {country} is {city}." if city else "I don't know."
        return f"The capital of {country} is {_capital(country)}."
    if match := _ARITHMETIC.fullmatch(question):
        a, op, b = int(match[1]), match[2], int(match[3])
        if op == "*" and b > 10:
            return str(a * 10 + b)  # a long-multiplication slip
        return str({"+": a + b, "-": a - b, "*": a * b}[op])
    if match := _LETTERS.fullmatch(question):
        word = match[1]
        return str(len(word) + (1 if len(word) > 9 else 0))
    if match := _MINUTES.fullmatch(question):
        return str(int(match[1]) * 60)
    return "I don't know."


def _answer_v2(question: str) -> str:
    if match := _CAPITAL.fullmatch(question):
        country = match[1]
        return "unknown" if country in _UNKNOWN_TO_V2 else str(_capital(country))
    if match := _ARITHMETIC.fullmatch(question):
        a, op, b = int(match[1]), match[2], int(match[3])
        return str({"+": a + b, "-": a - b, "*": a * b}[op])
    if match := _LETTERS.fullmatch(question):
        return str(len(match[1]))
    if match := _MINUTES.fullmatch(question):
        hours = int(match[1])
        return str((hours % 24) * 60 if hours > 24 else hours * 60)
    return "unknown"
