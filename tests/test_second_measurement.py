"""Chapter 4's key geometry against the second, independent measurement (its committed results).

``scripts/second_measurement.py`` trains the chapter's bijection models with its own loop and
measures the keys with its own code; the same file holds the library's pipeline on the same seeds.
The chapter says the two agree: these tests hold that to the numbers, seed spread included.
"""

import json
from pathlib import Path

import numpy as np
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "results" / "second_measurement.json"


@pytest.fixture(scope="module")
def rows():
    content = json.loads(RESULTS.read_text())
    assert {"commit", "date", "settings", "versions"} <= set(content)
    return content["rows"]


def values(rows, layout, pipeline, name):
    found = np.array([r[name] for r in rows if r["layout"] == layout and r["pipeline"] == pipeline])
    assert len(found) >= 3, f"{layout} {pipeline}: fewer than three seeds"
    return found


@pytest.mark.parametrize("layout", ["separate", "shared"])
def test_both_pipelines_solve_the_key_positions(rows, layout):
    for pipeline in ("own", "library"):
        assert values(rows, layout, pipeline, "key_entropy_mae_bits").max() < 0.05


@pytest.mark.parametrize("layout", ["separate", "shared"])
@pytest.mark.parametrize("statistic", ["mean_abs_normed", "signed_raw_layer_0_hypotheses",
                                       "signed_raw_layer_1_hypotheses",
                                       "signed_raw_layer_0_tokens_0_to_V-1"])
def test_the_pipelines_agree_within_their_seed_spread(rows, layout, statistic):
    own = values(rows, layout, "own", statistic)
    library = values(rows, layout, "library", statistic)
    spread = max(own.max() - own.min(), library.max() - library.min())
    assert abs(own.mean() - library.mean()) <= spread
    if min(abs(own.mean()), abs(library.mean())) > spread:   # clear of zero: the same sign
        assert np.sign(own.mean()) == np.sign(library.mean())


def test_the_token_set_explains_the_large_separate_layout_cosines(rows):
    """The figure script's tokens 0..V-1 are the key tokens in the separate layout: their raw
    layer-0 keys are far more aligned than the hypotheses' on every seed."""
    for pipeline in ("own", "library"):
        keys = values(rows, "separate", pipeline, "signed_raw_layer_0_tokens_0_to_V-1")
        hypotheses = values(rows, "separate", pipeline, "signed_raw_layer_0_hypotheses")
        assert (keys > hypotheses + 0.2).all()
