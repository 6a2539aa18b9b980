"""Side-by-side speed measurements: each function times the library against a baseline in one run.

Every function returns a dict of median wall times (seconds) and the ratio that the book
reports. Timings depend on the machine; only ratios measured in the same run are compared.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attention_dynamics.attention import attention_forward
from attention_dynamics.bitwise import REFERENCE_MODELS
from attention_dynamics.dispatch import child_environment
from attention_dynamics.heads import HeadProblem, sample_head_problem
from attention_dynamics.models.mamba import selective_scan_chunked, selective_scan_sequential
from attention_dynamics.models.transformer import Transformer, TransformerConfig
from attention_dynamics.sticky.model import init_params, loss_and_grads
from attention_dynamics.tasks.sticky_chain import (
    bayes_log_predictive,
    sample_sticky_chain,
    symbol_means,
    transition_matrix,
)
from attention_dynamics.timing import interleaved_median_seconds, median_seconds


def retain_for_diagnostics(record) -> None:
    """Keep, through the coming backward pass, the three gradients that
    :func:`routing_diagnostics` reads from ``record`` (an
    :class:`~attention_dynamics.attention.AttentionRecord`): ``u = dL/do``, ``dL/dalpha`` and
    ``dL/dv``. Call it after the forward pass, before ``backward()``."""
    for tensor in (record.output, record.weights, record.v):
        tensor.retain_grad()


def routing_diagnostics(record) -> dict[str, torch.Tensor]:
    """The per-pair diagnostics of one head after a backward pass: B, A, dL/ds and dL/dv.

    Backpropagation through ``o = alpha v`` already forms the compatibility as the gradient of
    the weights, ``dL/dalpha_ij = u_i . v_j = B_ij``, and the value gradient
    ``dL/dv_j = sum_i alpha_ij u_i``; the diagnostics keep both (:func:`retain_for_diagnostics`)
    and add the rest in closed form: the baseline ``sum_j alpha_ij B_ij = u_i . o_i`` (one dot
    product per query), the advantage ``A = B - baseline`` and the routing law
    ``dL/ds = alpha A``. ``record`` is an :class:`~attention_dynamics.attention.AttentionRecord`
    whose gradients were retained; returned tensors ``(..., T, T)`` (``compatibility``,
    ``advantage``, ``score_grad``, zero outside the mask) and ``(..., T, d_v)`` (``value_grad``).
    ``compatibility`` and ``value_grad`` are the retained gradients themselves, the first set to
    zero outside the mask in place.
    """
    tensors = {"output": record.output, "weights": record.weights, "v": record.v}
    kept = {name: tensor.grad if tensor.retains_grad else None for name, tensor in tensors.items()}
    missing = [name for name, grad in kept.items() if grad is None]
    if missing:
        raise ValueError(f"record holds no gradient of {', '.join(missing)}: call "
                         "retain_for_diagnostics(record) before backward()")
    with torch.no_grad():
        alpha, compat = record.weights.detach(), kept["weights"]
        baseline = (kept["output"] * record.output.detach()).sum(dim=-1, keepdim=True)
        advantage = compat - baseline
        if record.mask is not None:
            compat.masked_fill_(~record.mask, 0.0)
            advantage.masked_fill_(~record.mask, 0.0)
        return {"compatibility": compat, "advantage": advantage, "score_grad": alpha * advantage,
                "value_grad": kept["v"]}


def _per_pair_autograd(problem: HeadProblem) -> torch.Tensor:
    """dL/ds_ij of the first sequence and head, one autograd call per allowed pair ``(i, j)``."""
    record = attention_forward(problem.x, problem.w_q, problem.w_k, problem.w_v, mask=problem.mask)
    loss = problem.loss_from_output(record.output)
    length = record.scores.shape[-1]
    out = torch.zeros(length, length, dtype=record.scores.dtype, device=record.scores.device)
    for i in range(length):
        for j in range(i + 1):
            (grad,) = torch.autograd.grad(loss, record.scores, retain_graph=True)
            out[i, j] = grad[0, 0, i, j]
    return out


def diagnostics_benchmark(length: int = 128, batch: int = 8, heads: int = 4, width: int = 32,
                          repeats: int = 5, number: int = 10, seed: int = 0,
                          device=None) -> dict[str, float]:
    """Routing diagnostics against a plain training step and against per-pair autograd.

    A plain step is one forward and backward pass of a causal head with a readout
    (cross-entropy); the diagnosed step keeps the gradients the diagnostics read and adds
    :func:`routing_diagnostics` after the same backward pass. Both are timed in turns,
    ``number`` steps a turn, median of ``repeats`` turns. The per-pair baseline differentiates
    the loss once per allowed score, ``T (T + 1) / 2`` autograd calls, timed once.

    Returns times in seconds and ``overhead_ratio`` (diagnosed / plain) and
    ``speedup_vs_per_pair`` (per-pair / diagnosed).
    """
    problem = sample_head_problem(torch.Generator(device=device or "cpu").manual_seed(seed), batch,
                                  heads, length, width, width, width, dtype=torch.float32,
                                  device=device)

    def plain():
        problem.forward_backward()

    def diagnosed():
        record, _ = problem.forward_backward(retain=("weights", "v"))
        routing_diagnostics(record)

    timed = interleaved_median_seconds({"plain": plain, "diagnosed": diagnosed}, repeats=repeats,
                                       number=number)
    t_plain, t_diag = timed["plain"], timed["diagnosed"]
    t_pairs = median_seconds(lambda: _per_pair_autograd(problem), repeats=1, warmup=0)
    return {"plain_step_s": t_plain, "diagnosed_step_s": t_diag, "per_pair_autograd_s": t_pairs,
            "pairs": length * (length + 1) / 2, "overhead_ratio": t_diag / t_plain,
            "speedup_vs_per_pair": t_pairs / t_diag}


def _loop_sampler_and_filter(transition: np.ndarray, means: np.ndarray, length: int,
                             n_sequences: int, rng: np.random.Generator) -> np.ndarray:
    """The straightforward baseline: one sequence at a time, one time step at a time.

    Samples each chain with one categorical draw per step, its inputs, and runs the forward
    filter as a Python loop over time; returns the predictive ``(n_sequences, length - 1, S)``.
    """
    n_symbols, dim = means.shape
    out = np.empty((n_sequences, length - 1, n_symbols))
    for n in range(n_sequences):
        symbols = [int(rng.integers(n_symbols))]
        for _ in range(1, length):
            symbols.append(int(rng.choice(n_symbols, p=transition[symbols[-1]])))
        inputs = means[symbols[:-1]] + rng.standard_normal((length - 1, dim))
        belief = np.full(n_symbols, 1.0 / n_symbols)  # over y_{t-1}, before seeing x_t
        for t in range(length - 1):
            likelihood = np.exp(-0.5 * ((inputs[t] - means) ** 2).sum(axis=1))
            posterior = belief * likelihood
            posterior /= posterior.sum()
            out[n, t] = posterior @ transition
            belief = out[n, t]
    return out


def sampler_benchmark(length: int = 200, n_sequences: int = 64, repeats: int = 3,
                      seed: int = 0) -> dict[str, float]:
    """Vectorised sticky-chain sampling + exact predictive against a per-sequence Python loop."""
    transition = transition_matrix()
    means = symbol_means()

    def vectorised():
        data = sample_sticky_chain(length, torch.Generator().manual_seed(seed),
                                   batch_size=n_sequences)
        bayes_log_predictive(data.inputs, data.transition, data.means, data.noise_std)

    t_vec = median_seconds(vectorised, repeats=repeats)
    t_loop = median_seconds(lambda: _loop_sampler_and_filter(
        transition.numpy(), means.double().numpy(), length, n_sequences,
        np.random.default_rng(seed)), repeats=1, warmup=0)
    return {"vectorised_s": t_vec, "loop_s": t_loop, "speedup": t_loop / t_vec}


def sticky_step_benchmark(length: int = 2000, runs: int = 10, repeats: int = 3,
                          seed: int = 0) -> dict[str, float]:
    """The fused closed-form training step of the sticky-chain model against autograd.

    Both compute the loss and all weight gradients of ``runs`` batched runs at sequence length
    ``length``; the autograd route materialises the ``(runs, T, T)`` attention matrix.
    """
    params = init_params(list(range(seed, seed + runs)))
    data = sample_sticky_chain(length, torch.Generator().manual_seed(seed), batch_size=runs)
    x, y = data.inputs, data.targets

    def autograd_step():
        leaves = params.map(lambda w: w.detach().requires_grad_())
        record = attention_forward(x, leaves.w_q, leaves.w_k, leaves.w_v)
        logits = record.output @ leaves.w_o
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")
        loss.view(runs, -1).mean(dim=1).sum().backward()

    timed = interleaved_median_seconds({"fused": lambda: loss_and_grads(params, x, y),
                                        "autograd": autograd_step}, repeats=repeats)
    t_fused, t_auto = timed["fused"], timed["autograd"]
    return {"fused_s": t_fused, "autograd_s": t_auto, "speedup": t_auto / t_fused}


class TorchEncoderLM(nn.Module):
    """The baseline of :func:`transformer_step_benchmark`: the sizes of a ``TransformerConfig``
    built from ``torch.nn.TransformerEncoder`` (pre-norm layers, GELU, no dropout, a causal
    mask, learned positions and a head tied to the embedding); tokens ``(B, T)`` -> logits.

    It differs from :class:`~attention_dynamics.models.transformer.Transformer` in what torch's
    layer fixes: LayerNorm instead of RMSNorm and biases in the attention projections.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Embedding(config.max_len, config.d_model)
        layer = nn.TransformerEncoderLayer(config.d_model, config.n_heads, config.d_ff, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, config.n_layers, enable_nested_tensor=False)
        self.norm_final = nn.LayerNorm(config.d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, vocab)`` for ``tokens`` ``(B, T)`` int64."""
        length = tokens.shape[1]
        h = self.embed(tokens) + self.positions(torch.arange(length, device=tokens.device))
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=tokens.device)
        h = self.encoder(h, mask=mask, is_causal=True)
        return self.norm_final(h) @ self.embed.weight.T


def _diagnosed_transformer_loss(model: Transformer, tokens: torch.Tensor, targets: torch.Tensor
                                ) -> tuple[torch.Tensor, list]:
    """The training loss with every layer's record kept and the gradients its diagnostics
    read retained (:func:`retain_for_diagnostics`)."""
    logits, record = model(tokens, return_record=True)
    for layer in record.attention:
        retain_for_diagnostics(layer)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten()), record.attention


def transformer_step_benchmark(config: TransformerConfig, batch: int = 32, repeats: int = 5,
                               seed: int = 0, device=None) -> dict[str, float]:
    """One AdamW training step of the book's transformer against a ``TorchEncoderLM``.

    Both take the same random tokens ``(batch, config.max_len)`` and next-token targets. The
    diagnosed step of the book's model also keeps every layer's record and computes
    :func:`routing_diagnostics` (``B``, ``A``, ``dL/ds``, ``dL/dv``) for every layer and head
    from the upstream gradients of the same backward pass.

    Returns median seconds per step and ``ratio_vs_torch_encoder`` (torch's time / ours, above 1
    when ours is faster), ``diagnostics_cost`` (diagnosed / plain step of ours) and both models'
    parameter counts.
    """
    device = torch.device(device or "cpu")
    generator = torch.Generator().manual_seed(seed)
    ours = Transformer(config, generator).to(device)
    torch.manual_seed(seed)
    theirs = TorchEncoderLM(config).to(device)
    tokens = torch.randint(config.vocab_size, (batch, config.max_len), generator=generator)
    tokens, targets = tokens.to(device), tokens.roll(-1, dims=1).to(device)
    optimizers = {id(m): torch.optim.AdamW(m.parameters(), lr=3e-4) for m in (ours, theirs)}

    def step(model: nn.Module, diagnose: bool = False) -> None:
        optimizer = optimizers[id(model)]
        optimizer.zero_grad(set_to_none=True)
        if diagnose:
            loss, records = _diagnosed_transformer_loss(model, tokens, targets)
            loss.backward()
            for record in records:
                routing_diagnostics(record)
        else:
            loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
            loss.backward()
        optimizer.step()

    timed = interleaved_median_seconds({"ours": lambda: step(ours),
                                        "diagnosed": lambda: step(ours, diagnose=True),
                                        "torch": lambda: step(theirs)}, repeats=repeats)
    t_ours, t_diag, t_torch = timed["ours"], timed["diagnosed"], timed["torch"]
    return {"ours_s": t_ours, "ours_diagnosed_s": t_diag, "torch_encoder_s": t_torch,
            "ratio_vs_torch_encoder": t_torch / t_ours, "diagnostics_cost": t_diag / t_ours,
            "parameters_ours": sum(p.numel() for p in ours.parameters()),
            "parameters_torch_encoder": sum(p.numel() for p in theirs.parameters())}


def mamba_scan_benchmark(length: int, batch: int = 32, d_inner: int = 128, d_state: int = 16,
                         repeats: int = 5, seed: int = 0, device=None) -> dict[str, float]:
    """The chunked selective scan against the sequential one, forward and backward.

    Random inputs of the shapes the book's Mamba uses (``(batch, length, d_inner)``, state
    ``d_state``, ``A < 0``); the chunk size is the default ``round(sqrt(T))``. Returns median
    seconds of each and ``chunked_speedup`` (sequential / chunked, above 1 when chunked wins).
    """
    device = torch.device(device or "cpu")
    generator = torch.Generator().manual_seed(seed)

    def draw(*shape):
        return torch.randn(*shape, generator=generator).to(device)

    x = draw(batch, length, d_inner).requires_grad_()
    delta = F.softplus(draw(batch, length, d_inner) - 2).requires_grad_()
    A = (-torch.rand(d_inner, d_state, generator=generator) - 0.5).to(device).requires_grad_()
    B, C = draw(batch, length, d_state).requires_grad_(), draw(batch, length, d_state).requires_grad_()

    def run(scan) -> None:
        scan(x, delta, A, B, C).square().mean().backward()

    timed = interleaved_median_seconds({"sequential": lambda: run(selective_scan_sequential),
                                        "chunked": lambda: run(selective_scan_chunked)},
                                       repeats=repeats)
    t_seq, t_chunk = timed["sequential"], timed["chunked"]
    return {"sequential_s": t_seq, "chunked_s": t_chunk, "chunked_speedup": t_seq / t_chunk}


def _step_seconds_in_a_process(pinned: bool, steps: int) -> dict:
    """Seconds per training step of each reference model (:mod:`attention_dynamics.bitwise`),
    measured in a fresh interpreter with the CPU dispatch pinned or not, and its capability."""
    code = ("import json, torch\n"
            "from attention_dynamics.bitwise import REFERENCE_MODELS, seconds_per_step\n"
            f"seconds = {{arch: seconds_per_step(arch, {steps}) for arch in REFERENCE_MODELS}}\n"
            "print(json.dumps({'seconds': seconds, "
            "'capability': torch.backends.cpu.get_cpu_capability()}))")
    completed = subprocess.run([sys.executable, "-c", code], env=child_environment(pinned),
                               capture_output=True, text=True, check=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def pin_cost_benchmark(repeats: int = 3, steps: int = 60) -> dict[str, float | str]:
    """What the CPU dispatch pin costs: seconds per training step of each reference model
    pinned (AVX2) and unpinned (the machine's fastest kernels), each measured ``repeats``
    times in fresh processes taken in turns (pinned first in even repeats), ``steps`` steps
    each. Returns each model's ``<arch>_pin_cost`` (median pinned over median unpinned
    seconds per step; above 1 the pin is slower) and ``unpinned_capability`` (what torch
    picked without the pin; where it is ``AVX2`` the pin changes nothing)."""
    if repeats < 1 or steps < 1:
        raise ValueError(f"repeats and steps must be at least 1; got {repeats}, {steps}")
    runs = {True: [], False: []}
    for repeat in range(repeats):
        for pinned in ((True, False) if repeat % 2 == 0 else (False, True)):
            runs[pinned].append(_step_seconds_in_a_process(pinned, steps))
    result: dict[str, float | str] = {"unpinned_capability": runs[False][0]["capability"]}
    for arch in REFERENCE_MODELS:
        pinned, unpinned = (statistics.median(run["seconds"][arch] for run in runs[flag])
                            for flag in (True, False))
        result[f"{arch}_pin_cost"] = pinned / unpinned
    return result
