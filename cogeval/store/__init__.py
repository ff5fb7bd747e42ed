"""The run store: a folder of run files, listed newest first, indexed, exportable as Parquet.

It keeps runs; it compares none. It sits above :mod:`cogeval.compare` (whose one rule for "a run's metric
with its interval", :mod:`cogeval.compare.summary`, is what :meth:`RunStore.history` shows) and below
what saves runs into it (:mod:`cogeval.variants`, :mod:`cogeval.pairwise`), so every arrow points one way.

- :mod:`~cogeval.store.run_store`: :class:`RunStore`, its listing, loading, saving, tables and history;
- :mod:`~cogeval.store.index`: the hidden ``.cogeval-index`` that spares a listing from reading a run twice;
- :mod:`~cogeval.store.parquet`: a store's table as a Hive-partitioned Parquet folder.

>>> import tempfile
>>> from cogeval.store import RunStore
>>> RunStore(tempfile.mkdtemp()).list()
[]
"""

from cogeval.store.run_store import RunStore

__all__ = ["RunStore"]
