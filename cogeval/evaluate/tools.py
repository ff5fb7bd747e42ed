"""Agent tools: let an LLM agent run an evaluation through a function-calling tool.

>>> from cogeval import EvalSuite, eval_tools
>>> [tool] = eval_tools(EvalSuite([{"input": "hi"}], lambda q: q, progress=False))
>>> tool.schema["function"]["name"]
'run_eval'
>>> tool(max_cases=1)["total"]
1

:func:`create_run_eval_tool` makes the one tool directly as Cogitator's
``createRunEvalTool(suite)`` does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from cogeval._check import describe
from cogeval.errors import InputError
from cogeval.evaluate.suite import EvalSuite

_PARAMETERS = {
    "type": "object",
    "properties": {
        "max_cases": {
            "type": "integer",
            "minimum": 1,
            "description": "Run only the first N cases of the dataset",
        }
    },
    "additionalProperties": False,
}


@dataclasses.dataclass(frozen=True)
class EvalTool:
    """A callable tool with its OpenAI function-tool ``schema``.

    Calling it never raises: it returns ``{success, total, duration, cost,
    metrics, assertions_passed, failures}`` (``failures``: why the run failed,
    see :attr:`EvalSuiteResult.failures`) or ``{success: False, error}``.
    """

    suite: EvalSuite
    name: str = "run_eval"
    description: str = "Run an evaluation suite against the configured dataset and target"

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": _PARAMETERS},
        }

    def __call__(self, max_cases: int | None = None) -> dict[str, Any]:
        try:
            return self.suite.run(max_cases=max_cases).summary()
        except Exception as error:  # noqa: BLE001 - a tool answers the agent; it never raises into it
            return {"success": False, "error": f"{type(error).__name__}: {error}"}

    async def acall(self, max_cases: int | None = None) -> dict[str, Any]:
        """Async form of calling the tool."""
        try:
            return (await self.suite.arun(max_cases=max_cases)).summary()
        except Exception as error:  # noqa: BLE001 - as in __call__: a tool never raises into the agent
            return {"success": False, "error": f"{type(error).__name__}: {error}"}


def eval_tools(suite: EvalSuite) -> list[EvalTool]:
    """The tools an agent can use on ``suite``: a single ``run_eval``."""
    return [EvalTool(suite)]


def create_run_eval_tool(suite: EvalSuite, *, name: str = "run_eval",
                         description: str = "Run an evaluation suite against the configured dataset and target") -> EvalTool:
    """The ``run_eval`` tool of ``suite`` (the name ported code knows; the same :class:`EvalTool`).

    >>> from cogeval import EvalSuite
    >>> create_run_eval_tool(EvalSuite([{"input": "hi"}], lambda q: q, progress=False)).schema["function"]["name"]
    'run_eval'
    """
    if not isinstance(suite, EvalSuite):
        raise InputError(f"suite must be an EvalSuite; got {describe(suite)}")
    return EvalTool(suite, name=name, description=description)
