"""The LLM judge comparator: which of two responses better meets a criterion?

The judge sees the case and "response 1" and "response 2" and answers JSON
``{"reasoning": ..., "winner": "1" | "2" | "tie"}``. The rules:

- with ``swap=True`` each pair is shown in both orders, A/B then B/A: B wins
  only when both orders pick B, A only when both pick A; anything else (a flip,
  a win against a tie) is a tie;
- ``judge.samples = k`` asks each order k times and takes the most common answer
  (a tie when two answers are equally common);
- a failed call or an answer with no winner leaves the task with no verdict and
  the error, never a tie; the second order is not asked once the first failed;
- an answer whose JSON nests deeper than 100 levels is such an answer (it is
  not parsed), and any other error met judging a task fails that task alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from cogeval._check import describe
from cogeval.data import Case
from cogeval.errors import InputError, SelfPreferenceWarning
from cogeval.execution.retry import error_text
from cogeval.pairwise.comparator import Comparator
from cogeval.pairwise.verdict import CHOICES, PairTask, Verdict, check_key, position_verdict, read_choice
from cogeval.scoring.judge import (
    JudgeConfig,
    JudgeError,
    JudgeUsage,
    json_candidates,
    prompt_text,
    self_preference_message,
)


class Preference(NamedTuple):
    """What a pairwise judge answered: ``winner`` (``"1"``, ``"2"`` or ``"tie"``) and its ``reasoning``."""

    winner: str
    reasoning: str


PAIRWISE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "preference",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "winner": {"type": "string", "enum": list(CHOICES)}},
            "required": ["reasoning", "winner"],
            "additionalProperties": False,
        },
    },
}
"""The structured output a pairwise judge is asked for (reasoning first, so the model reasons before it decides)."""

SYSTEM_PROMPT = (
    "You are an impartial evaluator comparing two responses of an AI application to the same input. Judge only by "
    "the criterion you are given; the order of the responses and their length say nothing about their quality. "
    "Answer with JSON only."
)
_EXPECTED_ANSWER = '(expected JSON {"winner": "1" | "2" | "tie", "reasoning": ...} or \'winner: 1\')'
# One class for the blanks and stars after the colon: ``\s*\**\s*`` backtracks quadratically on a long blank run.
_LABELLED = re.compile(r"winner\W{0,3}\s*[:=][\s*]*[\"']?((?:response[\s_#-]*)?[12]|tie)\b", re.I)

_MAX_DEPTH = 100  # the deepest nesting of arrays and objects read in an answer (as cogeval's JSON files allow)

# A JSON string (to its end, or to the end of the text when unterminated) or a bracket.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.S)


def _too_deep(candidate: str, limit: int = _MAX_DEPTH) -> bool:
    """Whether the JSON value ``candidate`` starts with nests deeper than ``limit``, counted without recursion.

    Only the first value counts (``json.loads`` reads no further), and brackets
    inside strings do not.

    >>> _too_deep("[" * 101 + "]" * 101), _too_deep('[["[[[["]] ' + "[" * 200)
    (True, False)
    """
    text = candidate.lstrip()
    if not text.startswith(("[", "{")) or text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token[0][0]
        if mark in "[{":
            depth += 1
            if depth > limit:
                return True
        elif mark in "]}":
            depth -= 1
            if depth <= 0:
                return False
    return False


def parse_preference(text: Any) -> Preference:
    """The winner in a pairwise judge's answer, or raise :class:`~cogeval.scoring.judge.JudgeError`.

    Tried in order: a JSON object with a ``winner`` key (the whole text, a
    fenced block, the outermost ``{...}``), then the last ``winner: X`` in prose.
    JSON nested deeper than 100 levels is refused, unread.

    >>> parse_preference('{"winner": "2", "reasoning": "More precise."}')
    Preference(winner='2', reasoning='More precise.')
    >>> parse_preference("Both are fine. Winner: tie")
    Preference(winner='tie', reasoning='Both are fine. Winner: tie')
    """
    if not isinstance(text, str) or not text.strip():
        raise JudgeError(f"judge answer is empty: {describe(text)}")
    for candidate in json_candidates(text):
        if _too_deep(candidate):
            raise JudgeError(f"judge answer nested deeper than {_MAX_DEPTH} levels: {describe(text[:100])}")
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            keys = {str(k).lower(): k for k in value}
            if "winner" in keys:
                choice = read_choice(value[keys["winner"]])
                if choice is None:
                    found = describe(value[keys["winner"]])
                    raise JudgeError(f"judge answer's winner is not \"1\", \"2\" or \"tie\": {found}")
                reasoning = value.get(keys.get("reasoning"), "")
                return Preference(choice, reasoning if isinstance(reasoning, str) else json.dumps(reasoning))
    matches = list(_LABELLED.finditer(text))
    if matches:
        return Preference(read_choice(matches[-1][1]) or "tie", text.strip())
    raise JudgeError(f"judge answer has no winner {_EXPECTED_ANSWER}: {describe(text)}")


class PairwiseJudge(Comparator):
    """An LLM judge that picks the better of two responses; see :func:`pairwise_judge`."""

    def __init__(self, judge: JudgeConfig, criterion: str, key: str, swap: bool = True, *,
                 include_reference: bool = True) -> None:
        if not isinstance(judge, JudgeConfig):
            raise InputError(f"judge must be a JudgeConfig(model=...); got {describe(judge)}")
        if not isinstance(criterion, str) or not criterion.strip():
            raise InputError("criterion must be a non-empty string saying what makes a response better; "
                             f"got {describe(criterion)}")
        if not isinstance(swap, bool):
            raise InputError(f"swap must be True or False; got {describe(swap)}")
        if not isinstance(include_reference, bool):
            raise InputError(f"include_reference must be True or False; got {describe(include_reference)}")
        self.judge, self.criterion, self.key, self.swap = judge, criterion, check_key(key), swap
        self.include_reference = include_reference

    def __repr__(self) -> str:
        hidden = "" if self.include_reference else ", include_reference=False"
        return (f"PairwiseJudge(key={self.key!r}, criterion={self.criterion!r}, swap={self.swap}{hidden}, "
                f"judge={self.judge!r})")

    def describe(self) -> dict[str, Any]:
        return {"kind": "judge", "criterion": self.criterion, "swap": self.swap,
                "include_reference": self.include_reference, "judge": self.judge.describe()}

    def messages(self, case: Case, response_1: Any, response_2: Any) -> list[dict[str, str]]:
        """The chat messages sent to the judge for one order of one pair.

        >>> judge = pairwise_judge(JudgeConfig("m", api_key="k", cache=False), "Which is more accurate?", "accuracy")
        >>> print(judge.messages(Case("2+2?"), "4", "5")[1]["content"])  # doctest: +ELLIPSIS
        Compare the two responses below.
        Criterion: Which is more accurate?
        ...
        <response_1>
        4
        </response_1>
        <response_2>
        5
        </response_2>
        ...
        """
        given = case.input if case.input is not None else case.turns
        sections = {"input": given, "context": case.context, "expected": case.expected,
                    "response_1": response_1, "response_2": response_2}
        about = ("the context the documents it was given, the expected answer a reference (N/A when there is none)"
                 if self.include_reference else "and the context the documents it was given (N/A when there are none)")
        if not self.include_reference:  # AG2's include_reference=False: the reference answer cannot leak
            del sections["expected"]
        body = "\n".join(f"<{tag}>\n{prompt_text(value)}\n</{tag}>" for tag, value in sections.items())
        prompt = (
            "Compare the two responses below.\n"
            f"Criterion: {self.criterion}\n"
            f"The input is what the application was asked, {about}.\n\n"
            f"{body}\n\n"
            'Reply with JSON only: {"reasoning": "<one or two sentences>", "winner": "1", "2" or "tie"}'
        )
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        limit = asyncio.Semaphore(concurrency)

        async def one(task: PairTask) -> Verdict:
            async with limit:
                try:
                    return await self._verdict(task)
                except Exception as error:  # noqa: BLE001 - one task fails, the others keep their verdicts
                    return Verdict(None, error=error_text(error))

        return list(await asyncio.gather(*(one(task) for task in tasks)))

    async def _verdict(self, task: PairTask) -> Verdict:
        usage = JudgeUsage(cost_usd=None if self.judge.prices is None else 0.0)
        orders = ("ab", "ba") if self.swap else ("ab",)
        answers: list[dict[str, Any]] = []
        for order in orders:  # A/B, then B/A (not asked once A/B failed)
            answers.append(await self._order(task, order, usage))
            if "error" in answers[-1]:
                break
        details = {f"answer_{order}": a["answer"] for order, a in zip(orders, answers) if "answer" in a}
        details["judge_usage"] = dataclasses.asdict(usage)
        if "error" in answers[-1]:
            order = "A/B" if len(answers) == 1 else "B/A"
            return Verdict(None, error=f"order {order}: {answers[-1]['error']}", details=details)
        ab = answers[0]["verdict"]
        ba = answers[1]["verdict"] if self.swap else None
        if self.swap:
            reasoning = f"A first: {answers[0]['reasoning']}\nB first: {answers[1]['reasoning']}"
        else:
            reasoning = answers[0]["reasoning"]
        winner = ab if not self.swap or ab == ba else "tie"
        return Verdict(winner, ab=ab, ba=ba, reasoning=reasoning, details=details)

    async def _order(self, task: PairTask, order: str, usage: JudgeUsage) -> dict[str, Any]:
        first = order[0]
        messages = self.messages(task.case, *task.shown(first))
        picks = []
        for sample in range(self.judge.samples):
            try:
                answer = await self.judge.ask(messages, sample=sample, usage=usage, usable=_usable,
                                              response_format=PAIRWISE_FORMAT)
            except JudgeError as error:
                return {"error": str(error)}
            try:
                picks.append(parse_preference(answer))
            except JudgeError as error:
                return {"error": str(error), "answer": answer}
        counts = Counter(p.winner for p in picks).most_common()
        choice = counts[0][0] if len(counts) == 1 or counts[0][1] > counts[1][1] else "tie"
        reasoning = next((p.reasoning for p in picks if p.winner == choice), picks[0].reasoning)
        return {"verdict": position_verdict(choice, first), "reasoning": reasoning}


def _usable(answer: str) -> bool:
    try:
        parse_preference(answer)
    except JudgeError:
        return False
    return True


def pairwise_judge(judge: JudgeConfig, criterion: str, key: str, swap: bool = True, *,
                   include_reference: bool = True) -> PairwiseJudge:
    """An LLM judge comparator: which response better meets ``criterion``?

    The judge sees the case (input, context, expected answer) and the two
    responses, and answers JSON ``{"winner": "1" | "2" | "tie", "reasoning"}``
    (structured output where the server supports it; prose such as
    ``Winner: 2`` is parsed too). With ``swap=True`` each pair is shown in
    both orders, A/B then B/A: B wins only when both orders pick B, A only when
    both pick A, anything else (a flip, a win against a tie) is a tie. With
    ``swap=False`` it is shown once, A first, and exposed to position bias.
    ``judge.samples = k`` asks each order k times and takes the most common
    answer (a tie when two answers are equally common). A failed call or an
    answer with no winner leaves the case with no verdict and the error, never
    a tie. With ``include_reference=False`` (AG2's option) the judge is not
    shown the case's expected answer: for criteria the responses must meet on
    their own (faithfulness to the context, tone), so the reference cannot leak in.

    >>> pairwise_judge(JudgeConfig("gpt-4o-mini", api_key="k", cache=False), "Which answer is more helpful?", "helpful")
    ... # doctest: +NORMALIZE_WHITESPACE
    PairwiseJudge(key='helpful', criterion='Which answer is more helpful?', swap=True,
                  judge=JudgeConfig(model='gpt-4o-mini', temperature=0.0, samples=1))
    """
    return PairwiseJudge(judge, criterion, key, swap, include_reference=include_reference)


def warn_self_preference(comparators: Sequence[Comparator], variants: Mapping[str, Any], stacklevel: int = 3) -> None:
    """Warn (:class:`~cogeval.SelfPreferenceWarning`) for each pairwise judge that is the model of a variant it
    compares; ``variants`` maps each variant's name to its target (or its run file's ``config.target``)."""
    for comparator in comparators:
        if not isinstance(comparator, PairwiseJudge):
            continue
        for name, variant in variants.items():
            message = self_preference_message(comparator.judge, variant, f"variant {name!r}")
            if message is not None:
                warnings.warn(f"pairwise judge {comparator.key!r}: {message}", SelfPreferenceWarning,
                              stacklevel=stacklevel)
