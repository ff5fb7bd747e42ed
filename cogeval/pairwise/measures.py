"""What a list of verdicts says: B's win rate, a judge's position flips, two comparators' agreement.

Each is a frozen :class:`~cogeval.stats.result.StatResult` with a one-row
``to_frame()``, computed from the verdicts of one comparator (one per task):

>>> from cogeval.pairwise.verdict import Verdict
>>> win = win_rate_of([Verdict("b"), Verdict("a"), Verdict("tie"), Verdict("tie"), Verdict(None, error="x")])
>>> win.rate, win.n, win.missing
(0.5, 4, 1)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, ClassVar

from cogeval import _columns as col
from cogeval._html import key_value_table, safe_html
from cogeval._text import cut, one_line
from cogeval.pairwise.verdict import PairTask, Verdict
from cogeval.stats import Interval, cohen_kappa, mcnemars_test
from cogeval.stats.result import StatResult

_WIN_RATE_Z = 1.96
"""z of the Wilson interval of a win rate (95%)."""


def _wilson(successes: float, n: int, z: float = _WIN_RATE_Z) -> Interval:
    """The Wilson score interval of ``successes / n`` for a real ``successes`` in [0, n] (ties count half)."""
    z2 = z * z
    centre = (successes + z2 / 2) / (n + z2)
    half = z * math.sqrt(successes * (n - successes) / n + z2 / 4) / (n + z2)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high)


@dataclasses.dataclass(frozen=True)
class WinRate(StatResult):
    """B's win rate against A. ``to_frame()`` columns: ``test`` (``sign``), ``n``, ``statistic`` (wins),
    ``p_value``, ``rate``, ``ci_low``, ``ci_high``, ``wins``, ``losses``, ``ties``, ``missing``."""

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
    failure: str | None = dataclasses.field(default=None, compare=False)
    """Why no case has a verdict, when none has one for a reason other than a label still to give (every judge
    call failed, say): then ``repr`` and the display say ``FAILED`` and why; else ``None``. Not a ``to_frame`` column."""

    test: ClassVar[str] = "sign"

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.name != "failure")
        failed = "" if self.failure is None else f"FAILED: {cut(one_line(self.failure), 300)}, "
        return f"WinRate({failed}{fields})"

    @safe_html
    def _repr_html_(self) -> str:
        title = "WinRate" if self.failure is None else f"WinRate FAILED: {self.failure}"
        return key_value_table(title, self.to_dict())

    @property
    def statistic(self) -> int:
        """Wins, the statistic of the sign test (R's ``binom.test`` "number of successes")."""
        return self.wins

    def to_dict(self) -> dict[str, Any]:
        low, high = self.ci if self.ci is not None else (math.nan, math.nan)
        row = dataclasses.asdict(self)
        del row["ci"], row["failure"]
        return self.stacked({"rate": row.pop("rate"), col.CI_LOW: low, col.CI_HIGH: high, **row})


@dataclasses.dataclass(frozen=True)
class Flips(StatResult):
    """Position bias of a judge shown each pair in both orders.

    ``to_frame()`` columns: ``test`` (``binomial``), ``n``, ``statistic`` (toward_first), ``p_value``,
    ``flips``, ``rate``, ``toward_first``, ``toward_second``.
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

    test: ClassVar[str] = "binomial"

    @property
    def statistic(self) -> int:
        """Flips toward the first position, the statistic of the binomial test."""
        return self.toward_first

    def to_dict(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        del row["task_ids"]
        return self.stacked(row)


@dataclasses.dataclass(frozen=True)
class Agreement(StatResult):
    """How often two comparators gave the same verdict. ``to_frame()`` columns: ``rate``, ``cohen_kappa``, ``n``."""

    rate: float
    """Share of cases both judged with the same verdict (``a``, ``b`` or ``tie``); NaN when n = 0."""
    cohen_kappa: float
    """Unweighted Cohen's kappa over the three verdicts; NaN when n = 0 or agreement by chance is 1."""
    n: int
    """Cases both comparators gave a verdict."""


def win_rate_of(verdicts: Sequence[Verdict]) -> WinRate:
    """B's win rate over one comparator's verdicts; see :class:`WinRate`."""
    winners = [v.winner for v in verdicts]
    wins, losses, ties = (winners.count(w) for w in ("b", "a", "tie"))
    n = wins + losses + ties
    if n == 0:
        rate, ci = math.nan, None
    else:
        rate, ci = (wins + 0.5 * ties) / n, _wilson(wins + 0.5 * ties, n)
    p_value = mcnemars_test(losses, wins, exact=True).p_value  # the exact sign test, binom.test(wins, wins + losses)
    return WinRate(rate, ci, wins, losses, ties, n, p_value, missing=len(winners) - n)


def flips_of(tasks: Sequence[PairTask], verdicts: Sequence[Verdict]) -> Flips:
    """The flips of one comparator that saw each pair in both orders; see :class:`Flips`."""
    both = [(task, v) for task, v in zip(tasks, verdicts) if v.ab is not None and v.ba is not None]
    flipped = [(task, v) for task, v in both if v.flipped]
    # Positions picked: A/B order "a" is position 1, B/A order "b" is position 1.
    first = sum(1 for _, v in flipped if (v.ab == "a") + (v.ba == "b") > (v.ab == "b") + (v.ba == "a"))
    p_value = mcnemars_test(first, len(flipped) - first, exact=True).p_value
    return Flips(len(both), len(flipped), len(flipped) / len(both) if both else math.nan, first,
                 len(flipped) - first, p_value, tuple(task.task_id for task, _ in flipped))


def agreement_of(x: Sequence[Verdict], y: Sequence[Verdict]) -> Agreement:
    """How often two comparators' verdicts on the same tasks agree, over the tasks both decided."""
    pairs = [(a.winner, b.winner) for a, b in zip(x, y) if a.winner is not None and b.winner is not None]
    if not pairs:
        return Agreement(math.nan, math.nan, 0)
    rate = sum(a == b for a, b in pairs) / len(pairs)
    return Agreement(rate, cohen_kappa(*zip(*pairs)), len(pairs))
