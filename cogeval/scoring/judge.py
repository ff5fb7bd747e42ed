"""LLM-as-judge metrics: a chat model scores each answer against a rubric.

The judge speaks the OpenAI-compatible chat-completions protocol, so OpenAI,
vLLM, Ollama or any compatible server works::

    >>> judge = JudgeConfig("gpt-4o-mini", api_key="sk-secret", samples=3, cache=False)
    >>> judge
    JudgeConfig(model='gpt-4o-mini', temperature=0.0, samples=3)
    >>> judge.describe()
    {'model': 'gpt-4o-mini', 'baseUrl': None, 'temperature': 0.0, 'maxTokens': None, 'samples': 3}
    >>> polite = llm_metric("polite", "Is the response polite to the user?", scale=(1, 5))
    >>> polite
    JudgeMetric('polite', scale=(1, 5))

and in a suite: ``EvalSuite(data, target, metrics=[correctness(), polite], judge=judge)``.

The judge is asked for JSON ``{"score", "reasoning"}`` (with structured output
when the server supports it); answers in prose are parsed too::

    >>> parse_judgement('Mostly right, one slip. Score: 4/5')
    Judgement(score=4.0, out_of=5.0, reasoning='Mostly right, one slip. Score: 4/5')

Scores are normalised to [0, 1] from the metric's scale; the reasoning is kept
in the score's details. An answer with no score, or a call that still fails
after the retries, gives NaN and an error on that cell, never 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import re
import statistics
import weakref
from collections.abc import Callable, Iterable, Mapping
from numbers import Real
from typing import Any, NamedTuple

from cogeval._check import check_positive_int, check_positive_number, check_retries
from cogeval._check import describe as _short
from cogeval.errors import ExecutionError, InputError
from cogeval.execution.chat import ChatTarget
from cogeval.execution.retry import MAX_BACKOFF_S, error_text, retry_delay, retryable
from cogeval.execution.target import TargetResponse, input_text
from cogeval.scoring.judge_cache import DEFAULT_CACHE_FOLDER, JudgeCache
from cogeval.scoring.metric import Metric, Score

__all__ = [
    "JudgeConfig",
    "JudgeError",
    "JudgeMetric",
    "Judgement",
    "coherence",
    "correctness",
    "faithfulness",
    "helpfulness",
    "json_candidates",
    "judge_usage_totals",
    "llm_metric",
    "parse_judgement",
    "relevance",
    "self_preference_message",
]

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


# -- the judge ---------------------------------------------------------------------------------


@dataclasses.dataclass
class JudgeUsage:
    """What judging one cell cost: HTTP ``calls`` made (failed attempts too), ``cache_hits``,
    the tokens the server reported and ``cost_usd`` (``None`` without ``prices``)."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def add(self, response: TargetResponse) -> None:
        self.input_tokens += response.get("input_tokens") or 0
        self.output_tokens += response.get("output_tokens") or 0
        if self.cost_usd is not None and response.get("cost_usd") is not None:
            self.cost_usd += response.get("cost_usd")


class JudgeConfig:
    """The judge model and how to ask it.

    - ``model``, ``base_url``, ``api_key``: as for :class:`~cogeval.execution.ChatTarget`
      (``api_key`` defaults to ``OPENAI_API_KEY``; it is never shown or written).
    - ``temperature`` (default 0), ``max_tokens``: sent with every request.
    - ``samples``: ask this many times per cell; the score is the mean and the
      details keep every sample and the spread.
    - ``concurrency``: at most this many judge calls in flight (``None``: no
      limit beyond the suite's).
    - ``cache``: ``True`` keeps answers in ``.cogeval-cache/judge`` under the
      working directory (resolved when the config is made), a path keeps them
      there, ``False`` turns the cache off.
    - ``timeout`` (seconds per call), ``retries`` (extra attempts after a 429,
      5xx, timeout or connection error; 0 to 10), ``backoff`` (seconds,
      doubled per retry, at least the server's ``Retry-After``).
    - ``prices``: ``{"input": usd, "output": usd}`` per million tokens, to
      record the judge's cost (``stats.judge_cost_usd``).
    """

    # Declared for mypy, which cannot infer them from ``__init__`` here ("Cannot determine type").
    _chat: ChatTarget
    samples: int
    concurrency: int | None
    timeout: float
    retries: int
    backoff: float
    cache: JudgeCache | None
    _structured: bool

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, max_tokens: int | None = None, samples: int = 1,
                 concurrency: int | None = None, cache: bool | str | os.PathLike[str] = True,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 1.0,
                 prices: Mapping[str, float] | None = None) -> None:
        if not isinstance(temperature, Real) or isinstance(temperature, bool) or not 0 <= temperature < math.inf:
            raise InputError(f"temperature must be a number >= 0; got {_short(temperature)}")
        self._chat = ChatTarget(model, base_url=base_url, api_key=api_key, temperature=float(temperature),
                                max_tokens=max_tokens, prices=prices)
        self.samples = check_positive_int("samples", samples)
        self.concurrency = None if concurrency is None else check_positive_int("concurrency", concurrency)
        self.timeout = check_positive_number("timeout", timeout)
        self.retries = check_retries("retries", retries)
        if not isinstance(backoff, Real) or isinstance(backoff, bool) or not 0 <= backoff <= MAX_BACKOFF_S:
            raise InputError(f"backoff must be a number of seconds in [0, {MAX_BACKOFF_S:g}]; got {_short(backoff)}")
        self.backoff = float(backoff)
        self.cache = _as_cache(cache)
        self._structured = True  # until the server rejects response_format
        self._limits: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()  # one per loop

    model = property(lambda self: self._chat.model, doc="The judge model's name.")
    base_url = property(lambda self: self._chat.base_url, doc="The server's ``/v1`` URL, or ``None`` for OpenAI.")
    temperature = property(lambda self: self._chat.temperature, doc="Sampling temperature sent with every request.")
    max_tokens = property(lambda self: self._chat.max_tokens, doc="Answer length limit, or ``None``.")
    prices = property(lambda self: self._chat.prices, doc="USD per million tokens, or ``None``.")

    def __repr__(self) -> str:
        extra = "".join(f", {name}={value!r}" for name, value in
                        (("base_url", self.base_url), ("max_tokens", self.max_tokens)) if value is not None)
        return f"JudgeConfig(model={self.model!r}{extra}, temperature={self.temperature!r}, samples={self.samples})"

    def describe(self) -> dict[str, Any]:
        """What shapes the judgements, for the run file's ``config.judge`` (camelCase keys); never the API key."""
        return {"model": self.model, "baseUrl": self.base_url, "temperature": self.temperature,
                "maxTokens": self.max_tokens, "samples": self.samples}

    async def ask(self, messages: list[dict[str, Any]], *, sample: int = 0, usage: JudgeUsage | None = None,
                  usable: Callable[[str], bool] | None = None, response_format: Any = RESPONSE_FORMAT) -> str:
        """The judge's answer to ``messages`` (sample number ``sample``), from the cache when it holds it.

        Asks for structured output first; a server that rejects ``response_format``
        is asked without it (and is not asked with it again by this config,
        though answers it gave with it earlier are still read from the cache).
        Raises :class:`JudgeError` when the call still fails after the retries.
        ``usage``, if given, counts the calls, cache hits, tokens and cost. An
        answer is cached unless ``usable(answer)`` says it is not (no score).
        ``response_format`` is the structured output asked for (the score schema
        by default; the pairwise judge asks for its own).
        """
        usage = JudgeUsage() if usage is None else usage
        answer = await self._ask(messages, sample, response_format, usage, usable, call=self._structured)
        if answer is not None:
            return answer
        return await self._ask(messages, sample, None, usage, usable)  # type: ignore[return-value]

    def cache_key(self, messages: list[dict[str, Any]], sample: int, response_format: Any) -> str:
        """The cache key: everything that changes the answer, never the API key."""
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return JudgeCache.key({
            "model": self.model, "base_url": base_url, "messages": messages, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "response_format": response_format, "sample": sample,
        })

    async def _ask(self, messages: list[dict[str, Any]], sample: int, response_format: Any,
                   usage: JudgeUsage, usable: Callable[[str], bool] | None, call: bool = True) -> str | None:
        """The answer (cached, or asked when ``call``), or ``None`` when the server rejects ``response_format``."""
        key = self.cache_key(messages, sample, response_format)
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is not None and isinstance(entry.get("content"), str):
            usage.cache_hits += 1
            return entry["content"]
        if not call or (entry is not None and entry.get("rejected") == "response_format"):
            self._structured = False
            return None
        options = {} if response_format is None else {"response_format": response_format}
        await self._chat.prepare()  # import openai and create the client before the deadline starts

        for attempt in range(self.retries + 1):
            deadline = asyncio.timeout(self.timeout)
            try:
                async with self._limit():
                    usage.calls += 1
                    async with deadline:
                        response = await self._chat.complete(messages, **options)
            except Exception as error:  # noqa: BLE001 - retried, then reported on the cell
                if options and _rejects_response_format(error):
                    self._store(key, {"rejected": "response_format"})
                    self._structured = False
                    return None
                text = f"timed out after {self.timeout:g} s" if deadline.expired() else error_text(error)
                if attempt == self.retries or not retryable(error):
                    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                    raise JudgeError(f"judge call failed after {tries}: {text}") from None
                await asyncio.sleep(retry_delay(attempt, self.backoff, error))
                continue
            usage.add(response)
            if usable is None or usable(response.output):
                self._store(key, {"content": response.output})
            return response.output
        raise AssertionError("unreachable")

    def _store(self, key: str, entry: dict[str, Any]) -> None:
        if self.cache is not None:
            self.cache.put(key, entry)

    def _limit(self) -> Any:
        if self.concurrency is None:
            return contextlib.nullcontext()
        loop = asyncio.get_running_loop()
        limit = self._limits.get(loop)
        if limit is None:
            limit = self._limits[loop] = asyncio.Semaphore(self.concurrency)
        return limit


def _as_cache(cache: Any) -> JudgeCache | None:
    if cache is True:
        return JudgeCache(DEFAULT_CACHE_FOLDER.resolve())
    if cache is False or cache is None:
        return None
    if isinstance(cache, (str, os.PathLike)) and str(cache):
        return JudgeCache(cache)
    raise InputError(f"cache must be True, False or a folder path; got {_short(cache)}")


def _rejects_response_format(error: BaseException) -> bool:
    status = getattr(error, "status_code", None)
    text = str(error).lower()
    return status in (400, 422) and ("response_format" in text or "json_schema" in text)


# -- parsing -----------------------------------------------------------------------------------


class Judgement(NamedTuple):
    """What a judge answered: the raw ``score``, the ``N`` of an ``X/N`` answer (else ``None``), the ``reasoning``."""

    score: float
    out_of: float | None
    reasoning: str


_NUMBER = r"-?\d+(?:\.\d+)?"
_FENCE = re.compile(r"```[A-Za-z]*\s*(.*?)```", re.S)
_LABELLED = re.compile(rf"score\**\s*[:=]\s*\**\s*({_NUMBER})(?:\s*(?:/|out of)\s*(\d+(?:\.\d+)?))?", re.I)
_FRACTION = re.compile(rf"(?<![\d./])({_NUMBER})\s*/\s*(\d+(?:\.\d+)?)(?!\.?\d|/)")  # not dates like 1/2/2024


def parse_judgement(text: Any) -> Judgement:
    """Find the score in a judge's answer, or raise :class:`JudgeError`.

    Tried in order: the whole text as JSON, a fenced JSON block, the outermost
    ``{...}`` (each a JSON object with a ``score`` key, and ``reasoning``), then
    the last labelled ``score: X`` (or ``score: X/N``), then the last ``X/N``.

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
        value = json.loads(candidate)
    except ValueError:
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


def judge_usage_totals(details: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Sum the ``judge_usage`` of judge scores' details: calls, cache hits, tokens, ``cost_usd`` (NaN when unknown).

    >>> judge_usage_totals([{"judge_usage": {"calls": 1, "cache_hits": 0, "input_tokens": 9, "cost_usd": 0.5}}, None])
    {'calls': 1, 'cache_hits': 0, 'input_tokens': 9, 'output_tokens': 0, 'cost_usd': 0.5}
    """
    totals: dict[str, Any] = {"calls": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0}
    costs = []
    for item in details:
        usage = item.get("judge_usage") if isinstance(item, Mapping) else None
        if isinstance(usage, Mapping):
            for name in totals:
                totals[name] += int(usage.get(name) or 0)
            if usage.get("cost_usd") is not None:
                costs.append(float(usage["cost_usd"]))
    totals["cost_usd"] = math.fsum(costs) if costs else math.nan
    return totals


def self_preference_message(judge: Any, target: Any, target_name: str = "the target") -> str | None:
    """Why ``judge`` should not judge ``target`` when both are the same model, else ``None``.

    A model judging answers it wrote tends to prefer them (self-preference
    bias). ``judge`` and ``target`` are objects with a ``describe()`` (a
    :class:`JudgeConfig`, a :class:`~cogeval.ChatTarget`, a pairwise judge) or
    the dicts a run file keeps (``config.judge``, ``config.target``: a
    ``"model"`` key; a pairwise comparator's description: under ``"judge"``).
    Model names are compared stripped and case-insensitively; a side with no
    model (a function target) gives ``None``. ``target_name`` names the target
    in the message. :class:`~cogeval.EvalSuite` and
    :func:`~cogeval.run_pairwise` warn with it (:class:`~cogeval.SelfPreferenceWarning`).

    >>> print(self_preference_message({"model": "GPT-4o "}, {"type": "chat", "model": "gpt-4o"}))
    the judge is model 'GPT-4o', the same model as the target: a model judging answers it wrote tends to prefer them (self-preference bias), so it favours the target; use a judge from another model family
    >>> self_preference_message({"model": "gpt-4o"}, {"type": "function", "name": "answer"}) is None
    True
    """
    judge_model, target_model = _model_name(judge), _model_name(target)
    if judge_model is None or target_model is None or judge_model.casefold() != target_model.casefold():
        return None
    return (f"the judge is model {judge_model!r}, the same model as {target_name}: a model judging answers it "
            f"wrote tends to prefer them (self-preference bias), so it favours {target_name}; use a judge from "
            "another model family")


def _model_name(value: Any) -> str | None:
    """The stripped ``model`` of a description dict (or of ``value.describe()``), else ``None``."""
    if not isinstance(value, Mapping):
        describe = getattr(value, "describe", None)
        try:
            value = describe() if callable(describe) else None
        except Exception:  # noqa: BLE001 - a check for a warning never breaks the caller
            return None
    if not isinstance(value, Mapping):
        return None
    model = value.get("model")
    if model is None and isinstance(value.get("judge"), Mapping):
        model = value["judge"].get("model")
    return model.strip() if isinstance(model, str) and model.strip() else None


# -- metrics -----------------------------------------------------------------------------------


class JudgeMetric(Metric):
    """A metric scored by an LLM judge against a ``rubric``, on ``scale`` (normalised to [0, 1]).

    Score details: ``reasoning`` and ``raw_score`` (with ``samples=1``), or
    ``samples`` (each ``{score, raw_score, reasoning}``), ``std_dev``, ``min``
    and ``max`` (with ``samples > 1``); and ``judge_usage`` (calls, cache hits,
    tokens, cost). A failed sample makes the cell NaN with the error; the
    judge's unusable answer is kept in ``details["answer"]``.
    """

    requires_judge = True

    def __init__(self, name: str, rubric: str, *, scale: tuple[float, float] = (0, 1),
                 higher_is_better: bool = True, needs_context: bool = False) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise InputError(
                f"metric {name!r}: rubric must be a non-empty string saying what to judge; got {_short(rubric)}"
            )
        low, high = _checked_scale(name, scale)
        super().__init__(name, higher_is_better=higher_is_better, params={"rubric": rubric, "scale": [low, high]})
        self.rubric = rubric
        self.scale = (low, high)
        self.needs_context = bool(needs_context)

    def __repr__(self) -> str:
        direction = "" if self.higher_is_better else ", higher_is_better=False"
        low, high = (int(v) if float(v).is_integer() else v for v in self.scale)
        return f"JudgeMetric({self.name!r}, scale=({low}, {high}){direction})"

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

        >>> correctness().normalise(Judgement(4, 5, ""))
        0.75
        """
        low, high = self.scale
        if judgement.out_of is not None and judgement.out_of != high:
            raise JudgeError(f"judge answered {judgement.score:g}/{judgement.out_of:g}; "
                             f"expected a score on the scale {low:g} to {high:g}")
        if not low <= judgement.score <= high:
            raise JudgeError(f"judge score {judgement.score:g} is outside the scale {low:g} to {high:g}")
        return (judgement.score - low) / (high - low)

    async def compute(self, output: Any, case: Any, judge: JudgeConfig | None = None) -> Score:
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


def prompt_text(value: Any) -> str:
    """A case field as prompt text: ``N/A`` when absent, a list of passages one per paragraph."""
    if value is None:
        return "N/A"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "\n\n".join(value)
    return input_text(value)


def llm_metric(name: str, rubric: str, scale: tuple[float, float] = (0, 1),
               higher_is_better: bool = True) -> JudgeMetric:
    """A judge metric called ``name``: the judge scores each answer by ``rubric`` on ``scale``.

    Say in the rubric what the ends of the scale mean. Scores are normalised
    to [0, 1]: ``(raw - low) / (high - low)``.

    >>> concise = llm_metric("concise", "5: no needless words; 1: padded and repetitive.", scale=(1, 5))
    >>> concise.describe()["params"]["scale"], concise.requires_judge
    ([1.0, 5.0], True)
    """
    return JudgeMetric(name, rubric, scale=scale, higher_is_better=higher_is_better)


_FIVE = (1, 5)


def faithfulness() -> JudgeMetric:
    """Is every claim of the answer supported by the case's context? (1–5; needs ``case.context``)."""
    return JudgeMetric("faithfulness", (
        "Is every claim in the response supported by the context? Judge only against the context, not your own "
        "knowledge. 5: every claim is supported by the context; 3: some claims are unsupported or go beyond the "
        "context; 1: the response contradicts the context or is mostly unsupported."
    ), scale=_FIVE, needs_context=True)


def relevance() -> JudgeMetric:
    """Does the answer address what was asked? (1–5)."""
    return JudgeMetric("relevance", (
        "Does the response address the input? 5: it directly and completely answers what was asked; "
        "3: it is partly relevant, or padded with unrelated content; 1: it is off-topic or ignores the input."
    ), scale=_FIVE)


def coherence() -> JudgeMetric:
    """Is the answer clear, well organised and consistent? (1–5)."""
    return JudgeMetric("coherence", (
        "Is the response clear, well organised and logically consistent? 5: easy to follow, every sentence fits; "
        "3: understandable but disorganised or with some contradictions; 1: confused, contradictory or incoherent."
    ), scale=_FIVE)


def helpfulness() -> JudgeMetric:
    """Would the answer help the user do what they asked? (1–5)."""
    return JudgeMetric("helpfulness", (
        "Would the response help the user achieve what they asked for? 5: fully helpful, accurate and actionable; "
        "3: somewhat helpful but incomplete or vague; 1: unhelpful, evasive or misleading."
    ), scale=_FIVE)


def correctness() -> JudgeMetric:
    """Is the answer correct, and does it agree with the expected answer when one is given? (1–5)."""
    return JudgeMetric("correctness", (
        "Is the response factually correct and, when an expected answer is given, does it agree with it? Judge the "
        "meaning, not the wording. 5: fully correct; 3: partly correct, or missing important parts; "
        "1: wrong, or contradicts the expected answer."
    ), scale=_FIVE)
