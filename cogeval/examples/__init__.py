"""Bundled offline demo data and two deterministic targets to compare.

The targets return a ``TargetResponse`` whose ``duration_s`` is a simulated
latency (see :mod:`cogeval.examples.targets`), so their comparison is the
same on every machine.

``questions()`` holds 300 short questions with expected answers: 60 capitals,
120 arithmetic problems, 60 letter counts and 60 hour-to-minute conversions
(topic in each case's metadata). ``NoisyAssistant`` is either assistant slipping now and then, seeded:
reruns of it differ, as an LLM's do (the noise demo, ``notebooks/noise.ipynb``). ``passages()`` holds 240
questions on 40 passages (``metadata={"passage": ...}``) and ``reader_v1``/``reader_v2`` answer them: cases
that share a passage succeed and fail together, the clustered demo (:mod:`cogeval.examples.passages`).

>>> data = questions()
>>> len(data), data[0].input, data[0].expected
(300, 'What is the capital of France?', 'Paris')
>>> assistant_v1("What is 12 * 30?").output, assistant_v2("What is 12 * 30?").output
('150', '360')
>>> assistant_v1("What is 12 * 30?").duration_s, assistant_v2("What is 12 * 30?").duration_s  # simulated seconds
(0.21, 0.38)
"""

from __future__ import annotations

from cogeval.examples.data import capitals, questions
from cogeval.examples.noisy import NoisyAssistant
from cogeval.examples.passages import passages, reader_v1, reader_v2
from cogeval.examples.targets import assistant_v1, assistant_v2

__all__ = ["NoisyAssistant", "assistant_v1", "assistant_v2", "capitals", "passages", "questions", "reader_v1",
           "reader_v2"]
