"""Head-to-head: is B's answer better than A's, case by case, by an LLM judge or by people?

>>> from cogeval import human_pairwise, run_pairwise
>>> data = [{"input": q} for q in ("2+2", "3+3", "capital of France?", "7*6")]
>>> longer = lambda case, response_1, response_2: "1" if len(response_1) > len(response_2) else "2"
>>> result = run_pairwise(data, lambda q: "ok", lambda q: f"the answer to {q}",
...                       [human_pairwise("longer", ask=longer, seed=0)], names=("terse", "wordy"))
>>> win = result.win_rate("longer")
>>> win.rate, win.wins, win.losses, win.ties, win.n, win.p_value
(1.0, 4, 0, 0, 4, 0.125)
>>> [round(limit, 4) for limit in win.ci]
[0.5101, 1.0]

Every comparator (:func:`pairwise_judge`, :func:`human_pairwise`,
:func:`~cogeval.human_labels`) has a ``key`` and gives each case a
:class:`Verdict`: ``"a"``, ``"b"``, ``"tie"``, or no verdict (``None``, with an
``error`` saying why: a failed judge call, an unusable answer, a missing
label), which is never counted as a tie. A case on which one variant's target
failed is won by the other without asking anyone (as ``compare_runs`` scores
a failure 0); a case both failed on has no verdict.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import math
import os
import pathlib
import re
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from cogeval import _columns as col
from cogeval._check import check_positive_int, check_positive_number, describe
from cogeval._files import write_text_atomic
from cogeval._html import escape, html_table, safe_html
from cogeval.compare.store import RunStore
from cogeval.data import Case
from cogeval.data.jsonable import jsonable
from cogeval.data.run_id import check_run_id, iso_utc, new_run_id, utc_now
from cogeval.errors import InputError, RunFileError, SelfPreferenceWarning
from cogeval.execution import run_interleaved, run_sync
from cogeval.scoring.judge import (
    JudgeConfig,
    JudgeError,
    JudgeUsage,
    json_candidates,
    prompt_text,
    self_preference_message,
)
from cogeval.stats import Interval, cohen_kappa, mcnemars_test
from cogeval.stats.result import StatResult

__all__ = [
    "FORMAT",
    "PAIRWISE_COLUMNS",
    "Agreement",
    "Comparator",
    "Flips",
    "HumanPairwise",
    "PairTask",
    "PairwiseJudge",
    "PairwiseResult",
    "Preference",
    "Verdict",
    "WinRate",
    "arun_pairwise",
    "human_pairwise",
    "judge_tasks",
    "load_pairwise",
    "pairwise_judge",
    "parse_preference",
    "run_pairwise",
    "task_id",
    "warn_self_preference",
]

FORMAT = "cogeval.pairwise"
VERSION = 1
WIN_RATE_Z = 1.96
"""z of the Wilson interval of a win rate (95%)."""
CHOICES = ("1", "2", "tie")
NOT_LABELLED_YET = "not labelled yet"
"""The error of a human verdict still waiting in the labelling widget."""

TASK_ID, COMPARATOR = "task_id", "comparator"
OUTPUT_A, OUTPUT_B, VERDICT_AB, VERDICT_BA, FLIPPED, REASONING = (
    "output_a", "output_b", "verdict_ab", "verdict_ba", "flipped", "reasoning")
PAIRWISE_COLUMNS = (TASK_ID, col.CASE_KEY, col.INPUT, OUTPUT_A, OUTPUT_B, COMPARATOR, col.WINNER,
                    VERDICT_AB, VERDICT_BA, FLIPPED, REASONING, col.ERROR)
"""The columns of :meth:`PairwiseResult.to_frame`, in order."""
SUMMARY_COLUMNS = (COMPARATOR, col.N, "wins", "losses", "ties", "rate", col.CI_LOW, col.CI_HIGH, col.P_VALUE,
                   "missing", "flips")


def task_id(case_key: str, occurrence: int) -> str:
    """The id pairing the same task across two sources: the case key, then ``#k`` for its k-th repeat.

    >>> task_id("9f2c", 0), task_id("9f2c", 2)
    ('9f2c', '9f2c#2')
    """
    return case_key if occurrence == 0 else f"{case_key}#{occurrence}"


@dataclasses.dataclass(frozen=True)
class PairTask:
    """One task both variants answered: its ``case``, the two outputs, and each target's error (``None``: it answered)."""

    task_id: str
    case_key: str
    case: Case
    output_a: Any
    output_b: Any
    error_a: str | None = None
    error_b: str | None = None

    def shown(self, first: str) -> tuple[Any, Any]:
        """``(response_1, response_2)`` with variant ``first`` (``"a"`` or ``"b"``) shown first."""
        return (self.output_a, self.output_b) if first == "a" else (self.output_b, self.output_a)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A comparator's decision on one task, in variant terms.

    ``winner`` is ``"a"``, ``"b"``, ``"tie"`` or ``None`` (no verdict; ``error``
    says why). ``ab`` / ``ba`` are the verdicts given with A / B shown first
    (``None`` for an order not shown). ``details`` keep the rest: the order a
    person saw (``first``), a judge's usage, an unusable answer.
    """

    winner: str | None
    ab: str | None = None
    ba: str | None = None
    reasoning: str | None = None
    error: str | None = None
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def flipped(self) -> bool:
        """Both orders were judged and disagreed (a win against a tie counts)."""
        return self.ab is not None and self.ba is not None and self.ab != self.ba


def _position_verdict(choice: str, first: str) -> str:
    """A ``"1"``/``"2"``/``"tie"`` answer in variant terms, given which variant was shown first."""
    if choice == "tie":
        return "tie"
    return first if choice == "1" else ("b" if first == "a" else "a")


def one_order_verdict(choice: str, first: str) -> Verdict:
    """The verdict of a person (or label) who saw the pair once, variant ``first`` shown first."""
    winner = _position_verdict(choice, first)
    return Verdict(winner, ab=winner if first == "a" else None, ba=winner if first == "b" else None,
                   details={"first": first})


def seeded_orders(seed: Any, n: int) -> list[str]:
    """Which variant is shown first for each of ``n`` tasks: ``numpy.random.default_rng(seed).integers(0, 2, n)``, 0 → ``"a"``."""
    try:
        rng = np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise InputError(f"seed must be None or a non-negative integer; got {describe(seed)}") from None
    return ["a" if draw == 0 else "b" for draw in rng.integers(0, 2, size=n)]


def check_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InputError(f"key must be a non-empty string naming the comparator; got {describe(key)}")
    return key


# -- comparators -------------------------------------------------------------------------------


class Comparator:
    """Decides, for each task, whether B's output beats A's. Subclasses implement :meth:`decide`."""

    key: str

    def describe(self) -> dict[str, Any]:
        """How the comparator decides, as JSON data for the pairwise file."""
        raise NotImplementedError

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        """One verdict per task, in order."""
        raise NotImplementedError

    def after(self, result: PairwiseResult, on_done: Any = None) -> None:
        """Called once the result exists (the human comparator shows its widget here)."""


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
_LABELLED = re.compile(r"winner\W{0,3}\s*[:=]\s*\**\s*[\"']?((?:response[\s_#-]*)?[12]|tie)\b", re.I)


def read_choice(value: Any) -> str | None:
    """``"1"``, ``"2"`` or ``"tie"`` from an answer's winner value (``1``, ``"Response 2"``, ``"TIE"``...), else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    found = re.fullmatch(r"\s*(?:response[\s_#-]*)?([12])\s*|\s*(tie)\s*", value, re.I)
    return None if found is None else (found[1] or "tie")


def parse_preference(text: Any) -> Preference:
    """The winner in a pairwise judge's answer, or raise :class:`~cogeval.scoring.judge.JudgeError`.

    Tried in order: a JSON object with a ``winner`` key (the whole text, a
    fenced block, the outermost ``{...}``), then the last ``winner: X`` in prose.

    >>> parse_preference('{"winner": "2", "reasoning": "More precise."}')
    Preference(winner='2', reasoning='More precise.')
    >>> parse_preference("Both are fine. Winner: tie")
    Preference(winner='tie', reasoning='Both are fine. Winner: tie')
    """
    if not isinstance(text, str) or not text.strip():
        raise JudgeError(f"judge answer is empty: {describe(text)}")
    for candidate in json_candidates(text):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            keys = {str(k).lower(): k for k in value}
            if "winner" in keys:
                choice = read_choice(value[keys["winner"]])
                if choice is None:
                    raise JudgeError(f"judge answer's winner is not \"1\", \"2\" or \"tie\": {describe(value[keys['winner']])}")
                reasoning = value.get(keys.get("reasoning"), "")
                return Preference(choice, reasoning if isinstance(reasoning, str) else json.dumps(reasoning))
    matches = list(_LABELLED.finditer(text))
    if matches:
        return Preference(read_choice(matches[-1][1]) or "tie", text.strip())
    raise JudgeError(f"judge answer has no winner {_EXPECTED_ANSWER}: {describe(text)}")


class PairwiseJudge(Comparator):
    """An LLM judge that picks the better of two responses; see :func:`pairwise_judge`."""

    def __init__(self, judge: JudgeConfig, criterion: str, key: str, swap: bool = True) -> None:
        if not isinstance(judge, JudgeConfig):
            raise InputError(f"judge must be a JudgeConfig(model=...); got {describe(judge)}")
        if not isinstance(criterion, str) or not criterion.strip():
            raise InputError(f"criterion must be a non-empty string saying what makes a response better; got {describe(criterion)}")
        if not isinstance(swap, bool):
            raise InputError(f"swap must be True or False; got {describe(swap)}")
        self.judge, self.criterion, self.key, self.swap = judge, criterion, check_key(key), swap

    def __repr__(self) -> str:
        return f"PairwiseJudge(key={self.key!r}, criterion={self.criterion!r}, swap={self.swap}, judge={self.judge!r})"

    def describe(self) -> dict[str, Any]:
        return {"kind": "judge", "criterion": self.criterion, "swap": self.swap, "judge": self.judge.describe()}

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
        body = "\n".join(f"<{tag}>\n{prompt_text(value)}\n</{tag}>" for tag, value in sections.items())
        prompt = (
            "Compare the two responses below.\n"
            f"Criterion: {self.criterion}\n"
            "The input is what the application was asked, the context the documents it was given, the expected "
            "answer a reference (N/A when there is none).\n\n"
            f"{body}\n\n"
            'Reply with JSON only: {"reasoning": "<one or two sentences>", "winner": "1", "2" or "tie"}'
        )
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        limit = asyncio.Semaphore(concurrency)

        async def one(task: PairTask) -> Verdict:
            async with limit:
                return await self._verdict(task)

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
        return {"verdict": _position_verdict(choice, first), "reasoning": reasoning}


def _usable(answer: str) -> bool:
    try:
        parse_preference(answer)
    except JudgeError:
        return False
    return True


def pairwise_judge(judge: JudgeConfig, criterion: str, key: str, swap: bool = True) -> PairwiseJudge:
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
    a tie.

    >>> pairwise_judge(JudgeConfig("gpt-4o-mini", api_key="k", cache=False), "Which answer is more helpful?", "helpful")
    PairwiseJudge(key='helpful', criterion='Which answer is more helpful?', swap=True, judge=JudgeConfig(model='gpt-4o-mini', temperature=0.0, samples=1))
    """
    return PairwiseJudge(judge, criterion, key, swap)


class HumanPairwise(Comparator):
    """A person picks the better response, blinded; see :func:`human_pairwise`."""

    def __init__(self, key: str, ask: Any = None, seed: int | None = None) -> None:
        if not (ask is None or ask in ("terminal", "widget") or callable(ask)):
            raise InputError(f"ask must be None, 'terminal', 'widget' or a function (case, response_1, response_2) "
                             f"returning '1', '2' or 'tie'; got {describe(ask)}")
        seeded_orders(seed, 0)  # a bad seed fails now, not after the targets ran
        self.key, self.ask, self.seed = check_key(key), ask, seed
        self.widget: Any = None
        """The labelling widget last shown (in Jupyter), else ``None``."""

    def __repr__(self) -> str:
        return f"HumanPairwise(key={self.key!r}, seed={self.seed!r})"

    def describe(self) -> dict[str, Any]:
        return {"kind": "human", "seed": self.seed}

    def _mode(self) -> str:
        if self.ask is None:
            from cogeval.present.labelling import in_notebook

            return "widget" if in_notebook() else "terminal"
        return self.ask if isinstance(self.ask, str) else "function"

    async def decide(self, tasks: Sequence[PairTask], concurrency: int) -> list[Verdict]:
        firsts = seeded_orders(self.seed, len(tasks))
        mode = self._mode()
        if mode == "widget":  # labelled after the result is returned; see after()
            return [Verdict(None, error=NOT_LABELLED_YET, details={"first": first}) for first in firsts]
        if mode == "terminal":
            from cogeval.present.labelling import TerminalAsk

            ask = TerminalAsk(len(tasks), title=self.key)
        else:
            ask = self.ask
        verdicts = []
        for task, first in zip(tasks, firsts):
            answer = ask(task.case, *task.shown(first))
            if inspect.isawaitable(answer):
                answer = await answer
            choice = read_choice(answer)
            if choice is None:
                raise InputError(f"human_pairwise {self.key!r}: ask returned {describe(answer)} for task "
                                 f"{task.task_id!r}; expected '1', '2' or 'tie'")
            verdicts.append(one_order_verdict(choice, first))
        return verdicts

    def after(self, result: PairwiseResult, on_done: Any = None) -> None:
        """Show the labelling widget for the verdicts still to give; each click fills one in ``result``."""
        verdicts = result.verdicts.get(self.key)
        pending = [i for i, v in enumerate(verdicts or []) if v.winner is None and v.error == NOT_LABELLED_YET]
        if not pending:
            return
        from cogeval.present.labelling import LabellingWidget

        def on_label(index: int, choice: str) -> None:
            position = pending[index]
            verdicts[position] = one_order_verdict(choice, verdicts[position].details["first"])
            if on_done is not None and all(verdicts[i].error != NOT_LABELLED_YET for i in pending):
                on_done()

        items = [(result.tasks[i].case, *result.tasks[i].shown(verdicts[i].details["first"])) for i in pending]
        self.widget = LabellingWidget(items, on_label, title=f"{self.key}: which response is better?")
        from IPython.display import display

        display(self.widget)


def human_pairwise(key: str, ask: Any = None, seed: int | None = None) -> HumanPairwise:
    """A person compares each pair, blinded: they see the case and "Response 1" and "Response 2", never the variants.

    Which variant is shown first is drawn per case from ``seed``
    (``numpy.random.default_rng(seed).integers(0, 2)`` per case, in order: 0
    shows A first); the order shown is kept in each verdict.

    - ``ask(case, response_1, response_2)``, sync or async, returns ``"1"``,
      ``"2"`` or ``"tie"`` (``1`` and ``2`` as ints too); anything else raises
      an error naming the task.
    - ``ask=None``: in Jupyter, a labelling widget (the two responses side by
      side, buttons 1 / 2 / tie, progress) is shown below the cell and the
      result is returned at once: each click fills in a verdict, and cases not
      yet labelled have no verdict (error ``"not labelled yet"``). Elsewhere the
      terminal asks, case by case, and asks again after an answer it cannot read.
      ``ask="widget"`` or ``ask="terminal"`` picks one.

    >>> human_pairwise("preferred", seed=7)
    HumanPairwise(key='preferred', seed=7)
    """
    return HumanPairwise(key, ask, seed)


def check_comparators(comparators: Any) -> list[Comparator]:
    """A list of comparators with distinct keys (a single comparator is accepted)."""
    if isinstance(comparators, Comparator):
        comparators = [comparators]
    if isinstance(comparators, (str, bytes)) or not isinstance(comparators, Sequence) or not comparators:
        raise InputError("comparators must be a non-empty list of comparators (pairwise_judge(...), "
                         f"human_pairwise(...), human_labels(...)); got {describe(comparators)}")
    seen: set[str] = set()
    for comparator in comparators:
        if not isinstance(comparator, Comparator):
            raise InputError("comparators must hold pairwise_judge(...), human_pairwise(...) or human_labels(...); "
                             f"got {describe(comparator)}")
        if comparator.key in seen:
            raise InputError(f"two comparators have the key {comparator.key!r}; give each its own key")
        seen.add(comparator.key)
    return list(comparators)


def check_names(names: Any) -> tuple[str, str]:
    ok = (isinstance(names, (tuple, list)) and len(names) == 2 and all(isinstance(n, str) and n.strip() for n in names)
          and names[0] != names[1])
    if not ok:
        raise InputError(f"names must be two different non-empty strings (A's, then B's); got {describe(names)}")
    return names[0], names[1]


# -- results -----------------------------------------------------------------------------------


def _one_line(text: Any, limit: int = 200) -> str:
    """``text`` on one line, cut at ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _wilson(successes: float, n: int, z: float = WIN_RATE_Z) -> Interval:
    """The Wilson score interval of ``successes / n`` for a real ``successes`` in [0, n] (ties count half)."""
    z2 = z * z
    centre = (successes + z2 / 2) / (n + z2)
    half = z * math.sqrt(successes * (n - successes) / n + z2 / 4) / (n + z2)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high)


@dataclasses.dataclass(frozen=True)
class WinRate(StatResult):
    """B's win rate against A. ``to_frame()`` columns: ``rate``, ``ci_low``, ``ci_high``, ``wins``, ``losses``,
    ``ties``, ``n``, ``p_value``, ``missing``."""

    rate: float
    """(wins + ties / 2) / n: B's share, a tie counting half; NaN when n = 0."""
    ci: Interval | None
    """Wilson interval (z = 1.96) of ``rate`` with ``n`` cases, the formula taken with the half-integer count
    wins + ties / 2; ``None`` when n = 0 (no interval)."""
    wins: int
    """Cases B won."""
    losses: int
    """Cases A won."""
    ties: int
    """Cases judged a tie (for a swapped judge: the orders disagreed or both said tie)."""
    n: int
    """wins + losses + ties: the cases with a verdict."""
    p_value: float
    """Exact two-sided sign test of wins against losses, ties left out (R's ``binom.test(wins, wins + losses)``);
    1 when there are none."""
    missing: int = 0
    """Cases with no verdict (a failed judge call, an unusable answer, a missing label); not in n."""

    def to_dict(self) -> dict[str, Any]:
        low, high = self.ci if self.ci is not None else (math.nan, math.nan)
        row = dataclasses.asdict(self)
        del row["ci"]
        return {"rate": row.pop("rate"), col.CI_LOW: low, col.CI_HIGH: high, **row}


@dataclasses.dataclass(frozen=True)
class Flips(StatResult):
    """Position bias of a judge shown each pair in both orders.

    ``to_frame()`` columns: ``n``, ``flips``, ``rate``, ``toward_first``, ``toward_second``, ``p_value``.
    """

    n: int
    """Cases judged in both orders."""
    flips: int
    """Cases whose two orders disagreed (a win against a tie counts; a consistent tie does not)."""
    rate: float
    """flips / n; NaN when n = 0."""
    toward_first: int
    """Flips that favoured the response shown first: it was picked more often than the one shown second
    (counting the two answers; a flip is never even)."""
    toward_second: int
    """Flips that favoured the response shown second."""
    p_value: float
    """Exact two-sided binomial test of ``toward_first`` against ``toward_second`` at 1/2 (no position bias);
    1 when there are no flips."""
    task_ids: tuple[str, ...] = ()
    """The flipped tasks (not a ``to_frame`` column)."""

    def to_dict(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        del row["task_ids"]
        return row


@dataclasses.dataclass(frozen=True)
class Agreement(StatResult):
    """How often two comparators gave the same verdict. ``to_frame()`` columns: ``rate``, ``cohen_kappa``, ``n``."""

    rate: float
    """Share of cases both judged with the same verdict (``a``, ``b`` or ``tie``); NaN when n = 0."""
    cohen_kappa: float
    """Unweighted Cohen's kappa over the three verdicts; NaN when n = 0 or agreement by chance is 1."""
    n: int
    """Cases both comparators gave a verdict."""


@dataclasses.dataclass(frozen=True)
class PairwiseResult:
    """Verdicts of one or more comparators on the tasks variants A and B both answered.

    ``tasks`` are the :class:`PairTask` s in order; ``verdicts`` maps each
    comparator's key to one :class:`Verdict` per task; ``comparators`` maps it
    to how the comparator decides. Rates are B's: above 0.5, B is preferred.
    ``pairs(key)`` is the input of :func:`~cogeval.bradley_terry`. Save it with
    ``save(folder)`` (a ``<id>.pairwise.json`` file, which a
    :class:`~cogeval.RunStore` in the same folder passes over) and read it back
    with :func:`load_pairwise`.
    """

    id: str
    created_at: str
    names: tuple[str, str]
    tasks: tuple[PairTask, ...]
    verdicts: Mapping[str, list[Verdict]]
    comparators: Mapping[str, Mapping[str, Any]]
    path: pathlib.Path | None = dataclasses.field(default=None, compare=False)
    """Where the result was last saved, or ``None``."""

    @property
    def keys(self) -> list[str]:
        """The comparators' keys, in order."""
        return list(self.verdicts)

    @property
    def warnings(self) -> list[str]:
        """One sentence per comparator that decided no pair (n = 0: its rate and interval are undefined), saying
        why: ``"no pair was decided by 'quality' (4 of 4 tasks without a verdict: 4 judge errors, first: ...)"``."""
        return [text for text in map(self._undecided, self.verdicts) if text is not None]

    def _undecided(self, key: str) -> str | None:
        """Why comparator ``key`` has no verdict on any task, or ``None`` when it decided at least one."""
        verdicts = self.verdicts[key]
        if any(v.winner is not None for v in verdicts):
            return None
        if not verdicts:
            return f"no pair was decided by {key!r}: there were no tasks"
        kind = "judge errors" if self.comparators.get(key, {}).get("kind") == "judge" else "comparator errors"
        counts: Counter[str] = Counter()
        for task, verdict in zip(self.tasks, verdicts):
            if task.error_a is not None and task.error_b is not None:
                counts["where both variants failed"] += 1
            elif verdict.error == NOT_LABELLED_YET:
                counts[NOT_LABELLED_YET] += 1
            else:
                counts[kind] += 1
        parts = ", ".join(f"{count} {reason}" for reason, count in counts.items())
        first = next((v.error for v in verdicts if v.error is not None and v.error != NOT_LABELLED_YET), None)
        first_text = "" if first is None else ", first: " + _one_line(first)
        return (f"no pair was decided by {key!r} ({len(verdicts)} of {len(self.tasks)} tasks without a verdict: "
                f"{parts}{first_text})")

    def __repr__(self) -> str:
        a, b = self.names
        lines = [f"PairwiseResult {self.id}: {b} (B) vs {a} (A), {len(self.tasks)} tasks"]
        for key in self.verdicts:
            undecided = self._undecided(key)
            if undecided is not None:
                lines.append(f"  {undecided}")
                continue
            win = self.win_rate(key)
            low, high = win.ci if win.ci is not None else (math.nan, math.nan)
            lines.append(f"  {key}: B's rate {win.rate:.3g} [{low:.3g}, {high:.3g}], n = {win.n} ({win.wins} "
                         f"wins, {win.losses} losses, {win.ties} ties), p = {win.p_value:.2g}, "
                         f"{win.missing} without a verdict")
        return "\n".join(lines)

    def _key(self, key: str | None) -> str:
        if key is None and len(self.verdicts) == 1:
            return self.keys[0]
        if key in self.verdicts:
            return key  # type: ignore[return-value]
        listed = ", ".join(repr(k) for k in self.verdicts)
        if key is None:
            raise InputError(f"this result has several comparators ({listed}); name one")
        raise InputError(f"no comparator has the key {describe(key)}; the keys are {listed}")

    def win_rate(self, key: str | None = None) -> WinRate:
        """B's win rate by comparator ``key`` (may be left out when there is one comparator); see :class:`WinRate`."""
        winners = [v.winner for v in self.verdicts[self._key(key)]]
        wins, losses, ties = (winners.count(w) for w in ("b", "a", "tie"))
        n = wins + losses + ties
        if n == 0:
            rate, ci = math.nan, None
        else:
            rate, ci = (wins + 0.5 * ties) / n, _wilson(wins + 0.5 * ties, n)
        p_value = mcnemars_test(losses, wins, exact=True).p_value  # the exact sign test, binom.test(wins, wins + losses)
        return WinRate(rate, ci, wins, losses, ties, n, p_value, missing=len(winners) - n)

    def flips(self, key: str | None = None) -> Flips:
        """Cases where the two presentation orders disagreed, and a binomial test of position bias; see :class:`Flips`.

        Only for a comparator that saw each pair in both orders (``pairwise_judge(..., swap=True)``).
        """
        key = self._key(key)
        if not self.comparators[key].get("swap"):
            raise InputError(f"comparator {key!r} saw each pair in one order only; flips need both orders: "
                             "pairwise_judge(..., swap=True)")
        both = [(task, v) for task, v in zip(self.tasks, self.verdicts[key]) if v.ab is not None and v.ba is not None]
        flipped = [(task, v) for task, v in both if v.flipped]
        # Positions picked: A/B order "a" is position 1, B/A order "b" is position 1.
        first = sum(1 for _, v in flipped if (v.ab == "a") + (v.ba == "b") > (v.ab == "b") + (v.ba == "a"))
        p_value = mcnemars_test(first, len(flipped) - first, exact=True).p_value
        return Flips(len(both), len(flipped), len(flipped) / len(both) if both else math.nan, first,
                     len(flipped) - first, p_value, tuple(task.task_id for task, _ in flipped))

    def agreement(self, key_x: str, key_y: str) -> Agreement:
        """How often comparators ``key_x`` and ``key_y`` agree, over the cases both gave a verdict."""
        x, y = self.verdicts[self._key(key_x)], self.verdicts[self._key(key_y)]
        pairs = [(a.winner, b.winner) for a, b in zip(x, y) if a.winner is not None and b.winner is not None]
        if not pairs:
            return Agreement(math.nan, math.nan, 0)
        rate = sum(a == b for a, b in pairs) / len(pairs)
        return Agreement(rate, cohen_kappa(*zip(*pairs)), len(pairs))

    def pairs(self, key: str | None = None) -> pd.DataFrame:
        """One row per case with a verdict: ``a``, ``b`` (the variants' names) and ``winner``, as
        :func:`~cogeval.bradley_terry` takes them; concatenate the pairs of every pair of variants to rank N."""
        rows = [(*self.names, v.winner) for v in self.verdicts[self._key(key)] if v.winner is not None]
        return pd.DataFrame(rows, columns=["a", "b", col.WINNER], dtype=object)

    def summary(self) -> pd.DataFrame:
        """One row per comparator: ``comparator``, ``n``, ``wins``, ``losses``, ``ties``, ``rate``, ``ci_low``,
        ``ci_high``, ``p_value``, ``missing``, ``flips`` (NaN for a comparator that saw one order)."""
        rows = []
        for key in self.verdicts:
            win = self.win_rate(key).to_dict()
            flips = self.flips(key).flips if self.comparators[key].get("swap") else math.nan
            rows.append({COMPARATOR: key, **win, "flips": flips})
        return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        """One row per task × comparator with the :data:`PAIRWISE_COLUMNS`; ``winner`` is ``a``, ``b``, ``tie``
        or ``None`` (no verdict: ``error`` says why)."""
        rows = [
            (t.task_id, t.case_key, t.case.input, t.output_a, t.output_b, key, v.winner, v.ab, v.ba, v.flipped,
             v.reasoning, v.error)
            for key, verdicts in self.verdicts.items()
            for t, v in zip(self.tasks, verdicts)
        ]
        return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS), dtype=object).astype({FLIPPED: bool})

    def to_dict(self) -> dict[str, Any]:
        """The pairwise file's content (JSON data)."""
        return jsonable({
            "format": FORMAT, "version": VERSION, "id": self.id, "created_at": self.created_at,
            "names": list(self.names), "comparators": dict(self.comparators),
            "tasks": [{"task_id": t.task_id, "case_key": t.case_key, "case": t.case.to_dict(), "output_a": t.output_a,
                       "output_b": t.output_b, "error_a": t.error_a, "error_b": t.error_b} for t in self.tasks],
            "verdicts": {key: [dataclasses.asdict(v) for v in verdicts] for key, verdicts in self.verdicts.items()},
        })

    def save(self, target: RunStore | str | os.PathLike[str]) -> pathlib.Path:
        """Write ``<id>.pairwise.json`` into a :class:`~cogeval.RunStore` or folder (or to a file path ending in
        ``.json``), atomically; returns the path."""
        folder = target.path if isinstance(target, RunStore) else target
        if not isinstance(folder, (str, os.PathLike)):
            raise InputError(f"save needs a RunStore, a folder or a file path; got {describe(target)}")
        path = pathlib.Path(folder)
        if path.suffix != ".json" or path.is_dir():
            path = path / f"{check_run_id(self.id)}.pairwise.json"
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        write_text_atomic(path, text)
        object.__setattr__(self, "path", path)
        return path

    @safe_html
    def _repr_html_(self) -> str:
        a, b = self.names
        summary = self.summary()
        caption = f"PairwiseResult: {b} (B) vs {a} (A) · {len(self.tasks)} tasks · rate = B's share, a tie half"
        rows = summary.to_dict("records")
        for row in rows:  # a comparator that decided nothing has no rate, interval or test to show
            if row[col.N] == 0:
                row[col.P_VALUE] = None
        table = html_table(rows, list(summary.columns), caption=caption)
        notes = "".join(f"<li>{escape(text)}</li>" for text in self.warnings)
        notes = f'<div class="cogeval"><ul>{notes}</ul></div>' if notes else ""
        cases = self.to_frame()[[TASK_ID, col.INPUT, COMPARATOR, col.WINNER, FLIPPED, col.ERROR]]
        verdicts = html_table(cases.to_dict("records"), list(cases.columns), caption="Verdicts", max_rows=10)
        return table + notes + verdicts


def load_pairwise(path: str | os.PathLike[str]) -> PairwiseResult:
    """Read a pairwise file written by :meth:`PairwiseResult.save`; errors name the file and what is wrong."""
    path = pathlib.Path(path)
    where = f"pairwise file '{path}'"
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError as error:
        raise RunFileError(f"{where} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = describe(data.get("format")) if isinstance(data, dict) else "no object"
        raise RunFileError(f"{where} has format {found}; expected {FORMAT!r}")
    if data.get("version") != VERSION:
        raise RunFileError(f"{where} has version {describe(data.get('version'))}; this cogeval reads version {VERSION}")
    try:
        tasks = tuple(PairTask(t["task_id"], t["case_key"], Case.from_dict(t["case"]), t["output_a"], t["output_b"],
                               t.get("error_a"), t.get("error_b")) for t in data["tasks"])
        verdicts = {key: [Verdict(**v) for v in items] for key, items in data["verdicts"].items()}
        result = PairwiseResult(data["id"], data["created_at"], check_names(data["names"]), tasks, verdicts,
                                data["comparators"], path=path)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise RunFileError(f"{where} is invalid: {type(error).__name__}: {error}") from None
    for key, items in verdicts.items():
        if len(items) != len(tasks) or key not in result.comparators:
            raise RunFileError(f"{where} is invalid: comparator {key!r} needs a description and one verdict per task")
    return result


# -- running -----------------------------------------------------------------------------------


def _failure_verdict(task: PairTask) -> Verdict:
    """The rule for a task a target failed on: the other variant wins; no verdict when both failed."""
    if task.error_a is not None and task.error_b is not None:
        return Verdict(None, error=f"both variants failed: a: {task.error_a}; b: {task.error_b}")
    loser, error = ("a", task.error_a) if task.error_a is not None else ("b", task.error_b)
    return Verdict("b" if loser == "a" else "a", reasoning=f"variant {loser} failed: {error}")


async def judge_tasks(tasks: Sequence[PairTask], comparators: Sequence[Comparator], names: tuple[str, str],
                      concurrency: int = 5) -> PairwiseResult:
    """Ask every comparator, in turn, about the tasks both variants answered; the shared core of
    :func:`run_pairwise` and :func:`~cogeval.evaluate_pairwise`."""
    started = utc_now()
    judged = [i for i, t in enumerate(tasks) if t.error_a is None and t.error_b is None]
    verdicts: dict[str, list[Verdict]] = {}
    for comparator in comparators:
        merged = [None if t.error_a is None and t.error_b is None else _failure_verdict(t) for t in tasks]
        decided = await comparator.decide([tasks[i] for i in judged], concurrency)
        for i, verdict in zip(judged, decided):
            merged[i] = verdict
        verdicts[comparator.key] = merged  # type: ignore[assignment]
    return PairwiseResult(new_run_id(started), iso_utc(started), names, tuple(tasks), verdicts,
                          {c.key: c.describe() for c in comparators})


def finish(result: PairwiseResult, comparators: Sequence[Comparator], store: Any) -> PairwiseResult:
    """Save the result to ``store`` (if any) and let the comparators follow up (the labelling widget)."""
    if store is not None:
        result.save(store)
    for comparator in comparators:
        comparator.after(result, on_done=None if store is None else (lambda: result.save(store)))
    return result


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


def check_store(store: Any) -> Any:
    if store is not None and not isinstance(store, (RunStore, str, os.PathLike)):
        raise InputError(f"store must be a RunStore, a folder path or None; got {describe(store)}")
    return store


def run_pairwise(dataset: Any, variant_a: Any, variant_b: Any, comparators: Any,
                 store: RunStore | str | os.PathLike[str] | None = None, *, names: tuple[str, str] = ("a", "b"),
                 concurrency: int = 5, timeout: float = 30.0, retries: int = 0) -> PairwiseResult:
    """Run both targets on every case, then let each comparator decide, case by case, whether B beat A.

    ``variant_a`` and ``variant_b`` are targets (as for :class:`~cogeval.EvalSuite`),
    run back to back on each case, in an order alternating per case (so load
    that changes over time hits both alike), with up to ``concurrency`` cases
    in flight, ``timeout`` seconds and ``retries`` per attempt. ``comparators`` are
    :func:`pairwise_judge` and :func:`human_pairwise` comparators with distinct
    keys. ``names`` name A and B in :meth:`PairwiseResult.pairs`. With ``store``
    (a :class:`~cogeval.RunStore` or a folder) the result is saved there (and
    saved again when a labelling widget is done). Works inside Jupyter's running
    event loop; ``await arun_pairwise(...)`` is the async form.

    To rank N variants, run every pair and give the pairs to
    :func:`~cogeval.bradley_terry` (see docs/pairwise.md).
    """
    comparators, store = check_comparators(comparators), check_store(store)
    warn_self_preference(comparators, {name: v for name, v in zip(check_names(names), (variant_a, variant_b))})
    result = run_sync(_arun(dataset, variant_a, variant_b, comparators, names, concurrency, timeout, retries))
    return finish(result, comparators, store)


async def arun_pairwise(dataset: Any, variant_a: Any, variant_b: Any, comparators: Any,
                        store: RunStore | str | os.PathLike[str] | None = None, *,
                        names: tuple[str, str] = ("a", "b"), concurrency: int = 5, timeout: float = 30.0,
                        retries: int = 0) -> PairwiseResult:
    """Async form of :func:`run_pairwise`."""
    comparators, store = check_comparators(comparators), check_store(store)
    warn_self_preference(comparators, {name: v for name, v in zip(check_names(names), (variant_a, variant_b))})
    result = await _arun(dataset, variant_a, variant_b, comparators, names, concurrency, timeout, retries)
    return finish(result, comparators, store)


async def _arun(dataset: Any, variant_a: Any, variant_b: Any, comparators: list[Comparator], names: Any,
                concurrency: int, timeout: float, retries: int) -> PairwiseResult:
    from cogeval.evaluate.suite import as_dataset

    names = check_names(names)
    check_positive_int("concurrency", concurrency)
    check_positive_number("timeout", timeout)
    cases = list(as_dataset(dataset))
    options = {"concurrency": concurrency, "timeout": timeout, "retries": retries}
    # back to back per case, in an order alternating per case, so load over time hits both alike
    outcomes_a, outcomes_b = await run_interleaved(cases, [variant_a, variant_b], **options)
    tasks = [PairTask(task_id(a.case_key, a.occurrence), a.case_key, a.case, a.output, b.output, a.error, b.error)
             for a, b in zip(outcomes_a, outcomes_b)]
    return await judge_tasks(tasks, comparators, names, concurrency)
