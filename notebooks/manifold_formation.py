# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Notebook: manifold formation in the Bayesian wind tunnels
#
# This notebook executes the claims of {doc}`/book/manifold_formation`. It trains a small
# transformer on the two wind tunnels of Paper I, bijection elimination (in both token layouts
# of the authors' code) and HMM filtering, whose exact posteriors are known, and measures what
# the chapter derives: how well the model's predictive entropy follows the Bayes entropy,
# whether the trained keys form a frame, how queries align with keys, whether representations
# lie on a low-dimensional manifold ordered by the posterior entropy, and whether routing
# settles before precision does. Every geometric number is set beside its nulls: the same model
# at initialisation, a capacity-matched MLP that cannot see its context, and what the position
# alone explains.
#
# The parameters below are set by papermill when the book is built. `profile` is `quick`
# (a laptop CPU, a few minutes, smaller tasks and models), `decide` (the same, with HMM
# filtering trained longer, for `make decide`) or `paper` (the papers' sizes, for a GPU);
# `device` is `auto`, `cpu` or `cuda`.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["hide-input"]
import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from myst_nb import glue

from attention_dynamics.book.notebook import setup_notebook
from attention_dynamics.book.paper_numbers import AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY
from attention_dynamics.book.plotting import COLUMN_INCHES, panel_grid, show_figure
from attention_dynamics.book.statistics import t_interval
from attention_dynamics.measures.frame_precision import (
    direction_stability,
    probe_direction,
    routing_value_gradient_norms,
)
from attention_dynamics.measures.geometry import (
    attention_drift,
    best_pc_pearson,
    contextual_keys,
    cosine_matrix,
    key_orthogonality,
    pca,
    query_key_alignment,
    standardize_features,
    subspace_similarity,
)
from attention_dynamics.measures.metrics import (
    blind_predictor_maes,
    entropy_bits,
    evaluate,
)
from attention_dynamics.measures.representations import final_streams
from attention_dynamics.measures.trajectories import relative_fall, settling_step
from attention_dynamics.measures.value_manifold import (
    PROTOCOLS,
    best_pc_beyond_position,
    manifold_protocols,
)
from attention_dynamics.models import (
    MLP,
    MLPConfig,
    Transformer,
    TransformerConfig,
    count_parameters,
)
from attention_dynamics.runtime import select
from attention_dynamics.sequence_training import (
    SequenceTrainingConfig,
    geometric_checkpoints,
    held_out_batches,
    train_sequence_model,
)
from attention_dynamics.tasks.base import sequences_of
from attention_dynamics.tasks.bijection import (
    LAYOUTS,
    BijectionTask,
    mean_entropy_gap_of_marginal,
)
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask

dev, _, res = setup_notebook("manifold_formation", profile, device, seed)

quick = dict(
    n_symbols=10,
    bijection_model=dict(n_layers=2, n_heads=4, d_model=64, init_std=0.1),
    bijection_training=dict(
        steps=1500, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=0.0
    ),
    mlp_training=dict(steps=300, batch_size=128, lr=3e-3, warmup_steps=30),
    hmm_task=dict(n_states=5, n_observations=20, resolution=0.05),
    hmm_test_lengths=(30, 50),
    hmm_model=dict(n_layers=2, n_heads=8, d_model=64, init_std=0.1),
    hmm_training=dict(
        steps=1200, batch_size=32, lr=3e-3, warmup_steps=100, loss="bayes"
    ),
    n_checkpoints=12,
    eval_batches=4,
    eval_batch_size=500,
    probe_size=256,
    n_seeds=3,
    # (g): the separate layout at a constant rate after the warm-up
    frame_training=dict(
        steps=800, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=1.0
    ),
    late_checkpoints=11,
)
settings = select(
    profile,
    quick=quick,
    # HMM filtering trained 4000 steps: 25.6 % of the authors' 500,000 sequences, so
    # that the length-generalisation claim is decided
    decide=quick
    | dict(
        hmm_training=dict(
            steps=4000, batch_size=32, lr=3e-3, warmup_steps=100, loss="bayes"
        ),
        n_seeds=6,
        frame_training=dict(
            steps=1500, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=1.0
        ),
        late_checkpoints=21,
    ),
    paper=dict(
        n_symbols=20,
        bijection_model=dict(
            n_layers=6, n_heads=6, d_model=192, d_ff=768, init_std=0.05
        ),
        bijection_training=dict(
            steps=50_000, batch_size=256, lr=3e-4, warmup_steps=2000
        ),
        mlp_training=dict(steps=10_000, batch_size=256, lr=3e-4, warmup_steps=500),
        hmm_task=dict(n_states=5, n_observations=20, resolution=0.01),
        hmm_test_lengths=(30, 50),
        hmm_model=dict(n_layers=9, n_heads=8, d_model=256, init_std=0.05),
        hmm_training=dict(
            steps=50_000, batch_size=64, lr=3e-4, warmup_steps=2000, loss="bayes"
        ),
        n_checkpoints=24,
        eval_batches=20,
        eval_batch_size=500,
        probe_size=1000,
        n_seeds=6,
        frame_training=dict(
            steps=50_000,
            batch_size=256,
            lr=3e-4,
            warmup_steps=2000,
            final_lr_fraction=1.0,
        ),
        late_checkpoints=21,
    ),
)
settings

# %% [markdown]
# Every training batch is drawn fresh from the task (online training), so no sequence is seen
# twice, from a generator of the run's own, so that a run's data do not depend on the runs
# before it (a longer HMM run in the decide profile leaves the MLPs' data as they are);
# held-out batches come from separate generators. Checkpoints are spaced
# geometrically, to resolve the early steps where attention forms. Every entropy is taken over
# the *answer slice* (the tokens the Bayes predictive can put mass on, renormalised), as the
# authors do; the mass the model leaks outside it is reported once.

# %%
CALIBRATION_TARGET = (
    0.05  # bits, mean-curve MAE: the quick profile's target for bijections
)
eval_sizes = dict(
    n_batches=settings["eval_batches"],
    batch_size=settings["eval_batch_size"],
    device=dev,
)


n_seeds = settings["n_seeds"]


def replicate_seed(replicate, offset):
    """The seed of one generator of seed ``replicate`` (0: the runs of (a) to (f))."""
    return seed + 1000 * replicate + offset


def train(model, task, training, data_seed, checkpoints=None):
    """Train ``model`` on fresh batches of ``task`` drawn from their own generator
    (``data_seed``), so that no run's data depend on how long another ran before it;
    weights kept at ``checkpoints`` (default: geometric)."""
    config = SequenceTrainingConfig(**training)
    if checkpoints is None:
        checkpoints = geometric_checkpoints(config.steps, settings["n_checkpoints"])
    data = torch.Generator(device=dev).manual_seed(data_seed)
    return train_sequence_model(
        model.to(dev), task, config, data, checkpoint_steps=checkpoints
    )


def score(model, task, batches):
    return evaluate(model, batches, answer_tokens=task.answer_tokens.to(dev))


# %% [markdown]
# ## (a) Bijection elimination, in both layouts
#
# Each sequence shows the pairs of a fresh random bijection of $V$ symbols, keys drawn without
# replacement; at the $k$-th key the Bayes posterior is uniform over the $V - k + 1$ values not
# yet revealed. The authors' code has two layouts: in the *separate* one (their `sepvocab`,
# the layout of their released analysis checkpoints) keys and values have their own tokens, so
# the $V$ value tokens are the hypotheses; in the *shared* one (the default of their data
# generator) keys and values are the same $V$ tokens, every pair is shown and a final query key
# from the context asks again. The same model is trained on each. Besides the MAE over every
# scored position, the table gives it over the key positions alone (where the authors'
# evaluation measures) and, for the shared layout, the model's entropy at the final query,
# whose Bayes entropy is 0: the answer is in the context, to be looked up.

# %%
bijection_runs = {}
for index, layout in enumerate(LAYOUTS):
    task = BijectionTask(settings["n_symbols"], layout=layout)
    config = TransformerConfig(
        vocab_size=task.vocab_size, max_len=task.seq_len, **settings["bijection_model"]
    )
    model = Transformer(config, torch.Generator().manual_seed(seed + 10 * index))
    history = train(model, task, settings["bijection_training"], seed + 100 + index)
    batches = held_out_batches(task, seed=seed + 1, **eval_sizes)
    bijection_runs[layout] = dict(
        task=task,
        config=config,
        model=model,
        history=history,
        batches=batches,
        report=score(model, task, batches),
    )


def key_position_mae(report, task):
    """Mean-curve entropy MAE (bits) over the key positions only, where the authors
    measure.
    """
    at_keys = torch.isin(report.positions, task.key_positions)
    return (report.model_entropy - report.bayes_entropy)[at_keys].abs().mean().item()


res.record("n_symbols", settings["n_symbols"])
res.record("bijection_steps", settings["bijection_training"]["steps"])
res.record(
    "bijection_training_sequences",
    settings["bijection_training"]["steps"]
    * settings["bijection_training"]["batch_size"],
)
for layout, run in bijection_runs.items():
    report, task = run["report"], run["task"]
    res.record(
        f"{layout}_bijection_entropy_mae_keys_bits", key_position_mae(report, task)
    )
    if task.final_query_position is not None:
        final_query = report.positions == task.final_query_position
        res.record(
            f"{layout}_bijection_final_query_entropy_bits",
            report.model_entropy[final_query].item(),
        )
        res.record("bijection_context_free_entropy_bits", np.log2(task.n_symbols))
    res.record(f"{layout}_bijection_parameters", count_parameters(run["model"]))
    res.record(f"{layout}_bijection_train_seconds", run["history"].seconds, timing=True)
    res.record(f"{layout}_bijection_entropy_mae_bits", report.mae_mean_curve)
    res.record(f"{layout}_bijection_entropy_mae_per_sample_bits", report.mae_per_sample)
    res.record(f"{layout}_bijection_kl_bits", report.kl_bits)
    res.record(f"{layout}_bijection_leaked_mass", report.leaked_mass)
    res.record(
        f"{layout}_bijection_loss_fall_last_tenth", relative_fall(run["history"].loss)
    )
pd.DataFrame(
    {
        layout: {
            "entropy MAE, mean curve (bits)": run["report"].mae_mean_curve,
            "entropy MAE, mean curve, key positions (bits)": key_position_mae(
                run["report"], run["task"]
            ),
            "entropy MAE, per sample (bits)": run["report"].mae_per_sample,
            "KL to Bayes (bits)": run["report"].kl_bits,
            "mass outside the answer slice": run["report"].leaked_mass,
            "loss fall over the last tenth": relative_fall(run["history"].loss),
        }
        for layout, run in bijection_runs.items()
    }
).round(4)

# %% [markdown]
# ## (b) HMM filtering and length generalisation
#
# Each sequence draws its own 5-state, 5-symbol HMM (Dirichlet(1) rows, floor 0.05, on a
# grid); the prompt spells out both matrices, one token per entry, then the observations. At
# each observation the model is trained toward the exact filtered posterior of the hidden
# state (the authors' loss: the cross-entropy to that posterior). It is trained at one length
# and tested at longer ones; positions beyond the training length were never trained.

# %%
hmm = HMMFilteringTask(**settings["hmm_task"])
hmm_tests = {
    K: dataclasses.replace(hmm, n_observations=K) for K in settings["hmm_test_lengths"]
}
hmm_config = TransformerConfig(
    vocab_size=hmm.vocab_size,
    max_len=max(t.seq_len for t in hmm_tests.values()),
    **settings["hmm_model"],
)
hmm_model = Transformer(hmm_config, torch.Generator().manual_seed(seed + 1))
hmm_history = train(hmm_model, hmm, settings["hmm_training"], seed + 200)
hmm_eval = held_out_batches(hmm, seed=seed + 2, **eval_sizes)
length_batches = {hmm.n_observations: hmm_eval}
length_batches |= {
    K: held_out_batches(task, seed=seed + 2 + K, **eval_sizes)
    for K, task in hmm_tests.items()
}
length_reports = {
    K: score(hmm_model, hmm, batches) for K, batches in length_batches.items()
}
hmm_report = length_reports[hmm.n_observations]


def blind_maes(task, batches):
    """Per-sample MAEs of the observation-blind and uniform predictors."""
    bayes = torch.cat([b.bayes_entropy_bits[:, task.query_positions] for b in batches])
    return blind_predictor_maes(bayes, task.n_states)


length_blind = {
    K: blind_maes(hmm if K == hmm.n_observations else hmm_tests[K], batches)
    for K, batches in length_batches.items()
}
pd.DataFrame(
    {
        K: {
            "entropy MAE, mean curve (bits)": r.mae_mean_curve,
            "entropy MAE, per sample (bits)": r.mae_per_sample,
            "observation-blind predictor, per sample (bits)": length_blind[K][
                "average_curve"
            ],
            "KL to Bayes (bits)": r.kl_bits,
        }
        for K, r in length_reports.items()
    }
).round(4)

# %% [markdown]
# Two references put the per-sample error in scale: a predictor that ignores the observations
# and outputs, at every position, a distribution with the average Bayes entropy of that
# position has a mean-curve MAE of zero and the per-sample MAE above; the uniform predictor
# has the per-sample MAE of $\log_2 5$ minus the Bayes entropy. At the boundary of the training
# length, the error step is the mean error over the five observations after it minus that
# over the five before it, on the longest test sequences. The authors' own test of length
# generalisation (`experiments/paper1_hmm/eval_length_gen.py`, `main`) is a ratio: the mean
# KL to the Bayes posterior at the longer test lengths over the KL at the training length,
# which they call strong generalisation below 2. Positions beyond the training length have
# untrained rows of the learned position table, in their model as in this one, so some step
# at the boundary is expected by construction; the ratio asks whether the error stays of
# the same size, and is the number the ledger judges.


# %%
def error_steps(errors, K):
    """The error step at the training length ``K`` (bits): the mean ``errors`` (one per
    observation) over the five observations after it minus the five before; and the
    largest such step inside the second half of the training length, where nothing
    changes: the null a step at ``K`` must exceed to be a jump."""

    def step_at(t):
        return (errors[t : t + 5].mean() - errors[t - 5 : t].mean()).item()

    return step_at(K), max(step_at(t) for t in range(max(K // 2, 5), K - 4))


def length_kl_ratio(reports, K):
    """The authors' length-generalisation ratio (``eval_length_gen.py``, ``main``): the
    mean KL to the Bayes posterior over the test lengths longer than ``K``, over the KL
    at ``K`` (below 2: "strong length generalization")."""
    longer = [report.kl_bits for length, report in reports.items() if length > K]
    return float(np.mean(longer)) / reports[K].kl_bits


longest = max(settings["hmm_test_lengths"])
errors = length_reports[longest].abs_error
K = hmm.n_observations
res.record("hmm_parameters", count_parameters(hmm_model))
res.record("hmm_steps", settings["hmm_training"]["steps"])
res.record(
    "hmm_training_sequences",
    settings["hmm_training"]["steps"] * settings["hmm_training"]["batch_size"],
)
res.record("hmm_train_seconds", hmm_history.seconds, timing=True)
res.record("hmm_train_length", K)
res.record("hmm_entropy_mae_bits", hmm_report.mae_mean_curve)
res.record("hmm_entropy_mae_per_sample_bits", hmm_report.mae_per_sample)
res.record("hmm_kl_bits", hmm_report.kl_bits)
res.record("hmm_leaked_mass", hmm_report.leaked_mass)
res.record("hmm_average_curve_predictor_mae_bits", length_blind[K]["average_curve"])
res.record("hmm_uniform_predictor_mae_bits", length_blind[K]["uniform"])
res.record("hmm_loss_fall_last_tenth", relative_fall(hmm_history.loss))
at_boundary, inside_max = error_steps(errors, K)
res.record("hmm_error_step_at_train_length_bits", at_boundary)
res.record("hmm_error_step_within_train_max_bits", inside_max)
res.record("hmm_length_kl_ratio", length_kl_ratio(length_reports, K))
for length in settings["hmm_test_lengths"]:
    res.record(
        f"hmm_entropy_mae_per_sample_bits_length_{length}",
        length_reports[length].mae_per_sample,
    )
    res.record(
        f"hmm_entropy_mae_bits_length_{length}", length_reports[length].mae_mean_curve
    )
    res.record(f"hmm_kl_bits_length_{length}", length_reports[length].kl_bits)
    res.record(
        f"hmm_average_curve_predictor_mae_bits_length_{length}",
        length_blind[length]["average_curve"],
    )

# %%
separate = bijection_runs["separate"]
fig, axes = panel_grid(3)
for layout, run in bijection_runs.items():
    task, report = run["task"], run["report"]
    keys = np.arange(1, task.n_pairs + 1)
    axes[0].plot(
        keys, report.model_entropy[: task.n_pairs], "o", ms=5, label=f"{layout} layout"
    )
axes[0].plot(
    keys,
    separate["task"].bayes_entropy_curve(),
    "k--",
    lw=1.2,
    label=r"Bayes $\log_2(V-k+1)$",
)
axes[0].set_xlabel("key index $k$")
axes[0].set_ylabel("predictive entropy (bits)")
axes[0].legend(fontsize=9)
with torch.no_grad():
    model_h = entropy_bits(hmm_model(hmm_eval[0].tokens), hmm.answer_tokens.to(dev))
model_h = model_h[:, hmm.query_positions]
bayes_h = hmm_eval[0].bayes_entropy_bits[:, hmm.query_positions]
axes[1].scatter(bayes_h.cpu().flatten(), model_h.cpu().flatten(), s=3, alpha=0.3)
span = np.array([bayes_h.min().item(), bayes_h.max().item()])
axes[1].plot(span, span, "k--", lw=1)
axes[1].set_xlabel("Bayes filter entropy (bits)")
axes[1].set_ylabel("transformer entropy (bits)")
for length, report in length_reports.items():
    axes[2].plot(
        np.arange(1, length + 1), report.abs_error, label=f"tested at K = {length}"
    )
axes[2].axvline(hmm.n_observations, color="0.4", lw=1, ls=":")
axes[2].set_xlabel("observation $t$")
axes[2].set_ylabel(r"mean $|H_{model} - H_{Bayes}|$ (bits)")
axes[2].legend(fontsize=9)
show_figure("fig_entropy_calibration", fig)

# %% [markdown]
# ## (c) The capacity-matched MLPs
#
# The same embeddings, depth, width and head, with each attention sublayer's weights moved
# into a wider MLP, so that nothing mixes positions. Its best possible predictive is the
# context-free marginal, uniform over all $V$ values; the entropy gap of that marginal to the
# Bayes curve is the floor of its MAE. The MLP is also the third null of the geometry below.
# It reaches its floor within a few hundred steps, so it is trained for fewer.

# %%
for index, (layout, run) in enumerate(bijection_runs.items()):
    mlp = MLP(
        MLPConfig.matching(run["config"]),
        torch.Generator().manual_seed(seed + 2 + index),
    )
    mlp_history = train(mlp, run["task"], settings["mlp_training"], seed + 300 + index)
    run |= dict(mlp=mlp, mlp_report=score(mlp, run["task"], run["batches"]))
    res.record(f"{layout}_mlp_parameters", count_parameters(mlp))
    res.record(
        f"{layout}_mlp_bijection_entropy_mae_bits", run["mlp_report"].mae_mean_curve
    )
    res.record(
        f"{layout}_mlp_bijection_loss_fall_last_tenth", relative_fall(mlp_history.loss)
    )
    res.record(
        f"{layout}_bijection_marginal_gap_bits",
        mean_entropy_gap_of_marginal(settings["n_symbols"], layout=layout),
    )
calibrated = [
    layout
    for layout, run in bijection_runs.items()
    if run["report"].mae_mean_curve <= CALIBRATION_TARGET
]
uncalibrated = [layout for layout in LAYOUTS if layout not in calibrated]
where = (
    "in both layouts"
    if not uncalibrated
    else "in neither layout"
    if not calibrated
    else f"in the {calibrated[0]} layout but not in the {uncalibrated[0]} one"
)
on_floor = all(
    abs(
        run["mlp_report"].mae_mean_curve
        - mean_entropy_gap_of_marginal(settings["n_symbols"], layout=layout)
    )
    <= 0.05
    for layout, run in bijection_runs.items()
)
glue(
    "calibration_summary",
    f"the transformer reaches the {CALIBRATION_TARGET}-bit calibration target {where}, "
    "and the "
    f"MLP {'sits' if on_floor else 'does not sit'} on its context-free floor in both",
    display=False,
)
pd.DataFrame(
    {
        layout: {
            "transformer parameters": count_parameters(run["model"]),
            "MLP parameters": count_parameters(run["mlp"]),
            "MLP entropy MAE, mean curve (bits)": run["mlp_report"].mae_mean_curve,
            "floor: the marginal's gap (bits)": mean_entropy_gap_of_marginal(
                settings["n_symbols"], layout=layout
            ),
            "transformer entropy MAE, mean curve (bits)": run["report"].mae_mean_curve,
        }
        for layout, run in bijection_runs.items()
    }
).round(4)

# %% [markdown]
# ## (d) Keys: two definitions, two layouts, against initialisation
#
# The authors' code measures key orthogonality in two ways (see
# {doc}`/book/manifold_formation` for where): the mean *absolute* off-diagonal cosine between
# the layer-0 keys of the $V$ hypothesis tokens, taken after the first norm and $W_K$, per
# head (their analysis suite, `identify_frame_head`); and the *signed* mean cosine of the raw
# token embeddings through $W_K$ (their Paper I figure script, `qkv_analysis.py`). Both are
# measured on both layouts, after training and at initialisation. To find which step of a
# pipeline moves the number, each step is then varied in turn: layer 1 instead of layer 0
# (the figure script loops over every layer), the tokens `0..V-1` that the figure script
# takes (the *key* tokens in the separate layout), and the keys the hypotheses carry in
# context (layer 0 at the value positions, position included, averaged per value symbol).
# One initialisation is one draw: each statistic is also computed for 100 independent
# initialisations, whose central 95 % is the null a trained value must leave. Beside them,
# the numbers the authors' own released checkpoint gives under the first definition.

# %%
for run in bijection_runs.values():
    run["probe"] = run["task"].sample(
        settings["probe_size"], torch.Generator(device=dev).manual_seed(seed + 7)
    )
    run["probe_model"] = Transformer(run["config"], torch.Generator()).to(dev)


def at_step(run, step):
    """The run's probe model with the weights kept after ``step`` updates."""
    return run["history"].load_checkpoint(run["probe_model"], step)


def hypothesis_keys(model, task):
    """The hypothesis tokens' layer-0 keys after the first norm, ``(H, V, d_head)``."""
    with torch.no_grad():
        return model.token_keys(task.hypothesis_tokens.to(dev))


MEAN_ABS = "mean |cos|, normed, layer 0 (identify_frame_head)"
SIGNED = "signed cos, raw, layer 0 (qkv_analysis)"


def key_statistics(model, run):
    """Each step of the two key pipelines varied in turn, for one model (dimensionless).

    The authors' two definitions first; then the raw keys of layer 1 (their figure
    script loops over every layer), the token set their figure script takes (``0..V-1``:
    the hypotheses in the shared layout, the *key* tokens in the separate one), and the
    keys the hypotheses have in context (layer 0, at the value positions, with
    positions).
    """
    task, probe = run["task"], run["probe"]
    with torch.no_grad():
        first_tokens = torch.arange(task.n_symbols, device=dev)
        raw = [
            model.embed(task.hypothesis_tokens.to(dev)) @ block.attn.w_k
            for block in model.blocks
        ]
        _, record = model(probe.tokens, return_record=True)
    values = task.value_positions.to(dev)
    in_context = contextual_keys(
        record.attention[0].k,
        values,
        probe.tokens[:, values] - task.value_offset,
        task.n_symbols,
    )
    return {
        MEAN_ABS: key_orthogonality(hypothesis_keys(model, task)).mean().item(),
        SIGNED: key_orthogonality(raw[0], signed=True).mean().item(),
        "signed cos, raw, layer 1": key_orthogonality(raw[1], signed=True)
        .mean()
        .item(),
        "signed cos, raw, layer 0, tokens 0..V-1": key_orthogonality(
            model.embed(first_tokens) @ model.blocks[0].attn.w_k, signed=True
        )
        .mean()
        .item(),
        "mean |cos|, keys in context, layer 0": key_orthogonality(in_context)
        .mean()
        .item(),
        "signed cos, keys in context, layer 0": key_orthogonality(
            in_context, signed=True
        )
        .mean()
        .item(),
    }


N_INITS = 100  # independent initialisations: the null distribution of each statistic
key_rows, key_matrices, init_spread = {}, {}, {}
for layout, run in bijection_runs.items():
    final_step = max(run["history"].checkpoints)
    for label, step in (("random init", 0), ("trained", final_step)):
        model = at_step(run, step)
        key_matrices[layout, label] = hypothesis_keys(model, run["task"])
        key_rows[layout, label] = key_statistics(model, run)
    draws = pd.DataFrame(
        [
            key_statistics(
                Transformer(
                    run["config"], torch.Generator().manual_seed(10_000 + i)
                ).to(dev),
                run,
            )
            for i in range(N_INITS)
        ]
    )
    init_spread[layout] = draws.quantile([0.025, 0.975])
    for quantile, row in init_spread[layout].iterrows():
        key_rows[layout, f"random init, {quantile:.1%} of {N_INITS} draws"] = dict(row)
    for ending, statistic in (
        ("key_orthogonality", MEAN_ABS),
        ("key_signed_cosine", SIGNED),
    ):
        low, high = init_spread[layout][statistic]
        res.record(f"{layout}_{ending}", key_rows[layout, "trained"][statistic])
        res.record(
            f"{layout}_{ending}_random_init", key_rows[layout, "random init"][statistic]
        )
        res.record(f"{layout}_{ending}_init_low", low)
        res.record(f"{layout}_{ending}_init_high", high)
    res.record(
        f"{layout}_key_signed_cosine_layer_1",
        key_rows[layout, "trained"]["signed cos, raw, layer 1"],
    )
    res.record(
        f"{layout}_key_signed_cosine_first_tokens",
        key_rows[layout, "trained"]["signed cos, raw, layer 0, tokens 0..V-1"],
    )
    res.record(
        f"{layout}_key_orthogonality_in_context",
        key_rows[layout, "trained"]["mean |cos|, keys in context, layer 0"],
    )
    res.record(
        f"{layout}_key_signed_cosine_in_context",
        key_rows[layout, "trained"]["signed cos, keys in context, layer 0"],
    )
res.record("key_orthogonality_n_inits", N_INITS)
authors = AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY
for label, number in authors.items():
    key_rows["authors' checkpoint (separate, V = 20)", label] = {MEAN_ABS: number.value}
    res.record(
        f"authors_checkpoint_key_orthogonality_{label.replace(' ', '_')}", number.value
    )
    glue(
        f"authors_key_orthogonality_{label.replace(' ', '_')}",
        number.text,
        display=False,
    )
d_head = separate["config"].d_head
res.record("key_orthogonality_random_directions", np.sqrt(2 / (np.pi * d_head)))
res.record("key_orthogonality_simplex", 1 / (settings["n_symbols"] - 1))


def beyond_init(layout, statistic):
    """Where the trained value sits against the random-init draws: 'below', 'above' or
    'within' their 95% range."""
    low, high = init_spread[layout][statistic]
    value = key_rows[layout, "trained"][statistic]
    return "below" if value < low else "above" if value > high else "within"


for layout in LAYOUTS:
    position = beyond_init(layout, MEAN_ABS)
    glue(
        f"{layout}_key_direction",
        {"below": "less", "above": "more", "within": "neither more nor less"}[position],
        display=False,
    )
    glue(f"{layout}_key_signed_position", beyond_init(layout, SIGNED), display=False)
more_orthogonal = [
    layout for layout in LAYOUTS if beyond_init(layout, MEAN_ABS) == "below"
]
glue(
    "key_frame_summary",
    f"the keys become more orthogonal than at initialisation in the "
    f"{' and '.join(more_orthogonal)} layout"
    if more_orthogonal
    else "the keys become more orthogonal than at initialisation in neither layout, "
    "and the authors' own checkpoint moves the same way",
    display=False,
)
pd.DataFrame(key_rows).T.round(3).astype(object).fillna("–")

# %%
fig, axes = plt.subplots(
    4,
    separate["config"].n_heads,
    figsize=(2.3 * separate["config"].n_heads, 9.6),
    squeeze=False,
)
for row, ((layout, label), keys) in enumerate(key_matrices.items()):
    for head in range(keys.shape[0]):
        ax = axes[row, head]
        image = ax.imshow(
            cosine_matrix(keys[head]).cpu().numpy(), cmap="RdBu_r", vmin=-1, vmax=1
        )
        ax.set_title(
            f"head {head}: mean |cos| {key_orthogonality(keys[head]).item():.2f}",
            fontsize=10,
        )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        if head == 0:
            ax.set_ylabel(f"{layout},\n{label}", fontsize=10)
fig.colorbar(image, ax=axes, shrink=0.6, label="cosine between hypothesis keys")
show_figure("fig_key_cosines", fig)

# %% [markdown]
# Query–key alignment: the cosine between the query at the $k$-th key position and the keys
# at earlier positions, averaged over heads and probe sequences, per layer; with the keys at
# the earlier *value* positions (the hypotheses already revealed, which the query must
# discount; this book's first measure) and at the earlier *key* positions (the authors'
# `qk-align`).


# %%
def alignment_maps(run, step, key_positions):
    """(layers, L, P) mean cos(q at key k, k at earlier position j), nan where j is
    later.
    """
    with torch.no_grad():
        _, record = at_step(run, step)(run["probe"].tokens, return_record=True)
    queries = run["task"].key_positions.to(dev)
    maps = [
        query_key_alignment(layer.q, layer.k, queries, key_positions.to(dev)).mean(0)
        for layer in record.attention
    ]
    return torch.stack(maps).cpu()


alignment_rows, alignment_figure = {}, {}
for layout, run in bijection_runs.items():
    final_step = max(run["history"].checkpoints)
    for against in ("value", "key"):
        positions = getattr(run["task"], f"{against}_positions")
        for label, step in (("random init", 0), ("trained", final_step)):
            maps = alignment_maps(run, step, positions)
            for layer in range(maps.shape[0]):
                alignment_rows[layout, f"{against} positions", label, layer] = (
                    np.nanmean(maps[layer].numpy())
                )
            if layout == "separate" and label == "trained":
                alignment_figure[against] = maps
alignment = pd.Series(alignment_rows, name="mean cos").unstack(2)
for (layout, against, layer), row in alignment.iterrows():
    name = f"{layout}_qk_alignment_{against.split()[0]}_layer_{layer}"
    res.record(name, row["trained"])
    res.record(f"{name}_random_init", row["random init"])
alignment.round(3)

# %%
n_layers = separate["config"].n_layers
fig, axes = plt.subplots(2, n_layers, figsize=(4.4 * n_layers, 7.6), squeeze=False)
for row, (against, maps) in enumerate(alignment_figure.items()):
    limit = np.nanmax(np.abs(maps.numpy()))
    for layer in range(n_layers):
        ax = axes[row, layer]
        image = ax.imshow(maps[layer].numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit)
        ax.set_facecolor("0.85")
        ax.grid(False)
        ax.set_xlabel(f"earlier {against} $j$")
        ax.set_ylabel("query at key $k$")
        for axis in (
            ax.xaxis,
            ax.yaxis,
        ):  # rows and columns count from 1, as in the text
            axis.set_major_formatter(
                plt.FuncFormatter(lambda value, _: f"{value + 1:.0f}")
            )
        ax.set_title(
            f"layer {layer}, keys at {against} positions: "
            f"mean {np.nanmean(maps[layer].numpy()):.2f}",
            fontsize=10,
        )
        fig.colorbar(image, ax=ax, shrink=0.8, label=r"$\cos(q_k, k_j)$")
show_figure("fig_qk_alignment", fig)

# %% [markdown]
# ## (e) Which heads carry the computation
#
# Masking one head at a time (its output set to zero) and bypassing one layer at a time, the
# entropy MAE (mean curve) on the held-out bijection batches of the separate layout. A head
# *matters* when masking it at least doubles the MAE; the frame–precision measures below
# follow those heads.


# %%
def head_ablation(run):
    """The entropy MAE (mean curve, bits) of the run's final model on its held-out
    batches with each head masked, and with each layer bypassed, as a Series; and the
    heads that matter (masking one at least doubles the MAE)."""
    model = at_step(run, max(run["history"].checkpoints))
    baseline = score(model, run["task"], run["batches"]).mae_mean_curve
    found = {}
    for layer in range(run["config"].n_layers):
        for head in range(run["config"].n_heads):
            with model.ablated(heads={layer: [head]}):
                found[layer, head] = score(
                    model, run["task"], run["batches"]
                ).mae_mean_curve
        with model.ablated(bypass=[layer]):
            found[layer, "bypassed"] = score(
                model, run["task"], run["batches"]
            ).mae_mean_curve
    found = pd.Series(found, name="entropy MAE, mean curve (bits)")
    heads = found[[key for key in found.index if key[1] != "bypassed"]]
    return found, [key for key, mae in heads.items() if mae >= 2 * baseline]


ablation, important_heads = head_ablation(separate)
single_heads = ablation[[key for key in ablation.index if key[1] != "bypassed"]]
res.record("largest_single_head_ablation_mae_bits", single_heads.max())
res.record("smallest_single_head_ablation_mae_bits", single_heads.min())
res.record("n_important_heads", len(important_heads))
ablation.round(4)

# %% [markdown]
# ## (f) The value manifold under every protocol, against three nulls
#
# The protocols differ in where and how they look (the chapter lists which of the authors'
# scripts does what): the normed stream at the scored key positions, pooled over sequences;
# the last residual stream before the final norm at the *value* positions, pooled, raw and
# standardised; the component among PC1–5 with the largest $|$Pearson$|$ with the entropy; and
# one PCA per sequence. A value position carries the entropy of the next key's posterior, once
# its pair is revealed. Each is computed for the trained model and for three nulls: the same
# model at initialisation, the MLP that cannot see its context, and a coordinate that knows
# only the position (the entropy averaged over sequences at that position). In bijections
# without replacement the entropy is a function of the position, so the last null is perfect
# there; HMM filtering, where the entropy varies between sequences at each position, is where
# an entropy coordinate can be told from a position coordinate.


# %%
def protocols_of(model, batch, scored, values, value_entropy):
    before, after = final_streams(model, batch.tokens)
    return manifold_protocols(
        before,
        after,
        scored,
        batch.bayes_entropy_bits[:, scored],
        values,
        value_entropy,
    )


hmm_probe_model = Transformer(hmm_config, torch.Generator()).to(dev)
hmm_probe = hmm.sample(
    settings["probe_size"], torch.Generator(device=dev).manual_seed(seed + 8)
)
hmm_positions = hmm.query_positions.to(dev)
manifold_rows, manifold_inputs = {}, {}
for layout, run in bijection_runs.items():
    task, probe = run["task"], run["probe"]
    scored, values = task.key_positions.to(dev), task.value_positions.to(dev)
    value_entropy = probe.bayes_entropy_bits[:, values + 1]
    models = {
        "trained": at_step(run, max(run["history"].checkpoints)),
        "MLP": run["mlp"],
    }
    for label, model in models.items():
        manifold_rows[layout, label] = protocols_of(
            model, probe, scored, values, value_entropy
        )
    manifold_rows[layout, "random init"] = protocols_of(
        at_step(run, 0), probe, scored, values, value_entropy
    )
    manifold_inputs[layout] = (task, probe, scored, values, value_entropy)
hmm_entropy = hmm_probe.bayes_entropy_bits[:, hmm_positions]
for label, step in (("trained", max(hmm_history.checkpoints)), ("random init", 0)):
    model = hmm_history.load_checkpoint(hmm_probe_model, step)
    manifold_rows["hmm", label] = protocols_of(
        model, hmm_probe, hmm_positions, hmm_positions, hmm_entropy
    )
manifold = pd.DataFrame(
    [
        dict(task=task, model=label, protocol=protocol, **dataclasses.asdict(result))
        for (task, label), results in manifold_rows.items()
        for protocol, result in results.items()
    ]
)
manifold = manifold.set_index(["task", "protocol", "model"]).sort_index()
manifold.round(3)

# %% [markdown]
# Each protocol's verdict numbers: the trained model's variance share and $|$correlation$|$
# with the entropy, and the strongest null of each (the largest of the nulls' values; the MLP
# is not trained on HMM, so there the nulls are initialisation and position).

# %%
PROBE_PARTS = 8  # disjoint parts of a probe, for the 95 % intervals of this chapter


def probe_part(batch, i):
    """The ``i``-th of ``PROBE_PARTS`` disjoint slices of ``batch``'s sequences."""
    size = batch.tokens.shape[0] // PROBE_PARTS
    return sequences_of(batch, slice(i * size, (i + 1) * size))


PROTOCOL_KEYS = dict(
    zip(
        PROTOCOLS,
        (
            "scored_final",
            "value_prenorm",
            "value_standardised",
            "value_best_pc",
            "per_sequence",
        ),
        strict=True,
    )
)
for task_name in (*LAYOUTS, "hmm"):
    for protocol, key in PROTOCOL_KEYS.items():
        rows = manifold.loc[(task_name, protocol)]
        trained = rows.loc["trained"]
        nulls = rows.drop(index="trained")
        prefix = f"{task_name}_manifold_{key}"
        res.record(f"{prefix}_share", trained["share"])
        res.record(f"{prefix}_entropy_corr", trained["correlation"])
        res.record(f"{prefix}_share_strongest_null", nulls["share"].max())
        res.record(f"{prefix}_position_alone", trained["position_alone"])
        res.record(
            f"{prefix}_entropy_corr_strongest_null",
            max(nulls["correlation"].max(), trained["position_alone"]),
        )
        res.record(
            f"{prefix}_entropy_corr_beyond_position",
            np.nan_to_num(trained["beyond_position"], nan=0.0),
        )
        for label, row in nulls.iterrows():
            res.record(
                f"{prefix}_entropy_corr_{label.lower().replace(' ', '_')}",
                row["correlation"],
            )
# the trained bijection models' PC1 share (standardised value positions) on each part of
# the probe, for its 95 % interval
for layout, run in bijection_runs.items():
    task, probe, scored, values, _ = manifold_inputs[layout]
    trained = at_step(run, max(run["history"].checkpoints))
    part_shares = []
    for i in range(PROBE_PARTS):
        part = probe_part(probe, i)
        entropy = part.bayes_entropy_bits[:, values + 1]
        results = protocols_of(trained, part, scored, values, entropy)
        part_shares.append(results["value positions, standardised"].share)
    res.record_all(
        dict(zip(("low", "high"), t_interval(torch.tensor(part_shares)), strict=True)),
        prefix=f"{layout}_manifold_value_standardised_share_",
    )
# %% [markdown]
# **The HMM, judged on the authors' protocol.** In HMM filtering the entropy varies between
# sequences at every position, so an axis can be ordered by the entropy beyond what the
# position explains. The authors' HMM script (`hmm_geometric_analysis.py`, `analyze_layer`)
# takes the component among PC1–5 of the last residual stream with the largest $|$Pearson$|$
# with the entropy. Its correlation within positions (each position's mean removed) is the
# number the claim needs; its null repeats the whole procedure, component choice included,
# with the entropies shuffled across sequences within each position, 200 times.

# %%
N_PERMUTATIONS = 200


def beyond_position(history, probe_model, tokens, positions, entropy, shuffle_seed):
    """The best-of-PC1-5 protocol beyond position for a trained run, with its nulls.

    ``tokens``: ``(B, T)`` probe sequences; ``positions``: the ``P`` scored positions;
    ``entropy``: ``(B, P)`` their Bayes entropies (bits). Returns the trained model's
    ``|r|`` within positions (``observed``), the 99th percentile of its within-position
    shuffles, the same protocol at initialisation, the stronger of those two nulls, the
    chosen component (1 for PC1) and the share of the variance it carries, and each
    shuffle's ``|r|`` (``draws``)."""
    found = {}
    for label, step in (("trained", max(history.checkpoints)), ("random init", 0)):
        model = history.load_checkpoint(probe_model, step)
        before, _ = final_streams(model, tokens)
        found[label] = best_pc_beyond_position(
            before[:, positions],
            entropy,
            N_PERMUTATIONS,
            torch.Generator().manual_seed(shuffle_seed),
        )
        if label == "trained":
            points = before[:, positions].flatten(0, 1)
            component, _ = best_pc_pearson(points, entropy.flatten())
            share = pca(points).explained_variance_ratio[component - 1].item()
    observed, draws = found["trained"]
    q99 = torch.quantile(draws, 0.99).item()
    return dict(
        observed=observed,
        null_q99=q99,
        random_init=found["random init"][0],
        strongest_null=max(q99, found["random init"][0]),
        component=component,
        variance_share=share,
        draws=draws,
        init_draws=found["random init"][1],
    )


def record_beyond(found, prefix):
    """Record :func:`beyond_position`'s numbers under ``prefix``."""
    names = ("null_q99", "random_init", "strongest_null", "component", "variance_share")
    res.record(prefix, found["observed"])
    res.record_all({f"_{name}": found[name] for name in names}, prefix=prefix)


def beyond_table(found):
    """The trained model and its initialisation under the protocol, against shuffles."""
    return pd.DataFrame(
        {
            label: {
                "|r| beyond position, chosen PC": value,
                "shuffled within position: 99th percentile": torch.quantile(
                    draws, 0.99
                ).item(),
            }
            for label, value, draws in (
                ("trained", found["observed"], found["draws"]),
                ("random init", found["random_init"], found["init_draws"]),
            )
        }
    ).round(3)


hmm_beyond = beyond_position(
    hmm_history, hmm_probe_model, hmm_probe.tokens, hmm_positions, hmm_entropy, seed + 9
)
record_beyond(hmm_beyond, "hmm_manifold_best_pc_beyond_position")
res.record("manifold_n_permutations", N_PERMUTATIONS)
beyond_table(hmm_beyond)

# %%
model = hmm_history.load_checkpoint(hmm_probe_model, max(hmm_history.checkpoints))
before, _ = final_streams(model, hmm_probe.tokens)
points = before[:, hmm_positions].flatten(0, 1)
component = hmm_beyond["component"]
components = pca(points)
chosen = components.scores[:, component - 1].reshape(hmm_entropy.shape).cpu()
entropy_cpu = hmm_entropy.double().cpu()
fig, (left, right) = panel_grid(2)
image = left.scatter(
    entropy_cpu.flatten(),
    chosen.flatten(),
    c=np.tile(np.arange(1, hmm_entropy.shape[1] + 1), hmm_entropy.shape[0]),
    cmap="viridis",
    s=3,
    alpha=0.5,
)
left.set_xlabel("Bayes filter entropy (bits)")
left.set_ylabel(f"PC{component} score")
left.set_title(f"HMM, trained: PC{component} against the entropy", fontsize=10)
fig.colorbar(image, ax=left, label="observation $t$")
right.scatter(
    (entropy_cpu - entropy_cpu.mean(0)).flatten(),
    (chosen - chosen.mean(0)).flatten(),
    s=3,
    alpha=0.4,
)
right.set_xlabel("entropy minus its position's mean (bits)")
right.set_ylabel(f"PC{component} minus its position's mean")
right.set_title(f"within positions: |r| = {hmm_beyond['observed']:.2f}", fontsize=10)
show_figure("fig_hmm_manifold", fig)

# %% [markdown]
# **Bijections with keys drawn with replacement.** The authors' data generator draws keys
# *with* replacement unless told otherwise (`experiments/paper1_bijection/train.py`,
# `build_sequence_from_perm`, `with_replacement=True`). A key seen before has a known value
# (entropy 0) and a new one a posterior over the values not yet revealed, so the entropy varies
# between sequences at every key position after the first, and the HMM's protocol can tell an
# entropy axis from a position axis on bijections too. The same transformer, trained alike on
# that task (separate layout), is judged by it at the scored key positions.

# %%
replacement = BijectionTask(settings["n_symbols"], with_replacement=True)
replacement_model = Transformer(
    TransformerConfig(
        vocab_size=replacement.vocab_size,
        max_len=replacement.seq_len,
        **settings["bijection_model"],
    ),
    torch.Generator().manual_seed(seed + 30),
)
replacement_history = train(
    replacement_model, replacement, settings["bijection_training"], seed + 400
)
replacement_batches = held_out_batches(replacement, seed=seed + 4, **eval_sizes)
replacement_report = score(replacement_model, replacement, replacement_batches)
replacement_blind = blind_predictor_maes(
    torch.cat(
        [
            b.bayes_entropy_bits[:, replacement.query_positions]
            for b in replacement_batches
        ]
    ),
    replacement.n_symbols,
)
res.record_all(
    {
        "entropy_mae_per_sample_bits": replacement_report.mae_per_sample,
        "average_curve_predictor_mae_bits": replacement_blind["average_curve"],
        "loss_fall_last_tenth": relative_fall(replacement_history.loss),
    },
    prefix="replacement_bijection_",
)
replacement_probe = replacement.sample(
    settings["probe_size"], torch.Generator(device=dev).manual_seed(seed + 10)
)
replacement_positions = replacement.query_positions.to(dev)
replacement_entropy = replacement_probe.bayes_entropy_bits[:, replacement_positions]
replacement_probe_model = Transformer(replacement_model.config, torch.Generator()).to(
    dev
)
replacement_beyond = beyond_position(
    replacement_history,
    replacement_probe_model,
    replacement_probe.tokens,
    replacement_positions,
    replacement_entropy,
    seed + 11,
)
record_beyond(replacement_beyond, "replacement_manifold_best_pc_beyond_position")
observed, component, share = (
    replacement_beyond[name] for name in ("observed", "component", "variance_share")
)
strongest = res.metrics["replacement_manifold_best_pc_beyond_position_strongest_null"]
glue(
    "replacement_manifold_phrase",
    f"{'above' if observed > strongest else 'not above'} the stronger of its nulls "
    f"({strongest:.3f}), on PC{component}, which carries {share:.1%} of the "
    "variance",
    display=False,
)
beyond_table(replacement_beyond)

# %%
with torch.no_grad():
    bayes_vectors = separate["probe"].bayes_predictive[
        :, separate["task"].key_positions
    ]
res.record(
    "bayes_predictive_pc1_share",
    pca(bayes_vectors.flatten(0, 1)).explained_variance_ratio[0],
)

# %%
panels = (
    ("scored, after final norm", "after"),
    ("value positions, before final norm", "raw"),
    ("value positions, standardised", "standardised"),
)
# a row per task and protocol, trained (left) beside random init (right)
fig, axes = plt.subplots(
    2 * len(panels), 2, figsize=(COLUMN_INCHES, 3.0 * 2 * len(panels)), squeeze=False
)
for combo, (task_name, label) in enumerate(
    (
        ("separate", "trained"),
        ("separate", "random init"),
        ("hmm", "trained"),
        ("hmm", "random init"),
    )
):
    if task_name == "hmm":
        task, probe, scored, values, value_entropy = (
            hmm,
            hmm_probe,
            hmm_positions,
            hmm_positions,
            hmm_entropy,
        )
        step = max(hmm_history.checkpoints) if label == "trained" else 0
        model = hmm_history.load_checkpoint(hmm_probe_model, step)
    else:
        task, probe, scored, values, value_entropy = manifold_inputs[task_name]
        run = bijection_runs[task_name]
        model = at_step(
            run, max(run["history"].checkpoints) if label == "trained" else 0
        )
    before, after = final_streams(model, probe.tokens)
    for column, (protocol, kind) in enumerate(panels):
        if kind == "after":
            points, colour = after[:, scored], probe.bayes_entropy_bits[:, scored]
        else:
            points, colour = before[:, values], value_entropy
        points = points.flatten(0, 1).double()
        if kind == "standardised":
            points = standardize_features(points)
        axes_of = pca(points)
        scores = axes_of.scores[:, :2].cpu().numpy()
        ax = axes[(combo // 2) * len(panels) + column, combo % 2]
        image = ax.scatter(
            scores[:, 0],
            scores[:, 1],
            c=colour.flatten().cpu().numpy(),
            cmap="viridis",
            s=3,
            alpha=0.6,
        )
        shares = axes_of.explained_variance_ratio[:2].tolist()
        ax.set_xlabel(f"PC1 ({100 * shares[0]:.0f}%)")
        ax.set_ylabel(f"PC2 ({100 * shares[1]:.0f}%)")
        ax.set_title(
            f"{'HMM' if task_name == 'hmm' else 'bijection'}, {label}:\n{protocol}",
            fontsize=10,
        )
    if combo % 2:  # both runs of a task drawn: one colour bar for its rows
        task_rows = axes[(combo // 2) * len(panels) : (combo // 2 + 1) * len(panels)]
        task_label = "HMM" if task_name == "hmm" else "bijection"
        fig.colorbar(
            image,
            ax=task_rows.ravel().tolist(),
            label=f"Bayes entropy, {task_label} (bits)",
            shrink=0.6,
        )
show_figure("fig_value_manifold", fig)

# %% [markdown]
# ## (g) Frame and precision over training
#
# The runs above end on a learning rate decayed to zero, so anything that stops moving late
# in them stops because the steps shrink. This part trains the separate-layout model again,
# on every seed, at a constant rate after the warm-up, with checkpoints spaced geometrically
# early and evenly over the second half. At every checkpoint, four measures that can see
# what the claim is about, and the precision:
#
# - **routing against value gradients**: $\lVert \partial L / \partial s \rVert /
#   \lVert \partial L / \partial v \rVert$ per layer on the probe batch, the direct test of the
#   chapter's proposition that routing gradients fade while value gradients go on;
# - **the key frame**: per layer-0 head, the subspace of the three leading directions of the
#   hypothesis keys, compared with the final one by its principal angles (mean squared cosine;
#   $3 / d_{head}$ for random subspaces);
# - **attention of the heads that matter** (found by masking, as in (e), on each seed's
#   final model): the total-variation distance of their attention rows to the final ones;
# - **the entropy direction**: the unit vector of a linear probe that reads the Bayes entropy
#   from the normed stream, and its $|\cos|$ with the final probe's;
# - **precision**: the entropy MAE (mean curve) on the held-out batches, on a logarithmic scale
#   (the log of the factor by which it exceeds its final value), since precision is gained by
#   factors.
#
# At a constant rate every state jitters from checkpoint to checkpoint, so the end state is
# the mean over the checkpoints of the last tenth of training (the window over which the
# chapter checks that the loss has flattened), and a measure *settles* at the first
# checkpoint after which its distance to that end state stays within the larger of a tenth
# of its distance at step 0 and the end window's own jitter (the largest distance of a
# checkpoint of the window). Two numbers per seed decide the ledger's rows, each with a 95 %
# interval over eight disjoint parts of held-out data. The fall of the gradient ratio, the
# end window's over the peak's: the peak checkpoint is chosen on the probe batch and the
# fall measured on a second probe batch, so that picking the largest of many noisy values
# does not make a fall by itself; a constant ratio gives 1. The gain in precision after the
# attention settled: the MAE at the attention's settling step over the end window's, on
# parts of the evaluation sequences; no gain gives 1. The key-position MAE of each seed's
# last checkpoint is the chapter's bijection result on every seed in the separate layout.

# %%
frame_steps = settings["frame_training"]["steps"]
frame_checkpoints = sorted(
    set(geometric_checkpoints(frame_steps, settings["n_checkpoints"]))
    | set(
        np.linspace(frame_steps // 2, frame_steps, settings["late_checkpoints"])
        .round()
        .astype(int)
        .tolist()
    )
)
FRAME_RANK = 3  # the leading directions of the V keys compared between checkpoints
SETTLING = {
    "key frame": "key frame: 1 - similarity",
    "attention": "attention of the heads that matter: TV",
    "entropy direction": "entropy direction: 1 - |cos|",
}
PRECISION = "entropy MAE: |log of its ratio to the end|"
task = separate["task"]
scored = task.key_positions.to(dev)
held_out_probe = task.sample(
    settings["probe_size"], torch.Generator(device=dev).manual_seed(seed + 13)
)
held_out_parts = [probe_part(held_out_probe, i) for i in range(PROBE_PARTS)]
eval_parts = [[] for _ in range(PROBE_PARTS)]
for batch in separate["batches"]:
    slices = torch.arange(batch.tokens.shape[0]).chunk(PROBE_PARTS)
    for part, rows in zip(eval_parts, slices, strict=True):
        part.append(sequences_of(batch, rows))


def key_subspace(keys):
    """``(d_head, r)`` orthonormal basis of the ``r`` leading directions of one head's
    keys.
    """
    return torch.linalg.svd(keys.double(), full_matrices=False).Vh[:FRAME_RANK].T


def frame_run(replicate):
    """The separate-layout model of seed ``replicate`` trained at a constant rate, with
    checkpoints at ``frame_checkpoints``; the heads that matter on its final model."""
    model = Transformer(
        separate["config"], torch.Generator().manual_seed(replicate_seed(replicate, 50))
    )
    history = train(
        model,
        task,
        settings["frame_training"],
        replicate_seed(replicate, 500),
        frame_checkpoints,
    )
    run = separate | dict(history=history)
    found, heads = head_ablation(run)
    if not heads:  # none doubles the MAE: follow the one whose masking hurts most
        heads = [found[[k for k in found.index if k[1] != "bypassed"]].idxmax()]
    return run | dict(heads=heads)


def end_window(steps):
    """The checkpoints of the last tenth of training, whose mean state is the end state:
    at a constant rate every state jitters, and one checkpoint is one draw."""
    return [step for step in steps if step >= 0.9 * steps[-1]]


def frame_dynamics(run):
    """One row per checkpoint: the gradient ratio (mean of layers and per layer), the
    distances of key frame, attention and entropy direction to the end state (their mean
    over :func:`end_window`), the entropy MAE (bits) and its distance to the end (the
    absolute log of its ratio to the end window's mean MAE)."""
    steps = sorted(run["history"].checkpoints)
    snapshots = {}
    for step in steps:
        model = at_step(run, step)
        with torch.no_grad():
            _, record = model(run["probe"].tokens, return_record=True)
        points = record.final[:, scored].flatten(0, 1)
        snapshots[step] = dict(
            ratio=routing_value_gradient_norms(
                model, run["probe"].tokens, run["probe"]
            ).ratio,
            weights=torch.stack(
                [
                    record.attention[layer].weights[:, head]
                    for layer, head in run["heads"]
                ]
            ),
            keys=hypothesis_keys(model, task),
            direction=probe_direction(
                points, run["probe"].bayes_entropy_bits[:, scored].flatten()
            ),
            mae=score(model, task, run["batches"]).mae_mean_curve,
        )
    end = [snapshots[step] for step in end_window(steps)]
    end_weights = torch.stack([e["weights"] for e in end]).mean(0)
    end_keys = torch.stack([e["keys"] for e in end]).mean(0)
    last = end[-1]["direction"]  # directions have no sign: align them before averaging
    end_direction = torch.stack(
        [e["direction"] * torch.sign(e["direction"] @ last) for e in end]
    ).mean(0)
    end_mae = np.mean([e["mae"] for e in end])

    def frame_distance(keys):
        return 1 - np.mean(
            [
                subspace_similarity(key_subspace(k), key_subspace(f))
                for k, f in zip(keys, end_keys, strict=True)
            ]
        )

    directions = torch.stack(
        [snapshots[s]["direction"] for s in steps] + [end_direction]
    )
    table = pd.DataFrame(
        {
            "step": steps,
            "routing / value gradient": [
                snapshots[s]["ratio"].mean().item() for s in steps
            ],
            SETTLING["key frame"]: [
                frame_distance(snapshots[s]["keys"]) for s in steps
            ],
            SETTLING["attention"]: [
                attention_drift(snapshots[s]["weights"], end_weights, scored)
                for s in steps
            ],
            SETTLING["entropy direction"]: (1 - direction_stability(directions))[
                :-1
            ].tolist(),
            "entropy MAE (bits)": [snapshots[s]["mae"] for s in steps],
            PRECISION: [abs(np.log(snapshots[s]["mae"] / end_mae)) for s in steps],
        }
    ).set_index("step")
    for layer in range(run["config"].n_layers):
        table[f"routing / value gradient, layer {layer}"] = [
            snapshots[s]["ratio"][layer].item() for s in steps
        ]
    return table


def settle_steps(table):
    """The settling step of each measure of :func:`frame_dynamics` and of the
    precision: the first checkpoint from which its distance to the end state stays
    within the larger of a tenth of its distance at step 0 and the end window's own
    jitter (the largest distance of an end-window checkpoint); and each distance over
    that threshold, times 0.1."""
    columns = [*SETTLING.values(), PRECISION]
    distances = torch.tensor(table[columns].to_numpy())
    in_end = torch.tensor(
        [step in end_window(list(table.index)) for step in table.index]
    )
    threshold = torch.maximum(0.1 * distances[0], distances[in_end].max(dim=0).values)
    relative = 0.1 * distances / threshold.clamp_min(1e-12)  # 0.1 at the threshold
    settled = settling_step(torch.tensor(table.index.to_numpy()), relative)
    return dict(zip((*SETTLING, "precision"), settled.tolist(), strict=True)), relative


def part_ratios(run, step):
    """``(PROBE_PARTS,)``: the gradient ratio, mean of layers, per part of the
    held-out probe."""
    model = at_step(run, step)
    return torch.tensor(
        [
            routing_value_gradient_norms(model, part.tokens, part).ratio.mean().item()
            for part in held_out_parts
        ]
    )


def part_maes(run, step):
    """``(PROBE_PARTS,)``: the mean-curve entropy MAE (bits) per evaluation part."""
    model = at_step(run, step)
    return torch.tensor(
        [score(model, task, part).mae_mean_curve for part in eval_parts]
    )


def frame_measures(run):
    """Per seed: the dynamics table, the settling steps, the fall of the gradient ratio
    (end window over the peak) and the gain in precision after the attention settled
    (the MAE there over the end window's), each with its interval over parts."""
    table = frame_dynamics(run)
    settle, relative = settle_steps(table)
    end = end_window(list(table.index))
    peak = table["routing / value gradient"].idxmax()  # chosen on the probe batch
    end_ratios = torch.stack([part_ratios(run, step) for step in end]).mean(0)
    falls = end_ratios / part_ratios(run, peak)  # measured on the other batch
    end_maes = torch.stack([part_maes(run, step) for step in end]).mean(0)
    gains = part_maes(run, settle["attention"]) / end_maes
    return dict(
        table=table,
        settle=settle,
        relative=relative,
        fall=falls.mean().item(),
        fall_interval=t_interval(falls),
        gain=gains.mean().item(),
        gain_interval=t_interval(gains),
        keys_mae=key_position_mae(
            score(at_step(run, end[-1]), task, run["batches"]), task
        ),
        loss_fall=relative_fall(run["history"].loss),
    )


frame = [frame_measures(frame_run(replicate)) for replicate in range(n_seeds)]
res.record("frame_steps", frame_steps)
res.record(
    "frame_training_sequences", frame_steps * settings["frame_training"]["batch_size"]
)
res.record("frame_n_checkpoints", len(frame_checkpoints))
per_seed = {
    "routing_value_gradient_ratio_fall": [f["fall"] for f in frame],
    "routing_value_gradient_ratio_fall_high": [f["fall_interval"][1] for f in frame],
    "mae_gain_after_attention_settle": [f["gain"] for f in frame],
    "mae_gain_after_attention_settle_low": [f["gain_interval"][0] for f in frame],
    "attention_settle_step": [f["settle"]["attention"] for f in frame],
    "precision_settle_step": [f["settle"]["precision"] for f in frame],
    "bijection_entropy_mae_keys_bits": [f["keys_mae"] for f in frame],
    "bijection_loss_fall_last_tenth": [f["loss_fall"] for f in frame],
}
for name, values in per_seed.items():
    res.record_spread(f"frame_{name}", values)
res.record(
    "frame_attention_first_share",
    np.mean([f["settle"]["attention"] < f["settle"]["precision"] for f in frame]),
)
n_faded = sum(high < 1 for high in per_seed["routing_value_gradient_ratio_fall_high"])
n_gained = sum(low > 1 for low in per_seed["mae_gain_after_attention_settle_low"])
glue("frame_faded_phrase", f"{n_faded} of {n_seeds}", display=False)
glue("frame_gained_phrase", f"{n_gained} of {n_seeds}", display=False)
pd.DataFrame(per_seed).rename_axis("seed").round(4)

# %%
shown, settle = frame[0]["table"], frame[0]["settle"]
for name, step in settle.items():
    res.record(f"{name.replace(' ', '_')}_settle_step", step)
res.record("key_subspace_similarity_random", FRAME_RANK / separate["config"].d_head)
fig, (left, right) = plt.subplots(1, 2, figsize=(COLUMN_INCHES, 4.0))
for layer in range(separate["config"].n_layers):
    left.plot(
        shown.index,
        shown[f"routing / value gradient, layer {layer}"],
        "o-",
        ms=3,
        label=f"layer {layer}",
    )
left.set_xscale("symlog", linthresh=10)
left.set_xlim(0, frame_steps * 1.1)
left.set_yscale("log")
left.set_xlabel("training step")
left.set_ylabel(
    r"$\Vert\partial L/\partial s\Vert \,/\, \Vert\partial L/\partial v\Vert$"
)
left.set_title("routing against value gradients", fontsize=11)
left.legend(fontsize=9)
relative = frame[0]["relative"]
for index, (name, marker) in enumerate(
    zip((*SETTLING, "precision"), "osD^", strict=True)
):
    right.plot(
        shown.index,
        relative[:, index],
        f"{marker}{'--' if name == 'precision' else '-'}",
        ms=3,
        label=f"{name} (settles at step {settle[name]})",
    )
right.axhline(0.1, color="0.5", lw=1, ls=":")
right.set_xscale("symlog", linthresh=10)
right.set_xlim(0, frame_steps * 1.1)
right.set_xlabel("training step")
right.set_ylabel("distance to the end state (0.1: settled)")
right.set_title("what settles when (seed 0)", fontsize=11)
right.legend(fontsize=9)
show_figure("fig_frame_precision", fig)

# %% [markdown]
# ## (h) The trained models on every seed
#
# The runs of (a) and (b) are seed 0. Their training is repeated on further seeds, each with
# its own initialisation and its own data, and every number that the ledger judges about a
# trained model is measured on each seed against the same held-out data: the bijection MAE
# at the key positions in the shared layout (the separate layout's seeds are the runs of
# (g)); on HMM filtering the per-sample MAE, the authors' length-generalisation ratio, the
# error step at the training length over the largest step inside it, and the best-of-PC1-5
# correlation beyond position over the stronger of its nulls.


# %%
def bijection_seed(layout, replicate):
    """The key-position MAE (bits) and the loss's fall over the last tenth of
    training of the ``layout`` bijection model of seed ``replicate`` (0: (a)'s run)."""
    run = bijection_runs[layout]
    model, history = run["model"], run["history"]
    if replicate > 0:
        index = list(LAYOUTS).index(layout)
        model = Transformer(
            run["config"],
            torch.Generator().manual_seed(replicate_seed(replicate, 10 * index)),
        )
        history = train(
            model,
            run["task"],
            settings["bijection_training"],
            replicate_seed(replicate, 100 + index),
        )
    report = score(model, run["task"], run["batches"])
    return key_position_mae(report, run["task"]), relative_fall(history.loss)


def hmm_seed(replicate):
    """The HMM numbers the ledger judges, for the model of seed ``replicate``."""
    model, history, found = hmm_model, hmm_history, hmm_beyond
    if replicate > 0:
        model = Transformer(
            hmm_config, torch.Generator().manual_seed(replicate_seed(replicate, 1))
        )
        history = train(
            model, hmm, settings["hmm_training"], replicate_seed(replicate, 200)
        )
        found = beyond_position(
            history,
            hmm_probe_model,
            hmm_probe.tokens,
            hmm_positions,
            hmm_entropy,
            seed + 9,
        )
    reports = {K: score(model, hmm, batches) for K, batches in length_batches.items()}
    at_boundary, inside_max = error_steps(
        reports[longest].abs_error, hmm.n_observations
    )
    return {
        "entropy_mae_bits": reports[hmm.n_observations].mae_mean_curve,
        "entropy_mae_per_sample_bits": reports[hmm.n_observations].mae_per_sample,
        "length_kl_ratio": length_kl_ratio(reports, hmm.n_observations),
        "error_step_over_within_train_max_bits": at_boundary - inside_max,
        "loss_fall_last_tenth": relative_fall(history.loss),
        "beyond_position_over_strongest_null": found["observed"]
        - found["strongest_null"],
        "beyond_position_component": found["component"],
        "beyond_position_variance_share": found["variance_share"],
    }


seeds_table = {
    "separate bijection, constant rate (g): MAE at the keys (bits)": per_seed[
        "bijection_entropy_mae_keys_bits"
    ]
}
for layout in ("shared",):  # the separate layout's seeds are the runs of (g)
    maes, falls = zip(*(bijection_seed(layout, r) for r in range(n_seeds)), strict=True)
    res.record_seeds(f"{layout}_bijection_entropy_mae_keys_bits", maes)
    res.record(f"{layout}_bijection_loss_fall_last_tenth_seeds_max", max(falls))
    seeds_table[f"{layout} bijection: MAE at the keys (bits)"] = maes
hmm_seeds = pd.DataFrame([hmm_seed(r) for r in range(n_seeds)])
res.record_seeds(
    "hmm_entropy_mae_per_sample_bits", hmm_seeds["entropy_mae_per_sample_bits"]
)
res.record_seeds("hmm_entropy_mae_bits", hmm_seeds["entropy_mae_bits"])
res.record(
    "hmm_entropy_mae_per_sample_bits_seeds_max",
    hmm_seeds["entropy_mae_per_sample_bits"].max(),
)
res.record_seeds("hmm_length_kl_ratio", hmm_seeds["length_kl_ratio"])
for name in (
    "error_step_over_within_train_max_bits",
    "beyond_position_over_strongest_null",
):
    res.record_spread(f"hmm_{name}", hmm_seeds[name])
res.record(
    "hmm_loss_fall_last_tenth_seeds_max", hmm_seeds["loss_fall_last_tenth"].max()
)
# the seed whose effect sits on the weakest component: the largest rank, then the
# smallest share of the variance
worst = hmm_seeds.sort_values(
    ["beyond_position_component", "beyond_position_variance_share"],
    ascending=[False, True],
).iloc[0]
res.record(
    "hmm_beyond_position_component_worst_seed", worst["beyond_position_component"]
)
res.record(
    "hmm_beyond_position_variance_share_worst_seed",
    worst["beyond_position_variance_share"],
)
margins = hmm_seeds["beyond_position_over_strongest_null"]
glue(
    "hmm_beyond_phrase",
    f"{int((margins > 0).sum())} of {n_seeds} seeds (by {margins.min():.3f} to "
    f"{margins.max():.3f})",
    display=False,
)
on_pc1 = int((hmm_seeds["beyond_position_component"] == 1).sum())
glue(
    "hmm_leading_component_phrase",
    f"PC1 carries it on {on_pc1} of {n_seeds} seeds"
    + (
        ""
        if on_pc1 == n_seeds
        else f"; on the others a later component does, carrying as little as "
        f"{worst['beyond_position_variance_share']:.1%} of the variance"
    ),
    display=False,
)
ratios = hmm_seeds["length_kl_ratio"]
glue(
    "hmm_length_ratio_phrase",
    f"below 2 on {int((ratios < 2).sum())} of {n_seeds} seeds "
    f"({ratios.min():.2f} to {ratios.max():.2f})",
    display=False,
)
steps_over = hmm_seeds["error_step_over_within_train_max_bits"]
glue(
    "hmm_discontinuity_phrase",
    "larger than every step inside the training length on "
    f"{int((steps_over > 0).sum())} of {n_seeds} seeds",
    display=False,
)
pd.DataFrame(seeds_table).join(hmm_seeds).rename_axis("seed").round(4)

# %% [markdown]
# ## Results
#
# The numbers above are written to this notebook's results file and glued into the chapter.

# %%
pd.Series(res.metrics)

# %%
_ = res.save()  # the results file (its path is not for the page)
