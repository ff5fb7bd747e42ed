from cogeval._html import badge, escape, format_value, html_table, key_value_table, safe_html


def test_escape_neutralises_markup():
    assert escape('<script>alert("x")</script>') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"


def test_format_value():
    assert format_value(float("nan")) == "–"
    assert format_value(None) == "–"
    assert format_value(0.123456789) == "0.1235"
    assert format_value(True) == "True"


def test_table_escapes_every_cell_and_counts_hidden_rows():
    rows = [{"input": "<b>bold</b>", "score": 0.5}] * 3
    out = html_table(rows, ["input", "score"], caption="<i>", max_rows=2)
    assert "<b>bold</b>" not in out and "&lt;b&gt;bold&lt;/b&gt;" in out
    assert "&lt;i&gt;" in out
    assert out.count("<tr><td") == 3 and "1 more rows" in out


def test_raw_columns_keep_trusted_badges():
    out = html_table([{"winner": badge("head", "good")}], ["winner"], raw_columns=["winner"])
    assert '<span class="b good">head</span>' in out


def test_key_value_table_escapes():
    out = key_value_table("T", {"a": "<x>"})
    assert "&lt;x&gt;" in out and "<x>" not in out


def test_safe_html_never_raises():
    class Broken:
        @safe_html
        def _repr_html_(self):
            raise KeyError("<boom>")

    out = Broken()._repr_html_()
    assert out.startswith("<pre>Broken: could not display (KeyError:")
    assert "<boom>" not in out


def test_any_value_displays_even_one_whose_str_raises():
    class Unprintable:
        def __str__(self):
            raise RuntimeError("no str")

        __repr__ = __str__

    assert escape(Unprintable()) == "&lt;unprintable Unprintable&gt;"
    assert format_value(Unprintable()) == "<unprintable Unprintable>"
    assert escape("cut \ud83d \x1b[31m\nnext") == "cut \\ud83d \\x1b[31m\nnext"  # encodable, visible, lines kept
    assert "&lt;unprintable Unprintable&gt;" in html_table([{"a": Unprintable()}], ["a"])
