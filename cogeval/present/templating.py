"""The jinja2 pages of the presentation layer: one environment, autoescaped, every shown value made printable.

Both HTML reports (the comparison's and a suite run's) are rendered here, so
their escaping is one rule: jinja2 ``autoescape`` on, and the ``finalize`` hook
:func:`_shown` passes every text value through :func:`~cogeval._text.printable`
(control characters and lone surrogates as visible escapes) before it is
escaped. Only a ``Markup`` value (a trusted fragment cogeval built, like the
forest plot) is placed as it is.

>>> render_template("run.html.j2", title="<b>x</b>\\x1b", version="dev", header={}, counts=[], cost="",
...                 failures=[], assertions=[], metrics=[], metric_columns=[], cases=[], score_names=[],
...                 total=0, shown=0).count("&lt;b&gt;x&lt;/b&gt;\\\\x1b")
2
"""

from __future__ import annotations

import functools
from typing import Any

from cogeval._text import printable


@functools.lru_cache(maxsize=4)
def _template(name: str) -> Any:
    import importlib.resources

    import jinja2

    source = importlib.resources.files("cogeval.present").joinpath(f"templates/{name}").read_text("utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                     finalize=_shown)
    return environment.from_string(source)


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
