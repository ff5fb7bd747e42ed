"""What a judge is asked and how its answer is read: the prompt pieces, the structured output, the parser.

The judge is asked for JSON ``{"score", "reasoning"}`` (:data:`RESPONSE_FORMAT`,
with structured output when the server supports it); :func:`parse_judgement`
also reads answers in prose (``score: X``, ``the score is X``, ``a score of X``, ``X/N``). :class:`JudgeError` is the
one error of the judge: a call that still fails after its retries, or an
answer with no usable score.
"""

from __future__ import annotations

import json
import math
import re
from numbers import Real
from typing import Any, NamedTuple

from cogeval._check import describe as _short
from cogeval.data.json_limits import loads
from cogeval.errors import ExecutionError
from cogeval.execution.target import input_text

SYSTEM_PROMPT = (
    "You are an impartial evaluator of answers given by an AI application. Judge the response only by the "
    "criterion you are given, and answer with JSON only."
)

RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "judgement",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "number"}, "reasoning": {"type": "string"}},
            "required": ["score", "reasoning"],
            "additionalProperties": False,
        },
    },
}
"""The structured output asked for; a server that rejects it is asked again without it."""


class JudgeError(ExecutionError):
    """A judge call failed after its retries, or its answer holds no usable score."""


# Its public home, where it has always been named (tracebacks, doctests, pickles): cogeval.scoring.judge.
JudgeError.__module__ = "cogeval.scoring.judge"


# -- prompt text -------------------------------------------------------------------------------


def prompt_text(value: Any) -> str:
    """A case field as prompt text: ``N/A`` when absent, a list of passages one per paragraph."""
    if value is None:
        return "N/A"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "\n\n".join(value)
    return input_text(value)


# -- parsing -----------------------------------------------------------------------------------


class Judgement(NamedTuple):
    """What a judge answered: the raw ``score``, the ``N`` of an ``X/N`` answer (else ``None``), the ``reasoning``."""

    score: float
    out_of: float | None
    reasoning: str


_NUMBER = r"-?\d+(?:\.\d+)?"
_FENCE = re.compile(r"```[A-Za-z]*\s*(.*?)```", re.S)
# ``score: X``, ``score = X``, and in prose ``the score is X`` / ``a score of X`` (``X/N``, ``X out of N`` too).
# Linear: the loops next to each other never share a character (stars, then blanks, then ``:``/``is``/``of``).
_LABELLED = re.compile(
    rf"score\**(?:\s*[:=]|\s+(?:is|of)\b)[\s*]*({_NUMBER})(?:\s*(?:/|out of)\s*(\d+(?:\.\d+)?))?", re.I)
_FRACTION = re.compile(rf"(?<![\d./])({_NUMBER})\s*/\s*(\d+(?:\.\d+)?)(?!\.?\d|/)")  # not dates like 1/2/2024


def parse_judgement(text: Any) -> Judgement:
    """Find the score in a judge's answer, or raise :class:`JudgeError`.

    Tried in order: the whole text as JSON, a fenced JSON block, the outermost
    ``{...}`` (each a JSON object with a ``score`` key, and ``reasoning``), then
    the last labelled ``score: X`` (``score = X``, ``the score is X``, ``a score
    of X``; each may end ``/N`` or ``out of N``), then the last ``X/N``. The
    number is the raw score on the metric's scale (see :meth:`JudgeMetric.normalise`).

    >>> parse_judgement("The score is 0.75 because the city is right.").score
    0.75
    >>> parse_judgement('```json\\n{"score": 0.8, "reasoning": "close"}\\n```')
    Judgement(score=0.8, out_of=None, reasoning='close')
    >>> parse_judgement("I'd say it is fine.")
    Traceback (most recent call last):
    ...
    cogeval.scoring.judge.JudgeError: judge answer has no score (expected JSON {"score": ..., "reasoning": ...}, 'score: X' or 'X/N'): "I'd say it is fine."
    """
    if not isinstance(text, str) or not text.strip():
        raise JudgeError(f"judge answer is empty: {_short(text)}")
    for candidate in json_candidates(text):
        found = _from_json(candidate)
        if found is not None:
            return found
    matches = list(_LABELLED.finditer(text)) or list(_FRACTION.finditer(text))
    if matches:
        last = matches[-1]
        return Judgement(float(last[1]), None if last[2] is None else float(last[2]), text.strip())
    raise JudgeError(
        'judge answer has no score (expected JSON {"score": ..., "reasoning": ...}, '
        f"'score: X' or 'X/N'): {_short(text)}"
    )


def json_candidates(text: str) -> list[str]:
    """Where a judge's answer may hold its JSON, most likely first: the whole text, fenced blocks, the outermost ``{...}``.

    >>> json_candidates('Verdict: {"score": 1}')
    ['Verdict: {"score": 1}', '{"score": 1}']
    """
    start, end = text.find("{"), text.rfind("}")
    return [text.strip(), *(m[1] for m in _FENCE.finditer(text)), text[start:end + 1] if 0 <= start < end else ""]


def _from_json(candidate: str) -> Judgement | None:
    try:
        value = loads(candidate, "judge answer", error=JudgeError, allow_nan=True)  # a NaN score is refused below
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    keys = {str(k).lower(): k for k in value}
    if "score" not in keys:
        return None
    score, out_of = _number(value[keys["score"]])
    reasoning = value[keys["reasoning"]] if "reasoning" in keys else ""
    return Judgement(score, out_of, reasoning if isinstance(reasoning, str) else json.dumps(reasoning))


def _number(value: Any) -> tuple[float, float | None]:
    if isinstance(value, str):
        whole = re.fullmatch(rf"\s*({_NUMBER})\s*(?:/\s*(\d+(?:\.\d+)?))?\s*", value)
        if whole:
            return float(whole[1]), None if whole[2] is None else float(whole[2])
    elif isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value):
        return float(value), None
    raise JudgeError(f"judge answer's score is not a number: {_short(value)}")
