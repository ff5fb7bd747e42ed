"""notebooks/noise.ipynb runs top to bottom in the project's kernel and shows the noise report, its chart, the
comparisons against the noise and the reliability rows (tests/notebook_runs.py executes it once). Its 3 reruns
get the warning that the margin is a rough guide, shown under the cell as a notebook shows any warning."""

from __future__ import annotations

import json

import pytest
from notebook_runs import executed


@pytest.mark.slow
def test_the_noise_notebook_measures_reruns_and_compares_against_them():
    nb = executed("noise").nb
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    warned = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert warned and all("noise_report of 3 reruns: suggested_margin is a rough guide" in text for text in warned)
    outputs = [o for o in outputs if not (o.output_type == "stream" and o.name == "stderr")]
    assert sum("application/vnd.plotly.v1+json" in o.get("data", {}) for o in outputs) == 1  # the flip rates
    printed = [o.text for o in outputs if o.output_type == "stream"]
    assert printed == [
        "inconclusive: no deciding metric is shown better, worse or equivalent; about 2,614 cases would settle the "
        "closest one (α = 0.05, 300 matched cases)\n"
        "head is better: better on exact_match (α = 0.05, 300 matched cases)\n",
        "head is better: better on exact_match (α = 0.05, 300 matched cases); fragile: exact_match is not "
        "significant without its 3 most supporting cases of 300\n",
    ]
    html = json.dumps([o.get("data", {}).get("text/html", "") for o in outputs])
    assert "NoiseReport" in html and "suggested_margin" in html and "exact_match.pass^3" in html
    assert executed("noise").temporary_files == []
