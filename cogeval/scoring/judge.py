"""LLM-as-judge metrics: a chat model scores each answer against a rubric.

The judge speaks the OpenAI-compatible chat-completions protocol, so OpenAI,
vLLM, Ollama or any compatible server works::

    >>> judge = JudgeConfig("gpt-4o-mini", api_key="sk-secret", samples=3, cache=False)
    >>> judge
    JudgeConfig(model='gpt-4o-mini', temperature=0.0, samples=3)
    >>> judge.describe()
    {'model': 'gpt-4o-mini', 'baseUrl': None, 'temperature': 0.0, 'maxTokens': None, 'samples': 3}
    >>> polite = llm_metric("polite", "Is the response polite to the user?", scale=(1, 5))
    >>> polite
    JudgeMetric('polite', scale=(1, 5))

and in a suite: ``EvalSuite(data, target, metrics=[correctness(), polite], judge=judge)``.

The judge is asked for JSON ``{"score", "reasoning"}`` (with structured output
when the server supports it); answers in prose are parsed too::

    >>> parse_judgement('Mostly right, one slip. Score: 4/5')
    Judgement(score=4.0, out_of=5.0, reasoning='Mostly right, one slip. Score: 4/5')

Scores are normalised to [0, 1] from the metric's scale; the reasoning is kept
in the score's details. An answer with no score, or a call that still fails
after the retries, gives NaN and an error on that cell, never 0.

This module is the judge's one import path; each part lives in its own module:

- :mod:`cogeval.scoring.judge_client`: :class:`JudgeConfig` and the HTTP call (cache, retries, usage);
- :mod:`cogeval.scoring.judge_answer`: the prompt pieces, the structured output, :func:`parse_judgement`
  and :class:`JudgeError`;
- :mod:`cogeval.scoring.judge_metrics`: :class:`JudgeMetric`, :func:`llm_metric` and the built-in rubrics;
- :mod:`cogeval.scoring.judge_summary`: :func:`judge_usage_totals` and :func:`self_preference_message`;
- :mod:`cogeval.scoring.judge_cache`: the on-disk answer cache.
"""

from __future__ import annotations

from cogeval.scoring.judge_answer import RESPONSE_FORMAT as RESPONSE_FORMAT
from cogeval.scoring.judge_answer import SYSTEM_PROMPT as SYSTEM_PROMPT
from cogeval.scoring.judge_answer import JudgeError, Judgement, json_candidates, parse_judgement
from cogeval.scoring.judge_answer import prompt_text as prompt_text
from cogeval.scoring.judge_client import JudgeConfig
from cogeval.scoring.judge_client import JudgeUsage as JudgeUsage
from cogeval.scoring.judge_metrics import (
    JudgeMetric,
    coherence,
    correctness,
    faithfulness,
    helpfulness,
    llm_metric,
    relevance,
)
from cogeval.scoring.judge_summary import judge_usage_totals, self_preference_message

__all__ = [
    "JudgeConfig",
    "JudgeError",
    "JudgeMetric",
    "Judgement",
    "coherence",
    "correctness",
    "faithfulness",
    "helpfulness",
    "json_candidates",
    "judge_usage_totals",
    "llm_metric",
    "parse_judgement",
    "relevance",
    "self_preference_message",
]
