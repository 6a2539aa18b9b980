"""A toy routing problem for chapter 2: queries from latent groups attend over a bank of values.

The setting isolates the two halves of the coupled dynamics. ``N`` queries ``x_i`` are drawn from
``G`` latent groups (a Gaussian blob per group); each group needs a different class at the
output. A single attention head routes every query over ``M`` memory slots, each slot ``j``
holding a key ``k_j`` and a value ``v_j``:

    q_i = x_i W_Q,   s_ij = q_i . k_j / sqrt(d_k),   alpha_ij = softmax_j(s_ij),
    o_i = sum_j alpha_ij v_j,   logits_i = o_i W_O,   L = mean_i CE(logits_i, y_i)   (nats).

*Routing* is ``(W_Q, K)``; *content* is the values, either free vectors ``V`` (``M, d_v``) or
projections ``v_j = z_j W_V`` of fixed slot embeddings ``z_j`` (the W_V form). The readout
``W_O`` is fixed (the identity by default, so that a value *is* a logit vector).

Everything is batched over a leading *runs* dimension ``R``: one call trains several seeds and
several conditions (coupled, one half frozen, the halves one after the other) side by side, each
run with its own data, parameters and learning-rate schedule, and no run's numbers depend on
another's. :func:`recombine_halves` puts together the two halves trained apart, as a control
that has every parameter trained but no interaction between the halves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from attention_dynamics.measures.trajectories import TrajectoryRecorder
from attention_dynamics.score_mixture import closed_form_m_step
from attention_dynamics.validation import check_choice, check_float_tensor, check_positive_int

CONDITIONS = ("coupled", "frozen_routing", "frozen_values")
"""The three training conditions of the ablation, in order. ``coupled`` trains everything,
``frozen_routing`` keeps the routing ``(W_Q, K)`` at its initial value, ``frozen_values`` keeps
the values at their initial value. (Uniform attention is a start, not a condition:
``ToyConfig(routing_scale=0)`` draws ``W_Q = 0``.)"""

SEQUENTIAL_CONDITIONS = ("routing_then_values", "values_then_routing")
"""The capacity controls, which train both halves one after the other. ``routing_then_values``
trains the routing for the first ``steps // 2`` steps with the values frozen, then the values
with the routing frozen; ``values_then_routing`` the other way round. Every parameter of the
coupled run learns, but a half never trains while the other one moves: no feedback loop."""


def _check_non_negative(name: str, value) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
        raise ValueError(f"{name} must be a non-negative number; got {value!r}")
    return float(value)


@dataclass
class GroupedQueries:
    """Queries drawn from latent groups, for ``R`` independent runs.

    Attributes:
        x: queries ``(R, N, d_x)``; ``N = n_groups * n_per_group``, sorted by group.
        groups: latent group of each query ``(N,)``, long, in ``0 .. G-1`` (shared by the runs).
        targets: the class each query needs ``(N,)``, long (group ``g`` needs class ``g``).
        means: group centres ``(R, G, d_x)``.
        n_groups: ``G``.
    """

    x: torch.Tensor
    groups: torch.Tensor
    targets: torch.Tensor
    means: torch.Tensor
    n_groups: int

    @property
    def runs(self) -> int:
        """The number of runs ``R``."""
        return self.x.shape[0]

    def repeat_runs(self, times: int) -> GroupedQueries:
        """Each run repeated ``times`` times in a row (run ``r`` becomes ``r*times .. r*times+times-1``)."""
        check_positive_int("times", times)
        return replace(self, x=self.x.repeat_interleave(times, dim=0),
                       means=self.means.repeat_interleave(times, dim=0))


def sample_grouped_queries(generator: torch.Generator, runs: int, n_groups: int, n_per_group: int,
                           d_x: int, separation: float = 3.0, noise: float = 1.0,
                           dtype: torch.dtype = torch.float64, device=None) -> GroupedQueries:
    """Draw ``n_per_group`` queries around each of ``n_groups`` centres, for ``runs`` runs.

    Each run gets its own centres ``mu_g = separation * w_g / |w_g|`` (``w_g`` standard normal,
    so the centres sit on a sphere of radius ``separation``) and its own queries
    ``x_i = mu_{g(i)} + noise * eps_i``, ``eps_i ~ N(0, I_{d_x})``. Query ``i`` belongs to group
    ``i // n_per_group`` and needs class ``g(i)``.

    Args:
        generator: the source of randomness (a ``torch.Generator`` on ``device``).
        runs, n_groups, n_per_group, d_x: sizes ``R``, ``G``, ``N / G`` and the query dimension.
        separation: distance of each centre from the origin (same units as ``x``).
        noise: standard deviation of the isotropic scatter around the centre.
    """
    for name, value in (("runs", runs), ("n_groups", n_groups), ("n_per_group", n_per_group),
                        ("d_x", d_x)):
        check_positive_int(name, value)
    if n_groups < 2:
        raise ValueError(f"n_groups must be at least 2 for groups to differ; got {n_groups}")
    _check_non_negative("separation", separation)
    _check_non_negative("noise", noise)
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    opts = dict(generator=generator, dtype=dtype, device=device)
    directions = torch.randn(runs, n_groups, d_x, **opts)
    means = separation * directions / directions.norm(dim=-1, keepdim=True)
    groups = torch.arange(n_groups, device=device).repeat_interleave(n_per_group)
    x = means[:, groups] + noise * torch.randn(runs, groups.numel(), d_x, **opts)
    return GroupedQueries(x=x, groups=groups, targets=groups.clone(), means=means,
                          n_groups=n_groups)


@dataclass
class ToyRouting:
    """Parameters of ``R`` toy heads (one per run).

    Attributes:
        w_q: query projection ``(R, d_x, d_k)``.
        keys: slot keys ``(R, M, d_k)``.
        values: free slot values ``(R, M, d_v)`` (``None`` in the W_V form).
        w_v: value projection ``(R, d_z, d_v)`` (``None`` in the free form).
        slot_inputs: fixed slot embeddings ``Z`` ``(M, d_z)`` for the W_V form, else ``None``.
        readout: fixed ``W_O`` ``(d_v, C)``; logits are ``o W_O``.
    """

    w_q: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor | None
    readout: torch.Tensor
    w_v: torch.Tensor | None = None
    slot_inputs: torch.Tensor | None = None

    @property
    def runs(self) -> int:
        """The number of runs ``R``."""
        return self.w_q.shape[0]

    @property
    def d_k(self) -> int:
        """Key dimension (sets the score scale ``1 / sqrt(d_k)``)."""
        return self.w_q.shape[-1]

    def value_vectors(self) -> torch.Tensor:
        """The values ``(R, M, d_v)``: ``V`` itself, or ``Z W_V`` in the W_V form."""
        if self.values is not None:
            return self.values
        return self.slot_inputs @ self.w_v

    def routing_parameters(self) -> list[torch.Tensor]:
        """``[W_Q, K]``: what decides the attention."""
        return [self.w_q, self.keys]

    def value_parameters(self) -> list[torch.Tensor]:
        """``[V]`` (free form) or ``[W_V]`` (W_V form): what decides the content."""
        return [self.values] if self.values is not None else [self.w_v]

    def detached(self) -> ToyRouting:
        """A copy whose trainable tensors are fresh leaves (cloned, ``requires_grad=True``)."""
        def leaf(t):
            return None if t is None else t.detach().clone().requires_grad_()
        return replace(self, w_q=leaf(self.w_q), keys=leaf(self.keys), values=leaf(self.values),
                       w_v=leaf(self.w_v))

    def repeat_runs(self, times: int) -> ToyRouting:
        """Each run repeated ``times`` times in a row: identical initialisations for ablations."""
        check_positive_int("times", times)

        def rep(t):
            return None if t is None else t.detach().repeat_interleave(times, dim=0)
        return replace(self, w_q=rep(self.w_q), keys=rep(self.keys), values=rep(self.values),
                       w_v=rep(self.w_v))


def init_toy_routing(generator: torch.Generator, runs: int, d_x: int, d_k: int, n_values: int,
                     d_v: int, routing_scale: float = 1.0, value_scale: float = 1.0,
                     readout: torch.Tensor | None = None, slot_inputs: torch.Tensor | None = None,
                     dtype: torch.dtype = torch.float64, device=None) -> ToyRouting:
    """Draw ``R`` toy heads.

    ``W_Q`` entries are ``N(0, routing_scale^2 / d_x)`` and keys ``N(0, 1)``, so for queries of
    norm ``~ |x|`` the scores have standard deviation ``~ routing_scale * |x| / sqrt(d_x)``.
    Free values are ``N(0, value_scale^2)``; in the W_V form (``slot_inputs`` given, shape
    ``(M, d_z)``) ``W_V`` entries are ``N(0, value_scale^2 / d_z)``. The readout defaults to the
    identity (``d_v`` classes), and is never trained.
    """
    for name, value in (("runs", runs), ("d_x", d_x), ("d_k", d_k), ("n_values", n_values),
                        ("d_v", d_v)):
        check_positive_int(name, value)
    _check_non_negative("routing_scale", routing_scale)
    _check_non_negative("value_scale", value_scale)
    opts = dict(generator=generator, dtype=dtype, device=device)
    if readout is None:
        readout = torch.eye(d_v, dtype=dtype, device=device)
    check_float_tensor("readout", readout, min_dim=2, max_dim=2, dtype=dtype)
    if readout.shape[0] != d_v:
        raise ValueError(f"readout must have shape (d_v={d_v}, C); got {tuple(readout.shape)}")
    w_q = routing_scale / math.sqrt(d_x) * torch.randn(runs, d_x, d_k, **opts)
    keys = torch.randn(runs, n_values, d_k, **opts)
    if slot_inputs is None:
        values = value_scale * torch.randn(runs, n_values, d_v, **opts)
        w_v = None
    else:
        check_float_tensor("slot_inputs", slot_inputs, min_dim=2, max_dim=2, dtype=dtype)
        if slot_inputs.shape[0] != n_values:
            raise ValueError(f"slot_inputs must have shape (n_values={n_values}, d_z); got "
                             f"{tuple(slot_inputs.shape)}")
        d_z = slot_inputs.shape[1]
        values = None
        w_v = value_scale / math.sqrt(d_z) * torch.randn(runs, d_z, d_v, **opts)
    return ToyRouting(w_q=w_q, keys=keys, values=values, readout=readout, w_v=w_v,
                      slot_inputs=slot_inputs).detached()


@dataclass
class ToyForward:
    """One forward pass of the toy heads (``R`` runs, ``N`` queries, ``M`` slots).

    Attributes:
        scores: ``(R, N, M)``; weights: ``alpha`` ``(R, N, M)``, rows sum to one.
        values: ``(R, M, d_v)``; output: ``o = alpha V`` ``(R, N, d_v)``; logits ``(R, N, C)``.
        loss: mean cross-entropy per run ``(R,)``, in nats.
    """

    scores: torch.Tensor
    weights: torch.Tensor
    values: torch.Tensor
    output: torch.Tensor
    logits: torch.Tensor
    loss: torch.Tensor


def head_loss(weights: torch.Tensor, values: torch.Tensor, targets: torch.Tensor,
              readout: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats) of a head given its attention and its values.

    Logits ``alpha V W_O``; ``weights`` ``(..., N, M)``, ``values`` ``(..., M, d_v)``,
    ``targets`` ``(N,)`` long, ``readout`` ``(d_v, C)``. Returns ``(...)``, the mean over the
    ``N`` queries. Differentiable; lets a head be scored whose attention and values come from
    different runs (:func:`recombine_halves`).
    """
    return _mean_cross_entropy(weights @ values @ readout, targets)


def _mean_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over the ``N`` queries of the cross-entropy: logits ``(..., N, C)``, targets ``(N,)``."""
    return F.cross_entropy(logits.flatten(0, -2), targets.expand(logits.shape[:-1]).flatten(),
                           reduction="none").view(logits.shape[:-1]).mean(dim=-1)


def toy_forward(model: ToyRouting, queries: GroupedQueries) -> ToyForward:
    """Run every toy head on its run's queries; differentiable in the model's parameters."""
    if queries.runs != model.runs:
        raise ValueError(f"queries has {queries.runs} runs but model has {model.runs}")
    q = queries.x @ model.w_q                                        # (R, N, d_k)
    scores = q @ model.keys.transpose(-1, -2) / math.sqrt(model.d_k)  # (R, N, M)
    weights = torch.softmax(scores, dim=-1)
    values = model.value_vectors()                                   # (R, M, d_v)
    output = weights @ values                                        # (R, N, d_v)
    logits = output @ model.readout                                  # (R, N, C)
    loss = _mean_cross_entropy(logits, queries.targets)
    return ToyForward(scores=scores, weights=weights, values=values, output=output,
                      logits=logits, loss=loss)


def condition_masks(conditions: tuple[str, ...] | list[str], steps: int, dtype=torch.float64,
                    device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Learning-rate schedules ``(routing, values)`` for named conditions, each ``(steps, R)`` of 0/1.

    Entry ``[t, r]`` says whether run ``r`` (condition ``conditions[r]``) updates that half at
    step ``t``; the sequential conditions switch halves at step ``steps // 2``.
    """
    allowed = CONDITIONS + SEQUENTIAL_CONDITIONS
    bad = [c for c in conditions if c not in allowed]
    if bad or not conditions:
        raise ValueError(f"conditions must be a non-empty list drawn from {allowed}; got "
                         f"{list(conditions)}")
    check_positive_int("steps", steps)
    first = torch.arange(steps, device=device) < steps // 2          # (steps,)
    always, never = torch.ones_like(first), torch.zeros_like(first)
    routing = {"coupled": always, "frozen_routing": never, "frozen_values": always,
               "routing_then_values": first, "values_then_routing": ~first}
    values = {"coupled": always, "frozen_routing": always, "frozen_values": never,
              "routing_then_values": ~first, "values_then_routing": first}
    return (torch.stack([routing[c] for c in conditions], dim=1).to(dtype),
            torch.stack([values[c] for c in conditions], dim=1).to(dtype))


VALUE_UPDATES = ("gradient", "closed-form")
"""How :func:`train_toy_routing` updates the values, by a gradient step on the cross-entropy, or
the closed-form M-step of the score mixture (each value set to the log of its
responsibility-weighted class histogram, chapter 3) after every routing step."""


def train_toy_routing(model: ToyRouting, queries: GroupedQueries, steps: int, lr_routing: float,
                      lr_values: float, train_routing: torch.Tensor | None = None,
                      train_values: torch.Tensor | None = None,
                      recorder: TrajectoryRecorder | None = None,
                      value_update: str = "gradient") -> ToyRouting:
    """Full-batch gradient descent on the mean cross-entropy, run by run.

    Each step ``t`` computes the gradients by autograd and updates every run ``r`` by
    ``theta_r <- theta_r - lr * mask[t, r] * grad_r``: ``lr_routing`` and ``train_routing`` for
    ``(W_Q, K)``, ``lr_values`` and ``train_values`` for the values (or ``W_V``). A mask is
    ``(R,)`` (the same at every step) or ``(steps, R)`` (a schedule, see
    :func:`condition_masks`); ``None`` trains that half throughout. Runs never interact (the
    loss is a sum over runs). With a ``recorder``, snapshots ``weights``
    ``(R, N, M)``, ``values`` ``(R, M, d_v)`` and ``loss`` ``(R,)`` are kept at steps ``0, every,
    ..., steps`` (the state *before* the update of that step; the last one after the final step).

    With ``value_update="closed-form"`` (free values read out by the identity only) the values
    of a run whose value mask is on are not stepped but *solved* after its routing step:
    ``v_j = log h_j``, the class histogram of slot ``j`` under the new attention
    (:func:`~attention_dynamics.score_mixture.closed_form_m_step`), which minimises the
    mixture's bound ``sum_ij alpha_ij CE(y_i, softmax(v_j))`` on the cross-entropy, not the
    cross-entropy itself; ``lr_values`` is then unused. That alternation is EM on the score
    mixture with a gradient step for the frame.

    Returns the trained model (new leaves; the input model is left unchanged).
    """
    _check_non_negative("steps", steps)
    if not isinstance(steps, int):
        raise ValueError(f"steps must be an int; got {steps!r}")
    _check_non_negative("lr_routing", lr_routing)
    _check_non_negative("lr_values", lr_values)
    check_choice("value_update", value_update, VALUE_UPDATES)
    closed_form = value_update == "closed-form"
    if closed_form and (model.values is None or model.readout.shape[0] != model.readout.shape[1]
                        or not torch.equal(model.readout, torch.eye(model.readout.shape[0]).to(
                            model.readout))):
        raise ValueError("value_update='closed-form' needs free values read out by the "
                         "identity (values are logit vectors)")
    ones = torch.ones(steps, model.runs, dtype=model.w_q.dtype, device=model.w_q.device)
    masks = []
    for name, mask in (("train_routing", train_routing), ("train_values", train_values)):
        mask = ones if mask is None else mask.to(ones)
        if mask.shape not in ((model.runs,), (steps, model.runs)):
            raise ValueError(f"{name} must have shape ({model.runs},) or ({steps}, {model.runs}); "
                             f"got {tuple(mask.shape)}")
        masks.append(mask.expand_as(ones))
    model = model.detached()
    groups = ((model.routing_parameters(), lr_routing, masks[0]),
              (model.value_parameters(), lr_values, masks[1]))
    for step in range(steps + 1):
        fwd = toy_forward(model, queries)
        if recorder is not None and (recorder.due(step) or step == steps):
            recorder.record(step, weights=fwd.weights, values=fwd.values, loss=fwd.loss)
        if step == steps:
            break
        params = [p for ps, _, _ in groups for p in ps]
        grads = torch.autograd.grad(fwd.loss.sum(), params)
        with torch.no_grad():
            it = iter(grads)
            for ps, lr, mask in groups:
                for p in ps:
                    g = next(it)
                    if closed_form and p is model.values:
                        continue
                    p.sub_(lr * mask[step].view(-1, *([1] * (p.ndim - 1))) * g)
            if closed_form:
                solved = _closed_form_values(model, queries)
                keep = masks[1][step].view(-1, 1, 1) > 0
                model.values.copy_(torch.where(keep, solved, model.values))
    return model


def _closed_form_values(model: ToyRouting, queries: GroupedQueries) -> torch.Tensor:
    """``(R, M, C)`` ``log h_j`` under the model's current attention (identity readout)."""
    weights = toy_forward(model, queries).weights.detach()
    targets = queries.targets.expand(weights.shape[:-1])
    return closed_form_m_step(weights, targets, model.readout.shape[1])


@dataclass(frozen=True)
class ToyConfig:
    """Sizes and training settings of the toy routing study.

    ``n_groups`` groups of ``n_per_group`` queries in ``R^{d_x}`` (centres at distance
    ``separation``, scatter ``noise``); ``n_values`` slots with keys in ``R^{d_k}`` and free values
    in ``R^{n_groups}`` read out by the identity (values are logit vectors); init scales as in
    :func:`init_toy_routing`; full-batch gradient descent for ``steps`` steps with step sizes
    ``lr_routing`` and ``lr_values``; snapshots every ``record_every`` steps.
    """

    n_groups: int = 3
    n_per_group: int = 64
    d_x: int = 8
    d_k: int = 4
    n_values: int = 6
    separation: float = 3.0
    noise: float = 1.0
    routing_scale: float = 1.0
    value_scale: float = 1.0
    lr_routing: float = 0.5
    lr_values: float = 0.5
    steps: int = 400
    record_every: int = 5

    def __post_init__(self):
        for name in ("n_groups", "n_per_group", "d_x", "d_k", "n_values", "steps", "record_every"):
            check_positive_int(name, getattr(self, name))
        if self.n_groups < 2:
            raise ValueError(f"n_groups must be at least 2; got {self.n_groups}")
        for name in ("separation", "noise", "routing_scale", "value_scale", "lr_routing",
                     "lr_values"):
            _check_non_negative(name, getattr(self, name))


@dataclass
class AblationRun:
    """The recorded history of one ablation study (``S`` snapshots, ``K`` seeds, ``C`` conditions).

    Attributes:
        config: the :class:`ToyConfig`; seeds: the ``K`` seeds; conditions: the ``C`` names.
        steps: ``(S,)`` long, the step of each snapshot.
        weights: attention ``(S, K, C, N, M)``; values: ``(S, K, C, M, d_v)``; loss: ``(S, K, C)``
            (nats).
        queries: the data, ``(K, N, d_x)`` (conditions of one seed share it); readout ``(d_v, C')``.
    """

    config: ToyConfig
    seeds: list[int]
    conditions: tuple[str, ...]
    steps: torch.Tensor
    weights: torch.Tensor
    values: torch.Tensor
    loss: torch.Tensor
    queries: GroupedQueries
    readout: torch.Tensor

    def condition(self, name: str) -> int:
        """Index of condition ``name`` along the ``C`` axis."""
        if name not in self.conditions:
            raise ValueError(f"name must be one of {self.conditions}; got {name!r}")
        return self.conditions.index(name)

    def to(self, device) -> AblationRun:
        """A copy with every tensor on ``device`` (e.g. ``"cpu"`` for plotting after a GPU run)."""
        queries = replace(self.queries, x=self.queries.x.to(device),
                          groups=self.queries.groups.to(device),
                          targets=self.queries.targets.to(device),
                          means=self.queries.means.to(device))
        return replace(self, steps=self.steps.to(device), weights=self.weights.to(device),
                       values=self.values.to(device), loss=self.loss.to(device), queries=queries,
                       readout=self.readout.to(device))


def coupled_margin(scores: torch.Tensor, conditions: tuple[str, ...] = CONDITIONS,
                   against: tuple[str, ...] = ("frozen_routing", "frozen_values")
                   ) -> torch.Tensor:
    """How far the coupled run is ahead of the best of the conditions ``against``.

    Args:
        scores: ``(..., C)`` one number per condition (e.g. a final specialization), the last
            axis in the order of ``conditions``, which must hold ``"coupled"`` and ``against``.
        conditions: the names along the last axis (an :class:`AblationRun`'s ``conditions``).
        against: the conditions to beat: by default the two ablations; the
            :data:`SEQUENTIAL_CONDITIONS` for the capacity control.

    Returns:
        ``(...)``: ``coupled - max(against)``, entry by entry (so per seed, the better control
        of that seed); positive where coupling beats every one of them.
    """
    conditions, against = tuple(conditions), tuple(against)
    if (not against or not {"coupled", *against} <= set(conditions)
            or scores.shape[-1:] != (len(conditions),)):
        raise ValueError(f"conditions must include 'coupled' and {against} and match the last "
                         f"axis of scores ({tuple(scores.shape)}); got {conditions}")
    others = [conditions.index(name) for name in against]
    return scores[..., conditions.index("coupled")] - scores[..., others].max(dim=-1).values


def run_ablation(config: ToyConfig, seeds: list[int] | tuple[int, ...],
                 conditions: tuple[str, ...] = CONDITIONS, device=None,
                 dtype: torch.dtype = torch.float64,
                 value_update: str = "gradient") -> AblationRun:
    """Train every condition for every seed from the same data and initialisation.

    Seed ``s`` seeds its own generator, which draws that replicate's queries and then its
    initial head; every condition of that seed starts from this very head, so a replicate does
    not depend on which other seeds are run. Conditions are named in :data:`CONDITIONS` and
    :data:`SEQUENTIAL_CONDITIONS`. All ``K * C`` runs are trained together in one batched loop
    (:func:`train_toy_routing`, whose ``value_update`` is passed on: ``"closed-form"`` makes the
    coupled condition EM on the score mixture).
    """
    if not isinstance(config, ToyConfig):
        raise ValueError(f"config must be a ToyConfig; got {type(config).__name__}")
    seeds = list(seeds)
    if not seeds or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of non-negative ints; got {seeds!r}")
    conditions = tuple(conditions)
    routing_mask, value_mask = condition_masks(conditions, config.steps, dtype=dtype,
                                               device=device)
    data, heads = [], []
    for s in seeds:
        gen = torch.Generator(device=device or "cpu").manual_seed(s)
        data.append(sample_grouped_queries(gen, 1, config.n_groups, config.n_per_group,
                                           config.d_x, config.separation, config.noise,
                                           dtype=dtype, device=device))
        heads.append(init_toy_routing(gen, 1, config.d_x, config.d_k, config.n_values,
                                      config.n_groups, config.routing_scale,
                                      config.value_scale, dtype=dtype, device=device))
    c = len(conditions)
    queries = replace(data[0], x=torch.cat([d.x for d in data]),
                      means=torch.cat([d.means for d in data]))
    model = replace(heads[0], w_q=torch.cat([h.w_q for h in heads]).detach(),
                    keys=torch.cat([h.keys for h in heads]).detach(),
                    values=torch.cat([h.values for h in heads]).detach())
    batch_queries, batch_model = queries.repeat_runs(c), model.repeat_runs(c)
    recorder = TrajectoryRecorder(every=config.record_every)
    train_toy_routing(batch_model, batch_queries, config.steps, config.lr_routing,
                      config.lr_values, routing_mask.repeat(1, len(seeds)),
                      value_mask.repeat(1, len(seeds)), recorder, value_update)
    k = len(seeds)

    def unflatten(t):
        return t.reshape(t.shape[0], k, c, *t.shape[2:])

    return AblationRun(config=config, seeds=seeds, conditions=conditions,
                       steps=recorder.step_tensor, weights=unflatten(recorder.stack("weights")),
                       values=unflatten(recorder.stack("values")),
                       loss=unflatten(recorder.stack("loss")), queries=queries,
                       readout=model.readout)


def recombine_halves(run: AblationRun) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The head made of the two halves trained apart, at every snapshot of ``run``.

    Its routing is the ``frozen_values`` run's (trained while the values stayed at their
    initial value), its values the ``frozen_routing`` run's (trained under the initial
    routing): every parameter has had as many updates as in the ``coupled`` run at the same
    step, but neither half ever saw the other one move. The attention depends on the routing
    alone, so the recombined head's attention is the ``frozen_values`` run's.

    Returns:
        ``weights`` ``(S, K, N, M)``, ``values`` ``(S, K, M, d_v)`` and ``loss`` ``(S, K)``
        (nats, :func:`head_loss`).
    """
    weights = run.weights[:, :, run.condition("frozen_values")]
    values = run.values[:, :, run.condition("frozen_routing")]
    return weights, values, head_loss(weights, values, run.queries.targets, run.readout)
