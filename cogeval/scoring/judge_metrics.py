"""The judge metrics: :class:`JudgeMetric` (a rubric on a scale), :func:`llm_metric` and the built-in rubrics.

Each takes ``judge=``: its own judge, used in place of the suite's (so a
suite can mix judges, and needs none when every judge metric has its own).

    >>> correctness()
    JudgeMetric('correctness', scale=(1, 5))
    >>> correctness(judge=JudgeConfig("gpt-4o", api_key="k", cache=False))
    JudgeMetric('correctness', scale=(1, 5), judge=JudgeConfig(model='gpt-4o', temperature=0.0, samples=1))
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import statistics
from numbers import Real
from typing import Any

from cogeval._check import describe as _short
from cogeval.errors import InputError
from cogeval.scoring.judge_answer import SYSTEM_PROMPT, JudgeError, Judgement, parse_judgement, prompt_text
from cogeval.scoring.judge_client import JudgeConfig, JudgeUsage
from cogeval.scoring.metric import Metric, Score


class JudgeMetric(Metric):
    """A metric scored by an LLM judge against a ``rubric``, on ``scale`` (normalised to [0, 1]).

    Score details: ``reasoning`` and ``raw_score`` (with ``samples=1``), or
    ``samples`` (each ``{score, raw_score, reasoning}``), ``std_dev``, ``min``
    and ``max`` (with ``samples > 1``); and ``judge_usage`` (calls, cache hits,
    tokens, cost). A failed sample makes the cell NaN with the error; the
    judge's unusable answer is kept in ``details["answer"]``.

    ``judge``: this metric's own :class:`JudgeConfig`, used in place of the
    suite's (or ``rescore``'s); its ``describe()`` is in ``params["judge"]``.
    """

    requires_judge = True

    def __init__(self, name: str, rubric: str, *, scale: tuple[float, float] = (0, 1),
                 higher_is_better: bool = True, needs_context: bool = False, judge: JudgeConfig | None = None) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise InputError(
                f"metric {name!r}: rubric must be a non-empty string saying what to judge; got {_short(rubric)}"
            )
        low, high = _checked_scale(name, scale)
        if judge is not None and not isinstance(judge, JudgeConfig):
            raise InputError(f"metric {name!r}: judge must be a JudgeConfig(model=...) or None; got {_short(judge)}")
        params: dict[str, Any] = {"rubric": rubric, "scale": [low, high]}
        if judge is not None:
            params["judge"] = judge.describe()  # never the API key
        super().__init__(name, higher_is_better=higher_is_better, params=params)
        self.judge = judge
        self.rubric = rubric
        self.scale = (low, high)
        self.needs_context = bool(needs_context)

    def __repr__(self) -> str:
        direction = "" if self.higher_is_better else ", higher_is_better=False"
        own = "" if self.judge is None else f", judge={self.judge!r}"
        low, high = (int(v) if float(v).is_integer() else v for v in self.scale)
        return f"JudgeMetric({self.name!r}, scale=({low}, {high}){direction}{own})"

    def messages(self, output: Any, case: Any) -> list[dict[str, str]]:
        """The chat messages sent to the judge for ``output`` of ``case``.

        >>> m = llm_metric("polite", "Is it polite?", scale=(1, 5)).messages("Sure!", None)
        >>> print(m[1]["content"])  # doctest: +ELLIPSIS
        Evaluate the response below for: polite.
        Criterion: Is it polite?
        Give a score from 1 to 5 ...
        <response>
        Sure!
        </response>
        ...
        """
        low, high = (f"{v:g}" for v in self.scale)
        given = getattr(case, "input", None)
        sections = {
            "input": given if given is not None else getattr(case, "turns", None),
            "context": getattr(case, "context", None),
            "expected": getattr(case, "expected", None),
            "response": output,
        }
        body = "\n".join(f"<{tag}>\n{prompt_text(value)}\n</{tag}>" for tag, value in sections.items())
        prompt = (
            f"Evaluate the response below for: {self.name}.\n"
            f"Criterion: {self.rubric}\n"
            f"Give a score from {low} to {high} as the criterion describes. "
            "The input is what the application was asked, the context the documents it was given, "
            "the expected answer a reference (N/A when there is none).\n\n"
            f"{body}\n\n"
            f'Reply with JSON only: {{"score": <a number from {low} to {high}>, '
            '"reasoning": "<one or two sentences>"}'
        )
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]

    def normalise(self, judgement: Judgement) -> float:
        """The raw score mapped from the scale to [0, 1]; raises :class:`JudgeError` outside the scale.

        A bare number is read on the metric's scale, never as already
        normalised: ``the score is 0.75`` on a 1 to 5 scale is an error.

        >>> correctness().normalise(Judgement(4, 5, ""))
        0.75
        >>> correctness().normalise(Judgement(0.75, None, ""))
        Traceback (most recent call last):
        ...
        cogeval.scoring.judge.JudgeError: judge score 0.75 is outside the scale 1 to 5
        """
        low, high = self.scale
        if judgement.out_of is not None and judgement.out_of != high:
            raise JudgeError(f"judge answered {judgement.score:g}/{judgement.out_of:g}; "
                             f"expected a score on the scale {low:g} to {high:g}")
        if not low <= judgement.score <= high:
            raise JudgeError(f"judge score {judgement.score:g} is outside the scale {low:g} to {high:g}")
        return (judgement.score - low) / (high - low)

    async def compute(self, output: Any, case: Any, judge: JudgeConfig | None = None) -> Score:
        """Ask the judge: this metric's own ``judge`` if it has one, else the ``judge`` given (the suite's)."""
        judge = self.judge if self.judge is not None else judge
        if not isinstance(judge, JudgeConfig):
            return self._error(f"needs a judge: pass judge=JudgeConfig(model=...); got {_short(judge)}")
        if self.needs_context and getattr(case, "context", None) is None:
            return self._error("needs the case's context (what the answer must be faithful to); the case has none")
        messages = self.messages(output, case)
        usage = JudgeUsage(cost_usd=None if judge.prices is None else 0.0)
        samples = await asyncio.gather(*(self._sample(judge, messages, i, usage) for i in range(judge.samples)))
        details: dict[str, Any] = {}
        failed = [(i, s) for i, s in enumerate(samples) if "error" in s]
        good = [s for s in samples if "error" not in s]
        if failed:
            index, sample = failed[0]
            if "answer" in sample:
                details["answer"] = sample["answer"]
            if judge.samples > 1:
                details["samples"] = good
            where = f"sample {index + 1} of {judge.samples}: " if judge.samples > 1 else ""
            return self._error(where + sample["error"], {**details, "judge_usage": dataclasses.asdict(usage)})
        scores = [s["score"] for s in good]
        if judge.samples == 1:
            details = {"reasoning": good[0]["reasoning"], "raw_score": good[0]["raw_score"]}
        else:
            details = {"samples": good, "std_dev": statistics.stdev(scores), "min": min(scores), "max": max(scores)}
        return Score(math.fsum(scores) / len(scores), {**details, "judge_usage": dataclasses.asdict(usage)})

    async def _sample(self, judge: JudgeConfig, messages: list[dict[str, Any]], sample: int,
                      usage: JudgeUsage) -> dict[str, Any]:
        try:
            answer = await judge.ask(messages, sample=sample, usage=usage, usable=self._usable)
        except JudgeError as error:
            return {"error": str(error)}
        try:
            found = parse_judgement(answer)
            return {"score": self.normalise(found), "raw_score": found.score, "reasoning": found.reasoning}
        except JudgeError as error:
            return {"error": str(error), "answer": answer}

    def _usable(self, answer: str) -> bool:
        try:
            self.normalise(parse_judgement(answer))
        except JudgeError:
            return False
        return True


def _checked_scale(name: str, scale: Any) -> tuple[float, float]:
    ok = (isinstance(scale, (tuple, list)) and len(scale) == 2
          and all(isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v) for v in scale)
          and scale[0] < scale[1])
    if not ok:
        raise InputError(f"metric {name!r}: scale must be (low, high), two finite numbers with low < high; "
                         f"got {_short(scale)}")
    return float(scale[0]), float(scale[1])


def llm_metric(name: str, rubric: str, scale: tuple[float, float] = (0, 1),
               higher_is_better: bool = True, *, judge: JudgeConfig | None = None) -> JudgeMetric:
    """A judge metric called ``name``: the judge scores each answer by ``rubric`` on ``scale``.

    Say in the rubric what the ends of the scale mean. Scores are normalised
    to [0, 1]: ``(raw - low) / (high - low)``. ``judge``: this metric's own
    judge, in place of the suite's.

    >>> concise = llm_metric("concise", "5: no needless words; 1: padded and repetitive.", scale=(1, 5))
    >>> concise.describe()["params"]["scale"], concise.requires_judge
    ([1.0, 5.0], True)
    >>> own = llm_metric("concise", "Is it concise?", judge=JudgeConfig("gpt-4o", api_key="k", cache=False))
    >>> own.describe()["params"]["judge"]["model"]
    'gpt-4o'
    """
    return JudgeMetric(name, rubric, scale=scale, higher_is_better=higher_is_better, judge=judge)


_FIVE = (1, 5)


def faithfulness(*, judge: JudgeConfig | None = None) -> JudgeMetric:
    """Is every claim of the answer supported by the case's context? (1–5; needs ``case.context``)."""
    return JudgeMetric("faithfulness", (
        "Is every claim in the response supported by the context? Judge only against the context, not your own "
        "knowledge. 5: every claim is supported by the context; 3: some claims are unsupported or go beyond the "
        "context; 1: the response contradicts the context or is mostly unsupported."
    ), scale=_FIVE, needs_context=True, judge=judge)


def relevance(*, judge: JudgeConfig | None = None) -> JudgeMetric:
    """Does the answer address what was asked? (1–5)."""
    return JudgeMetric("relevance", (
        "Does the response address the input? 5: it directly and completely answers what was asked; "
        "3: it is partly relevant, or padded with unrelated content; 1: it is off-topic or ignores the input."
    ), scale=_FIVE, judge=judge)


def coherence(*, judge: JudgeConfig | None = None) -> JudgeMetric:
    """Is the answer clear, well organised and consistent? (1–5)."""
    return JudgeMetric("coherence", (
        "Is the response clear, well organised and logically consistent? 5: easy to follow, every sentence fits; "
        "3: understandable but disorganised or with some contradictions; 1: confused, contradictory or incoherent."
    ), scale=_FIVE, judge=judge)


def helpfulness(*, judge: JudgeConfig | None = None) -> JudgeMetric:
    """Would the answer help the user do what they asked? (1–5)."""
    return JudgeMetric("helpfulness", (
        "Would the response help the user achieve what they asked for? 5: fully helpful, accurate and actionable; "
        "3: somewhat helpful but incomplete or vague; 1: unhelpful, evasive or misleading."
    ), scale=_FIVE, judge=judge)


def correctness(*, judge: JudgeConfig | None = None) -> JudgeMetric:
    """Is the answer correct, and does it agree with the expected answer when one is given? (1–5)."""
    return JudgeMetric("correctness", (
        "Is the response factually correct and, when an expected answer is given, does it agree with it? Judge the "
        "meaning, not the wording. 5: fully correct; 3: partly correct, or missing important parts; "
        "1: wrong, or contradicts the expected answer."
    ), scale=_FIVE, judge=judge)
