"""A clustered null, simulated: 30 passages × 8 questions, no true difference between base and head.

The passages differ, and head's change moves each passage by its own amount with mean 0 (graded), or flips
every answer of some passages together (0/1). A comparison that takes the 240 questions as independent calls
the difference significant far more often than α; one clustered by passage stays within α (up to
Monte-Carlo error: 3 standard errors of a rate of 0.05 over the replications).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cogeval import compare_frames

PASSAGES, QUESTIONS, REPLICATIONS, ALPHA = 30, 8, 300, 0.05
BOUND = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPLICATIONS)


def _graded(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    passage = np.repeat(rng.normal(0.5, 0.15, PASSAGES), QUESTIONS)
    base = passage + rng.normal(0, 0.05, PASSAGES * QUESTIONS)
    shift = np.repeat(rng.normal(0, 0.05, PASSAGES), QUESTIONS)  # each passage moves its own way; mean 0
    return base, base + shift + rng.normal(0, 0.02, PASSAGES * QUESTIONS)


def _binary(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = np.repeat(rng.uniform(0.1, 0.9, PASSAGES), QUESTIONS)
    base = (rng.random(PASSAGES * QUESTIONS) < p).astype(float)
    moved = np.repeat(rng.random(PASSAGES) < 0.3, QUESTIONS)  # a passage the change touched: every answer flips
    return base, np.where(moved, 1 - base, base)  # mean difference 0: p is symmetric about 1/2


def _rejections(draw, cluster: str | None, seed: int) -> float:
    rng = np.random.default_rng(seed)
    decided = 0
    for _ in range(REPLICATIONS):
        base, head = draw(rng)
        n = len(base)
        frame = pd.DataFrame({"id": np.tile(np.arange(n), 2), "version": ["base"] * n + ["head"] * n,
                              "passage": np.tile(np.repeat(np.arange(PASSAGES), QUESTIONS), 2),
                              "score": np.r_[base, head]})
        comparison = compare_frames(frame, by="version", base="base", head="head", case="id", cluster=cluster)
        decided += comparison.metrics["score"].verdict in ("better", "worse")
    return decided / REPLICATIONS


@pytest.mark.slow
@pytest.mark.parametrize("draw", [_graded, _binary], ids=["graded", "binary"])
def test_clustered_comparisons_keep_alpha_where_naive_ones_do_not(draw):
    naive = _rejections(draw, None, seed=1)
    clustered = _rejections(draw, "passage", seed=1)
    assert naive > 0.15, naive
    assert clustered <= BOUND, clustered
