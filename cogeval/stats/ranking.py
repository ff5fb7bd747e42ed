"""Ranking: Bradley–Terry strengths from pairwise outcomes, shared ("min") ranks and rank intervals.

>>> min_rank([0.9, 0.9, 0.9, 0.4])
array([1, 1, 1, 4])
>>> rank_intervals([0.8, 0.5, 0.1], [0.95, 0.85, 0.3])  # (rank_low, rank_high) per variant
(array([1., 1., 3.]), array([2., 2., 3.]))
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from cogeval._check import as_float_array, check_positive_int, check_same_length, check_seed, describe
from cogeval.errors import InputError

PRIOR_SD = 10.0
"""Standard deviation of the weak normal prior on each strength, used only when the MLE does not exist."""

_OUTCOMES = ("a", "b", "tie")
"""The values of the ``winner`` column of :func:`bradley_terry`'s ``pairs``."""

_SIGNIFICANT_DIGITS = 12
"""Values equal to this many significant digits tie (float noise must not break a tie)."""


def _rounded(values: np.ndarray) -> np.ndarray:
    return np.array([float(f"{v:.{_SIGNIFICANT_DIGITS}g}") for v in values])


def min_rank(values: Any, *, higher_is_better: bool = True) -> np.ndarray:
    """Rank 1 for the best value; ties share the best rank of their group (1, 1, 1, 4).

    Rank = 1 + the number of strictly better values (pandas ``rank(method="min")``).
    Values equal to 12 significant digits tie. NaN is not allowed.

    >>> min_rank([2.0, 5.0, 2.0], higher_is_better=False)
    array([1, 3, 1])
    """
    x = _rounded(as_float_array("values", values))
    better = x[None, :] > x[:, None] if higher_is_better else x[None, :] < x[:, None]
    ranks: np.ndarray = 1 + better.sum(axis=1)
    return ranks


def rank_intervals(low: Any, high: Any, *, higher_is_better: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The best and worst rank each item could hold given its interval: ``(rank_low, rank_high)``.

    For higher-is-better values, item *i* with interval ``[low_i, high_i]``:

    - ``rank_low = 1 +`` the number of items whose interval lies entirely above
      *i*'s (``low_j > high_i``): those are better whatever the true values;
    - ``rank_high =`` the number of items whose interval is not entirely below
      *i*'s (``high_j >= low_i``, *i* included): any of those may be better.

    Lower is better mirrors it. Touching intervals overlap. Items with a NaN
    limit get NaN ranks and are left out of the others' counts (rank them apart).
    Returns two float arrays (NaN is a float).

    >>> rank_intervals([0.1, 0.5], [0.3, 0.9], higher_is_better=False)
    (array([1., 2.]), array([1., 2.]))
    """
    lo = as_float_array("low", low, allow_nan=True)
    hi = as_float_array("high", high, allow_nan=True)
    check_same_length("low", lo, "high", hi)
    known = ~(np.isnan(lo) | np.isnan(hi))
    if not higher_is_better:  # mirror: a lower interval is a better one
        lo, hi = -hi, -lo
    above = (lo[None, :] > hi[:, None]) & known[None, :]  # above[i, j]: j entirely above i
    below = (hi[None, :] < lo[:, None]) & known[None, :]  # below[i, j]: j entirely below i
    best = 1 + above.sum(axis=1)
    worst = known.sum() - below.sum(axis=1)
    return np.where(known, best, np.nan), np.where(known, worst, np.nan)


# --- Bradley–Terry ----------------------------------------------------------------------------


def _check_pairs(pairs: Any) -> pd.DataFrame:
    if not isinstance(pairs, pd.DataFrame):
        raise InputError(f"pairs must be a pandas DataFrame with columns a, b and winner; got {describe(pairs)}")
    missing = [c for c in ("a", "b", "winner") if c not in pairs.columns]
    if missing:
        raise InputError(
            f"pairs is missing the column(s) {', '.join(missing)}; it needs a, b and winner "
            f"(it has: {', '.join(map(str, pairs.columns)) or 'none'})"
        )
    if len(pairs) == 0:
        raise InputError("pairs must hold at least one comparison; got none")
    for column in ("a", "b"):
        absent = pairs[column].isna().to_numpy()
        if absent.any():
            raise InputError(f"pairs[{column!r}] must name a variant in every row; row {pairs.index[absent][0]!r} has none")
    same = (pairs["a"] == pairs["b"]).to_numpy()
    if same.any():
        row = pairs.index[same][0]
        raise InputError(f"pairs row {row!r} compares {pairs.at[row, 'a']!r} with itself; a and b must be different variants")
    bad = ~pairs["winner"].isin(_OUTCOMES).to_numpy()
    if bad.any():
        row = pairs.index[bad][0]
        raise InputError(f"pairs['winner'] must be 'a', 'b' or 'tie'; got {describe(pairs.at[row, 'winner'])} in row {row!r}")
    return pairs


def _components(edges: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components of the directed graph ``edges[i, j]`` (i → j), via its transitive closure."""
    reach = edges | np.eye(len(edges), dtype=bool)
    for k in range(len(edges)):
        reach |= reach[:, [k]] & reach[[k], :]
    mutual = reach & reach.T
    seen: set[int] = set()
    found = []
    for i in range(len(edges)):
        if i not in seen:
            members = np.flatnonzero(mutual[i])
            seen.update(members.tolist())
            found.append(members)
    return found


def _log_likelihood(s: np.ndarray, wins: np.ndarray, ridge: float) -> float:
    # wins[i, j] * log P(i beats j), with log P = -log(1 + exp(s_j - s_i)) computed stably.
    return float(-np.sum(wins * np.logaddexp(0.0, s[None, :] - s[:, None])) - ridge / 2 * s @ s)


def _fit(wins: np.ndarray, ridge: float, start: np.ndarray | None = None) -> np.ndarray:
    """Newton's method with step halving on the (penalised) log-likelihood; strengths centred to mean 0."""
    k = len(wins)
    games = wins + wins.T
    s = np.zeros(k) if start is None else start.copy()
    # Without a prior the likelihood is flat along (1, ..., 1); adding 11ᵀ to the information
    # matrix pins that direction (the gradient is orthogonal to it) without changing the step.
    pin = 0.0 if ridge else 1.0
    current = _log_likelihood(s, wins, ridge)
    for _ in range(200):
        p = 0.5 * (1.0 + np.tanh((s[:, None] - s[None, :]) / 2))  # P(i beats j), stable logistic
        gradient = (wins - games * p).sum(axis=1) - ridge * s
        weight = games * p * (1 - p)
        information = np.diag(weight.sum(axis=1) + ridge) - weight + pin
        step = np.linalg.solve(information, gradient)
        for _ in range(60):
            candidate = _log_likelihood(s + step, wins, ridge)
            if candidate >= current - 1e-12 * abs(current):
                break
            step /= 2
        s, current = s + step, candidate
        if np.max(np.abs(step)) < 1e-12:
            break
    centred: np.ndarray = s - s.mean()
    return centred


def _bounded(wins: np.ndarray) -> bool:
    """The MLE exists: every variant is reachable from every other by 'won or tied against' (Ford 1957)."""
    return len(_components(wins > 0)) == 1


def _unbounded_message(wins: np.ndarray, names: list[Any]) -> str:
    groups = _components(wins > 0)
    labels = []
    for members in groups:
        outside = np.setdiff1d(np.arange(len(names)), members)
        who = ", ".join(repr(names[i]) for i in members)
        if not wins[np.ix_(outside, members)].any():
            labels.append(f"{who} won every comparison with the other variants")
        elif not wins[np.ix_(members, outside)].any():
            labels.append(f"{who} lost every comparison with the other variants")
    return (
        f"bradley_terry: the maximum-likelihood strengths do not exist ({'; '.join(labels)}): they would be "
        f"infinite. The strengths use a weak normal prior (mean 0, sd {PRIOR_SD:g}) instead; read them as "
        "'much stronger / weaker than the data can measure', not as sizes"
    )


def _check_connected(games: np.ndarray, names: list[Any]) -> None:
    groups = _components(games > 0)
    if len(groups) > 1:
        listed = " | ".join(", ".join(repr(names[i]) for i in g) for g in groups)
        raise InputError(
            f"pairs must connect every variant: no comparison links these groups: {listed}. Their strengths "
            "would share no scale; compare at least one pair across the groups"
        )


def bradley_terry(pairs: pd.DataFrame, *, n_bootstrap: int = 1000, seed: Any = None) -> pd.DataFrame:
    """Bradley–Terry strengths of variants from pairwise outcomes, with bootstrap intervals and ranks.

    ``pairs`` has one row per comparison with columns ``a``, ``b`` (the two
    variants, any hashable labels) and ``winner``: ``"a"``, ``"b"`` or
    ``"tie"`` (a tie counts half a win each way). The model is
    ``P(i beats j) = 1 / (1 + exp(s_j - s_i))``; strengths ``s`` are the
    maximum-likelihood estimates on the natural-log (logit) scale, centred to
    mean 0 (as R's ``BradleyTerry2::BTm`` up to its reference category).

    Returns a DataFrame ``variant, strength, ci_low, ci_high, rank``, best
    first (ties share a rank: 1, 1, 3). ``ci_low``/``ci_high`` are the 2.5%
    and 97.5% percentiles of ``n_bootstrap`` refits on resampled pairs: each
    resample redraws, with replacement, as many comparisons of every matchup
    as it had (so every variant stays in), from a local
    ``numpy.random.default_rng(seed)``. ``n_bootstrap=0`` gives NaN intervals.

    - A comparison graph that does not connect every variant raises
      ``InputError`` naming the groups: they share no scale.
    - When the MLE does not exist (a variant, or a group, never lost or never
      won against the rest), strengths would be infinite: a weak normal prior
      (sd :data:`PRIOR_SD`) keeps them finite and a ``UserWarning`` names the
      variants. Bootstrap resamples use the same rule, silently.

    >>> pairs = pd.DataFrame({"a": ["x", "x", "y", "y", "z", "x"], "b": ["y", "z", "z", "x", "x", "y"],
    ...                       "winner": ["a", "a", "tie", "a", "b", "a"]})
    >>> bradley_terry(pairs, n_bootstrap=0).round(4)[["variant", "strength", "rank"]].values.tolist()
    [['x', 1.0362, 1], ['y', -0.0245, 2], ['z', -1.0117, 3]]
    """
    pairs = _check_pairs(pairs)
    n_bootstrap = check_positive_int("n_bootstrap", n_bootstrap, minimum=0)
    rng = np.random.default_rng(check_seed("seed", seed))
    names = pd.unique(pd.concat([pairs["a"], pairs["b"]], ignore_index=True).to_numpy()).tolist()
    index = {name: i for i, name in enumerate(names)}
    k = len(names)
    a = pairs["a"].map(index).to_numpy(dtype=int)
    b = pairs["b"].map(index).to_numpy(dtype=int)
    winner = pairs["winner"].to_numpy()

    # Outcome counts per unordered matchup (i < j): i wins, ties, j wins.
    low, high = np.minimum(a, b), np.maximum(a, b)
    first_won = np.where(a < b, winner == "a", winner == "b")
    tie = winner == "tie"
    counts = np.zeros((k, k, 3))
    np.add.at(counts, (low, high, 0), first_won & ~tie)
    np.add.at(counts, (low, high, 1), tie)
    np.add.at(counts, (low, high, 2), ~first_won & ~tie)

    def wins_of(c: np.ndarray) -> np.ndarray:
        upper = c[..., 0] + c[..., 1] / 2  # i over j, i < j
        lower = c[..., 2] + c[..., 1] / 2  # j over i
        return upper + lower.T

    wins = wins_of(counts)
    _check_connected(wins + wins.T, names)
    bounded = _bounded(wins)
    if not bounded:
        warnings.warn(_unbounded_message(wins, names), UserWarning, stacklevel=2)
    ridge = 0.0 if bounded else 1.0 / PRIOR_SD**2
    strength = _fit(wins, ridge)

    ci_low = ci_high = np.full(k, math.nan)
    if n_bootstrap:
        draws = np.zeros((n_bootstrap, k, k, 3))
        for i, j in zip(*np.nonzero(counts.sum(axis=2))):
            n = counts[i, j].sum()
            draws[:, i, j] = rng.multinomial(int(n), counts[i, j] / n, size=n_bootstrap)
        refits = np.empty((n_bootstrap, k))
        for r in range(n_bootstrap):
            w = wins_of(draws[r])
            refits[r] = _fit(w, 0.0 if _bounded(w) else 1.0 / PRIOR_SD**2, start=strength)
        ci_low, ci_high = np.quantile(refits, [0.025, 0.975], axis=0)

    frame = pd.DataFrame({
        "variant": pd.Series(names, dtype=object), "strength": strength,
        "ci_low": ci_low, "ci_high": ci_high, "rank": min_rank(strength),
    })
    return frame.sort_values(["rank"], kind="stable").reset_index(drop=True)
