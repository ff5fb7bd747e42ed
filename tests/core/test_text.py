"""Text for people made inert: escapes shown, workflow commands defused, GitHub references unlinked."""

import pytest

from cogeval._text import (
    WORD_JOINER,
    as_text,
    printable,
    safe_str,
    terminal_text,
    unlinked,
    without_workflow_commands,
    workflow_data,
    workflow_property,
)

HOSTILE = "x\x1b[31m::error::pwned @alice #1 [/]"


class Unprintable:
    def __str__(self):
        raise RuntimeError("no str")

    __repr__ = __str__


class OnlyRepr:
    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        return "OnlyRepr()"


def test_safe_str_falls_back_to_repr_then_to_a_marker():
    assert safe_str("text") == "text"
    assert safe_str(3) == "3"
    assert safe_str(OnlyRepr()) == "OnlyRepr()"
    assert safe_str(Unprintable()) == "<unprintable Unprintable>"


def test_as_text_never_fails():
    assert as_text({"q": Unprintable()}) == '{"q": "<unprintable Unprintable>"}'
    assert as_text({(1, 2): "tuple key"}) == "{(1, 2): 'tuple key'}"  # JSON cannot write the key: its str()


@pytest.mark.parametrize(("text", "shown"), [
    (HOSTILE, "x\\x1b[31m::error::pwned @alice #1 [/]"),
    ("a\nb\rc\td", "a\\nb\\rc\\td"),
    ("\x00\x07\x7f", "\\x00\\x07\\x7f"),
    ("csi \x9b31m osc \x9d0;t\x9c", "csi \\x9b31m osc \\x9d0;t\\x9c"),  # C1 controls, one character each
    ("line\u2028para\u2029", "line\\u2028para\\u2029"),
    ("\u202eevil\u2066", "\\u202eevil\\u2066"),  # bidi override and isolate
    ("cut \ud83d", "cut \\ud83d"),  # a lone surrogate
    ("é 😀 ✓", "é 😀 ✓"),  # ordinary non-ASCII is kept
])
def test_printable_shows_every_control_character_as_an_escape(text, shown):
    assert printable(text) == shown


def test_printable_keeps_what_it_is_told_to():
    assert printable("a\nb\x1b", keep="\n") == "a\nb\\x1b"


def test_lines_that_would_start_a_workflow_command_get_a_backslash():
    text = "::error::a\n  ::set-output name=x::y\nok ::notice:: inside\n\t::warning::t\r::debug::d\nsee ##[error]x"
    assert without_workflow_commands(text) == (
        "\\::error::a\n  \\::set-output name=x::y\nok ::notice:: inside\n\t\\::warning::t\r\\::debug::d\nsee \\##[error]x")


def test_terminal_text_keeps_lines_and_is_idempotent():
    text = f"name {HOSTILE}\r\n{HOSTILE[1:]}\n\tend"
    once = terminal_text(text)
    assert once == "name x\\x1b[31m::error::pwned @alice #1 [/]\n\\x1b[31m::error::pwned @alice #1 [/]\n\tend"
    assert terminal_text(once) == once
    assert terminal_text("\n::error::x") == "\n\\::error::x"


def test_workflow_escaping_follows_githubs_rules():
    assert workflow_data("100% done\r\nnext::x, y\x1b") == "100%25 done%0D%0Anext::x, y\\x1b"
    assert workflow_property("a: b, c%\n") == "a%3A b%2C c%25%0A"


def test_github_references_are_unlinked_with_a_word_joiner():
    j = WORD_JOINER
    assert unlinked("@alice and @org/team") == f"@{j}alice and @{j}org/team"
    assert unlinked("fixes #12, owner/repo#3, GH-4 and gh-5") == f"fixes #{j}12, owner/repo#{j}3, GH{j}-4 and gh{j}-5"
    assert unlinked("(@bob) x.@carol") == f"(@{j}bob) x.@{j}carol"
    # e-mail addresses, a bare @ or #, and #word stay as they are
    assert unlinked("bob@example.com @ # #heading C# 1") == "bob@example.com @ # #heading C# 1"
