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
# transformer on the two wind tunnels of Paper I, bijection elimination and HMM filtering,
# whose exact posteriors are known, and measures what the chapter derives: how well the
# model's predictive entropy follows the Bayes entropy, whether the trained keys form a frame,
# how queries align with keys, whether final-layer representations lie on a low-dimensional
# manifold ordered by posterior entropy, and whether attention settles before precision does.
# A capacity-matched MLP, which cannot see its context, is the negative control.
#
# The parameters below are set by papermill when the book is built. `profile` is `quick`
# (a laptop CPU, a few minutes, smaller tasks and models) or `paper` (the papers' sizes, for a
# GPU); `device` is `auto`, `cpu` or `cuda`.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %%
import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.notebook import setup_notebook
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.measures.geometry import (
    attention_drift,
    contextual_keys,
    cosine_matrix,
    key_orthogonality,
    manifold_summary,
    pca,
    per_sequence_manifolds,
    query_key_alignment,
    representation_drift,
)
from attention_dynamics.measures.metrics import blind_predictor_maes, entropy_bits, evaluate
from attention_dynamics.measures.trajectories import relative_fall, settling_step
from attention_dynamics.models import MLP, MLPConfig, Transformer, TransformerConfig, count_parameters
from attention_dynamics.runtime import select
from attention_dynamics.sequence_training import (
    SequenceTrainingConfig,
    geometric_checkpoints,
    held_out_batches,
    train_sequence_model,
)
from attention_dynamics.tasks.bijection import BijectionTask, mean_entropy_gap_of_marginal
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask

dev, gen, res = setup_notebook("manifold_formation", profile, device, seed)

settings = select(
    profile,
    quick=dict(
        n_symbols=10,
        bijection_model=dict(n_layers=2, n_heads=4, d_model=64, init_std=0.1),
        bijection_training=dict(steps=800, batch_size=128, lr=3e-3, warmup_steps=50),
        hmm_task=dict(n_states=5, n_observations=20, resolution=0.05),
        hmm_test_lengths=(30, 50),
        hmm_model=dict(n_layers=2, n_heads=8, d_model=64, init_std=0.1),
        hmm_training=dict(steps=2000, batch_size=32, lr=3e-3, warmup_steps=100, loss="bayes"),
        n_checkpoints=12, eval_batches=4, eval_batch_size=500, probe_size=256,
    ),
    paper=dict(
        n_symbols=20,
        bijection_model=dict(n_layers=6, n_heads=6, d_model=192, d_ff=768, init_std=0.05),
        bijection_training=dict(steps=50_000, batch_size=256, lr=3e-4, warmup_steps=2000),
        hmm_task=dict(n_states=5, n_observations=20, resolution=0.01),
        hmm_test_lengths=(30, 50),
        hmm_model=dict(n_layers=9, n_heads=8, d_model=256, init_std=0.05),
        hmm_training=dict(steps=50_000, batch_size=64, lr=3e-4, warmup_steps=2000, loss="bayes"),
        n_checkpoints=24, eval_batches=20, eval_batch_size=500, probe_size=1000,
    ),
)
settings

# %% [markdown]
# Every training batch is drawn fresh from the task (online training), so no sequence is seen
# twice; held-out batches come from a separate generator. Checkpoints are spaced
# geometrically, to resolve the early steps where attention forms.

# %%
eval_sizes = dict(n_batches=settings["eval_batches"], batch_size=settings["eval_batch_size"],
                  device=dev)


def train(model, task, training):
    config = SequenceTrainingConfig(**training)
    checkpoints = geometric_checkpoints(config.steps, settings["n_checkpoints"])
    return train_sequence_model(model.to(dev), task, config, gen, checkpoint_steps=checkpoints)


# %% [markdown]
# ## (a) Bijection elimination
#
# Each sequence shows the pairs of a fresh random bijection of $V$ symbols, keys drawn without
# replacement; at the $k$-th key the Bayes posterior is uniform over the $V - k + 1$ values not
# yet revealed. Key and value symbols have separate tokens, so the $V$ value tokens are the
# hypotheses.

# %%
bijection = BijectionTask(settings["n_symbols"])
bij_config = TransformerConfig(vocab_size=bijection.vocab_size, max_len=bijection.seq_len,
                               **settings["bijection_model"])
bij_model = Transformer(bij_config, torch.Generator().manual_seed(seed))
bij_history = train(bij_model, bijection, settings["bijection_training"])
bij_eval = held_out_batches(bijection, seed=seed + 1, **eval_sizes)
bij_report = evaluate(bij_model, bij_eval)
pd.DataFrame({"k": np.arange(1, bijection.n_pairs + 1),
              "model entropy (bits)": bij_report.model_entropy.numpy(),
              "Bayes log2(V-k+1)": bij_report.bayes_entropy.numpy()}).set_index("k").T.round(4)

# %%
res.record("n_symbols", bijection.n_symbols)
res.record("bijection_parameters", count_parameters(bij_model))
res.record("bijection_steps", settings["bijection_training"]["steps"])
res.record("bijection_train_seconds", bij_history.seconds, timing=True)
res.record("bijection_entropy_mae_bits", bij_report.mae_mean_curve)
res.record("bijection_entropy_mae_per_sample_bits", bij_report.mae_per_sample)
res.record("bijection_kl_bits", bij_report.kl_bits)
res.record("bijection_loss_fall_last_tenth", relative_fall(bij_history.loss))

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
hmm_tests = {K: dataclasses.replace(hmm, n_observations=K) for K in settings["hmm_test_lengths"]}
hmm_config = TransformerConfig(vocab_size=hmm.vocab_size,
                               max_len=max(t.seq_len for t in hmm_tests.values()),
                               **settings["hmm_model"])
hmm_model = Transformer(hmm_config, torch.Generator().manual_seed(seed + 1))
hmm_history = train(hmm_model, hmm, settings["hmm_training"])
hmm_eval = held_out_batches(hmm, seed=seed + 2, **eval_sizes)
hmm_report = evaluate(hmm_model, hmm_eval)
length_reports = {hmm.n_observations: hmm_report}
length_reports |= {K: evaluate(hmm_model, held_out_batches(task, seed=seed + 2 + K, **eval_sizes))
                   for K, task in hmm_tests.items()}
pd.DataFrame({K: {"entropy MAE, mean curve (bits)": r.mae_mean_curve,
                  "entropy MAE, per sample (bits)": r.mae_per_sample,
                  "KL to Bayes (bits)": r.kl_bits} for K, r in length_reports.items()}).round(4)

# %% [markdown]
# Two references put the per-sample error in scale: a predictor that ignores the observations
# and outputs, at every position, a distribution with the average Bayes entropy of that
# position would have a mean-curve MAE of zero and the per-sample MAE below; the uniform
# predictor has the per-sample MAE of $\log_2 5$ minus the Bayes entropy.

# %%
bayes_entropy = torch.cat([b.bayes_entropy_bits[:, hmm.query_positions] for b in hmm_eval])
blind = blind_predictor_maes(bayes_entropy, hmm.n_states)
res.record("hmm_parameters", count_parameters(hmm_model))
res.record("hmm_steps", settings["hmm_training"]["steps"])
res.record("hmm_train_seconds", hmm_history.seconds, timing=True)
res.record("hmm_train_length", hmm.n_observations)
res.record("hmm_entropy_mae_bits", hmm_report.mae_mean_curve)
res.record("hmm_entropy_mae_per_sample_bits", hmm_report.mae_per_sample)
res.record("hmm_kl_bits", hmm_report.kl_bits)
res.record("hmm_average_curve_predictor_mae_bits", blind["average_curve"])
res.record("hmm_uniform_predictor_mae_bits", blind["uniform"])
res.record("hmm_loss_fall_last_tenth", relative_fall(hmm_history.loss))
for K in settings["hmm_test_lengths"]:
    res.record(f"hmm_entropy_mae_per_sample_bits_length_{K}", length_reports[K].mae_per_sample)
    res.record(f"hmm_entropy_mae_bits_length_{K}", length_reports[K].mae_mean_curve)
    res.record(f"hmm_kl_bits_length_{K}", length_reports[K].kl_bits)

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 4))
ks = np.arange(1, bijection.n_pairs + 1)
axes[0].plot(ks, bij_report.bayes_entropy, "k--", lw=1.2, label=r"Bayes $\log_2(V-k+1)$")
axes[0].plot(ks, bij_report.model_entropy, "o", ms=5, label="transformer")
axes[0].set_xlabel("key index $k$")
axes[0].set_ylabel("predictive entropy (bits)")
axes[0].legend()
with torch.no_grad():
    model_h = entropy_bits(hmm_model(hmm_eval[0].tokens))[:, hmm.query_positions]
bayes_h = hmm_eval[0].bayes_entropy_bits[:, hmm.query_positions]
axes[1].scatter(bayes_h.cpu().flatten(), model_h.cpu().flatten(), s=3, alpha=0.3)
span = np.array([bayes_h.min().item(), bayes_h.max().item()])
axes[1].plot(span, span, "k--", lw=1)
axes[1].set_xlabel("Bayes filter entropy (bits)")
axes[1].set_ylabel("transformer entropy (bits)")
for K, report in length_reports.items():
    axes[2].plot(np.arange(1, K + 1), report.abs_error, label=f"tested at K = {K}")
axes[2].axvline(hmm.n_observations, color="0.4", lw=1, ls=":")
axes[2].set_xlabel("observation $t$")
axes[2].set_ylabel(r"mean $|H_{model} - H_{Bayes}|$ (bits)")
axes[2].legend()
show_figure("fig_entropy_calibration", fig)

# %% [markdown]
# ## (c) The capacity-matched MLP
#
# The same embeddings, depth, width and head, with each attention sublayer's weights moved
# into a wider MLP, so that nothing mixes positions. Its best possible predictive is the
# context-free marginal, uniform over all $V$ values; the entropy gap of that marginal to the
# Bayes curve is the floor of its MAE.

# %%
mlp = MLP(MLPConfig.matching(bij_config), torch.Generator().manual_seed(seed + 2))
mlp_history = train(mlp, bijection, settings["bijection_training"])
mlp_report = evaluate(mlp, bij_eval)
res.record("mlp_parameters", count_parameters(mlp))
res.record("mlp_bijection_entropy_mae_bits", mlp_report.mae_mean_curve)
res.record("mlp_bijection_entropy_mae_per_sample_bits", mlp_report.mae_per_sample)
res.record("mlp_bijection_loss_fall_last_tenth", relative_fall(mlp_history.loss))
res.record("bijection_marginal_gap_bits", mean_entropy_gap_of_marginal(bijection.n_symbols))
pd.Series({"transformer parameters": count_parameters(bij_model),
           "MLP parameters": count_parameters(mlp),
           "MLP entropy MAE (bits)": mlp_report.mae_mean_curve,
           "floor: marginal's gap (bits)": mean_entropy_gap_of_marginal(bijection.n_symbols),
           "transformer entropy MAE (bits)": bij_report.mae_mean_curve})

# %% [markdown]
# ## (d) Geometry of the trained bijection model
#
# A fixed probe batch is run through the model at every checkpoint; step 0 is the random
# initialisation, which is the baseline of every geometric measure.

# %%
bij_steps = sorted(bij_history.checkpoints)
probe_batch = bijection.sample(settings["probe_size"], torch.Generator(device=dev).manual_seed(seed + 7))
probe_model = Transformer(bij_config, torch.Generator()).to(dev)


def probe(step):
    """Logits and record of the probe batch with the weights after ``step`` updates."""
    with torch.no_grad():
        return bij_history.load_checkpoint(probe_model, step)(probe_batch.tokens, return_record=True)


hypotheses = bijection.hypothesis_tokens.to(dev)
value_positions = bijection.value_positions.to(dev)
query_positions = bijection.query_positions.to(dev)
value_labels = probe_batch.tokens[:, value_positions] - bijection.n_symbols  # (B, L - 1)


def key_frame(step):
    """Layer-0 token keys of the V hypotheses (H, V, d_head), and per-layer contextual keys."""
    _, record = probe(step)
    with torch.no_grad():
        token_keys = probe_model.token_keys(hypotheses)
    contextual = [contextual_keys(layer.k, value_positions, value_labels, bijection.n_symbols)
                  for layer in record.attention]
    return token_keys, torch.stack(contextual)  # (H, V, d), (layers, H, V, d)


init_keys, init_contextual = key_frame(0)
final_keys, final_contextual = key_frame(bij_steps[-1])
orthogonality = pd.DataFrame({
    "trained": key_orthogonality(final_keys).cpu().numpy(),
    "random init": key_orthogonality(init_keys).cpu().numpy(),
}, index=pd.Index(range(bij_config.n_heads), name="layer-0 head"))
contextual_table = pd.DataFrame(
    key_orthogonality(final_contextual).cpu().numpy(),
    index=pd.Index(range(bij_config.n_layers), name="layer"),
    columns=pd.Index(range(bij_config.n_heads), name="head"))
random_directions = np.sqrt(2 / (np.pi * bij_config.d_head))
res.record("key_orthogonality", orthogonality["trained"].mean())
res.record("key_orthogonality_random_init", orthogonality["random init"].mean())
res.record("key_orthogonality_best_head", orthogonality["trained"].min())
res.record("key_orthogonality_random_directions", random_directions)
res.record("key_orthogonality_simplex", 1 / (bijection.n_symbols - 1))
for layer in range(bij_config.n_layers):
    res.record(f"key_orthogonality_contextual_layer_{layer}", contextual_table.loc[layer].mean())
    res.record(f"key_orthogonality_contextual_layer_{layer}_random_init",
               key_orthogonality(init_contextual[layer]).mean())
orthogonality.round(3), contextual_table.round(3)

# %%
fig, axes = plt.subplots(2, bij_config.n_heads, figsize=(2.6 * bij_config.n_heads, 5.4),
                         squeeze=False)
for head in range(bij_config.n_heads):
    for row, (label, keys) in enumerate((("random init", init_keys), ("trained", final_keys))):
        ax = axes[row, head]
        image = ax.imshow(cosine_matrix(keys[head]).cpu().numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_title(f"head {head}: mean |cos| {key_orthogonality(keys[head]).item():.2f}",
                     fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        if head == 0:
            ax.set_ylabel(label)
fig.colorbar(image, ax=axes, shrink=0.7, label="cosine between hypothesis keys")
show_figure("fig_key_cosines", fig)

# %% [markdown]
# Query–key alignment: the cosine between the query at the $k$-th key position and the keys
# at the earlier value positions (the hypotheses already revealed, which the query must
# discount), averaged over heads and probe sequences, per layer.

# %%
def alignment_maps(step):
    """(layers, L, L - 1) mean cos(q at key k, k at earlier value j), nan where j is later."""
    _, record = probe(step)
    maps = [query_key_alignment(layer.q, layer.k, query_positions, value_positions).mean(0)
            for layer in record.attention]
    return torch.stack(maps).cpu()


final_alignment = alignment_maps(bij_steps[-1])
init_alignment = alignment_maps(0)
n_rows = -(-bij_config.n_layers // 3)
n_cols = min(bij_config.n_layers, 3)
fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.2 * n_cols, 3.8 * n_rows), squeeze=False)
limit = np.nanmax(np.abs(final_alignment.numpy()))
for layer, ax in enumerate(axes.flat):
    if layer >= bij_config.n_layers:
        ax.axis("off")
        continue
    image = ax.imshow(final_alignment[layer].numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_facecolor("0.85")
    ax.grid(False)
    ax.set_xlabel("earlier value $j$")
    ax.set_ylabel("query at key $k$")
    for axis in (ax.xaxis, ax.yaxis):  # rows and columns count from 1, as in the text
        axis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value + 1:.0f}"))
    ax.set_title(f"layer {layer}: mean cos {np.nanmean(final_alignment[layer].numpy()):.2f}",
                 fontsize=10)
fig.colorbar(image, ax=axes, shrink=0.8, label=r"$\cos(q_k, k_j)$")
show_figure("fig_qk_alignment", fig)
for layer in range(bij_config.n_layers):
    res.record(f"qk_alignment_layer_{layer}", np.nanmean(final_alignment[layer].numpy()))
    res.record(f"qk_alignment_layer_{layer}_random_init", np.nanmean(init_alignment[layer].numpy()))

# %% [markdown]
# The value manifold: a PCA of the final-layer representations (the normed stream that the
# tied head reads) at every query position of the probe batch, coloured by the Bayes entropy,
# pooled over sequences. In the bijection task without replacement the entropy is a function of
# the position, so a coordinate that tracks the entropy may be tracking the position; in the
# HMM task the entropy varies between sequences at a fixed position, which removes that
# confound. The authors' script computes its PCA over the positions of a single sequence (it
# re-seeds its generator inside the function that draws each of its probe sequences, so they
# are all the same one); the second protocol below does that for each probe sequence and
# averages.

# %%
bij_logits, bij_record = probe(bij_steps[-1])
bij_points = bij_record.final[:, query_positions].flatten(0, 1)
bij_entropy = probe_batch.bayes_entropy_bits[:, query_positions].flatten()
bij_manifold = manifold_summary(bij_points, bij_entropy)
bij_share, bij_rho = per_sequence_manifolds(bij_record.final[:, query_positions],
                                            probe_batch.bayes_entropy_bits[:, query_positions])
bayes_vectors = probe_batch.bayes_predictive[:, query_positions].flatten(0, 1)
hmm_probe = hmm.sample(settings["probe_size"], torch.Generator(device=dev).manual_seed(seed + 8))
hmm_model.eval()
with torch.no_grad():
    _, hmm_record = hmm_model(hmm_probe.tokens, return_record=True)
hmm_final = hmm_record.final[:, hmm.query_positions.to(dev)]
hmm_entropy = hmm_probe.bayes_entropy_bits[:, hmm.query_positions.to(dev)]
hmm_manifold = manifold_summary(hmm_final.flatten(0, 1), hmm_entropy.flatten())
hmm_share, hmm_rho = per_sequence_manifolds(hmm_final, hmm_entropy)

# the same measures at initialisation: what the architecture gives before any training
_, init_record = probe(bij_steps[0])
init_manifold = manifold_summary(init_record.final[:, query_positions].flatten(0, 1), bij_entropy)
res.record("value_pc1_share_random_init", init_manifold.pc1_share)
res.record("value_pc1_entropy_spearman_random_init", abs(init_manifold.pc1_spearman))
res.record("value_pc1_share", bij_manifold.pc1_share)
res.record("value_pc2_share", bij_manifold.pc2_share)
res.record("value_pc1_entropy_spearman", abs(bij_manifold.pc1_spearman))
res.record("value_pc1_entropy_r2", bij_manifold.pc1_r2)
res.record("value_entropy_linear_r2", bij_manifold.linear_r2)
res.record("value_pc1_share_per_sequence", bij_share.mean())
res.record("value_pc1_entropy_spearman_per_sequence", bij_rho.abs().mean())
res.record("bayes_predictive_pc1_share", pca(bayes_vectors).explained_variance_ratio[0])
res.record("hmm_value_pc1_share", hmm_manifold.pc1_share)
res.record("hmm_value_pc2_share", hmm_manifold.pc2_share)
res.record("hmm_value_pc1_entropy_spearman", abs(hmm_manifold.pc1_spearman))
res.record("hmm_value_entropy_linear_r2", hmm_manifold.linear_r2)
res.record("hmm_value_pc1_share_per_sequence", hmm_share.mean())
res.record("hmm_value_pc1_entropy_spearman_per_sequence", hmm_rho.abs().nanmean())
pd.DataFrame({name: {"PC1 share": m.pc1_share, "PC2 share": m.pc2_share,
                     "|Spearman(PC1, H)|": abs(m.pc1_spearman), "R2 of H on PC1": m.pc1_r2,
                     "R2 of H, linear probe": m.linear_r2,
                     "PC1 share, one sequence at a time": share.mean().item(),
                     "|Spearman(PC1, H)|, one sequence at a time": rho.abs().nanmean().item()}
              for name, m, share, rho in (("bijection", bij_manifold, bij_share, bij_rho),
                                          ("HMM", hmm_manifold, hmm_share, hmm_rho))}).round(3)

# %%
fig, axes = plt.subplots(1, 3, figsize=(16, 4.3))
for ax, (name, summary, entropy) in zip(axes[:2], (("bijection", bij_manifold, bij_entropy),
                                                   ("HMM", hmm_manifold, hmm_entropy.flatten())),
                                        strict=True):
    scores = summary.pca.scores.cpu().numpy()
    image = ax.scatter(scores[:, 0], scores[:, 1], c=entropy.cpu().numpy(), cmap="viridis",
                       s=4, alpha=0.6)
    ax.set_xlabel(f"PC1 ({100 * summary.pc1_share:.0f}% of variance)")
    ax.set_ylabel(f"PC2 ({100 * summary.pc2_share:.0f}%)")
    ax.set_title(f"{name}, all probe sequences pooled", fontsize=10)
    fig.colorbar(image, ax=ax, label="Bayes entropy (bits)")
for index in range(6):  # the authors' protocol: one PCA per sequence
    points = bij_record.final[index, query_positions]
    entropy = probe_batch.bayes_entropy_bits[index, query_positions].cpu()
    coordinate = pca(points).scores[:, 0].cpu()
    coordinate = coordinate * np.sign(np.corrcoef(coordinate, entropy)[0, 1])
    axes[2].plot(entropy, coordinate / coordinate.std(), "o-", ms=3, lw=1)
axes[2].set_xlabel("Bayes entropy (bits)")
axes[2].set_ylabel("PC1 of the sequence (standardised)")
axes[2].set_title("bijection, one sequence at a time", fontsize=10)
show_figure("fig_value_manifold", fig)

# %% [markdown]
# ## (e) Frame and precision over training
#
# At every checkpoint: the attention patterns of the probe batch (all layers and heads, rows
# of the query positions), their total-variation distance to the final patterns; the
# final-layer representations at the query positions, their distance $1 - \mathrm{CKA}$ to the
# final ones (blind to rotations and rescalings); and the entropy MAE on the held-out batches.
# Attention *settles* at the first checkpoint after which its distance to the final patterns
# stays below a tenth of its distance at initialisation, and likewise the representations.

# %%
final_weights = torch.stack([layer.weights for layer in bij_record.attention])
rows = []
for step in bij_steps:
    _, record = probe(step)
    weights = torch.stack([layer.weights for layer in record.attention])
    rows.append(dict(
        step=step,
        attention_drift=attention_drift(weights, final_weights, query_positions),
        representation_drift=representation_drift(record.final[:, query_positions].flatten(0, 1),
                                                   bij_points),
        mae=evaluate(probe_model, bij_eval).mae_mean_curve,
    ))
dynamics = pd.DataFrame(rows).set_index("step")
drifts = torch.tensor(dynamics[["attention_drift", "representation_drift"]].to_numpy())
settled = settling_step(torch.tensor(bij_steps), drifts / drifts[0])  # drift as a share of step 0's
settle = dict(zip(("attention", "representation"), settled.tolist(), strict=True))
for name, step in settle.items():
    res.record(f"{name}_settle_step", step)
    res.record(f"mae_at_{name}_settle_bits", dynamics.loc[step, "mae"])
    res.record(f"mae_fall_after_{name}_settle", dynamics.loc[step, "mae"] / bij_report.mae_mean_curve)
res.record("attention_settle_fraction", settle["attention"] / bij_steps[-1])
res.record("representation_drift_at_attention_settle",
           dynamics.loc[settle["attention"], "representation_drift"])
res.record("attention_drift_at_representation_settle",
           dynamics.loc[settle["representation"], "attention_drift"])
dynamics.round(4)

# %%
fig, ax = plt.subplots(figsize=(7, 4.2))
shown = dynamics.index.to_numpy()
ax.plot(shown, dynamics["attention_drift"], "o-", label="attention: TV distance to final")
ax.plot(shown, dynamics["representation_drift"], "s-",
        label="representations: 1 - CKA to final")
ax.axvline(settle["attention"], color="C0", ls=":", lw=1.2,
           label=f"attention settles (step {settle['attention']})")
ax.axvline(settle["representation"], color="C1", ls=":", lw=1.2,
           label=f"representations settle (step {settle['representation']})")
ax.set_xscale("symlog", linthresh=10)
ax.set_xlabel("training step")
ax.set_ylabel("distance to the final model")
ax.set_ylim(bottom=0)
twin = ax.twinx()
twin.plot(shown, dynamics["mae"], "^--", color="C2", label="entropy MAE (right axis)")
twin.set_yscale("log")
twin.set_ylabel("entropy MAE (bits)")
twin.grid(False)
handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
ax.legend(handles=handles, fontsize=8, loc="upper right")
show_figure("fig_frame_precision", fig)

# %% [markdown]
# ## (f) Which heads carry the computation
#
# Masking one head at a time (its output set to zero) and bypassing one layer at a time, the
# entropy MAE on the held-out bijection batches.

# %%
bij_history.load_checkpoint(probe_model, bij_steps[-1])
ablation = {}
for layer in range(bij_config.n_layers):
    for head in range(bij_config.n_heads):
        with probe_model.ablated(heads={layer: [head]}):
            ablation[f"layer {layer}, head {head}"] = evaluate(probe_model, bij_eval).mae_mean_curve
    with probe_model.ablated(bypass=[layer]):
        ablation[f"layer {layer} bypassed"] = evaluate(probe_model, bij_eval).mae_mean_curve
ablation = pd.Series(ablation, name="entropy MAE (bits)")
res.record("largest_single_head_ablation_mae_bits", ablation.filter(like="head").max())
res.record("smallest_single_head_ablation_mae_bits", ablation.filter(like="head").min())
ablation.round(4)

# %% [markdown]
# ## Results
#
# The numbers above are written to this notebook's results file and glued into the chapter.

# %%
pd.Series(res.metrics)

# %%
_ = res.save()  # the results file (its path is not for the page)
