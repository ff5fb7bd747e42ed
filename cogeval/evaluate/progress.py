"""The progress bar of a suite run: a tqdm.auto bar (a widget in Jupyter, text in a terminal), or nothing.

A bar never fails a run: when its stream breaks (``python eval.py 2>&1 | head``, a closed or full stderr),
the bar stops with one warning and the run goes on.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any


class ProgressBar:
    """A tqdm.auto bar (a widget in Jupyter, text in a terminal), or nothing."""

    def __init__(self, enabled: bool, total: int, name: str | None) -> None:
        self.bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self._guarded(lambda: setattr(self, "bar", tqdm(total=total, desc=name or "cases", unit="case")))

    def update(self) -> None:
        if self.bar is not None:
            self._guarded(lambda: self.bar.update(1))

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self._guarded(self.bar.close)

    def _guarded(self, step: Any) -> None:
        """Do ``step``; if the bar's stream fails, stop showing the bar and say so once."""
        try:
            step()
        except (OSError, ValueError) as error:  # a broken pipe, a full disk; ValueError: a closed stream
            bar, self.bar = self.bar, None
            if bar is not None:
                bar.disable = True  # so that its own close, when tqdm collects it, writes nothing
            with contextlib.suppress(OSError, ValueError):  # the warning may have nowhere to go either
                warnings.warn(f"the progress bar stopped ({type(error).__name__}: {error}); the run goes on",
                              RuntimeWarning, stacklevel=3)
