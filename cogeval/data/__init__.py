"""Cases, datasets, and the canonical JSON behind case keys and dataset fingerprints.

>>> from cogeval.data import Case, Dataset
>>> Dataset([Case("q", expected="a")]).to_records()
[{'input': 'q', 'expected': 'a'}]
"""

from cogeval.data.canonical import canonical_json
from cogeval.data.case import Case
from cogeval.data.dataset import Dataset
from cogeval.data.run import EvalRun
from cogeval.data.runfile import load_run, save_run

__all__ = ["Case", "Dataset", "EvalRun", "canonical_json", "load_run", "save_run"]
