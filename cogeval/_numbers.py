"""How every report, repr, warning and CLI line writes a number: one rule, documented in docs/reports.md.

- a value (a mean, a difference, an interval's end, a statistic, an effect size): 4 significant digits;
- a p-value (raw or adjusted): 2 significant digits;
- a share as a percentage, to 3 significant digits; a count as an integer with thousands separators;
- seconds and dollars with their unit; what is missing (``None``, NaN) as ``–``.

>>> number(0.23333333), number(7.024e-09), number(1234.5678), number(123456.7), number(None)
('0.2333', '7.024e-09', '1235', '123,500', '–')
>>> signed(0.23333), signed(-0.5), signed(0.0)
('+0.2333', '-0.5', '0')
>>> p_value(0.0012345), p_value(7.024e-09), p_value(1.0)
('0.0012', '7e-09', '1')
>>> percent(0.23333), count(12345), seconds(0.01705), dollars(0.0123), dollars(12.5)
('23.3%', '12,345', '0.01705 s', '$0.0123', '$12.50')
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

MISSING = "–"
"""What stands for a number that is not there (``None``, NaN)."""

DIGITS = 4
"""Significant digits of a value."""

_P_DIGITS = 2
"""Significant digits of a p-value."""


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        try:
            return float(value)
        except (TypeError, ValueError):
            return math.nan
    return float(value)


def number(value: Any, digits: int = DIGITS) -> str:
    """A value to ``digits`` significant digits (an integer as it is, with thousands separators)."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        return count(value)
    number = _float(value)
    if math.isnan(number):
        return MISSING
    if 1e4 <= abs(number) < 1e15:  # 12,350 rather than 1.235e+04
        return f"{float(f'{number:.{digits}g}'):,.0f}"
    return f"{number:.{digits}g}"


def signed(value: Any) -> str:
    """A difference: :func:`number` with ``+`` before a positive one."""
    text = number(value)
    return "+" + text if _float(value) > 0 else text


def p_value(value: Any) -> str:
    """A p-value to 2 significant digits."""
    return number(_float(value), _P_DIGITS)


def percent(share: Any) -> str:
    """A share in [0, 1] as a percentage to 3 significant digits."""
    value = _float(share)
    return MISSING if math.isnan(value) else f"{100 * value:.3g}%"


def count(value: Any) -> str:
    """A whole number with thousands separators."""
    number = _float(value)
    return MISSING if math.isnan(number) else f"{int(number):,}"


def seconds(value: Any) -> str:
    """A duration in seconds, with its unit."""
    text = number(value)
    return text if text == MISSING else f"{text} s"


def dollars(value: Any) -> str:
    """Money: cents from $1 up, else 4 decimals (2 significant digits below $0.0001)."""
    amount = _float(value)
    if math.isnan(amount):
        return MISSING
    if abs(amount) >= 1:
        return f"${amount:,.2f}"
    return f"${amount:.4f}" if amount == 0 or abs(amount) >= 0.0001 else f"${amount:.2g}"
