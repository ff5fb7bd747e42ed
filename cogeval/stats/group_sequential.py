"""Group-sequential designs: look at the data a few planned times, stop early for an effect or for its absence.

A design fixes ``K`` looks at information fractions ``t_1 < ... < t_K = 1``
of a maximum sample size and a z bound at each: stop for **efficacy** when the
test statistic reaches the efficacy bound, for **futility** when it falls below
the futility bound, else go on. The bounds follow rpact's
``getDesignGroupSequential`` (Wassmer & Brannath 2016):

- efficacy: Lan–DeMets alpha spending, ``alpha(t)`` of the cumulative type-I
  error spent by information ``t``, computed **ignoring the futility bounds**
  (non-binding futility: ignoring a futility stop never inflates alpha);
- futility: beta spending, ``beta(t)`` of the type-II error spent by ``t`` under
  the planned effect, with the maximum information solved so that the last
  futility bound meets the last efficacy bound (and the power is met);
- the spending families (rpact's names): ``"obrien-fleming"`` (``asOF`` /
  ``bsOF``: ``2·sided·(1 - Φ(z(1 - alpha/(2·sided)) / √t))``, for beta
  ``2(1 - Φ(z(1 - beta/2) / √t))``), ``"pocock"`` (``asP`` / ``bsP``:
  ``alpha·log(1 + (e - 1)t)``) and ``("kim-demets", γ)`` (``asKD`` / ``bsKD``:
  ``alpha·t^γ``);
- two-sided designs (``sided=2``) reject for ``|z| >= efficacy`` and stop for
  futility when ``|z| < futility``, rpact's two-sided beta spending (a look
  whose one-sided futility bound would be negative gets none, and the beta spent
  is rescaled to the looks that have one: ``betaAdjustment = TRUE``); the power is
  that of the upper side (``twoSidedPower = FALSE``);
- looks that come at other fractions than planned get the spending functions'
  bounds at the fractions reached (:meth:`GroupSequentialDesign.bounds_at`).

The crossing probabilities are computed by the recursive numerical integration
of Armitage, McPherson & Rowe (1969), on the grid of Jennison & Turnbull (2000,
ch. 19): the density of the statistic on each look's continuation region,
integrated by Simpson's rule and carried to the next look through the normal
increment of the score. ``scipy`` is imported when a design is computed.

>>> d = group_sequential_design(3, spending="obrien-fleming")
>>> [round(float(b), 4) for b in d.efficacy]  # R: getDesignGroupSequential(kMax = 3, typeOfDesign = "asOF")$criticalValues
[3.7103, 2.5114, 1.993]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from cogeval._check import as_float_array, check_positive_int, describe, is_real
from cogeval._html import html_table, key_value_table, safe_html
from cogeval.errors import InputError
from cogeval.stats.result import StatResult

_Array = npt.NDArray[np.float64]
Spending = str | tuple[str, float]
"""A spending family: ``"obrien-fleming"``, ``"pocock"`` or ``("kim-demets", gamma)``."""

_FAMILIES = ("obrien-fleming", "pocock", "kim-demets")
_CAP = 8.0
"""The largest efficacy bound after the first look, as rpact's (a look that may spend less than P(Z >= 8) has it)."""
_TAIL = 8.0
"""The grid of a look is cut this many standard deviations from the statistic's mean there (P < 1e-15 beyond)."""
_STEP = 0.05
"""The grid's spacing on the z scale, at most (finer where looks are close: see :meth:`_Walk.advance`); the
values in the tests change by less than 3e-6 when it is halved twice."""
_TOLERANCE = 1e-12
"""Root-finding tolerance on the z and drift scales."""
COLUMNS = ["look", "information", "efficacy", "futility"]
"""``GroupSequentialDesign.to_frame()``: one row per look."""


@dataclasses.dataclass(frozen=True, eq=False)
class GroupSequentialDesign(StatResult):
    """A group-sequential design. ``to_frame()`` has one row per look: ``look`` (1, 2, ...), ``information``
    (the fraction of the maximum sample size), ``efficacy`` and ``futility`` (z bounds; see the fields)."""

    information: _Array
    """Information fractions of the looks, increasing to 1."""
    efficacy: _Array
    """Efficacy z bounds: reject when z >= efficacy (``|z|`` for ``sided=2``)."""
    futility: _Array
    """Futility z bounds: stop for no effect when z < futility (``|z|`` for ``sided=2``); NaN at a look without
    one. At the last look it is the efficacy bound: there every design stops, rejecting or not."""
    alpha: float
    """Type-I error: one-sided for ``sided=1``, the two sides together for ``sided=2``."""
    power: float
    """Power at the planned effect (of the upper side for ``sided=2``)."""
    sided: int
    """1 or 2."""
    spending: Spending
    """The alpha-spending family."""
    futility_spending: Spending | None
    """The beta-spending family; None without futility bounds."""
    drift: float
    """The expected z at the last look under the planned effect: ``√(inflation_factor)·(z(1 - alpha/sided) + z(power))``."""
    inflation_factor: float
    """Maximum sample size / the fixed-sample size with the same alpha and power (rpact's ``inflationFactor``)."""
    expected_fraction_h1: float
    """Expected sample size / the fixed-sample size under the planned effect (rpact's ``averageSampleNumber1``)."""
    expected_fraction_h0: float
    """Expected sample size / the fixed-sample size with no effect (rpact's ``averageSampleNumber0``), when every
    futility bound is obeyed."""
    beta_from: float = dataclasses.field(default=0.0, repr=False)
    """Two-sided: the information fraction of the first look with a futility bound (rpact's ``betaAdjustment``
    spends beta from the look before it, ``beta_base``); 0 one-sided."""
    beta_base: float = dataclasses.field(default=0.0, repr=False)
    """Two-sided: the information fraction beta is spent from (0 when from the start)."""
    beta_drift: float = dataclasses.field(default=math.nan, repr=False)
    """The drift at which the futility bounds spend beta (where the last meets the last efficacy bound; within
    1e-4 of ``drift``, which is solved for the power); NaN without futility bounds."""

    @property
    def looks(self) -> int:
        """The number of looks."""
        return len(self.information)

    def sample_sizes(self, fixed: int) -> list[int]:
        """Cumulative cases at each look for a fixed-sample plan of ``fixed`` cases: the maximum
        ``ceil(fixed · inflation_factor)`` at the last look, ``t_k`` of it rounded (halves up) at the others, at
        least one more at each look.

        >>> group_sequential_design(3, spending="pocock").sample_sizes(100)  # inflation factor 1.1704
        [39, 79, 118]
        """
        fixed = check_positive_int("fixed", fixed)
        total = math.ceil(fixed * self.inflation_factor - 1e-9)
        sizes: list[int] = []
        for t in self.information:
            sizes.append(max(math.floor(t * total + 0.5), sizes[-1] + 1 if sizes else 1))
        return sizes

    def bounds_at(self, information: Sequence[float]) -> tuple[float, float]:
        """The efficacy and futility z bounds of the latest look when the looks so far came at the information
        fractions ``information`` rather than the planned ones (Lan & DeMets's flexibility: the spending functions
        evaluated at the fractions reached).

        Every efficacy bound is recomputed from the alpha spent by each fraction; the futility bound spends the
        beta spent by its fraction at the design's drift (the maximum information stays as planned). A last
        fraction of 1 makes the look the last: the two bounds are the efficacy bound, which spends all of alpha.
        A futility bound that would pass the efficacy bound is the efficacy bound (stop either way). At the
        planned fractions these are the design's bounds.

        >>> d = group_sequential_design(5, futility="pocock")
        >>> [round(b, 4) for b in d.bounds_at([0.2, 0.4])] == [round(float(d.efficacy[1]), 4), round(float(d.futility[1]), 4)]
        True
        >>> [round(b, 4) for b in d.bounds_at([0.25, 0.45])]  # a little later than planned: lower bounds
        [3.1447, 0.7408]
        """
        t = as_float_array("information", information)
        if not (len(t) and t[0] > 0 and np.all(np.diff(t) > 0) and t[-1] <= 1):
            raise InputError(f"information must hold the fractions of the looks so far, increasing from above 0 to at "
                             f"most 1; got {describe(information)}")
        efficacy = _efficacy(t, self.alpha, self.spending, self.sided)
        last = float(efficacy[-1])
        if t[-1] == 1:
            return last, last
        if self.futility_spending is None:
            return last, math.nan
        beta = 1 - self.power
        spent = _spent(self.futility_spending, beta, t, 1.0)
        if self.sided == 1:
            bounds, gap = _futility_one_sided(t, efficacy, spent, self.beta_drift)
        else:
            allowed = t >= self.beta_from * (1 - 1e-9)
            if self.beta_base > 0:
                base = float(_spent(self.futility_spending, beta, np.array([self.beta_base]), 1.0)[0])
                spent = np.where(allowed, (spent - base) / (beta - base) * beta, 0.0)
            bounds, gap = _futility_two_sided(t, efficacy, spent, self.beta_drift, allowed)
        if gap > 0:
            return last, last
        return last, float(bounds[-1]) if bounds[-1] > 1e-5 or self.sided == 1 else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The design's summary (the notebook view): everything but the per-look bounds."""
        return {"looks": self.looks, "alpha": self.alpha, "power": self.power, "sided": self.sided,
                "spending": _label(self.spending), "futility_spending": _label(self.futility_spending),
                "drift": self.drift, "inflation_factor": self.inflation_factor,
                "expected_fraction_h1": self.expected_fraction_h1, "expected_fraction_h0": self.expected_fraction_h0}

    def to_frame(self) -> pd.DataFrame:
        """One row per look: ``look``, ``information``, ``efficacy``, ``futility``."""
        return pd.DataFrame({"look": np.arange(1, self.looks + 1), "information": self.information,
                             "efficacy": self.efficacy, "futility": self.futility})

    @safe_html
    def _repr_html_(self) -> str:
        return key_value_table("GroupSequentialDesign", self.to_dict()) + html_table(
            self.to_frame().to_dict("records"), COLUMNS)


def _label(spending: Spending | None) -> str | None:
    return f"{spending[0]}({spending[1]:g})" if isinstance(spending, tuple) else spending


def _check_spending(name: str, value: Any) -> Spending:
    if isinstance(value, str) and value.lower() in _FAMILIES[:2]:
        return value.lower()
    if isinstance(value, (tuple, list)) and len(value) == 2 and value[0] == "kim-demets" and is_real(value[1]) \
            and math.isfinite(value[1]) and value[1] > 0:
        return ("kim-demets", float(value[1]))
    none = "None, " if name == "futility" else ""
    raise InputError(f"{name} must be {none}'obrien-fleming', 'pocock' or ('kim-demets', gamma) with gamma > 0; "
                     f"got {describe(value)}")


def _spent(spending: Spending, total: float, t: _Array, sided: float) -> _Array:
    """Cumulative error spent by information ``t`` (rpact's ``getSpendingValueCpp``; ``sided`` = 1 for beta)."""
    from scipy.special import ndtr, ndtri

    if isinstance(spending, tuple):
        spent: _Array = total * t ** spending[1]
    elif spending == "obrien-fleming":
        spent = 2 * sided * ndtr(ndtri(total / (2 * sided)) / np.sqrt(t))
    else:
        spent = total * np.log(1 + (math.e - 1) * t)
    return spent


class _Walk:
    """The statistic Z_k = B(t_k)/√t_k at the looks, B a Brownian motion with ``drift`` (E B(t) = drift·t):
    the density of paths still going on, on a grid of the latest look's continuation region."""

    def __init__(self, t: _Array, drift: float) -> None:
        from scipy.special import ndtr

        self.ndtr = ndtr
        self.t, self.drift, self.k = t, drift, 0
        self.nodes: _Array = np.empty(0)
        self.mass: _Array = np.empty(0)  # Simpson weight × density at each node
        self.scale, self.offset = 1.0, np.empty(0)  # the next look's standardised increment: x·scale - offset

    def mean(self) -> float:
        """E Z at the next look."""
        return self.drift * math.sqrt(self.t[self.k])

    def _standard(self, x: float) -> _Array:
        standard: _Array = x * self.scale - self.offset
        return standard

    def below(self, x: float) -> float:
        """P(going on at every look so far and Z < x at the next)."""
        if self.k == 0:
            return float(self.ndtr(x - self.mean()))
        return float(self.ndtr(self._standard(x)) @ self.mass)

    def above(self, x: float) -> float:
        """P(going on at every look so far and Z >= x at the next)."""
        if self.k == 0:
            return float(self.ndtr(self.mean() - x))
        return float(self.ndtr(-self._standard(x)) @ self.mass)

    def advance(self, regions: Sequence[tuple[float, float]]) -> None:
        """Pass the next look, going on where ``low < Z < high`` for one of ``regions``."""
        t, k, mean = self.t, self.k, self.mean()
        step = _STEP if k == 0 else min(_STEP, 0.25 * math.sqrt((t[k] - t[k - 1]) / t[k]))
        nodes, weights = [], []
        for low, high in regions:
            low, high = max(low, mean - _TAIL), min(high, mean + _TAIL)
            if low < high:
                pieces = 2 * math.ceil((high - low) / (2 * step))
                nodes.append(np.linspace(low, high, pieces + 1))
                simpson = np.tile([2.0, 4.0], pieces // 2 + 1)[: pieces + 1]
                simpson[0] = simpson[-1] = 1.0
                weights.append(simpson * (high - low) / (3 * pieces))
        z = np.concatenate(nodes) if nodes else np.empty(0)
        if k == 0:
            density = np.exp(-0.5 * (z - mean) ** 2) / math.sqrt(2 * math.pi)
        else:
            increment = t[k] - t[k - 1]
            standard = (np.outer(z, np.full(len(self.nodes), math.sqrt(t[k]))) - self.nodes * math.sqrt(t[k - 1])
                        - self.drift * increment) / math.sqrt(increment)
            density = np.exp(-0.5 * standard**2) @ self.mass * math.sqrt(t[k] / increment) / math.sqrt(2 * math.pi)
        self.nodes = z
        self.mass = (np.concatenate(weights) if weights else np.empty(0)) * density
        self.k += 1
        if self.k < len(t):
            increment = t[self.k] - t[self.k - 1]
            self.scale = math.sqrt(t[self.k] / increment)
            self.offset = (z * math.sqrt(t[self.k - 1]) + self.drift * increment) / math.sqrt(increment)


def _regions(efficacy: float, futility: float, sided: int) -> list[tuple[float, float]]:
    """Where a look goes on: ``futility < z < efficacy`` (one-sided), ``futility < |z| < efficacy`` (two-sided)."""
    if sided == 1:
        return [(futility, efficacy)]
    inner = max(futility, 0.0)
    return [(-efficacy, -inner), (inner, efficacy)]


def _root(function: Callable[[float], float], low: float, high: float) -> float:
    from scipy.optimize import brentq

    return float(brentq(function, low, high, xtol=_TOLERANCE, rtol=4 * np.finfo(float).eps, maxiter=200))


def _efficacy(t: _Array, alpha: float, spending: Spending, sided: int) -> _Array:
    """Efficacy bounds spending ``alpha`` by ``spending``, ignoring futility (rpact's ``getCriticalValue``: the first
    in closed form, each later one at most :data:`_CAP`)."""
    from scipy.special import ndtri

    spent = _spent(spending, alpha, t, sided)
    walk = _Walk(t, 0.0)
    bounds = np.empty(len(t))
    for k, share in enumerate(np.diff(spent, prepend=0.0)):
        def crossed(c: float, share: float = share) -> float:
            return walk.above(c) + (walk.below(-c) if sided == 2 else 0.0) - share

        if k == 0:
            bounds[k] = -ndtri(share / sided)
        else:
            bounds[k] = _CAP if crossed(_CAP) >= 0 else _root(crossed, 0.0, _CAP)
        walk.advance(_regions(bounds[k], -math.inf, sided))
    return bounds


def _futility_one_sided(t: _Array, efficacy: _Array, spent: _Array, drift: float) -> tuple[_Array, float]:
    """Futility bounds spending ``spent`` (cumulative) at ``drift``, and the last one minus the last efficacy bound
    (rpact's ``getFutilityBoundsOneSided``); a look whose bound would pass its efficacy bound ends the search
    (the drift is too large)."""
    walk = _Walk(t, drift)
    bounds = np.full(len(t), np.nan)
    for k, share in enumerate(np.diff(spent, prepend=0.0)):
        low, last = walk.mean() - _TAIL, k == len(t) - 1
        high = walk.mean() + _TAIL if last else efficacy[k]
        if walk.below(high) < share:
            return bounds, 1.0 + len(t) - k
        def spends(x: float, share: float = share) -> float:
            return walk.below(x) - share

        bounds[k] = low if spends(low) >= 0 else _root(spends, low, high)
        if not last:
            walk.advance(_regions(efficacy[k], bounds[k], 1))
    return bounds, float(bounds[-1] - efficacy[-1])


def _futility_two_sided(t: _Array, efficacy: _Array, spent: _Array, drift: float,
                        allowed: npt.NDArray[np.bool_]) -> tuple[_Array, float]:
    """Inner futility bounds ``|z| < f`` spending ``spent`` (cumulative) at ``drift`` at the ``allowed`` looks (the
    others get none), and the last one minus the last efficacy bound (rpact's ``getFutilityBoundsTwoSided``); a look
    whose bound would pass its efficacy bound ends the search, as in :func:`_futility_one_sided`."""
    walk = _Walk(t, drift)
    bounds = np.zeros(len(t))
    used = 0.0
    for k in range(len(t)):
        share, last = spent[k] - used, k == len(t) - 1

        def spends(u: float, share: float = share) -> float:
            return walk.below(u) - walk.below(-u) - share

        high = abs(walk.mean()) + _TAIL if last else efficacy[k]
        if allowed[k] and share > 0:
            if spends(high) < 0:
                return bounds, 1.0 + len(t) - k
            bounds[k] = _root(spends, 0.0, high)
        if not last:
            used += spends(bounds[k]) + share
            walk.advance(_regions(efficacy[k], bounds[k], 2))
    return bounds, float(bounds[-1] - efficacy[-1])


def _solve_drift(gap: Callable[[float], tuple[_Array, float]], fixed: float) -> tuple[_Array, float]:
    """The futility bounds at the drift where ``gap`` (monotone in the drift) is 0, and that drift."""
    drift = _root(lambda d: gap(d)[1], 0.0, 3 * fixed)
    return gap(drift)[0], drift


def _stops(t: _Array, efficacy: _Array, futility: _Array, sided: int, drift: float) -> tuple[_Array, _Array]:
    """Per look: P(stop for efficacy on the upper side) and P(stop at all), at ``drift``."""
    walk = _Walk(t, drift)
    upper, stop = np.empty(len(t)), np.empty(len(t))
    for k in range(len(t)):
        going = 1.0 if k == 0 else float(walk.mass.sum())
        regions = _regions(efficacy[k], -math.inf if np.isnan(futility[k]) else futility[k], sided)
        goes_on = sum(walk.below(high) - walk.below(low) for low, high in regions if low < high)
        upper[k], stop[k] = walk.above(efficacy[k]), going - goes_on
        if k < len(t) - 1:
            walk.advance(regions)
    return upper, stop


def group_sequential_design(
    looks: int,
    *,
    alpha: float = 0.025,
    power: float = 0.8,
    spending: Spending = "obrien-fleming",
    futility: Spending | None = None,
    sided: int = 1,
    information: Sequence[float] | None = None,
) -> GroupSequentialDesign:
    """A group-sequential design with ``looks`` looks: its z bounds, inflation factor and expected sample sizes.

    The bounds, the inflation factor and the expected sample sizes are those
    of R's rpact (the module docstring gives the rules):
    ``getDesignGroupSequential(kMax = looks, alpha = alpha, beta = 1 - power,
    sided = sided, informationRates = information, typeOfDesign = "asOF" |
    "asP" | "asKD", gammaA = gamma, typeBetaSpending = "bsOF" | "bsP" | "bsKD"
    (or "none" for ``futility=None``), gammaB = gamma, bindingFutility = FALSE)``
    and its ``getDesignCharacteristics`` (``inflationFactor``,
    ``averageSampleNumber1``, ``averageSampleNumber0``). ``alpha`` is one-sided
    for ``sided=1`` and the two sides together for ``sided=2``. ``information``
    is the fraction of the maximum sample size at each look, increasing to 1
    (default ``1/looks, 2/looks, ..., 1``). ``futility=None`` gives efficacy
    bounds only. One look is the fixed-sample test: inflation 1.

    Expected sample sizes assume every futility bound is obeyed; the efficacy
    bounds keep the type-I error at ``alpha`` whether they are or not.

    >>> d = group_sequential_design(10, spending=("kim-demets", 2), futility=("kim-demets", 2))
    >>> [round(x, 4) for x in (d.inflation_factor, d.expected_fraction_h1, d.expected_fraction_h0)]
    [1.1697, 0.7351, 0.5517]

    (R: ``getDesignCharacteristics(getDesignGroupSequential(kMax = 10, typeOfDesign = "asKD", gammaA = 2,
    typeBetaSpending = "bsKD", gammaB = 2))`` gives 1.169658, 0.7351181, 0.5516877.)
    """
    from scipy.special import ndtri

    looks = check_positive_int("looks", looks)
    if isinstance(sided, bool) or sided not in (1, 2):
        raise InputError(f"sided must be 1 or 2; got {describe(sided)}")
    if not is_real(alpha) or not 0 < alpha < 0.5:
        raise InputError(f"alpha must be a number in (0, 0.5) (the type-I error); got {describe(alpha)}")
    if not is_real(power) or not alpha / sided < power < 1:
        raise InputError(f"power must be a number in (alpha / sided, 1) = ({alpha / sided:g}, 1), the chance of "
                         f"rejecting at the planned effect; got {describe(power)}")
    alpha_spending = _check_spending("spending", spending)
    beta_spending = None if futility is None else _check_spending("futility", futility)
    t = _information(information, looks)
    fixed = float(ndtri(1 - alpha / sided) + ndtri(power))
    efficacy = _efficacy(t, float(alpha), alpha_spending, sided)
    futility_bounds = np.full(looks, np.nan)
    beta_from, beta_base, beta_drift = 0.0, 0.0, math.nan
    if beta_spending is not None and looks > 1:
        spent = _spent(beta_spending, 1 - float(power), t, 1.0)
        if sided == 1:
            futility_bounds, beta_drift = _solve_drift(lambda d: _futility_one_sided(t, efficacy, spent, d), fixed)
        else:
            one_sided = _solve_drift(lambda d: _futility_one_sided(t, efficacy, spent, d), fixed)[0]
            allowed = np.append(one_sided[:-1] >= 0, True)
            beta_from = float(t[int(np.argmax(allowed))])
            if not allowed[0] and allowed[:-1].any():  # rpact's betaAdjustment: spend from the last look without one
                first = int(np.argmax(allowed))
                beta_base = float(t[first - 1])
                rescaled = (spent - spent[first - 1]) / (spent[-1] - spent[first - 1]) * spent[-1]
                spent = np.where(np.arange(looks) >= first, rescaled, 0.0)
            futility_bounds, beta_drift = _solve_drift(lambda d: _futility_two_sided(t, efficacy, spent, d, allowed),
                                                       fixed)
            futility_bounds[futility_bounds <= 1e-5] = np.nan
    futility_bounds[-1] = efficacy[-1]
    if beta_spending is not None and looks == 1:
        beta_drift = fixed
    drift = fixed if looks == 1 else _root(lambda d: _stops(t, efficacy, futility_bounds, sided, d)[0].sum() - power,
                                           0.0, 3 * fixed)
    inflation = (drift / fixed) ** 2
    expected = [inflation * (1 - float(_stops(t, efficacy, futility_bounds, sided, d)[1] @ (1 - t)))
                for d in (drift, 0.0)]
    return GroupSequentialDesign(t, efficacy, futility_bounds, float(alpha), float(power), sided, alpha_spending,
                                 beta_spending, drift, inflation, expected[0], expected[1], beta_from, beta_base,
                                 beta_drift)


def _information(information: Sequence[float] | None, looks: int) -> _Array:
    if information is None:
        return np.arange(1, looks + 1) / looks
    t = as_float_array("information", information)
    if len(t) != looks or not (t[0] > 0 and np.all(np.diff(t) > 0) and t[-1] == 1):
        raise InputError(f"information must hold {looks} fractions (one per look), increasing from above 0 to "
                         f"exactly 1; got {describe(information)}")
    return t
