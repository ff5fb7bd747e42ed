"""Importers hold what they read within bounds (issue 24 item 7): a zip bomb named ``.eval`` is refused
before Inspect unpacks it, and an lm-eval score of hundreds of digits scores NaN saying why."""

from __future__ import annotations

import json
import math
import pathlib
import zipfile

import pytest

from cogeval.errors import RunFileError
from cogeval.importers.lm_eval import read_lm_eval_samples

SMALL = next((pathlib.Path(__file__).parent / "fixtures" / "lm_eval").glob("**/samples_cogeval_arith_*.jsonl"))


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path):
    pytest.importorskip("inspect_ai")
    from cogeval.importers.inspect_log import read_inspect_log

    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}))
        archive.writestr("samples/1_epoch_1.json", b" " * (65 * 2**20))  # 65 MiB of spaces: about 65 KB packed
    packed = bomb.stat().st_size
    unpacked = 65 * 2**20 + len(json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}))
    with pytest.raises(RunFileError) as info:
        read_inspect_log(bomb)
    assert str(info.value) == (f"Inspect log '{bomb}' unpacks to {unpacked:,} bytes from {packed:,}; cogeval reads "
                               "logs that unpack to at most 2,147,483,648 bytes, or 200 times their size past "
                               "67,108,864 (a zip bomb would fill memory)")


def test_a_score_of_hundreds_of_digits_scores_nan_saying_why(tmp_path):
    objects = [json.loads(line) for line in SMALL.read_text(encoding="utf-8").splitlines()[:2]]
    text = json.dumps(objects[0]).replace('"exact_match": 1.0', '"exact_match": 1' + "0" * 400, 1)
    text = text.replace('"exact_match": 0.0', '"exact_match": 1' + "0" * 400, 1)
    path = tmp_path / SMALL.name
    path.write_text(text + "\n" + json.dumps(objects[1]) + "\n", encoding="utf-8")
    run = read_lm_eval_samples(path)
    [score] = run.results[0].scores[:1]
    assert math.isnan(score.score)
    assert score.error == "lm-eval logged 100000000000000000000000000000000000000000000000000000000..., beyond the range of a float"
