"""Chapter 4's module (:mod:`attention_dynamics.chapters.manifold_formation`): its settings, its
helpers on hand-made inputs with known answers, and the whole experiment at a tiny size (the
metric names of the committed results, finite, the same twice). What the experiment shows is the
ledger's, not these tests'."""

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch
from matplotlib.figure import Figure

from attention_dynamics.book.provenance import stale_reasons
from attention_dynamics.book.results import Results
from attention_dynamics.chapters import manifold_formation as chapter
from attention_dynamics.chapters.manifold_formation import figures, tables
from attention_dynamics.chapters.manifold_formation.ablation import HeadAblation
from attention_dynamics.chapters.manifold_formation.calibration import (
    bijections,
    error_steps,
    length_kl_ratio,
)
from attention_dynamics.chapters.manifold_formation.frame import (
    PRECISION,
    SETTLING,
    end_window,
    frame_checkpoints,
    key_subspace,
    settle_steps,
)
from attention_dynamics.chapters.manifold_formation.keys import position_against_inits
from attention_dynamics.chapters.manifold_formation.probes import probe_part
from attention_dynamics.chapters.manifold_formation.seeds import PER_SEED, weakest_seed
from attention_dynamics.chapters.manifold_formation.settings import PROBE_PARTS
from attention_dynamics.chapters.manifold_formation.training import key_position_mae, replicate_seed
from attention_dynamics.chapters.manifold_formation.value_manifold import (
    PROTOCOL_KEYS,
    ProtocolInputs,
    record_protocols,
)
from attention_dynamics.chapters.manifold_formation.words import (
    hmm_phrases,
    key_frame_phrase,
    page_phrases,
    replacement_phrase,
)
from attention_dynamics.measures.value_manifold import PROTOCOLS
from attention_dynamics.tasks.base import TaskBatch
from attention_dynamics.tasks.bijection import LAYOUTS

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


def _tiny(n_seeds=2):
    """Quick settings cut down to a run of seconds (the HMM at the quick profile's lengths, so
    that the metric names are the profile's)."""
    chosen = chapter.settings("quick", n_seeds=n_seeds)
    chosen.update(
        n_symbols=4,
        bijection_model=dict(n_layers=2, n_heads=2, d_model=16, init_std=0.1),
        bijection_training=dict(steps=20, batch_size=8, lr=3e-3, warmup_steps=2, final_lr_fraction=0.0),
        mlp_training=dict(steps=10, batch_size=8, lr=3e-3, warmup_steps=1),
        hmm_task=dict(n_states=2, n_observations=20, resolution=0.05),
        hmm_model=dict(n_layers=1, n_heads=2, d_model=16, init_std=0.1),
        hmm_training=dict(steps=10, batch_size=8, lr=3e-3, warmup_steps=2, loss="bayes"),
        n_checkpoints=4, eval_batches=1, eval_batch_size=16, probe_size=32,
        frame_training=dict(steps=40, batch_size=8, lr=3e-3, warmup_steps=2, final_lr_fraction=1.0),
        late_checkpoints=5,
    )
    return chosen


# ---- settings ----

def test_settings_are_copies_per_profile():
    quick, decide = chapter.settings("quick"), chapter.settings("decide")
    assert set(chapter.SETTINGS) == {"quick", "decide", "paper"}
    assert quick["n_symbols"] == 10 and quick["bijection_training"]["steps"] == 1500
    assert quick["n_seeds"] == 2 and decide["n_seeds"] == 6
    assert decide["hmm_training"]["steps"] == 4000 and decide["frame_training"]["steps"] == 1500
    assert decide["bijection_training"]["steps"] == 3000
    changed = {key for key in quick if quick[key] != decide[key]}
    assert changed == {"hmm_training", "n_seeds", "frame_training", "late_checkpoints",
                       "bijection_training"}
    quick["bijection_model"]["n_layers"] = 7
    decide["hmm_training"]["steps"] = 1
    assert chapter.SETTINGS["quick"]["bijection_model"]["n_layers"] == 2
    assert chapter.SETTINGS["decide"]["hmm_training"]["steps"] == 4000
    assert chapter.settings("decide")["bijection_model"]["n_layers"] == 2  # no nested dict shared
    assert chapter.settings("paper")["bijection_training"]["steps"] == 50_000


def test_n_seeds_replaces_the_seeds_only():
    chosen = chapter.settings("paper", n_seeds=2)
    assert chosen["n_seeds"] == 2
    chosen["n_seeds"] = 6
    assert chosen == chapter.settings("paper")


@pytest.mark.parametrize(("profile", "n_seeds", "names"), [
    ("fast", None, ["profile", "'quick'", "'decide'", "'paper'", "'fast'"]),
    ("quick", 0, ["n_seeds", "at least 1", "0"]),
    ("quick", -3, ["n_seeds", "at least 1"]),
    ("quick", 2.0, ["n_seeds", "integer"]),
    ("quick", True, ["n_seeds", "integer"]),
    ("quick", "3", ["n_seeds", "'3'"]),
])
def test_settings_refuse_bad_arguments_by_name(profile, n_seeds, names):
    with pytest.raises(ValueError) as error:
        chapter.settings(profile, n_seeds=n_seeds)
    for name in names:
        assert name in str(error.value)


# ---- helpers, on inputs with known answers ----

def test_replicate_seed_offsets_by_a_thousand_per_replicate():
    assert replicate_seed(0, 0, 50) == 50
    assert replicate_seed(7, 3, 500) == 3507


def test_key_position_mae_takes_only_the_key_positions():
    report = SimpleNamespace(positions=torch.tensor([0, 1, 2, 3]),
                             model_entropy=torch.tensor([1.0, 2.0, 3.0, 4.0]),
                             bayes_entropy=torch.tensor([1.5, 0.0, 3.0, 0.0]))
    task = SimpleNamespace(key_positions=torch.tensor([0, 2]))
    assert key_position_mae(report, task) == pytest.approx(0.25)  # (0.5 + 0) / 2


def test_error_steps_at_the_training_length_and_inside_it():
    errors = torch.cat([torch.zeros(20), torch.ones(10)])
    at_boundary, inside = error_steps(errors, 20)
    assert at_boundary == 1.0 and inside == 0.0
    ramp = torch.arange(30, dtype=torch.float64)  # every step of five-means is 5
    assert error_steps(ramp, 20) == (5.0, 5.0)


def test_length_kl_ratio_is_the_longer_lengths_mean_over_the_training_length():
    reports = {20: SimpleNamespace(kl_bits=0.5), 30: SimpleNamespace(kl_bits=1.0),
               50: SimpleNamespace(kl_bits=2.0), 10: SimpleNamespace(kl_bits=9.0)}
    assert length_kl_ratio(reports, 20) == pytest.approx(3.0)  # mean(1, 2) / 0.5


def test_positions_against_the_initialisations_and_the_summary():
    assert [position_against_inits(v, 0.2, 0.4) for v in (0.1, 0.2, 0.4, 0.5)] == \
        ["below", "within", "within", "above"]
    summary = key_frame_phrase({"separate": 1, "shared": 4}, 6)
    assert "on 1 of 6 seeds in the separate layout and on 4 of 6 in the shared one" in summary


def test_replacement_phrase_says_above_only_when_strictly_above():
    assert replacement_phrase(0.3, 0.3, 1, 0.5).startswith("not above the stronger of its nulls (0.300)")
    assert replacement_phrase(0.31, 0.3, 4, 0.02).endswith("on PC4, which carries 2.0% of the variance")


def test_frame_checkpoints_join_geometric_and_late_even_steps():
    chosen = {"frame_training": {"steps": 100}, "n_checkpoints": 2, "late_checkpoints": 3}
    assert frame_checkpoints(chosen) == [0, 10, 50, 75, 100]  # geometric 0, 10, 100; even 50, 75, 100


def test_end_window_is_the_last_tenth():
    assert end_window([0, 10, 89, 90, 100]) == [90, 100]
    assert end_window([0, 5]) == [5]


def test_key_subspace_spans_the_leading_directions():
    keys = torch.zeros(6, 5)
    keys[:, :3] = torch.tensor([[4.0, 0, 0], [-4, 0, 0], [0, 3, 0], [0, -3, 0], [0, 0, 2], [0, 0, -2]])
    basis = key_subspace(keys)
    assert basis.shape == (5, 3) and basis.dtype == torch.float64
    assert torch.allclose(basis.T @ basis, torch.eye(3, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(basis[3:], torch.zeros(2, 3, dtype=torch.float64))  # no weight off the keys


def test_settle_steps_by_hand():
    steps = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]  # end window: 90 and 100
    falling = [1.0, 0.5, 0.3, 0.05, 0.02, 0.01, 0.01, 0.01, 0.01, 0.01, 0.0]
    # the end window's jitter, 0.5, sets the bar (a power of two times 0.1, so exactly at it)
    jittery = [1.0, 0.9, 0.8, 0.7, 0.6, 0.55, 0.45, 0.4, 0.3, 0.5, 0.2]
    table = pd.DataFrame({name: falling for name in SETTLING.values()} | {PRECISION: jittery},
                         index=pd.Index(steps, name="step"))
    settled, relative = settle_steps(table)
    assert settled == {"key frame": 30, "attention": 30, "entropy direction": 30, "precision": 60}
    assert relative.shape == (11, 4)
    assert relative[0, 0].item() == pytest.approx(1.0) and relative[0, 3].item() == pytest.approx(0.2)


def test_probe_parts_are_disjoint_equal_slices():
    batch = TaskBatch(tokens=torch.arange(19).unsqueeze(1), targets=torch.zeros(19, 1, dtype=torch.long),
                      bayes_predictive=torch.zeros(19, 1, 2), bayes_entropy_bits=torch.zeros(19, 1))
    parts = [probe_part(batch, i).tokens.flatten().tolist() for i in range(PROBE_PARTS)]
    assert parts[0] == [0, 1] and parts[-1] == [14, 15]  # 19 // 8 = 2 each, the rest left out
    assert len({t for part in parts for t in part}) == 2 * PROBE_PARTS


def test_value_entropy_reads_the_entropy_lead_positions_later():
    entropy = torch.arange(12, dtype=torch.float64).reshape(2, 6)
    batch = SimpleNamespace(bayes_entropy_bits=entropy)
    values = torch.tensor([1, 3])
    bijection = ProtocolInputs(probe=None, scored=values, values=values, lead=1)
    hmm = ProtocolInputs(probe=None, scored=values, values=values, lead=0)
    assert bijection.value_entropy(batch).tolist() == [[2.0, 4.0], [8.0, 10.0]]
    assert hmm.value_entropy(batch).tolist() == [[1.0, 3.0], [7.0, 9.0]]


def test_head_ablation_finds_the_heads_that_double_the_mae():
    maes = pd.Series({(0, 0): 0.2, (0, 1): 0.05, (0, "bypassed"): 0.9, (1, 0): 0.19, (1, "bypassed"): 0.5})
    ablation = HeadAblation(maes, baseline=0.1)
    assert list(ablation.single_heads.index) == [(0, 0), (0, 1), (1, 0)]
    assert ablation.important == [(0, 0)]
    assert tables.ablation_table(ablation).shape == (5, 1)


def test_record_protocols_takes_the_strongest_null():
    rows = []
    for task in ("separate", "shared", "hmm"):
        for protocol in PROTOCOLS:
            for model, corr, share in (("trained", 0.5, 0.6), ("random init", 0.7, 0.2), ("MLP", 0.1, 0.9)):
                if task == "hmm" and model == "MLP":
                    continue
                rows.append(dict(task=task, protocol=protocol, model=model, share=share, component=1,
                                 correlation=corr, position_alone=0.8 if task == "hmm" else 0.3,
                                 beyond_position=float("nan")))
    table = pd.DataFrame(rows).set_index(["task", "protocol", "model"]).sort_index()
    results = Results("manifold_formation", "quick", CPU, 0, directory="unused")
    record_protocols(results, table)
    m = results.metrics
    key = PROTOCOL_KEYS[PROTOCOLS[0]]
    assert m[f"separate_manifold_{key}_share_strongest_null"] == 0.9  # the MLP's share
    assert m[f"separate_manifold_{key}_entropy_corr_strongest_null"] == 0.7  # the initialisation
    assert m[f"hmm_manifold_{key}_entropy_corr_strongest_null"] == 0.8  # the position alone
    assert m[f"shared_manifold_{key}_entropy_corr_beyond_position"] == 0.0  # nan read as 0
    assert m[f"separate_manifold_{key}_entropy_corr_mlp"] == 0.1
    assert f"hmm_manifold_{key}_entropy_corr_mlp" not in m
    assert len(m) == (2 * 8 + 7) * len(PROTOCOLS)


def test_hmm_phrases_and_the_weakest_seed():
    seeds = pd.DataFrame({"beyond_position_over_strongest_null": [0.1, -0.02, 0.3],
                          "beyond_position_component": [1, 3, 3],
                          "beyond_position_variance_share": [0.5, 0.04, 0.02],
                          "length_kl_ratio": [1.5, 2.5, 0.9],
                          "error_step_over_within_train_max_bits": [0.1, -0.1, 0.0]})
    assert weakest_seed(seeds).name == 2  # the largest rank, then the smallest share
    phrases = hmm_phrases(seeds)
    assert phrases["hmm_beyond_phrase"] == "2 of 3 seeds (by -0.020 to 0.300)"
    assert phrases["hmm_leading_component_phrase"] == (
        "PC1 carries it on 1 of 3 seeds; on the others a later component does, carrying as "
        "little as 2.0% of the variance")
    assert phrases["hmm_length_ratio_phrase"] == "below 2 on 2 of 3 seeds (0.90 to 2.50)"
    assert phrases["hmm_discontinuity_phrase"].endswith("on 1 of 3 seeds")
    assert hmm_phrases(seeds.assign(beyond_position_component=1))[
        "hmm_leading_component_phrase"] == "PC1 carries it on 3 of 3 seeds"


# ---- the experiment at a tiny size ----

@pytest.mark.slow
def test_a_part_is_deterministic(tmp_path):
    chosen = _tiny()
    found = [Results("manifold_formation", "quick", CPU, 3, directory=tmp_path) for _ in range(2)]
    runs = [bijections(results, chosen, CPU, 3) for results in found]
    assert found[0].metrics.keys() == found[1].metrics.keys()
    assert {k: v for k, v in found[0].metrics.items() if "seconds" not in k} == \
        {k: v for k, v in found[1].metrics.items() if "seconds" not in k}
    assert torch.equal(runs[0]["shared"].history.loss, runs[1]["shared"].history.loss)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    results = Results("manifold_formation", "quick", CPU, 0, directory=tmp_path_factory.mktemp("ch4"))
    return results, chapter.run(results, _tiny(), CPU, 0)


def _names(metrics):
    """Metric names with the seed of a per-seed name left out."""
    return {re.sub(r"_seed\d+$", "_seed", name) for name in metrics}


@pytest.mark.slow
def test_tiny_run_records_the_committed_metric_names(tiny_run):
    results, found = tiny_run
    committed = json.loads((ROOT / "results" / "decide" / "manifold_formation.json").read_text())
    if not stale_reasons(committed):  # a file made by other code may record other names
        assert _names(results.metrics) == _names(committed["metrics"])
        assert set(results.timing_metrics) == set(committed["timing_metrics"])
    assert results.metrics["frame_routing_value_gradient_ratio_fall_n_seeds"] == 2
    assert all(math.isfinite(value) for value in results.metrics.values())
    m = results.metrics
    for layout in ("separate", "shared"):
        assert found.seeds.bijections[layout].shape[0] == 2
        for name in PER_SEED:  # n_seeds values each, seed 0 the bare number of (a), (d), (f)
            assert m[f"{layout}_{name}_n_seeds"] == 2
            assert f"{layout}_{name}_seed1" in m and f"{layout}_{name}_seed2" not in m
            assert m[f"{layout}_{name}_seed0"] == m[f"{layout}_{name}"], (layout, name)
        assert m[f"{layout}_bijection_solve_step_seeds_max"] >= m[f"{layout}_bijection_solve_step"]
    phrases = page_phrases(found, results)
    assert set(phrases) == {
        "authors_key_orthogonality_trained",
        "authors_key_orthogonality_random_init", "separate_key_direction",
        "separate_key_signed_position", "shared_key_direction", "shared_key_signed_position",
        "key_frame_summary", "replacement_manifold_phrase", "frame_faded_phrase",
        "frame_beyond_jitter_phrase", "frame_gained_phrase", "frame_attention_first_phrase",
        "hmm_beyond_phrase", "hmm_leading_component_phrase",
        "hmm_length_ratio_phrase", "hmm_discontinuity_phrase",
        *(f"{layout}_{name}_below_inits_phrase" for layout in LAYOUTS
          for name in ("key_orthogonality", "key_signed_cosine")),
        *(f"{layout}_pc1_share_seeds_phrase" for layout in LAYOUTS)}
    # a seed count, of the seeds the run trained
    assert phrases["separate_key_orthogonality_below_inits_phrase"].endswith(" of 2")
    assert not any(re.search(r"\de[-+]?\d", phrase) for phrase in phrases.values())


@pytest.mark.slow
def test_tiny_run_draws_every_figure_and_table(tiny_run):
    results, c = tiny_run
    drawn = [figures.calibration_figure(c.bijections, c.hmm), figures.key_cosines_figure(c.keys),
             figures.alignment_figure(c.alignment),
             figures.hmm_manifold_figure(c.manifold.inputs["hmm"], c.hmm_beyond),
             figures.value_manifold_figure(c.manifold), figures.frame_figure(c.frame)]
    assert all(isinstance(fig, Figure) and fig.axes for fig in drawn)
    for fig in drawn:
        plt.close(fig)
    assert tables.bijection_table(c.bijections).shape == (6, 2)
    assert tables.hmm_length_table(c.hmm).shape == (4, 3)  # the training length and two tests
    assert tables.mlp_table(c.bijections, c.mlps).shape == (5, 2)
    assert tables.key_table(c.keys).shape == (10, 6)
    assert tables.beyond_table(c.replacement.beyond).shape == (2, 2)
    assert tables.frame_table(c.frame).shape == (2, len(c.frame.per_seed))
    assert len(c.frame.per_seed) == 11
    assert tables.seeds_table(c.frame, c.seeds).shape == (2, 10)


@pytest.mark.parametrize(("maes", "expected"), [
    ({0: 0.3, 10: 0.01, 20: 0.2, 40: 0.02, 80: 0.0}, 40),  # solved at 10, left, back at 40
    ({0: 0.3, 10: 0.04, 20: 0.049, 40: 0.01, 80: 0.03}, 10),  # in by any margin, and stays
    ({0: 0.3, 10: 0.01, 20: 0.2, 40: 0.02, 80: 0.06}, 80),  # not solved at its end: last step
])
def test_solve_step_is_the_first_checkpoint_from_which_the_run_stays_solved(
        monkeypatch, maes, expected):
    from attention_dynamics.chapters.manifold_formation import training
    from attention_dynamics.sequence_training import SequenceTrainingHistory

    model = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.constant_(model.weight, -1.0)
    history = SequenceTrainingHistory(loss=torch.zeros(80), checkpoints={
        step: {"weight": torch.full((1, 1), mae)} for step, mae in maes.items()})
    # the key-position MAE of a checkpoint is the weight it holds
    monkeypatch.setattr(training, "score", lambda scored, task, batches: scored)
    monkeypatch.setattr(training, "key_position_mae", lambda scored, task: scored.weight.item())
    assert training.solve_step(model, history, task=None, batches=[]) == expected
    assert model.weight.item() == -1.0  # the trained model keeps its weights
