"""Cases, datasets, and the canonical JSON behind case keys and dataset fingerprints.

>>> from cogeval.data import Case, Dataset
>>> Dataset([Case("q", expected="a")]).to_records()
[{'input': 'q', 'expected': 'a'}]
"""

from cogeval.data.canonical import canonical_json
from cogeval.data.case import Case
from cogeval.data.dataset import Dataset

__all__ = ["Case", "Dataset", "canonical_json"]
