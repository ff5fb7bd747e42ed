"""Variants: run N targets on one dataset, interleaved, rank them on a :class:`~cogeval.Leaderboard`, keep the runs.

It sits above :mod:`cogeval.compare` (the leaderboard) and :mod:`cogeval.store` (where ``store=`` saves
every run), so neither of them imports it.

>>> from cogeval.variants import Variants
>>> Variants({"short": lambda q: q, "long": lambda q: q * 2}, axis="prompt").names
['short', 'long']
"""

from cogeval.variants.runner import Variants, arun_variants, run_variants

__all__ = ["Variants", "arun_variants", "run_variants"]
