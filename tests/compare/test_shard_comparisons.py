"""A shard compared with a whole run says so: only the cases both hold are compared (issue 34 item 4, part)."""

from __future__ import annotations

from cogeval import Dataset, EvalSuite, compare_runs, exact_match


def test_a_shard_against_the_whole_run_is_named_with_its_counts():
    dataset = Dataset.from_records([{"input": str(i), "expected": str(i)} for i in range(40)])
    suite = EvalSuite(dataset, str, metrics=[exact_match()], progress=False)
    whole, part = suite.run(), suite.run(shard=(1, 4))
    held = len(part.results)
    assert 0 < held < 40
    comparison = compare_runs(whole, part)
    assert comparison.matched == held
    assert [w for w in comparison.warnings if "shard" in w] == [
        f"The head run is shard 1 of 4 (it holds {held} of the dataset's 40 cases): only the cases both runs hold are "
        "compared; merge the shards first (cogeval.merge_runs, or cogeval merge) to compare the whole run"]
    same = compare_runs(part, suite.run(shard=(1, 4)))  # one shard against the same shard: nothing to say
    assert [w for w in same.warnings if "shard" in w] == []
