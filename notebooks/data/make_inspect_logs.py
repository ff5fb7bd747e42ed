"""Make the two Inspect AI logs that notebooks/reanalyse-other-tools.ipynb reads, offline.

Runs Inspect (``pip install 'cogeval[inspect]'``) with its mock model, as
tests/importers/test_inspect_log.py does, on a task of 20 questions whose samples carry a
``topic`` metadata field (10 ``arithmetic``, 10 ``geography``), scored by Inspect's ``match()``:

- ``inspect-base.eval``: right on 3 of the 10 sums (the 7 others off by one), and on 9 of the
  10 capitals (wrong on Canada);
- ``inspect-head.eval``: right on every sum, and on 9 of the 10 capitals (wrong on Australia).

So head is better on arithmetic only; on geography each version misses one capital. The two
mock models are named ``mockllm/base`` and ``mockllm/head`` and the task takes no argument, so
the model is the one thing that changes between the logs. Their answers carry a token ``usage``,
else Inspect downloads a tokenizer to count them.
Run it from anywhere: ``.venv/bin/python notebooks/data/make_inspect_logs.py``; it replaces
the two files next to it (their ids, times and durations change at every run).
"""

from __future__ import annotations

import pathlib
import shutil
import tempfile

from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match

HERE = pathlib.Path(__file__).resolve().parent

SUMS = [(3, 4), (12, 9), (25, 17), (8, 46), (31, 58), (64, 27), (19, 93), (75, 48), (56, 66), (88, 99)]
CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima", "Canada": "Ottawa",
            "Egypt": "Cairo", "Norway": "Oslo", "Australia": "Canberra", "Chile": "Santiago", "Vietnam": "Hanoi"}
CAPITAL_QUESTION = "What is the capital of {}? Answer with the city only."
QUESTIONS = (
    [(f"sum-{i + 1:02d}", f"What is {a} + {b}? Answer with the number only.", str(a + b), "arithmetic")
     for i, (a, b) in enumerate(SUMS)]
    + [(f"capital-{country.lower()}", CAPITAL_QUESTION.format(country), city, "geography")
       for country, city in CAPITALS.items()]
)
"""(sample id, question, target, topic) of each of the 20 samples."""

def answers(variant: str) -> dict[str, str]:
    """The mock model's answer to each question: right, but for the sums 4 to 10 (base only, off by one)
    and one capital (base: Canada, head: Australia)."""
    out = {question: target for _, question, target, _ in QUESTIONS}
    if variant == "base":
        out.update({question: str(int(target) + 1) for _, question, target, _ in QUESTIONS[3:10]})
    country, wrong = {"base": ("Canada", "Toronto"), "head": ("Australia", "Sydney")}[variant]
    out[CAPITAL_QUESTION.format(country)] = wrong
    return out


def mock(variant: str):
    by_question = answers(variant)

    def answer(messages, tools, tool_choice, config):
        question = messages[-1].text
        output = ModelOutput.from_content(f"mockllm/{variant}", by_question[question])
        words = len(question.split())
        output.usage = ModelUsage(input_tokens=words, output_tokens=1, total_tokens=words + 1)
        return output  # with a usage, so Inspect does not fetch a tokenizer

    return get_model(f"mockllm/{variant}", custom_outputs=answer)


@task
def quiz():
    samples = [Sample(id=sid, input=question, target=target, metadata={"topic": topic})
               for sid, question, target, topic in QUESTIONS]
    return Task(dataset=samples, scorer=match())


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="inspect-logs-") as folder:
        for variant in ("base", "head"):
            [log] = inspect_eval(quiz(), model=mock(variant), log_format="eval", log_dir=folder, display="none")
            if log.status != "success":
                raise SystemExit(f"Inspect's {variant} run ended {log.status}: {log.error}")
            shutil.copyfile(log.location, HERE / f"inspect-{variant}.eval")
            print(f"wrote {HERE / f'inspect-{variant}.eval'}")


if __name__ == "__main__":
    main()
