"""Pause Python's cyclic garbage collector while a run file is read or written.

Reading or writing a large run makes millions of containers that all stay alive; each automatic
collection walks every live object, so with the collector on, the time grows with the square of the
run's size (a 200,000-case file: 3× slower). Nothing is lost by pausing it: reference counting still
frees what is dropped, and cycles made meanwhile are found by a later collection.

When the block ends, the objects made in it join the oldest generation without being examined (the
youngest would otherwise hold a loaded run's millions of objects, and its next collection, at the first
allocation after, examined them all: 0.3 s of a 1 s load of 50,000 results). They are examined at the
next full collection, as every long-lived object is. Nothing is moved when the block made few objects, or
while someone else has objects frozen (``gc.freeze``).

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_MANY = 100_000
"""Objects made in the block (net) past which they are moved: fewer cost a young collection little, and counting
what is frozen walks it."""


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the ``with`` block; it is enabled again after if it was before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > _MANY and not gc.get_freeze_count():  # (what someone else froze stays frozen)
            gc.freeze()  # every tracked object to the oldest generation, the ones made meanwhile too ...
            gc.unfreeze()  # ... without examining any
        if enabled:
            gc.enable()
