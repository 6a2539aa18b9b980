"""Paper II's deep variant of the sticky-chain model, and its AdamW training.

The authors' script also trains a multi-layer transformer on the same continuous inputs
``x_t`` (``(N, 20)``, no tokens and no positions), and scores it on a held-out sequence::

    h = x W_in + b_in                                   (N, d_model)
    for each of n_layers blocks (pre-LayerNorm):
        h = h + MHA(LN(h))      causal, n_heads heads, biases, dropout on the weights
        h = h + FF(LN(h))       Linear(d, 4d), GELU, dropout, Linear(4d, d), dropout
    logits = LN(h) W_out + b_out                        (N, C)

with 4 layers, 4 heads, ``d_model = 64`` and dropout 0.1, trained full-batch with AdamW
(learning rate 3e-4, weight decay 0.01, cosine decay to 0 over the run, gradient norm clipped
at 1). PyTorch's default initialisation. The chapter's own model is the one-head
:mod:`~attention_dynamics.sticky.model`; this module exists for the deep comparison, so it
differs from :mod:`~attention_dynamics.models.transformer` where the authors' model does
(continuous inputs, LayerNorm, biases, no position table).

:func:`train_deep` can give the value projections of every layer a larger learning rate
(``value_lr_multiplier``), which is the EM-like schedule carried over to the deep model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from attention_dynamics.runtime import evaluation_mode
from attention_dynamics.validation import check_float_tensor, check_positive_int_fields


@dataclass(frozen=True)
class DeepConfig:
    """Sizes of a :class:`DeepStickyTransformer` (defaults: the authors' deep variant).

    Attributes:
        d_x: input width; n_classes: output classes.
        d_model, n_layers, n_heads: residual width, depth, heads per layer
            (``d_model`` a multiple of ``n_heads``).
        d_ff: hidden width of the feed-forward sublayers; ``None`` means ``4 d_model``.
        dropout: dropout probability on attention weights and feed-forward outputs.
    """

    d_x: int = 20
    n_classes: int = 8
    d_model: int = 64
    n_layers: int = 4
    n_heads: int = 4
    d_ff: int | None = None
    dropout: float = 0.1

    def __post_init__(self):
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        check_positive_int_fields(self, ("d_x", "n_classes", "d_model", "n_layers", "n_heads", "d_ff"))
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads "
                             f"({self.n_heads})")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must lie in [0, 1); got {self.dropout!r}")


class _Block(nn.Module):
    """Pre-LayerNorm causal multi-head attention and feed-forward sublayers."""

    def __init__(self, config: DeepConfig):
        super().__init__()
        d = config.d_model
        self.n_heads, self.dropout = config.n_heads, config.dropout
        self.ln_attn, self.ln_ff = nn.LayerNorm(d), nn.LayerNorm(d)
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d, d) for _ in range(4))
        self.ff = nn.Sequential(nn.Linear(d, config.d_ff), nn.GELU(), nn.Dropout(config.dropout),
                                nn.Linear(config.d_ff, d), nn.Dropout(config.dropout))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        batch, length, d = h.shape
        x = self.ln_attn(h)

        def heads(projection: nn.Linear) -> torch.Tensor:          # (B, H, N, d / H)
            return projection(x).view(batch, length, self.n_heads, -1).transpose(1, 2)

        attended = F.scaled_dot_product_attention(
            heads(self.w_q), heads(self.w_k), heads(self.w_v), is_causal=True,
            dropout_p=self.dropout if self.training else 0.0)
        h = h + self.w_o(attended.transpose(1, 2).reshape(batch, length, d))
        return h + self.ff(self.ln_ff(h))


class DeepStickyTransformer(nn.Module):
    """Continuous inputs ``(B, N, d_x)`` to logits ``(B, N, C)``, causally.

    Args:
        config: the sizes.
        generator: optional CPU generator; when given, every weight is re-drawn from it
            with PyTorch's default initialisation rules (``reset_parameters``) so that a seed
            fixes the model; otherwise the global generator is used, as in the authors' script.
    """

    def __init__(self, config: DeepConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        self.input_proj = nn.Linear(config.d_x, config.d_model)
        self.blocks = nn.ModuleList(_Block(config) for _ in range(config.n_layers))
        self.ln_final = nn.LayerNorm(config.d_model)
        self.output_proj = nn.Linear(config.d_model, config.n_classes)
        if generator is not None:
            with torch.no_grad():
                for module in self.modules():
                    if isinstance(module, nn.Linear):
                        bound = 1 / math.sqrt(module.in_features)  # kaiming_uniform(a=sqrt 5)
                        module.weight.copy_(torch.rand(module.weight.shape, generator=generator)
                                            * 2 * bound - bound)
                        module.bias.copy_(torch.rand(module.bias.shape, generator=generator)
                                          * 2 * bound - bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, N, C)`` for inputs ``(B, N, d_x)``."""
        check_float_tensor("x", x, min_dim=3, max_dim=3)
        if x.shape[-1] != self.config.d_x:
            raise ValueError(f"x must have shape (B, N, d_x={self.config.d_x}); got "
                             f"{tuple(x.shape)}")
        h = self.input_proj(x)
        for block in self.blocks:
            h = block(h)
        return self.output_proj(self.ln_final(h))

    def value_parameters(self) -> list[nn.Parameter]:
        """The weights and biases of every layer's value projection."""
        return [p for block in self.blocks for p in block.w_v.parameters()]


@dataclass(frozen=True)
class DeepMetrics:
    """Scores of a model on one batch of sequences (each a float).

    Attributes:
        loss: mean cross-entropy over all positions (nats).
        entropy: mean entropy of the predictive distributions (nats).
        accuracy: fraction of positions whose most likely class is the target.
    """

    loss: float
    entropy: float
    accuracy: float


@torch.no_grad()
def evaluate_deep(model: nn.Module, x: torch.Tensor, targets: torch.Tensor) -> DeepMetrics:
    """Score ``model`` in evaluation mode (no dropout) on inputs ``(B, N, d_x)`` and ``(B, N)``
    int64 targets; the model's training mode is restored afterwards."""
    with evaluation_mode(model):
        log_probs = model(x).log_softmax(dim=-1)
    loss = F.nll_loss(log_probs.flatten(0, 1), targets.flatten())
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    accuracy = (log_probs.argmax(-1) == targets).double().mean()
    return DeepMetrics(loss=loss.item(), entropy=entropy.item(), accuracy=accuracy.item())


@dataclass
class DeepHistory:
    """What :func:`train_deep` recorded.

    Attributes:
        train_loss: ``(steps,)`` the training-mode loss (dropout on) before each update, as
            the authors' script records it.
        eval_steps: ``(K,)`` steps at which both sequences were scored in evaluation mode.
        train_eval_loss, heldout_loss: ``(K,)`` those scores' losses (nats).
        final_train, final_heldout: :class:`DeepMetrics` after the last update.
    """

    train_loss: torch.Tensor
    eval_steps: torch.Tensor
    train_eval_loss: torch.Tensor
    heldout_loss: torch.Tensor
    final_train: DeepMetrics
    final_heldout: DeepMetrics


def train_deep(model: nn.Module, x: torch.Tensor, targets: torch.Tensor,
               heldout_x: torch.Tensor, heldout_targets: torch.Tensor, steps: int,
               lr: float = 3e-4, weight_decay: float = 0.01, value_lr_multiplier: float = 1.0,
               grad_clip: float = 1.0, eval_every: int = 50) -> DeepHistory:
    """Full-batch AdamW on ``(x, targets)`` with cosine decay; scores a held-out sequence too.

    Args:
        model: a :class:`DeepStickyTransformer`, trained in place.
        x, targets: training inputs ``(B, N, d_x)`` and int64 targets ``(B, N)``.
        heldout_x, heldout_targets: a fresh sequence from the same chain, never trained on.
        steps: number of updates; the learning rate follows ``lr * (1 + cos(pi s / steps)) / 2``
            (PyTorch's ``CosineAnnealingLR``).
        lr, weight_decay: AdamW's (decoupled decay on every parameter, as the authors' script).
        value_lr_multiplier: the value projections' learning rate is ``lr`` times this
            (1 gives the authors' deep run; 10 the EM-like split).
        grad_clip: maximum global gradient norm.
        eval_every: evaluate both sequences every so many steps (and at the end).

    Returns:
        A :class:`DeepHistory`.
    """
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int; got {steps!r}")
    if not isinstance(eval_every, int) or eval_every < 1:
        raise ValueError(f"eval_every must be a positive int; got {eval_every!r}")
    if not value_lr_multiplier > 0:
        raise ValueError(f"value_lr_multiplier must be positive; got {value_lr_multiplier!r}")
    values = {id(p) for p in model.value_parameters()}
    groups = [{"params": [p for p in model.parameters() if id(p) not in values], "lr": lr},
              {"params": model.value_parameters(), "lr": lr * value_lr_multiplier}]
    optimizer = torch.optim.AdamW(groups, lr=lr, weight_decay=weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    model.train()
    train_loss, evaluations = [], []
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            evaluations.append((step, evaluate_deep(model, x, targets).loss,
                                evaluate_deep(model, heldout_x, heldout_targets).loss))
        if step == steps:
            break
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).flatten(0, 1), targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        scheduler.step()
        train_loss.append(loss.detach())
    eval_steps, train_eval, heldout = zip(*evaluations, strict=True)
    return DeepHistory(train_loss=torch.stack(train_loss).cpu(),
                       eval_steps=torch.tensor(eval_steps),
                       train_eval_loss=torch.tensor(train_eval),
                       heldout_loss=torch.tensor(heldout),
                       final_train=evaluate_deep(model, x, targets),
                       final_heldout=evaluate_deep(model, heldout_x, heldout_targets))
