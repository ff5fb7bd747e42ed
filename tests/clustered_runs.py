"""A run of 14 cases × 2 trials in 6 passages, with its clustered interval from R's clubSandwich (``cluster=`` tests)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cogeval import EvalRun

# Fourteen units (cases × 2 trials, averaged) in six passages. Their case values, and the reference below:
# R 4.2.2, clubSandwich 0.5.8:
#   v <- c(0.8, 0.65, 0.9, 0.3, 0.45, 0.55, 0.2, 0.95, 0.7, 0.0, 0.6, 0.35, 0.85, 0.5)
#   g <- c("p1","p1","p1","p2","p2","p3","p3","p3","p3","p4","p5","p5","p2","p6")
#   conf_int(lm(v ~ 1), vcov = "CR2", cluster = g, level = 0.95)   # and level = 0.90
VALUES = [0.8, 0.65, 0.9, 0.3, 0.45, 0.55, 0.2, 0.95, 0.7, 0.0, 0.6, 0.35, 0.85, 0.5]
PASSAGES = ["p1", "p1", "p1", "p2", "p2", "p3", "p3", "p3", "p3", "p4", "p5", "p5", "p2", "p6"]
R_SE, R_DF = 0.071534407937420, 3.932348755817084
R_CI_95 = (0.357176672048908, 0.757109042236806)
R_CI_90 = (0.403885517716399, 0.710400196569315)

# Each case's two trials (their mean is VALUES[i]); case 3's second trial failed, so it scores 0 whatever it
# wrote (0.9): higher is better. Case 13 asks case 0's question again (occurrence 1) about another passage, so a
# unit must take its own occurrence's cluster, not its case key's first one.
TRIALS = [(1.0, 0.6), (0.7, 0.6), (0.9, 0.9), (0.6, 0.9), (0.5, 0.4), (0.3, 0.8), (0.2, 0.2), (1.0, 0.9),
          (0.4, 1.0), (0.0, 0.0), (0.6, 0.6), (0.1, 0.6), (0.8, 0.9), (0.5, 0.5)]
FAILED = {(3, 1)}


def clustered_run(*, day=1, passages=PASSAGES, name="nightly"):
    """The run of TRIALS, rows trial by trial (trial 0 of every case, then trial 1), so units and results interleave."""
    inputs = [f"q{i}" for i in range(13)] + ["q0"]
    occurrences = [0] * 13 + [1]
    rows = [{"input": inputs[i], "occurrence": occurrences[i], "trial": trial, "passage": passages[i],
             "quality": TRIALS[i][trial], "error": "boom" if (i, trial) in FAILED else None}
            for trial in (0, 1) for i in range(len(TRIALS))]
    return EvalRun.from_frame(pd.DataFrame(rows), name=name, started_at=f"2026-01-0{day}T08:00:00Z",
                              run_id=f"2026010{day}T080000000Z-0000000{day}")


def cr2_by_hand(values, clusters):
    """CR2 = sqrt(sum_k D_k^2 / (1 - n_k/n)) / n, D_k the cluster sums of the centred values (DESIGN §4)."""
    v = np.asarray(values, dtype=float)
    labels = pd.Series(clusters)
    centred = pd.Series(v - v.mean()).groupby(labels.to_numpy()).sum()
    sizes = labels.value_counts().reindex(centred.index)
    return math.sqrt(float((centred**2 / (1 - sizes / len(v))).sum())) / len(v)
