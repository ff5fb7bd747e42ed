"""Statistics on plain arrays: paired tests (also of clustered cases), intervals, effect sizes, agreement, summaries, ranking.

This layer imports nothing from cogeval but the L0 core, so every function can
be checked alone against published reference values.
"""

from cogeval.stats.agreement import cohen_kappa
from cogeval.stats.clustered import ClusteredTTestResult, cluster_se, clustered_t_test
from cogeval.stats.clustered_binary import ClusteredMcNemarResult, clustered_mcnemar_test
from cogeval.stats.clustered_rank import ClusteredWilcoxonResult, clustered_wilcoxon_test
from cogeval.stats.describe import Aggregate, aggregate, mean, median, percentile, std_dev
from cogeval.stats.effect import cohens_d
from cogeval.stats.equivalence import EquivalenceResult, equivalence_test
from cogeval.stats.group_sequential import GroupSequentialDesign, group_sequential_design
from cogeval.stats.intervals import bootstrap_ci, wilson_interval
from cogeval.stats.inversion import holm_levels, mcnemar_interval, paired_proportion_interval, wilcoxon_interval
from cogeval.stats.multitest import adjust_p_values
from cogeval.stats.paired import (
    McNemarResult,
    TTestResult,
    WilcoxonResult,
    mcnemars_test,
    paired_t_test,
    wilcoxon_test,
)
from cogeval.stats.power import minimum_detectable_effect, plan_sample_size
from cogeval.stats.ppi import PPIResult, ppi_mean, ppi_paired_difference
from cogeval.stats.ranking import bradley_terry, min_rank, rank_intervals
from cogeval.stats.result import Interval, StatResult
from cogeval.stats.sequential import ConfidenceSequence, confidence_sequence, confidence_sequence_halfwidth, split_alpha

__all__ = [
    "Aggregate",
    "ClusteredMcNemarResult",
    "ClusteredTTestResult",
    "ClusteredWilcoxonResult",
    "ConfidenceSequence",
    "EquivalenceResult",
    "GroupSequentialDesign",
    "Interval",
    "McNemarResult",
    "PPIResult",
    "StatResult",
    "TTestResult",
    "WilcoxonResult",
    "adjust_p_values",
    "aggregate",
    "bootstrap_ci",
    "bradley_terry",
    "cluster_se",
    "clustered_mcnemar_test",
    "clustered_t_test",
    "clustered_wilcoxon_test",
    "cohen_kappa",
    "cohens_d",
    "confidence_sequence",
    "confidence_sequence_halfwidth",
    "equivalence_test",
    "group_sequential_design",
    "holm_levels",
    "mcnemar_interval",
    "mcnemars_test",
    "mean",
    "median",
    "min_rank",
    "minimum_detectable_effect",
    "paired_proportion_interval",
    "paired_t_test",
    "percentile",
    "plan_sample_size",
    "ppi_mean",
    "ppi_paired_difference",
    "rank_intervals",
    "split_alpha",
    "std_dev",
    "wilcoxon_interval",
    "wilcoxon_test",
    "wilson_interval",
]
