"""Built-in per-case metrics, each named after its function and recording its arguments.

Outputs that are not strings are scored by their ``str()``; a ``None`` output
(no answer) is an error cell, never a 0. Where ``case.expected`` is a list, it
holds *acceptable answers* and the best one counts (``exact_match``,
``numeric_match``, ``token_f1``), except for :func:`contains`, whose
``match=`` says whether all or any of the items must appear.

>>> from types import SimpleNamespace as Case
>>> exact_match().score("  Paris ", Case(expected="paris")).value
1.0
>>> token_f1().score("the cat sat", Case(expected="a cat sat down")).value
0.8
"""

from __future__ import annotations

import collections
import json
import math
import re
import string
from collections.abc import Callable
from numbers import Real
from typing import Any

from cogeval._check import check_choice
from cogeval._check import describe as _short
from cogeval.errors import InputError
from cogeval.scoring.metric import Metric, Score


class _ScoringError(Exception):
    """A problem with the inputs of one case: becomes the Score's error."""


def _output(output: Any) -> str:
    if output is None:
        raise _ScoringError("got no output (None)")
    return output if isinstance(output, str) else str(output)


def _expected(case: Any) -> list[str]:
    """``case.expected`` as a list of strings (a list means alternatives or items)."""
    expected = getattr(case, "expected", None)
    if expected is None:
        raise _ScoringError("needs case.expected")
    items = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    if not items:
        raise _ScoringError("needs case.expected; got an empty list")
    return [item if isinstance(item, str) else str(item) for item in items]


class _BuiltinMetric(Metric):
    """A built-in: ``fn`` may raise :class:`_ScoringError` to report a clean error message."""

    def compute(self, output: Any, case: Any, **options: Any) -> Any:
        try:
            return super().compute(output, case, **options)
        except _ScoringError as problem:
            return Score(math.nan, None, f"{self.name} {problem}")

    def __repr__(self) -> str:
        return "Metric" + super().__repr__().removeprefix(type(self).__name__)


def _make(name: str, fn: Callable[[Any, Any], Any], **params: Any) -> Metric:
    return _BuiltinMetric(name, fn, higher_is_better=True, params=params)


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{name} must be True or False; got {_short(value)}")
    return value


def exact_match(case_sensitive: bool = False) -> Metric:
    """1 when the output equals ``case.expected`` after stripping whitespace, else 0.

    Case-insensitive unless ``case_sensitive``; a list of expected values
    means acceptable answers (any one matches).

    >>> from types import SimpleNamespace as Case
    >>> exact_match(case_sensitive=True).score("paris", Case(expected="Paris")).value
    0.0
    """
    _check_bool("case_sensitive", case_sensitive)

    def norm(text: str) -> str:
        text = text.strip()
        return text if case_sensitive else text.casefold()

    def fn(output: Any, case: Any) -> float:
        text = norm(_output(output))
        return any(text == norm(e) for e in _expected(case))

    return _make("exact_match", fn, case_sensitive=case_sensitive)


def contains(case_sensitive: bool = False, match: str = "all") -> Metric:
    """1 when ``case.expected`` appears in the output, else 0.

    When ``case.expected`` is a list, ``match="all"`` (default) needs every
    item to appear and ``match="any"`` needs one; ``details["missing"]``
    lists the items not found.

    >>> from types import SimpleNamespace as Case
    >>> contains().score("Red, blue and green", Case(expected=["red", "yellow"]))
    Score(value=0.0, details={'missing': ['yellow']}, error=None)
    """
    _check_bool("case_sensitive", case_sensitive)
    mode = check_choice("match", match, ("all", "any"))

    def norm(text: str) -> str:
        return text if case_sensitive else text.casefold()

    def fn(output: Any, case: Any) -> Score:
        text = norm(_output(output))
        items = _expected(case)
        missing = [item for item in items if norm(item) not in text]
        found = not missing if mode == "all" else len(missing) < len(items)
        return Score(float(found), {"missing": missing} if missing else None)

    return _make("contains", fn, case_sensitive=case_sensitive, match=mode)


REGEX_TIMEOUT_S = 10.0
"""Seconds one :func:`regex` search may take before it is an error score (catastrophic backtracking)."""


def regex(pattern: str, flags: int = 0) -> Metric:
    """1 when ``pattern`` is found in the output (``re.search`` with ``flags``), else 0.

    The pattern is compiled here, so a bad one fails at once. The search is the
    ``regex`` library's (in its ``re``-compatible
    mode), which lets other threads run meanwhile and gives up after
    :data:`REGEX_TIMEOUT_S` seconds: a pattern that backtracks without end on some
    answer scores an error on that case instead of hanging the run.

    >>> regex(r"\\d{4}-\\d{2}-\\d{2}").score("due 2024-05-01", None)
    Score(value=1.0, details={'match': '2024-05-01'}, error=None)
    """
    import regex as regex_library

    if not isinstance(pattern, str):
        raise InputError(f"regex pattern must be a string; got {_short(pattern)}")
    if not isinstance(flags, int) or isinstance(flags, bool):
        raise InputError(f"regex flags must be an int such as re.IGNORECASE; got {_short(flags)}")
    try:
        compiled = regex_library.compile(pattern, int(flags) | regex_library.VERSION0)
    except (regex_library.error, ValueError) as error:
        raise InputError(f"regex pattern {pattern!r} is not a valid regular expression: {error}") from None

    def fn(output: Any, case: Any) -> Score:
        try:
            found = compiled.search(_output(output), concurrent=True, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            return Score(math.nan, None, f"the regex search took over {REGEX_TIMEOUT_S:g} s (the pattern "
                                         "backtracks without end on this answer)")
        return Score(1.0, {"match": found.group(0)}) if found else Score(0.0)

    return _make("regex", fn, pattern=pattern, flags=int(flags))


def json_valid() -> Metric:
    """1 when the whole output parses as JSON (``json.loads``), else 0 with the parser's reason.

    >>> json_valid().score('{"a": 1}', None).value
    1.0
    """

    def fn(output: Any, case: Any) -> Score:
        try:
            json.loads(_output(output))
        except ValueError as error:
            return Score(0.0, {"reason": str(error)})
        return Score(1.0)

    return _make("json_valid", fn)


_NUMBER = re.compile(
    r"(?<![\w.])(?:[-+](?=\.?\d))?"  # a sign, not the hyphen in "10-20"
    r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE][-+]?\d+)?"
)


def _last_number(text: str) -> float | None:
    numbers = [m.group(0) for m in _NUMBER.finditer(text)]
    return float(numbers[-1].replace(",", "")) if numbers else None


def _expected_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        number = _last_number(text)
        if number is None:
            raise _ScoringError(f"needs a number in case.expected; got {_short(text)}") from None
        return number


def numeric_match(tolerance: float = 0.0) -> Metric:
    """1 when the last number in the output is within ``tolerance`` (absolute) of ``case.expected``.

    Numbers may carry a sign, thousands separators and an exponent
    (``-3.5``, ``1,234``, ``1e3``). No number in the output scores 0, with
    ``details["reason"]`` saying so.

    >>> from types import SimpleNamespace as Case
    >>> numeric_match().score("So the total is 1,234.", Case(expected=1234))
    Score(value=1.0, details={'found': 1234.0, 'expected': 1234.0}, error=None)
    """
    if not isinstance(tolerance, Real) or isinstance(tolerance, bool) or not 0 <= tolerance < math.inf:
        raise InputError(f"tolerance must be a finite number >= 0; got {_short(tolerance)}")
    tolerance = float(tolerance)

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= tolerance or math.isclose(a, b, rel_tol=1e-9)

    def fn(output: Any, case: Any) -> Score:
        found = _last_number(_output(output))
        targets = [_expected_number(e) for e in _expected(case)]
        if found is None:
            return Score(0.0, {"reason": "no number found in output"})
        best = min(targets, key=lambda t: abs(found - t))
        return Score(float(close(found, best)), {"found": found, "expected": best})

    return _make("numeric_match", fn, tolerance=tolerance)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _tokens(text: str) -> list[str]:
    """SQuAD normalisation: lower-case, drop punctuation, drop articles, split on whitespace."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split()


def _f1(prediction: list[str], reference: list[str]) -> tuple[float, float, float]:
    if not prediction or not reference:
        same = float(prediction == reference)
        return same, same, same
    common = sum((collections.Counter(prediction) & collections.Counter(reference)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / len(prediction), common / len(reference)
    return 2 * precision * recall / (precision + recall), precision, recall


def token_f1() -> Metric:
    """SQuAD-style token F1 between the output and ``case.expected``, in [0, 1].

    Both texts are lower-cased and stripped of punctuation and articles
    (a, an, the); F1 is over the token multisets. Two empty texts score 1,
    one empty text 0. With several expected answers the best F1 counts.

    >>> from types import SimpleNamespace as Case
    >>> token_f1().score("The Eiffel Tower!", Case(expected="eiffel tower")).value
    1.0
    """

    def fn(output: Any, case: Any) -> Score:
        prediction = _tokens(_output(output))
        f1, precision, recall = max(_f1(prediction, _tokens(e)) for e in _expected(case))
        return Score(f1, {"precision": precision, "recall": recall})

    return _make("token_f1", fn)
