"""Evaluating a target on a dataset: the suite, its result, the builder and agent tools."""
