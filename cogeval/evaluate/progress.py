"""The progress bar of a suite run: a tqdm.auto bar (a widget in Jupyter, text in a terminal), or nothing."""

from __future__ import annotations


class ProgressBar:
    """A tqdm.auto bar (a widget in Jupyter, text in a terminal), or nothing."""

    def __init__(self, enabled: bool, total: int, name: str | None) -> None:
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=name or "cases", unit="case")

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
