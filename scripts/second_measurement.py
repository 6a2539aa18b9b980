"""A second, independent measurement of chapter 4's key geometry and HMM manifold, across seeds.

Chapter 4 measures the trained keys with the library (``BijectionTask``, ``train_sequence_model``,
``measures.geometry``). This script measures the same quantities on its own: its own sequence
generator (NumPy), its own training loop (``torch.optim.AdamW`` with a one-cycle schedule) and its
own key measures (NumPy on the ``state_dict``, written line by line after the authors' code). Only
the model class is shared, so that the two are measured on the same architecture. It also runs the
library's pipeline on the same seeds, so the two can be compared seed by seed.

The key measures, following ``vishalmisra/bayesian-wind-tunnel``:

- ``mean_abs_normed``: ``experiments/jlens/subspaces.py::identify_frame_head`` — the hypothesis
  tokens' embeddings through the first block's norm (``_normed_token_embeddings``; this model's
  norm is an RMSNorm), through layer 0's ``W_K`` per head, the mean ``|cos|`` off the diagonal
  (``src/utils/geometry.py::measure_key_orthogonality``); the mean over heads.
- ``signed_raw_layer_<l>``: ``experiments/paper1_bijection/figures/qkv_analysis.py::cmd_orthogonality``
  — raw token embeddings through layer ``l``'s ``W_K`` per head, the signed off-diagonal mean; the
  mean over heads (the script's bar chart). That script takes the tokens ``0..V-1``: in the shared
  layout the hypotheses, in the separate layout the *key* tokens, so both token sets are measured.

The HMM manifold, after ``experiments/paper1_hmm/figures/hmm_geometric_analysis.py::analyze_layer``:
a PCA of the last residual stream (before the final norm) at the observation positions, the
component among PC1-5 with the largest ``|Pearson|`` with the Bayes filter entropy, and that
component's correlation once each position's mean is removed from both (``hmm_beyond_position``),
with the 99th percentile of the same procedure on entropies shuffled across sequences within each
position (``hmm_null_q99``). The task's sequences and exact posteriors come from the library's
``HMMFilteringTask`` (tested against enumeration); the training loop and every measure are this
script's own.

Usage (about twenty minutes on two cores)::

    python scripts/second_measurement.py --seeds 0 1 2 --output _build/second_measurement.json

It writes one JSON file with every number, the settings, the commit and the machine (versions,
CPU and its dispatch, as a results file records them; the committed file predates the dispatch).
``--steps``, ``--hmm-steps`` and ``--n-shuffles`` shrink the run (the tests run it at a tiny
size); their defaults are the committed run's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

from attention_dynamics.book.provenance import environment_versions
from attention_dynamics.models import Transformer, TransformerConfig
from attention_dynamics.sequence_training import SequenceTrainingConfig, train_sequence_model
from attention_dynamics.tasks.bijection import BijectionTask
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask

V = 10
MODEL = dict(n_layers=2, n_heads=4, d_model=64, init_std=0.1)
STEPS, BATCH, LR = 1500, 128, 3e-3
WARMUP = 75                                                   # the library pipeline's, of STEPS
RMS_EPS = 1e-5


def sequences(layout: str, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, targets)`` of ``batch`` bijection sequences; target ``-1`` where unscored."""
    perms = np.argsort(rng.random((batch, V)), axis=1)      # the bijections
    keys = np.argsort(rng.random((batch, V)), axis=1)       # keys in a random order
    values = np.take_along_axis(perms, keys, axis=1)
    offset = 0 if layout == "shared" else V
    pairs = np.stack([keys, values + offset], axis=2).reshape(batch, 2 * V)
    targets = np.full_like(pairs, -1)
    targets[:, 0::2] = values + offset                        # the value is asked at its key
    if layout == "separate":
        return pairs[:, :-1], targets[:, :-1]                 # the last value is never shown
    which = rng.integers(0, V, size=batch)
    query = keys[np.arange(batch), which]
    tokens = np.concatenate([pairs, query[:, None]], axis=1)
    targets = np.concatenate([targets, values[np.arange(batch), which][:, None]], axis=1)
    return tokens, targets


def hypotheses(layout: str) -> np.ndarray:
    return np.arange(V) if layout == "shared" else np.arange(V, 2 * V)


def train_own(layout: str, seed: int, steps: int = STEPS) -> Transformer:
    """This script's own loop: AdamW, one-cycle rate, gradient clipping, fresh batches."""
    rng = np.random.default_rng(seed)
    length = 2 * V + (1 if layout == "shared" else -1)
    vocab = V if layout == "shared" else 2 * V
    model = Transformer(TransformerConfig(vocab_size=vocab, max_len=length, **MODEL),
                        torch.Generator().manual_seed(1000 + seed))
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LR, total_steps=steps,
                                                   pct_start=0.05)
    for _ in range(steps):
        tokens, targets = (torch.from_numpy(a) for a in sequences(layout, BATCH, rng))
        logits = model(tokens)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(),
                                                 ignore_index=-1)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
    return model


def train_library(layout: str, seed: int, steps: int = STEPS) -> Transformer:
    """The chapter's pipeline: the library's task and training loop, the chapter's settings."""
    task = BijectionTask(V, layout=layout)
    model = Transformer(TransformerConfig(vocab_size=task.vocab_size, max_len=task.seq_len,
                                          **MODEL), torch.Generator().manual_seed(seed))
    config = SequenceTrainingConfig(steps=steps, batch_size=BATCH, lr=LR,
                                    warmup_steps=WARMUP * steps // STEPS, final_lr_fraction=0.0)
    train_sequence_model(model, task, config, torch.Generator().manual_seed(100 + seed))
    return model


def key_entropy_mae(model: Transformer, layout: str, seed: int, n_sequences: int = 2000) -> float:
    """Mean-curve MAE (bits) of the answer-slice entropy at the key positions, 2000 sequences."""
    tokens, _ = sequences(layout, n_sequences, np.random.default_rng(10_000 + seed))
    with torch.no_grad():
        logits = model(torch.from_numpy(tokens)).double()
    slice_ = logits[:, 0:2 * V - 1:2][..., torch.from_numpy(hypotheses(layout))]
    p = slice_.softmax(-1)
    entropy = -(p * p.clamp_min(1e-300).log2()).sum(-1).mean(0).numpy()
    bayes = np.log2(V - np.arange(V))
    return float(np.abs(entropy - bayes).mean())


def off_diagonal(keys: np.ndarray) -> np.ndarray:
    """Cosines between distinct rows of ``keys`` ``(N, d)``."""
    unit = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-8)
    cos = unit @ unit.T
    return cos[~np.eye(len(keys), dtype=bool)]


def key_measures(model: Transformer, layout: str) -> dict[str, float]:
    state = {k: v.detach().double().numpy() for k, v in model.state_dict().items()}
    embed = state["embed.weight"]
    gain = state["blocks.0.norm_attn.weight"]
    normed = embed / np.sqrt((embed**2).mean(-1, keepdims=True) + RMS_EPS) * gain
    w_k = [state[f"blocks.{layer}.attn.w_k"] for layer in range(MODEL["n_layers"])]  # (H, d, dh)
    out = {}
    hyp = hypotheses(layout)
    out["mean_abs_normed"] = float(np.mean([np.abs(off_diagonal(normed[hyp] @ w)).mean()
                                            for w in w_k[0]]))
    token_sets = {"hypotheses": hyp, "tokens_0_to_V-1": np.arange(V)}
    for name, tokens in token_sets.items():
        for layer, heads in enumerate(w_k):
            out[f"signed_raw_layer_{layer}_{name}"] = float(np.mean(
                [off_diagonal(embed[tokens] @ w).mean() for w in heads]))
            out[f"mean_abs_raw_layer_{layer}_{name}"] = float(np.mean(
                [np.abs(off_diagonal(embed[tokens] @ w)).mean() for w in heads]))
    return out


HMM = dict(n_states=5, n_observations=20, resolution=0.05)
HMM_MODEL = dict(n_layers=2, n_heads=8, d_model=64, init_std=0.1)
HMM_STEPS, HMM_BATCH, HMM_WARMUP = 1200, 32, 100


def train_hmm(pipeline: str, seed: int, steps: int = HMM_STEPS
              ) -> tuple[Transformer, HMMFilteringTask]:
    """Chapter 4's HMM transformer trained on the cross-entropy to the exact posterior, by this
    script's loop (``own``) or the library's (``library``)."""
    task = HMMFilteringTask(**HMM)
    model = Transformer(TransformerConfig(vocab_size=task.vocab_size, max_len=task.seq_len,
                                          **HMM_MODEL), torch.Generator().manual_seed(seed))
    data = torch.Generator().manual_seed(200 + seed)
    if pipeline == "library":
        config = SequenceTrainingConfig(steps=steps, batch_size=HMM_BATCH, lr=LR,
                                        warmup_steps=HMM_WARMUP * steps // HMM_STEPS, loss="bayes")
        train_sequence_model(model, task, config, data)
        return model, task
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LR, total_steps=steps,
                                                   pct_start=HMM_WARMUP / HMM_STEPS)
    for _ in range(steps):
        batch = task.sample(HMM_BATCH, data)
        log_p = torch.log_softmax(model(batch.tokens), dim=-1)
        scored = batch.bayes_predictive.sum(-1) > 0                     # (B, T)
        loss = -(batch.bayes_predictive * log_p).sum(-1)[scored].mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
    return model, task


def hmm_manifold(model: Transformer, task: HMMFilteringTask, seed: int,
                 n_shuffles: int = 200, n_sequences: int = 256) -> dict[str, float]:
    """The best-of-PC1-5 protocol on 256 fresh sequences, beyond position, and its null."""
    batch = task.sample(n_sequences, torch.Generator().manual_seed(300 + seed))
    positions = task.query_positions
    with torch.no_grad():
        _, record = model(batch.tokens, return_record=True)
    stream = record.residual[-1][:, positions].double().numpy()          # (B, P, d)
    entropy = batch.bayes_entropy_bits[:, positions].double().numpy()    # (B, P)
    n_seq, n_pos, width = stream.shape
    points = stream.reshape(-1, width)
    centred = points - points.mean(0)
    u, singular, _ = np.linalg.svd(centred, full_matrices=False)
    scores = (u * singular)[:, :5].reshape(n_seq, n_pos, -1)             # PC1-5 scores

    def statistic(coordinate: np.ndarray) -> tuple[float, int, float]:
        flat = coordinate.reshape(-1)
        raw = [abs(np.corrcoef(scores[..., i].reshape(-1), flat)[0, 1]) for i in range(5)]
        best = int(np.argmax(raw))
        residual_score = (scores[..., best] - scores[..., best].mean(0)).reshape(-1)
        residual_entropy = (coordinate - coordinate.mean(0)).reshape(-1)
        return abs(np.corrcoef(residual_score, residual_entropy)[0, 1]), best + 1, raw[best]

    beyond, component, raw = statistic(entropy)
    rng = np.random.default_rng(400 + seed)
    null = [statistic(np.take_along_axis(entropy, rng.permuted(
        np.tile(np.arange(n_seq)[:, None], (1, n_pos)), axis=0), axis=0))[0]
        for _ in range(n_shuffles)]
    return dict(hmm_beyond_position=beyond, hmm_null_q99=float(np.quantile(null, 0.99)),
                hmm_best_pc_component=component, hmm_best_pc_abs_pearson=raw)


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--layouts", nargs="+", default=["separate", "shared", "hmm"],
                        choices=["separate", "shared", "hmm"],
                        help="the bijection layouts whose keys are measured, and hmm for the "
                             "HMM manifold")
    parser.add_argument("--pipelines", nargs="+", default=["own", "library"],
                        choices=["own", "library"])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=STEPS,
                        help="training steps of each bijection model (a smaller run)")
    parser.add_argument("--hmm-steps", type=int, default=HMM_STEPS,
                        help="training steps of each HMM model (a smaller run)")
    parser.add_argument("--n-shuffles", type=int, default=200,
                        help="shuffles of the HMM manifold's null")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for layout in args.layouts:
        for pipeline in args.pipelines:
            for seed in args.seeds:
                start = time.time()
                if layout == "hmm":
                    model, task = train_hmm(pipeline, seed, args.hmm_steps)
                    row = dict(layout=layout, pipeline=pipeline, seed=seed,
                               **hmm_manifold(model, task, seed, args.n_shuffles),
                               seconds=round(time.time() - start, 1))
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    continue
                trainer = train_own if pipeline == "own" else train_library
                model = trainer(layout, seed, args.steps)
                row = dict(layout=layout, pipeline=pipeline, seed=seed,
                           key_entropy_mae_bits=key_entropy_mae(model, layout, seed),
                           **key_measures(model, layout),
                           **{f"init_{k}": v for k, v in key_measures(
                               Transformer(model.config, torch.Generator().manual_seed(seed)),
                               layout).items()},
                           seconds=round(time.time() - start, 1))
                rows.append(row)
                print(json.dumps(row), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(dict(
        settings=dict(V=V, model=MODEL, steps=args.steps, batch_size=BATCH, lr=LR, hmm=HMM,
                      hmm_model=HMM_MODEL, hmm_steps=args.hmm_steps, hmm_batch_size=HMM_BATCH),
        commit=commit(), date=time.strftime("%Y-%m-%d"),
        versions=environment_versions() | {"numpy": np.__version__},
        rows=rows), indent=2) + "\n")


if __name__ == "__main__":
    main()
