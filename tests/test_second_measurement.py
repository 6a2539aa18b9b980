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


def test_the_hmm_manifold_agrees_between_pipelines_and_clears_its_null(rows):
    """The best-of-PC1-5 correlation beyond position: the two pipelines agree within their
    seed spread, and every seed's value is set beside its own shuffled null."""
    own = values(rows, "hmm", "own", "hmm_beyond_position")
    library = values(rows, "hmm", "library", "hmm_beyond_position")
    spread = max(own.max() - own.min(), library.max() - library.min())
    assert abs(own.mean() - library.mean()) <= spread
    for pipeline in ("own", "library"):
        nulls = values(rows, "hmm", pipeline, "hmm_null_q99")
        assert (nulls < 0.2).all()          # 5,120 points: a shuffled |r| of a few hundredths


def test_what_the_chapter_says_of_the_hmm_seeds(rows):
    """Chapter 4: the component moves among PC3-PC5, and every seed of either loop is above
    its own shuffled null (a statement about these committed runs)."""
    for pipeline in ("own", "library"):
        components = values(rows, "hmm", pipeline, "hmm_best_pc_component")
        assert set(components) <= {3, 4, 5}
        beyond = values(rows, "hmm", pipeline, "hmm_beyond_position")
        assert (beyond > values(rows, "hmm", pipeline, "hmm_null_q99")).all()
