import dataclasses
import json
import math

import numpy as np

from cogeval.data.jsonable import jsonable


def test_numbers_and_non_finite_values():
    assert jsonable([1, 2.5, math.nan, math.inf, -math.inf, np.float32(0.5), np.int64(3), True]) == [
        1, 2.5, None, None, None, 0.5, 3, True,
    ]


def test_values_json_cannot_hold_become_strings():
    out = jsonable({"bytes": b"\x00", "set": {2}, "obj": object, 3: "int key"})
    assert out == {"bytes": "b'\\x00'", "set": "{2}", "obj": "<class 'object'>", "3": "int key"}
    json.dumps(out)


def test_circular_references_are_marked_and_siblings_are_not():
    shared = [1]
    loop: dict = {"shared_a": shared, "shared_b": shared}
    loop["self"] = loop
    assert jsonable(loop) == {"shared_a": [1], "shared_b": [1], "self": "[Circular]"}


def test_dataclasses_and_arrays():
    @dataclasses.dataclass
    class Point:
        x: float
        y: list

    assert jsonable(Point(1.0, [np.nan])) == {"x": 1.0, "y": [None]}
    assert jsonable(np.array([[1, 2]])) == [[1, 2]]
