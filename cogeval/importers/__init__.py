"""Importers: results made by other tools as :class:`~cogeval.EvalRun`, so every comparison works on them.

- :func:`read_inspect_log`: Inspect AI ``.eval`` and ``.json`` logs (``pip install 'cogeval[inspect]'``);
- :func:`read_lm_eval_samples`: lm-evaluation-harness ``--log_samples`` JSONL;
- :func:`read_promptfoo`: promptfoo ``eval -o results.json`` (one run per prompt × provider);
- :func:`read_ag2_run`: AG2 ``ag2.eval`` run files;
- :func:`read_runs`: any of them, or a cogeval run file, by what the file looks like (:func:`detect`).

The mapping of each, field by field: docs/reanalysis.md and the docs/import-*.md it links.

>>> import json, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
>>> _ = path.write_text(json.dumps({"results": {"results": [], "prompts": []}}))
>>> detect(path)
'promptfoo'
"""

from cogeval.importers.ag2 import read_ag2_run
from cogeval.importers.detect import KINDS, detect, read_runs
from cogeval.importers.inspect_log import read_inspect_log
from cogeval.importers.lm_eval import read_lm_eval_samples
from cogeval.importers.promptfoo import read_promptfoo

__all__ = ["KINDS", "detect", "read_ag2_run", "read_inspect_log", "read_lm_eval_samples", "read_promptfoo", "read_runs"]
