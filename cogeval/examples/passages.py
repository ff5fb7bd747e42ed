"""A clustered demo: 40 short passages about invented towns, 6 questions on each, and two deterministic readers.

Questions on one passage succeed and fail together: a reader that cannot parse how a passage is written misses
most of its questions. So the 240 questions are not 240 independent pieces of evidence, and a comparison should
test whole passages (``cluster="passage"``, ``docs/statistics-clusters.md``).

- ``passages()``: 240 cases, ``input`` = the passage, a blank line and ``Question: ...``; ``expected`` the
  answer; ``metadata={"passage": "p01"}`` .. ``"p40"``. Passages are written in one of three styles: a plain
  description (29 passages), a story (8) and a record of fields (3).
- ``reader_v1`` (the current version) reads plain passages and records, not stories.
- ``reader_v2`` (the candidate) reads plain passages and stories (all but the landmark of a story), but its new
  parser broke records: it finds only their year.

So v2 gains 5 questions on each of 8 story passages and loses 5 on each of 3 records: 40 questions better and
15 worse, on 11 passages. Neither calls a network nor sleeps; every answer is a function of the input.

>>> data = passages()
>>> len(data), data[0].metadata, data[0].expected
(240, {'passage': 'p01'}, 'Arrow')
>>> print(data[0].input)
Ashford lies on the Arrow. It was founded in 1412 by Mara Quill. Its main industry is weaving. About 2,150 people live there, and its best-known landmark is the old stone bridge.
<BLANKLINE>
Question: Which river runs through Ashford?
>>> reader_v1(data[0].input), reader_v2(data[0].input)
('Arrow', 'Arrow')
"""

from __future__ import annotations

import functools
import re

from cogeval.data import Case, Dataset

_TOWNS = ["Ashford", "Brackley", "Corvel", "Dunmere", "Elstow", "Farrow", "Glenholm", "Harwick", "Iverley",
          "Jessop", "Kelby", "Lorne", "Marsden", "Netherby", "Oakhurst", "Penrith Vale", "Quarrington", "Redmarsh",
          "Stanwick", "Thornby", "Ulverstone", "Vantry", "Wexcombe", "Yarrowby", "Zennor Cross", "Aldmere",
          "Bexley Rise", "Calderby", "Drayford", "Eskdale", "Fernhill", "Grimsby Moor", "Hollowell", "Ickford",
          "Jarrow End", "Kingsmere", "Lyddon", "Melbury", "Northam", "Orlestone"]
_RIVERS = ["Arrow", "Brede", "Colne", "Derwent", "Eden", "Frome", "Glaze", "Hamble", "Isbourne", "Kennet", "Lune"]
_FOUNDERS = ["Mara Quill", "Tobias Wren", "Elin Hart", "Osric Vale", "Nell Barrow", "Idris Penn", "Cora Lisle"]
_INDUSTRIES = ["weaving", "pottery", "fishing", "brewing", "glassmaking", "shipbuilding", "milling", "tanning",
               "printing"]
_LANDMARKS = ["old stone bridge", "clock tower", "salt market", "round chapel", "harbour light", "copper dome",
              "winter garden", "twin mills", "east gate", "tithe barn", "bell foundry", "river stairs", "lantern hall"]

_STORIES = {2, 7, 11, 16, 21, 26, 30, 35}
"""Passages (0-based) written as a story: only v2 reads them."""
_RECORDS = {5, 19, 33}
"""Passages written as a record of fields: v2's new parser broke them."""

_QUESTIONS = {
    "river": "Which river runs through {town}?",
    "year": "In which year was {town} founded?",
    "founder": "Who founded {town}?",
    "industry": "What is the main industry of {town}?",
    "population": "How many people live in {town}?",
    "landmark": "What is the best-known landmark of {town}?",
}

_PLAIN = ("{town} lies on the {river}. It was founded in {year} by {founder}. Its main industry is {industry}. "
          "About {population} people live there, and its best-known landmark is the {landmark}.")
_STORY = ("In {year}, {founder} built a mill where the {river} bends, and the village around it grew into {town}. "
          "The town now lives from {industry}; its {population} residents are proudest of the {landmark}.")
_RECORD = ("{town}. River: {river}. Founded: {year}, by {founder}. Industry: {industry}. "
           "Population: {population}. Landmark: the {landmark}.")

_SEPARATOR = "\n\nQuestion: "


def _facts(k: int) -> dict[str, str]:
    """Passage ``k``'s facts: each list walked with its own stride, so neighbours differ in every fact."""
    return {
        "town": _TOWNS[k],
        "river": _RIVERS[(3 * k) % len(_RIVERS)],
        "year": str(1412 + (37 * k) % 480),
        "founder": _FOUNDERS[(2 * k) % len(_FOUNDERS)],
        "industry": _INDUSTRIES[(5 * k) % len(_INDUSTRIES)],
        "population": f"{2150 + (1733 * k) % 41000:,}",
        "landmark": _LANDMARKS[(4 * k) % len(_LANDMARKS)],
    }


@functools.cache
def passages() -> Dataset:
    """The 240 questions on 40 passages (``metadata={"passage": ...}``), passage by passage."""
    cases = []
    for k in range(len(_TOWNS)):
        facts = _facts(k)
        style = _STORY if k in _STORIES else _RECORD if k in _RECORDS else _PLAIN
        text = style.format(**facts)
        for field, question in _QUESTIONS.items():
            cases.append(Case(text + _SEPARATOR + question.format(**facts), expected=facts[field],
                              metadata={"passage": f"p{k + 1:02d}"}))
    return Dataset(cases, name="passages")


# What each reader looks for, per fact: the first pattern that matches gives the answer.
_READS_PLAIN = {
    "river": r"lies on the ([A-Z]\w+)\.",
    "year": r"founded in (\d{4})",
    "founder": r"founded in \d{4} by ([A-Z][\w ]+?)\.",
    "industry": r"main industry is (\w+)\.",
    "population": r"About ([\d,]+) people",
    "landmark": r"best-known landmark is the ([\w ]+?)\.",
}
_READS_STORY = {
    "river": r"where the ([A-Z]\w+) bends",
    "year": r"^In (\d{4}),",
    "founder": r"^In \d{4}, ([A-Z][\w ]+?) built",
    "industry": r"now lives from (\w+);",
    "population": r"its ([\d,]+) residents",
}
_READS_RECORD = {
    "river": r"River: ([A-Z]\w+)\.",
    "year": r"Founded: (\d{4}),",
    "founder": r"Founded: \d{4}, by ([A-Z][\w ]+?)\.",
    "industry": r"Industry: (\w+)\.",
    "population": r"Population: ([\d,]+)\.",
    "landmark": r"Landmark: the ([\w ]+?)\.",
}
_V2_RECORD = {"year": r"Founded: (\d{4}),"}
"""What is left of records in v2's new parser."""

_ASKED = {field: re.compile(question.format(town=".+").replace("?", r"\?")) for field, question in _QUESTIONS.items()}


def _read(prompt: str, readers: list[dict[str, str]]) -> str:
    passage, _, question = prompt.partition(_SEPARATOR)
    field = next((name for name, asked in _ASKED.items() if asked.fullmatch(question)), None)
    for patterns in readers:
        pattern = patterns.get(field or "")
        if pattern and (found := re.search(pattern, passage)):
            return found[1]
    return "I don't know."


def reader_v1(prompt: str) -> str:
    """The current version: reads plain passages and records, not stories."""
    return _read(prompt, [_READS_PLAIN, _READS_RECORD])


def reader_v2(prompt: str) -> str:
    """The candidate: reads plain passages and stories (not a story's landmark); of a record, only its year."""
    return _read(prompt, [_READS_PLAIN, _READS_STORY, _V2_RECORD])
