"""canonical_json against JavaScript's JSON.stringify, byte for byte.

NODE_VECTORS holds the output of node v20.20.2 `JSON.stringify` on each value with
its keys sorted (the NODE_SCRIPT below), pasted as literals so the test checks real
values without node. When `node` is on PATH the same values and random ones are
also run through node live.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogeval.data import canonical_json
from cogeval.errors import InputError

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

# JSON.parse cannot carry NaN or infinities, so they travel as marker strings and a reviver restores them.
NODE_SCRIPT = r"""
const special = {"__NaN__": NaN, "__Infinity__": Infinity, "__-Infinity__": -Infinity};
const revive = (k, v) => (typeof v === "string" && Object.hasOwn(special, v)) ? special[v] : v;
const sortKeys = (v) => Array.isArray(v) ? v.map(sortKeys)
  : (v !== null && typeof v === "object") ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]))
  : v;
const values = JSON.parse(require("fs").readFileSync(0, "utf8"), revive);
process.stdout.write(JSON.stringify(values.map((v) => JSON.stringify(sortKeys(v)))));
"""


def _marked(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "__NaN__" if math.isnan(value) else ("__Infinity__" if value > 0 else "__-Infinity__")
    if isinstance(value, dict):
        return {key: _marked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_marked(item) for item in value]
    return value


def node_stringify(values: list) -> list[str]:
    """What node writes for each value (keys sorted), in one node call."""
    text = json.dumps([_marked(value) for value in values])  # ASCII: lone surrogates travel as \udxxx escapes
    result = subprocess.run(
        [NODE, "-e", NODE_SCRIPT], input=text, capture_output=True, text=True, encoding="utf-8", check=True, timeout=60
    )
    return json.loads(result.stdout)


# (value, node v20.20.2 JSON.stringify of the value with sorted keys)
NODE_VECTORS = [
    ('', '""'),
    ('plain', '"plain"'),
    ('é ü 中文 ⌘', '"é ü 中文 ⌘"'),
    ('😀', '"😀"'),
    ('a\ud800b', '"a\\ud800b"'),
    ('\udc00', '"\\udc00"'),
    ('\ud83d\ude00', '"😀"'),
    ('\udbff\udfff', '"\U0010ffff"'),
    ('\x00\x01\x1f\x7f', '"\\u0000\\u0001\\u001f\x7f"'),
    ('\x08\x0c\n\r\t', '"\\b\\f\\n\\r\\t"'),
    ('"\\/', '"\\"\\\\/"'),
    ('\u2028\u2029', '"\u2028\u2029"'),
    ({'\uffff': 1, '😀': 2, 'a': 3, 'B': 4, '\ue000': 5, 'é': 6}, '{"B":4,"a":3,"é":6,"😀":2,"\ue000":5,"\uffff":1}'),
    ({'10': 0, '2': 0, '01': 0, '-1': 0, '4294967295': 0, '4294967294': 0, '0': 0, '1.5': 0, '': 0, '1e3': 0, ' 1': 0}, '{"0":0,"2":0,"10":0,"4294967294":0,"":0," 1":0,"-1":0,"01":0,"1.5":0,"1e3":0,"4294967295":0}'),
    ({'b': {'d': [{'z': 1, 'y': None}], 'c': True}, 'a': [], '__proto__': {'x': False}}, '{"__proto__":{"x":false},"a":[],"b":{"c":true,"d":[{"y":null,"z":1}]}}'),
    (1.0, '1'),
    (0.1, '0.1'),
    (1e+21, '1e+21'),
    (1e-07, '1e-7'),
    (5e-324, '5e-324'),
    (1.7976931348623157e+308, '1.7976931348623157e+308'),
    (-0.0, '0'),
    (1e-06, '0.000001'),
    (1.23e-18, '1.23e-18'),
    (1.2345678901234568e+20, '123456789012345680000'),
    (1e+20, '100000000000000000000'),
    (0.30000000000000004, '0.30000000000000004'),
    (-1.5e-10, '-1.5e-10'),
    (100.0, '100'),
    (1.5e-06, '0.0000015'),
    (2.5e-07, '2.5e-7'),
    (123456.789, '123456.789'),
    (-2147483647.5, '-2147483647.5'),
    (2**53, '9007199254740992'),
    (2**53 + 1, '9007199254740992'),
    (10**21, '1e+21'),
    (10**21 + 1, '1e+21'),
    (-10**25, '-1e+25'),
    (12345678901234567890, '12345678901234567000'),
    (10**400, 'null'),
    (-7, '-7'),
    (0, '0'),
    (math.nan, 'null'),
    (math.inf, 'null'),
    (-math.inf, 'null'),
    ([math.nan, {"k": math.inf}], '[null,{"k":null}]'),
    (None, 'null'),
    (True, 'true'),
    (False, 'false'),
    ([], '[]'),
    ({}, '{}'),
    ([[], [{}], [None, 'x', 1.5]], '[[],[{}],[null,"x",1.5]]'),
]


@pytest.mark.parametrize(("value", "expected"), NODE_VECTORS)
def test_matches_the_recorded_node_output(value, expected):
    assert canonical_json(value) == expected


@needs_node
def test_recorded_vectors_are_what_node_writes_today():
    assert node_stringify([value for value, _ in NODE_VECTORS]) == [expected for _, expected in NODE_VECTORS]


def test_design_example_and_its_key_text():
    assert canonical_json({"input": "What is 2+2?", "expected": "4"}) == '{"expected":"4","input":"What is 2+2?"}'


def test_keys_sort_by_utf16_code_units_not_code_points():
    # Python compares code points (U+FFFF < U+1F600); JavaScript compares UTF-16 code units,
    # and "😀" is the pair 0xD83D 0xDE00, so it comes before 0xFFFF.
    assert sorted(["😀", "\uffff"]) == ["\uffff", "😀"]
    assert canonical_json({"\uffff": 1, "😀": 2}) == '{"😀":2,"\uffff":1}'


def test_output_is_always_utf8_encodable():
    text = canonical_json({"\ud800": "\udfff", "pair": "\ud83d\ude00"})
    assert text == '{"pair":"😀","\\ud800":"\\udfff"}'
    assert text.encode("utf-8").decode("utf-8") == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ((1, "a", (True,)), '[1,"a",[true]]'),
        (np.array([[1.0, 0.5], [2.0, -0.0]]), "[[1,0.5],[2,0]]"),
        (np.float64(0.1), "0.1"),
        (np.float32(0.1), "0.10000000149011612"),
        (np.int64(-3), "-3"),
        (np.bool_(True), "true"),
        (np.nan, "null"),
        (Fraction(1, 4), "0.25"),
        # True == 1: the key 1 stays and takes the later value (as a dict literal does, which ruff's F601 flags)
        (dict([(1, "a"), (2.5, "b"), (None, "c"), (True, "d")]), '{"1":"d","2.5":"b","null":"c"}'),
        ({10: 0, 2: 0, "b": 0}, '{"2":0,"10":0,"b":0}'),
        ({float("nan"): 1, float("-inf"): 2}, '{"-Infinity":2,"NaN":1}'),
    ],
)
def test_python_and_numpy_values_map_to_their_json_form(value, expected):
    assert canonical_json(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"x", "cannot write value as JSON: bytes is not a JSON value (use str, number, bool, None, list or dict); got b'x'"),
        ({"a": [1, {2}]}, "cannot write value['a'][1] as JSON: set is not a JSON value (use str, number, bool, None, list or dict); got {2}"),
        ({(1, 2): "x"}, "cannot write value as JSON: key (1, 2) is a tuple; use str keys"),
        ({1: "x", "1": "y"}, "cannot write value as JSON: keys '1' collide once written as strings"),
    ],
)
def test_values_json_cannot_hold_raise_naming_the_place(value, message):
    with pytest.raises(InputError) as caught:
        canonical_json(value)
    assert str(caught.value) == message


def test_a_container_holding_itself_raises_instead_of_recursing():
    loop: list = [1]
    loop.append(loop)
    with pytest.raises(InputError, match=r"^cannot write metadata\[1\] as JSON: it contains itself$"):
        canonical_json(loop, name="metadata")


def test_a_shared_but_acyclic_value_is_fine():
    shared = {"x": 1}
    assert canonical_json([shared, shared]) == '[{"x":1},{"x":1}]'


# -- random JSON-like values, checked against node --------------------------------------------

_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=6)
_keys = st.one_of(_text, st.integers(-5, 2**32 + 5).map(str), st.sampled_from(["01", "4294967294", "4294967295", "\uffff", "😀"]))
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-5, max_value=1e-5),
    _text,
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=5)),
    max_leaves=15,
)


@needs_node
@settings(max_examples=15, deadline=None)
@given(st.lists(_json, min_size=1, max_size=40))
def test_random_values_match_node(values):
    assert [canonical_json(value) for value in values] == node_stringify(values)
