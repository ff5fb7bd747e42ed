"""Fixtures shared by the chart and widget tests: two small runs and their comparison."""

import pytest
from present_runs import make_run

from cogeval import compare_runs


@pytest.fixture(scope="module")
def runs():
    return make_run("base"), make_run("head")


@pytest.fixture(scope="module")
def comparison(runs):
    return compare_runs(*runs, seed=0)
