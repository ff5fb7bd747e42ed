"""A stochastic assistant for the noise demo: the demo assistants, slipping now and then, seeded.

:class:`NoisyAssistant` answers as ``assistant_v1`` or ``assistant_v2`` but, on each call, slips with a
probability that depends on the question (some questions are shaky, most are not): then it answers
``"I don't know."``. Its slips come from a seeded generator per question and call, so the same instance
asked the same questions in the same order slips on the same calls: runs are reproducible given ``seed``,
yet a rerun (another call of each question) slips elsewhere, as an LLM sampled at temperature > 0 does.

>>> noisy = NoisyAssistant("v2", seed=0)
>>> [noisy("What is 12 * 30?").output for _ in range(5)]  # this question slips 14% of the time
['360', '360', "I don't know.", "I don't know.", '360']
>>> [NoisyAssistant("v2", seed=0)("What is 12 * 30?").output for _ in range(2)]  # a new one: the same first call
['360', '360']
"""

from __future__ import annotations

import collections
import threading
import zlib

import numpy as np

from cogeval.examples.targets import assistant_v1, assistant_v2
from cogeval.execution import TargetResponse

_VERSIONS = {"v1": assistant_v1, "v2": assistant_v2}


class NoisyAssistant:
    """``assistant_v1`` or ``assistant_v2`` (``version``) that slips on a call with a question's own probability:
    ``slip`` × a factor in [0, 2) drawn once per question (so the mean is ``slip``), the same for every seed.

    Each call of a question draws from ``numpy.random.default_rng([seed, crc32(question), call])``, ``call``
    counting that question's calls so far: deterministic given ``seed`` and the order of calls of each question
    (one call per question per run, or ``concurrency=1``). Thread-safe.
    """

    def __init__(self, version: str = "v2", *, slip: float = 0.1, seed: int = 0) -> None:
        if version not in _VERSIONS:
            raise ValueError(f"version must be 'v1' or 'v2'; got {version!r}")
        self.version, self.slip, self.seed = version, float(slip), int(seed)
        self._calls: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def _shakiness(self, question: str) -> float:
        """The question's slip probability: ``slip`` × 2u, u uniform per question (no seed: a property of it)."""
        return min(1.0, self.slip * 2 * float(np.random.default_rng(zlib.crc32(question.encode())).random()))

    def __call__(self, question: str) -> TargetResponse:
        with self._lock:
            call = self._calls[question]
            self._calls[question] += 1
        answer = _VERSIONS[self.version](question)
        rng = np.random.default_rng([self.seed, zlib.crc32(question.encode()), call])
        if rng.random() < self._shakiness(question):
            return TargetResponse("I don't know.", duration_s=answer.duration_s)
        return answer
