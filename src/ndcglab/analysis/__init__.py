"""Analysis tools: comparing rankers, distinguishability curves, and the limits of NDCG.

* :mod:`~ndcglab.analysis.paired_tests` — paired t-test, randomisation (sign-flip) test,
  bootstrap CI, Cohen's d_z, Holm.
* :mod:`~ndcglab.analysis.significance` — :func:`compare_rankers`: every system against a
  baseline (or several, or all pairs) on every measure, returning a
  :class:`~ndcglab.analysis.comparison.ComparisonResult` with text/Markdown/LaTeX/CSV/HTML/JSON
  tables that mark significant differences; :func:`compare_runs` does it for TREC runs and
  qrels (files, dicts, DataFrames) on one stated query set (:mod:`~ndcglab.analysis.runs`).
* :mod:`~ndcglab.analysis.multi_tests` — the tests over many pairs at once (randomisation,
  bootstrap) and of all systems together (two-way ANOVA, Tukey's HSD).
* :mod:`~ndcglab.analysis.distinguish` — mean measure vs list size n on prefixes S_n, and the
  stability of the rankers' order (Wang et al. 2013, §4 and Definition 3).
* :mod:`~ndcglab.analysis.limits` — the limits of Theorems 1, 3, 5–13 of Wang et al. (2013).
* :mod:`~ndcglab.analysis.simulate` — the i.i.d. model of the theorems, simulated.
* :mod:`~ndcglab.analysis.explain` — :func:`explain`: how much of the difference between two
  conventions' means comes from each differing option (Shapley values).

See ``docs/analysis.md``. Wang et al. (2013) is Wang, Wang, Li, He, Chen, Liu, "A Theoretical
Analysis of NDCG Type Ranking Measures" (COLT 2013).
"""

from .comparison import ComparisonResult, PairedComparison
from .distinguish import DistinguishResult, distinguishability, make_grid
from .explain import Explanation, explain
from .limits import (
    GradedModel,
    Limit,
    limit_graded_log_cutoff,
    limit_graded_power,
    limit_graded_power_cutoff,
    limit_graded_sublinear_cutoff,
    limit_log,
    limit_log_cutoff,
    limit_power,
    limit_power_cutoff,
    limit_sublinear_cutoff,
    limit_zipf,
    positive_rate,
    theoretical_limit,
)
from .multi_tests import AnovaResult, anova_two_way, tukey_hsd
from .paired_tests import (
    ConfidenceInterval,
    TestResult,
    adjust_p,
    bootstrap_ci,
    bootstrap_test,
    cohens_dz,
    holm,
    paired_t_test,
    permutation_test,
    sign_test,
    wilcoxon_test,
)
from .power import PairedPower, paired_power, queries_needed
from .runs import QuerySet, RunSet, evaluate_runs
from .significance import compare_rankers, compare_runs
from .simulate import SimulationResult, convergence_table, simulate_ndcg, uniform_order_statistics

__all__ = [
    "AnovaResult",
    "ComparisonResult",
    "ConfidenceInterval",
    "DistinguishResult",
    "Explanation",
    "GradedModel",
    "Limit",
    "PairedComparison",
    "PairedPower",
    "QuerySet",
    "RunSet",
    "SimulationResult",
    "TestResult",
    "adjust_p",
    "anova_two_way",
    "bootstrap_ci",
    "bootstrap_test",
    "cohens_dz",
    "compare_rankers",
    "compare_runs",
    "convergence_table",
    "distinguishability",
    "evaluate_runs",
    "explain",
    "holm",
    "limit_graded_log_cutoff",
    "limit_graded_power",
    "limit_graded_power_cutoff",
    "limit_graded_sublinear_cutoff",
    "limit_log",
    "limit_log_cutoff",
    "limit_power",
    "limit_power_cutoff",
    "limit_sublinear_cutoff",
    "limit_zipf",
    "make_grid",
    "paired_power",
    "paired_t_test",
    "permutation_test",
    "positive_rate",
    "queries_needed",
    "sign_test",
    "simulate_ndcg",
    "theoretical_limit",
    "tukey_hsd",
    "uniform_order_statistics",
    "wilcoxon_test",
]
