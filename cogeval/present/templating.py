"""The jinja2 pages of the presentation layer: one environment, autoescaped, every shown value made printable.

Both HTML reports (the comparison's and a suite run's) are rendered here, so
their escaping is one rule: jinja2 ``autoescape`` on, and the ``finalize`` hook
:func:`_shown` passes every text value through :func:`~cogeval._text.printable`
(control characters and lone surrogates as visible escapes) before it is
escaped. Only a ``Markup`` value (a trusted fragment cogeval built, like the
forest plot) is placed as it is.

A long text (a case's input, an answer, an error) is one rule too, :func:`shown`: up to
:data:`TEXT_SHOWN` characters it is shown as it is; longer, its first characters on one line, and
the whole (cut at :data:`TEXT_WHOLE`) in a ``<details>`` that opens it (``macros.html.j2``'s ``clip``),
so a page stays short to read and bounded in size.

>>> render_template("run.html.j2", title="<b>x</b>\\x1b", version="dev", header={}, counts=[], cost="",
...                 failures=[], assertions=[], metrics=[], metric_columns=[], cases=[], score_names=[],
...                 total=0, shown=0).count("&lt;b&gt;x&lt;/b&gt;\\\\x1b")
2
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from cogeval._numbers import count
from cogeval._text import as_text, cut, one_line, printable

TEXT_SHOWN = 200
"""Characters of a text a page (or a Markdown or console row) shows at first; the HTML pages open the whole on demand."""
TEXT_WHOLE = 4000
"""The most characters of one text a page holds: the run file has them all."""


@dataclasses.dataclass(frozen=True)
class Shown:
    """A text as a page shows it: ``short``, the text itself when it has at most :data:`TEXT_SHOWN` characters,
    else its first ones on one line (ending in ``…``), and then ``whole``: the text, cut at :data:`TEXT_WHOLE`
    characters (None when ``short`` is all of it); ``length`` is the whole text's, in characters.

    >>> shown("yes"), shown("a" * 300).short[-3:], len(shown("a" * 300).whole), shown("a" * 5000).size
    (Shown(short='yes', whole=None, length=3), 'aa…', 300, '5,000 characters')
    """

    short: str
    whole: str | None
    length: int

    @property
    def size(self) -> str:
        """``1,234 characters``."""
        return f"{count(self.length)} {'character' if self.length == 1 else 'characters'}"

    @property
    def cut_note(self) -> str:
        """What ``whole`` leaves out: ``the first 4,000 characters; the run file has all 12,345``, or ``""``."""
        if self.length <= TEXT_WHOLE:
            return ""
        return f"the first {count(TEXT_WHOLE)} characters; the run file has all {count(self.length)}"


def shown(value: Any) -> Shown:
    """``value`` (text, or anything else as its JSON) as a page shows it: :class:`Shown`."""
    text = as_text(value)
    if len(text) <= TEXT_SHOWN:
        return Shown(text, None, len(text))
    return Shown(cut(one_line(text), TEXT_SHOWN), cut(text, TEXT_WHOLE), len(text))


def _source(name: str) -> str:
    import importlib.resources

    return importlib.resources.files("cogeval.present").joinpath(f"templates/{name}").read_text("utf-8")


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.FunctionLoader(_source), autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, finalize=_shown,
                              auto_reload=False)  # the templates are package data: read once


@functools.lru_cache(maxsize=4)
def _template(name: str) -> Any:
    return _environment().get_template(name)


def _shown(value: Any) -> Any:
    """Every value a page shows: text with control characters and lone surrogates as escapes
    (:func:`~cogeval._text.printable`), then autoescaped; a trusted fragment (``Markup``) as it is."""
    from markupsafe import Markup

    return printable(value, keep="\n\t") if isinstance(value, str) and not isinstance(value, Markup) else value


def cogeval_version() -> str:
    """The installed cogeval's version (``dev`` in a source tree), for a page's footer."""
    import importlib.metadata

    try:
        return importlib.metadata.version("cogeval")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


def render_template(name: str, **values: Any) -> str:
    """The page ``templates/<name>`` rendered with ``values`` (autoescaped, every text made printable)."""
    return _template(name).render(**values)
