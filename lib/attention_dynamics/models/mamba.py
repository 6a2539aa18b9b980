"""A compact Mamba-1 language model with its own selective scan and implicit attention.

The selective state-space recurrence (Gu and Dao 2023), per channel ``d`` of the scan input
``u`` ``(B, T, d_inner)`` and state index ``n`` (``d_state`` of them)::

    h_t[d, n] = Abar_t[d, n] h_{t-1}[d, n] + Bbar_t[d, n] u_t[d],        h_0 = 0
    y_t[d]    = sum_n C_t[n] h_t[d, n] + D[d] u_t[d]

with ``A = -exp(A_log)`` diagonal ``(d_inner, d_state)`` and the input-dependent step
``Delta_t`` ``(B, T, d_inner)``, input matrix ``B_t`` and output matrix ``C_t`` (both
``(B, T, d_state)``), discretised by zero-order hold for ``A`` and Euler for ``B``::

    Abar_t[d, n] = exp(Delta_t[d] A[d, n]),        Bbar_t[d, n] = Delta_t[d] B_t[n].

Unrolled, the scan is a causal linear map of its input, a matrix per channel whose entries
depend on the content of the positions, which is why the book calls Mamba content-routing::

    y_t[d] - D[d] u_t[d] = sum_{s <= t} M[d, t, s] u_s[d],
    M[d, t, s] = sum_n C_t[n] (prod_{r = s+1..t} Abar_r[d, n]) Bbar_s[d, n]
               = sum_n C_t[n] exp(sum_{r = s+1..t} Delta_r[d] A[d, n]) Delta_s[d] B_s[n].

:func:`mamba_implicit_attention` returns ``M``. Unlike softmax attention its rows are not
normalised: nothing forces ``sum_s M[d, t, s] = 1`` or ``M >= 0`` (``C_t`` and ``B_s`` have
signs), so it has no "attention-weighted average" baseline.

Two scans compute ``y``, equal up to rounding: :func:`selective_scan_sequential` (``T`` steps,
each updating the ``(B, d_inner, d_state)`` state) and :func:`selective_scan_chunked` (about
``2 sqrt(T)`` steps: every chunk scanned from a zero state at once, then the chunk-start
states carried across chunks and added back through log-space cumulative decays). On a CPU
the sequential one is the faster at ``T <= 128`` (its per-step state stays in cache, the
chunked one streams full ``(B, T, d_inner, d_state)`` tensors); on a GPU the chunked one needs
far fewer kernel launches. :class:`MambaConfig`'s ``scan="auto"`` picks accordingly.

The standard model (pre-RMSNorm residual blocks, a head tied to the token embedding, no
position embedding: the recurrence carries order)::

    h_0 = E[tokens]                                                   (B, T, d_model)
    h_{l+1} = h_l + W_out (y_l * SiLU(z_l)),   (x_l, z_l) = W_in RMSNorm(h_l)
        u_l = SiLU(causal depthwise conv(x_l)),  (Delta, B, C) from u_l,  y_l = scan(u_l)
    logits = RMSNorm(h_L) E^T                                         (B, T, vocab)

The authors' variant (``MambaConfig(variant="authors")``) is the Mamba of Paper I's scripts
(``experiments/paper1_hmm/train_mamba.py`` of ``vishalmisra/bayesian-wind-tunnel``; ``"standard"``,
the default, is the Mamba-1 above, unchanged). It differs in:

- **rank-1 steps**: ``x_proj`` gives ``1 + 2 d_state`` numbers per position and ``dt_proj`` maps
  the one to ``d_inner`` steps, ``Delta = clamp(softplus(dt_proj(.)), 1e-4, 10)``; ``dt_proj``
  starts with weight ``U(+-0.01)`` and bias ``0.1`` (so ``Delta`` starts near
  ``softplus(0.1) = 0.74`` in every channel);
- **a shared, slower diagonal**: ``A_log`` has one entry per state index, ``log(0.1 n)``, shared by
  every channel, and ``A = -exp(min(A_log, 5))`` (so ``A = -0.1 (1, ..., N)`` at initialisation);
- **a clamped scan** (:func:`selective_scan_authors`, always sequential)::

      h_t = clamp(exp(clamp(Delta_t A, -20, 0)) h_{t-1} + clamp(Delta_t B_t u_t, -10, 10), -100, 100)
      raw_t = C_t h_t

  (elementwise per channel and state index; no ``D`` inside);
- **a LayerNorm on the scan output** before the skip and the gate,
  ``y = LayerNorm_{d_inner}(raw) + D u``, the block then ``W_out (y * SiLU(z))`` (``W_out``
  unscaled by depth);
- **the residual stream**: no norm before the blocks, ``h_{l+1} = h_l + mixer(h_l)``; a
  LayerNorm (not RMSNorm) before the tied head; the embedding ``N(0, 1)`` (PyTorch's default)
  unless ``init_std`` is given. No position embedding, as in the standard model.

Choices where the scripts do not fix the book's model: the head stays tied to the embedding
(the bijection script ties it; the HMM script reads the hidden states with its own biased
linear head, a readout the book's token tasks replace); the scripts' ``nan_to_num`` of the
stream after each block is left out (a NaN should surface, not be zeroed); the depth is
``n_layers`` (the scripts use 9 for the HMM and 6 for the bijection) and ``d_conv``,
``expand`` and ``d_state`` keep their meaning (the scripts use 4, 2 and 16).

The LayerNorm matters for what the scan can say: the block's output is invariant to
multiplying ``raw_t`` by any positive number per position (up to the LayerNorm's
``eps = 1e-5`` added to the variance), so only the direction of the ``d_inner`` scan outputs
at a position (centred) reaches the stream, not their magnitude; the magnitude-carrying part
of the update is the skip ``D u``. The ``eps`` is not negligible at initialisation: small
``u``, ``B`` and ``C`` give ``raw`` a variance across channels of about ``1e-6`` to ``1e-3``
per position (``d_model = 16``, ``d_state = 4``), so where ``var << eps`` the norm acts as the
fixed gain ``1 / sqrt(eps)`` on the centred ``raw``, and the invariance holds only where
``var >> eps``. The clamps make the scan a nonlinear map of ``u``:
:func:`mamba_implicit_attention` still gives the matrix ``M`` of the unclamped recurrence with
the same ``Delta, A, B, C``, and ``raw = M u`` holds only while no clamp is active (the
record's ``exact`` marks where).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.validation import (
    check_choice,
    check_float_tensor,
    check_positive_int_fields,
    check_tokens,
)

SCANS = ("auto", "chunked", "sequential")
VARIANTS = ("standard", "authors")
"""The Mamba variants, ``"standard"`` (Mamba-1) and ``"authors"`` (the clamped variant of
Paper I's scripts)."""

AUTHORS_DT_RANGE = (1e-4, 10.0)
"""The authors' clamp of the steps ``Delta`` after the softplus (unitless time per token)."""
AUTHORS_LOG_DECAY_RANGE = (-20.0, 0.0)
"""The authors' clamp of ``Delta_t A`` before its exponential (so ``Abar >= exp(-20)``)."""
AUTHORS_INPUT_BOUND = 10.0
"""The authors' clamp ``|Delta_t B_t u_t| <= 10`` of each state input."""
AUTHORS_STATE_BOUND = 100.0
"""The authors' clamp ``|h_t| <= 100`` of each state entry after the update."""
AUTHORS_A_LOG_MAX = 5.0
"""The authors' clamp ``A_log <= 5`` (so ``|A| <= exp(5)``)."""
AUTHORS_A_SCALE = 0.1
"""The authors' ``A = -0.1 (1, ..., N)`` at initialisation."""
AUTHORS_DT_WEIGHT_BOUND = 0.01
"""The authors' ``dt_proj`` weight is ``U(-0.01, 0.01)`` at initialisation."""
AUTHORS_DT_BIAS = 0.1
"""The authors' ``dt_proj`` bias at initialisation (all channels)."""


def _check_scan_inputs(x, delta, A, B, C, D) -> None:
    """Shapes ``x, delta`` ``(batch, T, d_inner)``, ``A`` ``(d_inner, d_state)``, ``B, C``
    ``(batch, T, d_state)``, ``D`` ``(d_inner,)`` or ``None``, one dtype and device."""
    check_float_tensor("x", x, min_dim=3, max_dim=3)
    for name, value, dims in (("delta", delta, 3), ("A", A, 2), ("B", B, 3), ("C", C, 3)):
        check_float_tensor(name, value, min_dim=dims, max_dim=dims, dtype=x.dtype)
    batch, length, d_inner = x.shape
    d_state = A.shape[1]
    expected = {"delta": (batch, length, d_inner), "A": (d_inner, d_state),
                "B": (batch, length, d_state), "C": (batch, length, d_state)}
    if D is not None:
        check_float_tensor("D", D, min_dim=1, max_dim=1, dtype=x.dtype)
        expected["D"] = (d_inner,)
    given = {"delta": delta, "A": A, "B": B, "C": C, "D": D}
    for name, shape in expected.items():
        if tuple(given[name].shape) != shape:
            raise ValueError(f"{name} must have shape {shape} (from the scan's (batch, T, d_inner) "
                             f"= {tuple(x.shape)} and A {tuple(A.shape)}); got "
                             f"{tuple(given[name].shape)}")
        if given[name].device != x.device:
            raise ValueError(f"{name} must be on x's device {x.device}; got {given[name].device}")


def _skip(y: torch.Tensor, x: torch.Tensor, D: torch.Tensor | None) -> torch.Tensor:
    return y if D is None else y + D * x


def selective_scan_sequential(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor,
                              B: torch.Tensor, C: torch.Tensor, D: torch.Tensor | None = None
                              ) -> torch.Tensor:
    """The selective scan, one time step after the other: ``y`` ``(batch, T, d_inner)``.

    Each of the ``T`` steps updates the whole ``(batch, d_inner, d_state)`` state at once
    (vectorised over batch, channels and state), computing ``Abar_t`` and ``Bbar_t u_t`` on
    the fly, so no ``(batch, T, d_inner, d_state)`` tensor is formed in the forward pass.

    Args:
        x: ``(batch, T, d_inner)`` scan input ``u``.
        delta: ``(batch, T, d_inner)`` positive steps ``Delta`` (time per token, unitless).
        A: ``(d_inner, d_state)`` continuous-time diagonal (negative for a stable scan).
        B: ``(batch, T, d_state)`` input matrices.
        C: ``(batch, T, d_state)`` output matrices.
        D: ``(d_inner,)`` skip gains, or ``None`` for none.
    """
    _check_scan_inputs(x, delta, A, B, C, D)
    state = x.new_zeros(x.shape[0], x.shape[2], A.shape[1])
    outputs = []
    for x_t, delta_t, b_t, c_t in zip(x.unbind(1), delta.unbind(1), B.unbind(1), C.unbind(1),
                                      strict=True):
        state = (torch.exp(delta_t[:, :, None] * A) * state
                 + (delta_t * x_t)[:, :, None] * b_t[:, None, :])
        outputs.append((state @ c_t[:, :, None]).squeeze(-1))
    return _skip(torch.stack(outputs, dim=1), x, D)


def default_chunk_size(length: int) -> int:
    """``round(sqrt(T))`` (at least 1): balances the in-chunk and the across-chunk steps."""
    return max(1, round(math.sqrt(length)))


def selective_scan_chunked(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor,
                           B: torch.Tensor, C: torch.Tensor, D: torch.Tensor | None = None,
                           chunk_size: int | None = None) -> torch.Tensor:
    """The selective scan in chunks of ``L`` steps: ``y`` ``(batch, T, d_inner)``.

    The sequence is cut into ``K = ceil(T / L)`` chunks (zero-padded at the end: ``Delta = 0``
    gives ``Abar = 1`` and ``Bbar = 0``, which leaves earlier outputs unchanged). Then

    1. every chunk is scanned from a zero state, all ``K`` chunks in parallel (``L`` steps);
    2. the state entering chunk ``k`` is carried across chunks (``K`` steps),
       ``S_{k+1} = P_k S_k + (local state at the end of chunk k)``, where
       ``P_k = exp(sum of Delta A over chunk k)``;
    3. each position adds its chunk's entering state decayed to it,
       ``h_t = local_t + exp(cumsum_{r in chunk, r <= t} Delta_r A) S_k`` (a log-space
       cumulative sum within the chunk: exponents are ``<= 0`` for ``A < 0``, so nothing
       overflows).

    About ``L + K`` sequential steps instead of ``T``; the same arguments and result as
    :func:`selective_scan_sequential`, plus ``chunk_size`` (``L``; ``None`` means
    :func:`default_chunk_size`).
    """
    _check_scan_inputs(x, delta, A, B, C, D)
    batch, length, d_inner = x.shape
    d_state = A.shape[1]
    size = default_chunk_size(length) if chunk_size is None else chunk_size
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"chunk_size must be a positive int or None; got {chunk_size!r}")
    n_chunks = -(-length // size)
    pad = n_chunks * size - length
    x_c, delta_c, b_c, c_c = (nn.functional.pad(t, (0, 0, 0, pad)).reshape(batch, n_chunks, size, -1)
                              for t in (x, delta, B, C))
    log_decay = delta_c[..., None] * A  # (batch, K, L, d_inner, d_state)
    inputs = (delta_c * x_c)[..., None] * b_c[:, :, :, None, :]

    state = x.new_zeros(batch, n_chunks, d_inner, d_state)
    local = []
    for decay_i, input_i in zip(log_decay.exp().unbind(2), inputs.unbind(2), strict=True):
        state = decay_i * state + input_i
        local.append(state)
    local = torch.stack(local, dim=2)

    decayed = log_decay.cumsum(dim=2).exp()  # from the chunk's start through each position
    carried = x.new_zeros(batch, d_inner, d_state)
    entering = []
    for k in range(n_chunks):
        entering.append(carried)
        carried = decayed[:, k, -1] * carried + local[:, k, -1]
    states = local + decayed * torch.stack(entering, dim=1)[:, :, None]
    y = torch.einsum("bkldn,bkln->bkld", states, c_c).reshape(batch, n_chunks * size, d_inner)
    return _skip(y[:, :length], x, D)


def selective_scan(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                   C: torch.Tensor, D: torch.Tensor | None = None, method: str = "auto",
                   chunk_size: int | None = None) -> torch.Tensor:
    """Dispatch to a scan: ``method`` is ``"sequential"``, ``"chunked"`` or ``"auto"``.

    ``"auto"`` runs the sequential scan on a CPU and the chunked one elsewhere (see the module
    docstring); ``chunk_size`` applies to the chunked scan only.
    """
    check_choice("method", method, SCANS)
    if method == "auto":
        method = "sequential" if x.device.type == "cpu" else "chunked"
    if method == "sequential":
        return selective_scan_sequential(x, delta, A, B, C, D)
    return selective_scan_chunked(x, delta, A, B, C, D, chunk_size=chunk_size)


def selective_scan_authors(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor,
                           B: torch.Tensor, C: torch.Tensor, return_exact: bool = False
                           ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """The authors' clamped scan, one step after the other: ``raw`` ``(batch, T, d_inner)``.

    Per step, for every channel ``d`` and state index ``n`` (bounds in
    :data:`AUTHORS_LOG_DECAY_RANGE`, :data:`AUTHORS_INPUT_BOUND`, :data:`AUTHORS_STATE_BOUND`)::

        h_t = clamp(exp(clamp(Delta_t A, -20, 0)) h_{t-1} + clamp(Delta_t B_t u_t, -10, 10),
                    -100, 100),        h_0 = 0
        raw_t[d] = sum_n C_t[n] h_t[d, n]

    No skip term: the authors' block adds ``D u`` after a LayerNorm of ``raw``. Where no clamp
    is active this is :func:`selective_scan_sequential` with ``D = None`` (up to rounding); the
    clamps cut the gradient of whatever they clip, as ``torch.clamp`` does.

    Args:
        x: ``(batch, T, d_inner)`` scan input ``u``.
        delta: ``(batch, T, d_inner)`` positive steps ``Delta`` (unitless).
        A: ``(d_inner, d_state)`` continuous-time diagonal (negative).
        B, C: ``(batch, T, d_state)`` input and output matrices.
        return_exact: also return ``exact`` ``(batch, T, d_inner)`` bool: ``True`` where no
            clamp has been active in that channel at any step ``<= t`` (a value strictly beyond
            its bound), so that ``raw[:, t, d]`` equals the unclamped recurrence there, i.e.
            ``sum_s M[d, t, s] u_s[d]`` with ``M`` of :func:`mamba_implicit_attention`.

    Returns:
        ``raw``, or ``(raw, exact)`` with ``return_exact``.
    """
    _check_scan_inputs(x, delta, A, B, C, None)
    low, high = AUTHORS_LOG_DECAY_RANGE
    state = x.new_zeros(x.shape[0], x.shape[2], A.shape[1])
    exact = torch.ones(x.shape[0], x.shape[2], dtype=torch.bool, device=x.device)
    outputs, exacts = [], []
    for x_t, delta_t, b_t, c_t in zip(x.unbind(1), delta.unbind(1), B.unbind(1), C.unbind(1),
                                      strict=True):
        log_decay = delta_t[:, :, None] * A  # (batch, d_inner, d_state)
        inputs = (delta_t * x_t)[:, :, None] * b_t[:, None, :]
        updated = (torch.exp(log_decay.clamp(low, high)) * state
                   + inputs.clamp(-AUTHORS_INPUT_BOUND, AUTHORS_INPUT_BOUND))
        if return_exact:
            clipped = ((log_decay < low) | (log_decay > high)
                       | (inputs.abs() > AUTHORS_INPUT_BOUND)
                       | (updated.abs() > AUTHORS_STATE_BOUND))
            exact = exact & ~clipped.any(dim=-1)
            exacts.append(exact)
        state = updated.clamp(-AUTHORS_STATE_BOUND, AUTHORS_STATE_BOUND)
        outputs.append((state @ c_t[:, :, None]).squeeze(-1))
    raw = torch.stack(outputs, dim=1)
    return (raw, torch.stack(exacts, dim=1)) if return_exact else raw


def mamba_implicit_attention(delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                             C: torch.Tensor) -> torch.Tensor:
    """The scan as a matrix per channel: ``M`` ``(batch, d_inner, T, T)``, zero above the diagonal.

    ``M[b, d, t, s] = sum_n C[b, t, n] exp(sum_{r=s+1..t} delta[b, r, d] A[d, n])
    delta[b, s, d] B[b, s, n]`` for ``s <= t``, so that for every scan input ``x``,
    ``sum_s M[b, d, t, s] x[b, s, d] = y[b, t, d] - D[d] x[b, t, d]`` with ``y`` the output
    of either scan. The exponent of each pair is summed over its own segment ``s+1..t``
    (never as a difference of long cumulative sums), so small decays keep full precision.

    For the authors' variant (:func:`selective_scan_authors`) this is the matrix of the
    *unclamped* recurrence with the same ``delta`` (already clamped to
    :data:`AUTHORS_DT_RANGE` by the model) and ``A``: ``sum_s M[b, d, t, s] x[b, s, d]`` equals
    the clamped scan's ``raw[b, t, d]`` only while no clamp has been active in channel ``d``
    up to ``t`` (its ``exact`` output), and it describes ``raw``, before the LayerNorm.

    Cost ``O(batch d_inner T^2 d_state)`` time and ``O(batch d_inner T^2)`` memory (one state
    index at a time): for analysis batches, not for training.

    Args:
        delta: ``(batch, T, d_inner)`` steps ``Delta``.
        A: ``(d_inner, d_state)``.
        B, C: ``(batch, T, d_state)``.
    """
    check_float_tensor("delta", delta, min_dim=3, max_dim=3)
    _check_scan_inputs(delta, delta, A, B, C, None)
    length = delta.shape[1]
    after = torch.ones(length, length, dtype=torch.bool, device=delta.device).tril(-1)  # r > s
    on_or_below = torch.ones(length, length, dtype=torch.bool, device=delta.device).tril()
    delta_t = delta.transpose(1, 2)  # (batch, d_inner, T)
    M = delta.new_zeros(delta.shape[0], delta.shape[2], length, length)
    for n in range(A.shape[1]):
        log_decay = delta_t * A[:, n, None]  # (batch, d_inner, T): entry r
        segment = torch.where(after, log_decay[..., :, None], 0.0).cumsum(dim=-2)  # [t, s]
        decay = torch.where(on_or_below, segment.exp(), 0.0)
        inputs = delta_t * B[:, None, :, n]  # (batch, d_inner, T): Bbar_s for column s
        M = M + C[:, None, :, n, None] * decay * inputs[:, :, None, :]
    return M


@dataclass(frozen=True)
class MambaConfig:
    """Sizes and variant of a :class:`Mamba` model.

    Attributes:
        vocab_size: tokens in and out (the head is tied to the embedding).
        max_len: the longest accepted sequence. The model has no position table (the
            recurrence carries order); the bound keeps the interface of the other models.
        n_layers, d_model: depth and residual width.
        d_state: state size ``N`` per channel.
        expand: ``d_inner = expand * d_model`` channels in the scan.
        d_conv: kernel width of the causal depthwise convolution.
        dt_rank: rank of the projection that produces ``Delta``; ``None`` means
            ``ceil(d_model / 16)`` (standard) or 1 (authors, whose rank is always 1).
        dt_min, dt_max: the initial ``Delta`` of each channel is log-uniform in this range
            (standard only: the authors' ``dt_proj`` bias starts at 0.1).
        init_std: standard deviation of the normal initialisation of the token embedding;
            ``None`` means the variant's own, 0.02 (standard) or 1 (authors: PyTorch's default).
        scan: ``"auto"``, ``"chunked"`` or ``"sequential"`` (see :func:`selective_scan`). The
            authors' variant scans sequentially only (its clamps have no chunked form), so it
            takes ``"auto"`` or ``"sequential"``.
        chunk_size: chunk length of the chunked scan; ``None`` means ``round(sqrt(T))``.
        variant: ``"standard"`` (Mamba-1) or ``"authors"`` (Paper I's clamped Mamba with a
            LayerNorm on the scan output; see the module docstring).
    """

    vocab_size: int
    max_len: int
    n_layers: int = 2
    d_model: int = 64
    d_state: int = 16
    expand: int = 2
    d_conv: int = 4
    dt_rank: int | None = None
    dt_min: float = 1e-3
    dt_max: float = 0.1
    init_std: float | None = None
    scan: str = "auto"
    chunk_size: int | None = None
    variant: str = "standard"

    def __post_init__(self):
        names = ["vocab_size", "max_len", "n_layers", "d_model", "d_state", "expand", "d_conv"]
        names += [name for name in ("dt_rank", "chunk_size") if getattr(self, name) is not None]
        check_positive_int_fields(self, names)
        if not 0 < self.dt_min <= self.dt_max:
            raise ValueError(f"dt_min and dt_max must satisfy 0 < dt_min <= dt_max; got "
                             f"dt_min={self.dt_min!r}, dt_max={self.dt_max!r}")
        if self.init_std is not None and not self.init_std > 0:
            raise ValueError(f"init_std must be positive or None; got {self.init_std!r}")
        check_choice("scan", self.scan, SCANS)
        check_choice("variant", self.variant, VARIANTS)
        if self.variant == "authors":
            if self.scan == "chunked":
                raise ValueError("scan must be 'auto' or 'sequential' with variant='authors' "
                                 "(its clamped scan has no chunked form); got 'chunked'")
            if self.dt_rank not in (None, 1):
                raise ValueError(f"dt_rank must be None or 1 with variant='authors' (its step "
                                 f"projection has rank 1); got {self.dt_rank!r}")

    @property
    def d_inner(self) -> int:
        """Channels of the scan, ``expand * d_model``."""
        return self.expand * self.d_model

    @property
    def delta_rank(self) -> int:
        """The rank in use, ``dt_rank`` or ``ceil(d_model / 16)`` when it is ``None``.

        Computed, not stored, so that ``dataclasses.replace(config, d_model=...)`` follows.
        """
        if self.variant == "authors":
            return 1
        return math.ceil(self.d_model / 16) if self.dt_rank is None else self.dt_rank

    @property
    def embed_std(self) -> float:
        """The embedding's initial standard deviation, ``init_std`` or the variant's default."""
        if self.init_std is not None:
            return self.init_std
        return 1.0 if self.variant == "authors" else 0.02


@dataclass
class MambaLayerRecord:
    """What one Mamba mixer computed (``B`` sequences, ``T`` positions).

    Attributes:
        scan_input: ``(B, T, d_inner)`` ``u = SiLU(conv(x))``, the input of the scan.
        delta: ``(B, T, d_inner)`` the steps ``Delta = softplus(...)`` (clamped to
            :data:`AUTHORS_DT_RANGE` in the authors' variant).
        A: ``(d_inner, d_state)`` the diagonal ``-exp(A_log)`` (the authors' shared row
            repeated over channels).
        B, C: ``(B, T, d_state)`` the input and output matrices.
        scan_output: ``(B, T, d_inner)`` ``y = scan(u) + D u`` (authors:
            ``LayerNorm(raw_scan) + D u``), before the gate.
        gate: ``(B, T, d_inner)`` ``SiLU(z)``, which multiplies ``scan_output``.
        attention: ``(B, d_inner, T, T)`` the implicit attention ``M`` of
            :func:`mamba_implicit_attention`: ``scan_output - D u = M u`` per channel (authors:
            ``raw_scan = M u`` where ``exact``).
        raw_scan: authors' variant only (else ``None``): ``(B, T, d_inner)`` the clamped
            scan's output before its LayerNorm.
        exact: authors' variant only (else ``None``): ``(B, T, d_inner)`` bool, ``True`` where
            no clamp of the scan has been active in the channel up to the position (see
            :func:`selective_scan_authors`).
    """

    scan_input: torch.Tensor
    delta: torch.Tensor
    A: torch.Tensor
    B: torch.Tensor
    C: torch.Tensor
    scan_output: torch.Tensor
    gate: torch.Tensor
    attention: torch.Tensor
    raw_scan: torch.Tensor | None = None
    exact: torch.Tensor | None = None


@dataclass
class MambaRecord:
    """Internals of one forward pass of :class:`Mamba`.

    Attributes:
        residual: ``n_layers + 1`` tensors ``(B, T, d_model)``: the residual stream entering
            each layer, then leaving the last one.
        layers: one :class:`MambaLayerRecord` per layer.
        final: ``(B, T, d_model)``, the normed last stream that the tied head reads.
    """

    residual: list[torch.Tensor]
    layers: list[MambaLayerRecord]
    final: torch.Tensor


def _uniform_(tensor: torch.Tensor, bound: float, generator: torch.Generator) -> None:
    """Overwrite ``tensor`` with ``U(-bound, bound)`` draws from ``generator`` (a CPU one)."""
    with torch.no_grad():
        tensor.copy_((torch.rand(tensor.shape, generator=generator) * 2 - 1) * bound)


def _linear(d_in: int, d_out: int, generator: torch.Generator, bias: bool = False,
            gain: float = 1.0) -> nn.Linear:
    """A linear map with PyTorch's default ``U(-1/sqrt(d_in), 1/sqrt(d_in))`` law, times ``gain``."""
    linear = nn.Linear(d_in, d_out, bias=bias)
    _uniform_(linear.weight, gain / math.sqrt(d_in), generator)
    if bias:
        _uniform_(linear.bias, 1 / math.sqrt(d_in), generator)
    return linear


class MambaMixer(nn.Module):
    """One Mamba mixer: ``(B, T, d_model)`` stream to ``(B, T, d_model)`` update.

    Standard (Mamba-1) parameters and their initialisation (the Mamba reference's facts, drawn
    from ``generator``): ``in_proj`` (to ``x`` and ``z``), ``x_proj`` (to the ``Delta`` rank,
    ``B`` and ``C``), ``out_proj`` (scaled by ``1/sqrt(n_layers)``) with PyTorch's default
    uniform law and no biases; the depthwise ``conv`` likewise, with bias; ``dt_proj`` weight
    ``U(+-dt_rank^-1/2)`` and bias ``softplus^-1(dt)``, ``dt`` log-uniform in
    ``[dt_min, dt_max]``; ``A_log[d, n] = log(n + 1)`` (so ``A = -(1, ..., N)``); ``D = 1``.

    The authors' variant (``config.variant == "authors"``): the same ``in_proj``, ``conv`` and
    ``x_proj`` (to ``1 + 2 N``), ``dt_proj`` ``1 -> d_inner`` with weight ``U(+-0.01)`` and
    bias ``0.1``, ``A_log[n] = log(0.1 (n + 1))`` shared by the channels ``(d_state,)``,
    ``D = 1``, ``scan_norm`` a LayerNorm over ``d_inner`` (weight 1, bias 0), and ``out_proj``
    with PyTorch's default law, unscaled.
    """

    def __init__(self, config: MambaConfig, generator: torch.Generator):
        super().__init__()
        self.config = config
        authors = config.variant == "authors"
        d, d_inner, n = config.d_model, config.d_inner, config.d_state
        self.in_proj = _linear(d, 2 * d_inner, generator)
        self.conv = nn.Conv1d(d_inner, d_inner, config.d_conv, groups=d_inner,
                              padding=config.d_conv - 1)
        _uniform_(self.conv.weight, 1 / math.sqrt(config.d_conv), generator)
        _uniform_(self.conv.bias, 1 / math.sqrt(config.d_conv), generator)
        self.x_proj = _linear(d_inner, config.delta_rank + 2 * n, generator)
        self.dt_proj = nn.Linear(config.delta_rank, d_inner)
        states = torch.arange(1, n + 1, dtype=torch.float32)
        if authors:
            _uniform_(self.dt_proj.weight, AUTHORS_DT_WEIGHT_BOUND, generator)
            with torch.no_grad():
                self.dt_proj.bias.fill_(AUTHORS_DT_BIAS)
            self.A_log = nn.Parameter(torch.log(AUTHORS_A_SCALE * states))
        else:
            _uniform_(self.dt_proj.weight, config.delta_rank ** -0.5, generator)
            low, high = math.log(config.dt_min), math.log(config.dt_max)
            dt = torch.exp(torch.rand(d_inner, generator=generator, dtype=torch.float64)
                           * (high - low) + low)
            with torch.no_grad():
                self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus(bias) = dt
            self.A_log = nn.Parameter(torch.log(states).repeat(d_inner, 1))
        self.D = nn.Parameter(torch.ones(d_inner))
        if authors:
            self.scan_norm = nn.LayerNorm(d_inner)
        gain = 1.0 if authors else 1 / math.sqrt(config.n_layers)
        self.out_proj = _linear(d_inner, d, generator, gain=gain)

    def state_matrix(self) -> torch.Tensor:
        """The diagonal ``A`` ``(d_inner, d_state)`` in use: ``-exp(A_log)``, or for the
        authors' variant ``-exp(min(A_log, 5))`` repeated over the channels (a view)."""
        if self.config.variant == "authors":
            A = -torch.exp(self.A_log.clamp(max=AUTHORS_A_LOG_MAX))
            return A.expand(self.config.d_inner, -1)
        return -torch.exp(self.A_log)

    def forward(self, hidden: torch.Tensor, keep_record: bool = False
                ) -> tuple[torch.Tensor, MambaLayerRecord | None]:
        """The update ``(B, T, d_model)`` and, with ``keep_record``, the layer's record."""
        config = self.config
        length = hidden.shape[1]
        x, z = self.in_proj(hidden).chunk(2, dim=-1)
        u = nn.functional.silu(self.conv(x.transpose(1, 2))[..., :length].transpose(1, 2))
        dt_low, B, C = self.x_proj(u).split([config.delta_rank, config.d_state, config.d_state],
                                            dim=-1)
        delta = nn.functional.softplus(self.dt_proj(dt_low))
        A = self.state_matrix()
        raw = exact = None
        if config.variant == "authors":
            delta = delta.clamp(*AUTHORS_DT_RANGE)
            scanned = selective_scan_authors(u, delta, A, B, C, return_exact=keep_record)
            raw, exact = scanned if keep_record else (scanned, None)
            y = self.scan_norm(raw) + self.D * u
        else:
            y = selective_scan(u, delta, A, B, C, self.D, method=config.scan,
                               chunk_size=config.chunk_size)
        gate = nn.functional.silu(z)
        update = self.out_proj(y * gate)
        if not keep_record:
            return update, None
        return update, MambaLayerRecord(scan_input=u, delta=delta, A=A, B=B, C=C, scan_output=y,
                                        gate=gate,
                                        attention=mamba_implicit_attention(delta, A, B, C),
                                        raw_scan=raw, exact=exact)


class Mamba(nn.Module):
    """A Mamba language model mapping tokens ``(B, T)`` to logits ``(B, T, vocab)``.

    Standard: an RMSNorm before each mixer (``norms``) and before the tied head
    (``norm_final``). Authors' variant: no norm before the mixers (``norms`` holds identities)
    and a LayerNorm (weight 1, bias 0) as ``norm_final``. Both: the embedding ``N(0,
    config.embed_std^2)``, the head tied to it, no position embedding.

    Args:
        config: the sizes and the variant.
        generator: a CPU ``torch.Generator`` that draws every initial weight (move the model
            with ``.to(device)`` afterwards), so that a seed fixes the initialisation.
    """

    def __init__(self, config: MambaConfig, generator: torch.Generator):
        super().__init__()
        self.config = config
        authors = config.variant == "authors"
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        with torch.no_grad():
            self.embed.weight.copy_(torch.randn(self.embed.weight.shape, generator=generator)
                                    * config.embed_std)
        self.norms = nn.ModuleList(nn.Identity() if authors else nn.RMSNorm(config.d_model, eps=1e-5)
                                   for _ in range(config.n_layers))
        self.mixers = nn.ModuleList(MambaMixer(config, generator) for _ in range(config.n_layers))
        self.norm_final = (nn.LayerNorm(config.d_model) if authors
                           else nn.RMSNorm(config.d_model, eps=1e-5))

    def forward(self, tokens: torch.Tensor, return_record: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, MambaRecord]:
        """Logits ``(B, T, vocab)`` for ``tokens`` ``(B, T)`` int64 with ``T <= max_len``.

        With ``return_record=True``, also the :class:`MambaRecord` of the pass (its implicit
        attention matrices cost ``O(B d_inner T^2)`` memory per layer).
        """
        check_tokens(tokens, self.config.max_len)
        h = self.embed(tokens)
        residual, layers = [h], []
        for norm, mixer in zip(self.norms, self.mixers, strict=True):
            update, record = mixer(norm(h), keep_record=return_record)
            h = h + update
            residual.append(h)
            layers.append(record)
        final = self.norm_final(h)
        logits = final @ self.embed.weight.T
        if return_record:
            return logits, MambaRecord(residual=residual, layers=layers, final=final)
        return logits


