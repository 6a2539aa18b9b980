"""``scripts/second_measurement.py``, run at a tiny size: its own generator against the library's
task, its NumPy measures against the library's on the same weights, and its output file.

The committed ``results/second_measurement.json`` carries the outcomes of the full-size run (the
chapter and the reproduction report read it); these tests check the code that makes such a file,
and hold whatever a run shows.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import second_measurement as sm
import torch

from attention_dynamics.measures.geometry import (
    best_pc_pearson,
    key_orthogonality,
    pca,
    within_group_correlation,
)
from attention_dynamics.measures.metrics import entropy_bits
from attention_dynamics.models import Transformer, TransformerConfig
from attention_dynamics.tasks.bijection import BijectionTask
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask

COMMITTED = Path(sm.__file__).resolve().parents[1] / "results" / "second_measurement.json"
LAYOUTS = ("separate", "shared")


def _bijection_model(layout, seed=0, scale=1.0):
    """An untrained model of the script's shape, its weights spread by ``scale`` (any weights
    will do: the measures must agree whatever the model)."""
    task = BijectionTask(sm.V, layout=layout)
    model = Transformer(TransformerConfig(vocab_size=task.vocab_size, max_len=task.seq_len,
                                          **sm.MODEL), torch.Generator().manual_seed(seed))
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    return model, task


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_scripts_generator_makes_the_library_tasks_sequences(layout):
    """Same length and vocabulary, keys a permutation at the task's key positions, the value
    of each key right after it, and the scored positions and answers where the task has them."""
    task = BijectionTask(sm.V, layout=layout)
    tokens, targets = sm.sequences(layout, 64, np.random.default_rng(0))
    reference = task.sample(64, torch.Generator().manual_seed(0))
    assert tokens.shape == targets.shape == tuple(reference.tokens.shape)
    assert tokens.min() >= 0 and tokens.max() < task.vocab_size
    keys = tokens[:, task.key_positions.numpy()]
    values = tokens[:, task.value_positions.numpy()]
    assert (np.sort(keys, axis=1) == np.arange(sm.V)).all()          # V distinct keys
    hypotheses = task.hypothesis_tokens.numpy()
    np.testing.assert_array_equal(sm.hypotheses(layout), hypotheses)
    assert np.isin(values, hypotheses).all()
    assert (np.diff(np.sort(values, axis=1), axis=1) > 0).all()          # distinct values
    # the answer at every key is the value shown right after it (when it is shown)
    shown = task.value_positions.numpy()
    np.testing.assert_array_equal(targets[:, shown - 1], tokens[:, shown])
    scored = targets >= 0
    np.testing.assert_array_equal(scored, (reference.targets >= 0).numpy())
    if layout == "separate":                   # the last key's value is the one never shown
        missing = hypotheses.sum() - values.sum(axis=1)
        np.testing.assert_array_equal(targets[:, -1], missing)
    else:                                      # the final query repeats a key; its value answers
        query = tokens[:, -1]
        position = (keys == query[:, None]).argmax(axis=1)
        np.testing.assert_array_equal(targets[:, -1], values[np.arange(64), position])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_key_measures_equal_the_librarys_on_the_same_weights(layout):
    model, task = _bijection_model(layout, seed=3, scale=2.0)
    ours = sm.key_measures(model, layout)
    with torch.no_grad():
        normed = key_orthogonality(model.token_keys(task.hypothesis_tokens)).mean().item()
        assert ours["mean_abs_normed"] == pytest.approx(normed, abs=1e-6)
        for name, tokens in (("hypotheses", task.hypothesis_tokens),
                             ("tokens_0_to_V-1", torch.arange(sm.V))):
            for layer, block in enumerate(model.blocks):
                raw = model.embed(tokens) @ block.attn.w_k                  # (H, V, d_head)
                assert ours[f"signed_raw_layer_{layer}_{name}"] == pytest.approx(
                    key_orthogonality(raw, signed=True).mean().item(), abs=1e-6)
                assert ours[f"mean_abs_raw_layer_{layer}_{name}"] == pytest.approx(
                    key_orthogonality(raw).mean().item(), abs=1e-6)
    if layout == "shared":                     # there the tokens 0..V-1 are the hypotheses
        for layer in range(sm.MODEL["n_layers"]):
            assert (ours[f"signed_raw_layer_{layer}_tokens_0_to_V-1"]
                    == ours[f"signed_raw_layer_{layer}_hypotheses"])


def test_off_diagonal_cosines_of_a_hand_worked_frame():
    # three keys at 0, 90 and 180 degrees: the ordered pairs' cosines are 0, -1, 0 (twice each)
    keys = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])
    assert sorted(sm.off_diagonal(keys).round(12)) == [-1, -1, 0, 0, 0, 0]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_key_entropy_error_equals_the_librarys_on_the_same_sequences(layout):
    model, task = _bijection_model(layout, seed=4, scale=3.0)
    ours = sm.key_entropy_mae(model, layout, seed=5, n_sequences=50)
    tokens, _ = sm.sequences(layout, 50, np.random.default_rng(10_005))
    with torch.no_grad():
        logits = model(torch.from_numpy(tokens))
    curve = entropy_bits(logits[:, task.key_positions], task.answer_tokens).mean(0)
    bayes = task.bayes_entropy_curve()[:len(task.key_positions)]
    assert ours == pytest.approx((curve - bayes).abs().mean().item(), abs=1e-9)


def test_the_hmm_manifold_equals_the_library_protocol():
    """Best of PC1-5 by |Pearson| (``best_pc_pearson``), its correlation within positions
    (``within_group_correlation``), and the null from the same shuffles, on one set of weights."""
    task = HMMFilteringTask(**sm.HMM)
    model = Transformer(TransformerConfig(vocab_size=task.vocab_size, max_len=task.seq_len,
                                          **sm.HMM_MODEL), torch.Generator().manual_seed(6))
    seed, n_seq, n_shuffles = 2, 40, 4
    ours = sm.hmm_manifold(model, task, seed, n_shuffles=n_shuffles, n_sequences=n_seq)
    batch = task.sample(n_seq, torch.Generator().manual_seed(300 + seed))
    positions = task.query_positions
    with torch.no_grad():
        _, record = model(batch.tokens, return_record=True)
    points = record.residual[-1][:, positions].double().flatten(0, 1)
    entropy = batch.bayes_entropy_bits[:, positions].double()                # (B, P)
    groups = torch.arange(len(positions)).repeat(n_seq)

    def statistic(coordinate):
        component, r = best_pc_pearson(points, coordinate.flatten())
        scores = pca(points).scores[:, component - 1]
        return abs(within_group_correlation(scores, coordinate.flatten(), groups)), component, r

    beyond, component, r = statistic(entropy)
    assert ours["hmm_best_pc_component"] == component
    assert ours["hmm_best_pc_abs_pearson"] == pytest.approx(r, abs=1e-9)
    assert ours["hmm_beyond_position"] == pytest.approx(beyond, abs=1e-9)
    rng = np.random.default_rng(400 + seed)
    order = np.tile(np.arange(n_seq)[:, None], (1, len(positions)))
    null = [statistic(entropy.gather(0, torch.from_numpy(rng.permuted(order, axis=0))))[0]
            for _ in range(n_shuffles)]
    assert ours["hmm_null_q99"] == pytest.approx(float(np.quantile(null, 0.99)), abs=1e-9)


def test_a_tiny_run_writes_the_committed_files_layout(tmp_path):
    """Every layout and pipeline, one seed, three training steps: the file has the committed
    one's fields and row keys, its settings say the size it ran at, and its numbers are in
    range (cosines in [-1, 1], a mean |cos| no smaller than the signed mean's size)."""
    output = tmp_path / "second.json"
    sm.main(["--seeds", "0", "--steps", "3", "--hmm-steps", "3", "--n-shuffles", "5",
             "--output", str(output)])
    content, committed = json.loads(output.read_text()), json.loads(COMMITTED.read_text())
    # the committed file adds "runs": the provenance of the runs it was assembled from
    assert set(content) == set(committed) - {"runs"}
    assert content["settings"]["steps"] == 3 and content["settings"]["hmm_steps"] == 3
    assert set(content["settings"]) == set(committed["settings"])
    rows = content["rows"]
    assert [(r["layout"], r["pipeline"]) for r in rows] == [
        (layout, pipeline) for layout in ("separate", "shared", "hmm")
        for pipeline in ("own", "library")]
    committed_keys = {r["layout"]: set(r) for r in committed["rows"]}
    for row in rows:
        assert set(row) == committed_keys[row["layout"]], row["layout"]
        if row["layout"] == "hmm":
            assert row["hmm_best_pc_component"] in range(1, 6)
            for name in ("hmm_beyond_position", "hmm_null_q99", "hmm_best_pc_abs_pearson"):
                assert 0 <= row[name] <= 1, name
            continue
        assert 0 <= row["key_entropy_mae_bits"] <= np.log2(sm.V)
        for name, value in row.items():
            if name.startswith(("signed_", "init_signed_")):
                absolute = row[name.replace("signed", "mean_abs")]
                assert -1 <= value <= 1 and abs(value) <= absolute + 1e-12, name
