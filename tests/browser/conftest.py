"""Headless Chromium (Debian's ``chromium``) through Playwright, offline, for the page tests.

Every test here is marked ``browser``. When Playwright or Chromium is missing
they skip, except under CI (``CI`` set and not ``0``/``false``), where they
fail: CI must really run them (``.ci/run`` installs ``chromium``). Playwright
never downloads a browser here: it launches ``/usr/bin/chromium`` (or
``$COGEVAL_CHROMIUM``) with the flags of shared/NOTEBOOKS.md; Playwright gives
each launch a new, empty profile folder.

``open_page(path, name)`` loads a local file and records what a person would
not see: console errors, uncaught page errors, and every request that is not
``file:``, ``data:`` or ``blob:`` (aborted, so nothing leaves the machine).
Screenshots go to ``artifacts/browser/`` (ignored by git).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = os.environ.get("COGEVAL_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "artifacts" / "browser"
LOCAL_SCHEMES = ("file:", "data:", "blob:")
FLAGS = [  # Playwright adds --headless itself (headless=True)
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost",  # Chromium's own look-ups never leave the machine
]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = pathlib.Path(__file__).parent
    for item in items:
        if here in pathlib.Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (it is in the dev extra)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set COGEVAL_CHROMIUM)"
    return None


@dataclasses.dataclass
class Visit:
    """A page opened by :func:`open_page` and what happened while it loaded."""

    page: Any
    console_errors: list[str]
    page_errors: list[str]
    blocked: list[str]
    screenshot: pathlib.Path

    def assert_clean(self) -> None:
        """No console error, no uncaught error, no request outside file:/data:/blob:."""
        assert self.blocked == [], f"requests outside file:/data:/blob: {self.blocked}"
        assert self.page_errors == [], f"uncaught errors: {self.page_errors}"
        assert self.console_errors == [], f"console errors: {self.console_errors}"

    def shoot(self) -> pathlib.Path:
        """Save a full-page screenshot as ``artifacts/browser/<name>.png``."""
        self.page.screenshot(path=str(self.screenshot), full_page=True)
        return self.screenshot


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium shared by a test module.

    Module scope, not session: Playwright's sync API runs an asyncio loop in
    the main thread while it is started, which would break later tests that
    check for a running loop; it is stopped when the module's tests are done.
    """
    reason = _missing()
    if reason:
        if in_ci():
            pytest.fail(f"browser tests must run under CI, but {reason}", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Any]:
    """``open_page(path, name, wait_for=None)`` → :class:`Visit`; ``visit.shoot()`` saves ``<name>.png``."""
    contexts = []

    def visit(path: pathlib.Path, name: str, *, wait_for: str | None = None, timeout_ms: float = 20_000) -> Visit:
        context = chromium.new_context(viewport={"width": 1200, "height": 900}, color_scheme="light")
        contexts.append(context)
        page = context.new_page()
        console_errors: list[str] = []
        page_errors: list[str] = []
        blocked: list[str] = []
        page.on("console", lambda message: message.type == "error" and console_errors.append(message.text))
        page.on("pageerror", lambda error: page_errors.append(str(error)))

        def route(request_route: Any) -> None:
            url = request_route.request.url
            if url.startswith(LOCAL_SCHEMES):
                request_route.continue_()
            else:
                blocked.append(url)
                request_route.abort()

        page.route("**/*", route)
        page.goto(pathlib.Path(path).resolve().as_uri(), wait_until="load", timeout=timeout_ms)
        if wait_for:
            page.wait_for_selector(wait_for, state="attached", timeout=timeout_ms)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        return Visit(page, console_errors, page_errors, blocked, ARTIFACTS / f"{name}.png")

    yield visit
    for context in contexts:
        context.close()
