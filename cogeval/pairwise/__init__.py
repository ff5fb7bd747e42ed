"""Head-to-head: is B's answer better than A's, case by case, by an LLM judge or by people?

>>> from cogeval import human_pairwise, run_pairwise
>>> data = [{"input": q} for q in ("2+2", "3+3", "capital of France?", "7*6")]
>>> longer = lambda case, response_1, response_2: "1" if len(response_1) > len(response_2) else "2"
>>> result = run_pairwise(data, lambda q: "ok", lambda q: f"the answer to {q}",
...                       [human_pairwise("longer", ask=longer, seed=0)], names=("terse", "wordy"))
>>> win = result.win_rate("longer")
>>> win.rate, win.wins, win.losses, win.ties, win.n, win.p_value
(1.0, 4, 0, 0, 4, 0.125)
>>> [round(limit, 4) for limit in win.ci]
[0.5101, 1.0]

Every comparator (:func:`pairwise_judge`, :func:`human_pairwise`,
:func:`human_labels`) has a ``key`` and gives each case a :class:`Verdict`:
``"a"``, ``"b"``, ``"tie"``, or no verdict (``None``, with an ``error`` saying
why: a failed judge call, an unusable answer, a missing label), which is never
counted as a tie. A case on which one variant's target failed is won by the
other without asking anyone; a case both failed on has no verdict.

One idea per module, each importing only those above it:

- :mod:`~cogeval.pairwise.verdict`: tasks, verdicts and their rules;
- :mod:`~cogeval.pairwise.measures`: win rate, flips, agreement;
- :mod:`~cogeval.pairwise.file`: the pairwise file's versioned pydantic model;
- :mod:`~cogeval.pairwise.result`: :class:`PairwiseResult` (immutable) and :func:`load_pairwise`;
- :mod:`~cogeval.pairwise.comparator`: what a comparator is;
- :mod:`~cogeval.pairwise.judge`: the LLM judge; :mod:`~cogeval.pairwise.human`:
  people, through an ``ask`` callable, the UIs found by :func:`labelling_ui`;
- :mod:`~cogeval.pairwise.sources`: answers already given, paired by task id;
  :mod:`~cogeval.pairwise.labels`: the blinded labelling file and its labels;
- :mod:`~cogeval.pairwise.runner`: :func:`run_pairwise`, :func:`evaluate_pairwise` and their async forms.
"""

from cogeval.pairwise.comparator import Comparator, Labelling
from cogeval.pairwise.file import FORMAT, VERSION, PairwiseFile, TaskRecord, VerdictRecord
from cogeval.pairwise.human import HumanPairwise, human_pairwise, labelling_ui
from cogeval.pairwise.judge import PAIRWISE_FORMAT, PairwiseJudge, Preference, pairwise_judge, parse_preference
from cogeval.pairwise.labels import MANIFEST_FIELDS, LabelComparator, export_pairwise_cases, human_labels
from cogeval.pairwise.measures import Agreement, Flips, WinRate
from cogeval.pairwise.result import PAIRWISE_COLUMNS, SUMMARY_COLUMNS, PairwiseResult, load_pairwise
from cogeval.pairwise.runner import aevaluate_pairwise, arun_pairwise, evaluate_pairwise, judge_tasks, run_pairwise
from cogeval.pairwise.sources import DirectoryTraceSource, source_tasks
from cogeval.pairwise.verdict import PairTask, Verdict, task_id

__all__ = [
    "FORMAT",
    "MANIFEST_FIELDS",
    "PAIRWISE_COLUMNS",
    "PAIRWISE_FORMAT",
    "SUMMARY_COLUMNS",
    "VERSION",
    "Agreement",
    "Comparator",
    "DirectoryTraceSource",
    "Flips",
    "HumanPairwise",
    "LabelComparator",
    "Labelling",
    "PairTask",
    "PairwiseFile",
    "PairwiseJudge",
    "PairwiseResult",
    "Preference",
    "TaskRecord",
    "Verdict",
    "VerdictRecord",
    "WinRate",
    "aevaluate_pairwise",
    "arun_pairwise",
    "evaluate_pairwise",
    "export_pairwise_cases",
    "human_labels",
    "human_pairwise",
    "judge_tasks",
    "labelling_ui",
    "load_pairwise",
    "pairwise_judge",
    "parse_preference",
    "run_pairwise",
    "source_tasks",
    "task_id",
]
