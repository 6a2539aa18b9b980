"""The architecture registry, the routing probes and the closed-form gradient of a selective scan."""

import math

import pytest
import torch

from attention_dynamics.measures.metrics import evaluate, sequence_loss
from attention_dynamics.measures.routing_probes import (
    attribution_share,
    final_representations,
    input_attributions,
    mixing_weights,
    offset_profile,
    pair_read_delay,
    queried_pair_positions,
    queried_pair_share,
    reading_layer,
)
from attention_dynamics.measures.scan_gradients import (
    mamba_routing_gradients,
    scan_routing_gradients,
    transformer_score_gradients,
    zero_sum_fraction,
)
from attention_dynamics.models.mamba import mamba_implicit_attention, selective_scan_sequential
from attention_dynamics.models.registry import (
    ARCHITECTURES,
    architecture_config,
    architecture_of,
    build_model,
    matched_config,
    varied_size,
)
from attention_dynamics.models.sizing import count_parameters
from attention_dynamics.sequence_training import SequenceTrainingConfig, train_and_evaluate
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask
from attention_dynamics.tasks.bijection import BijectionTask

F64 = torch.float64
RECALL = AssociativeRecallTask(n_pairs=3, n_keys=6, n_values=6, n_queries=2, n_filler=2)
SIZES = {"transformer": dict(n_layers=2, n_heads=2, d_model=16, init_std=0.1),
         "mamba": dict(n_layers=2, d_model=16, d_state=4),
         "lstm": dict(n_layers=2, d_model=16),
         "mlp": dict(n_layers=2, d_model=16, d_ff=48)}
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                               reason="no CUDA device"))]


def _model(arch, task=RECALL, seed=0):
    config = architecture_config(arch, task.vocab_size, task.seq_len, **SIZES[arch])
    return build_model(config, torch.Generator().manual_seed(seed))


def _batch(size=5, seed=3, device="cpu"):
    return RECALL.sample(size, torch.Generator(device=device).manual_seed(seed))


# ---- the registry ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_architecture_maps_tokens_to_logits(arch, device):
    model = _model(arch).to(device)
    batch = _batch(device=device)
    logits = model(batch.tokens)
    assert logits.shape == (5, RECALL.seq_len, RECALL.vocab_size) and logits.device.type == device
    assert architecture_of(model.config) == arch
    final = final_representations(model, batch.tokens)
    assert final.shape == (5, RECALL.seq_len, model.config.d_model) and not final.requires_grad
    again = _model(arch).to(device)
    assert torch.equal(again(batch.tokens), logits)  # the seed fixes the weights


@pytest.mark.parametrize("arch", ARCHITECTURES[1:])
def test_matched_config_is_the_nearest_width(arch):
    reference = _model("transformer")
    target = count_parameters(reference)
    fixed = {k: v for k, v in SIZES[arch].items() if k not in ("d_model", "d_ff")}
    if arch == "mlp":
        fixed["d_model"] = 16
    config, match = matched_config(arch, RECALL.vocab_size, RECALL.seq_len, target, high=256,
                                   **fixed)
    count = count_parameters(build_model(config, torch.Generator()))
    assert count == match.n_parameters and match.target == target
    field = "d_ff" if arch == "mlp" else "d_model"
    assert getattr(config, field) == match.size == varied_size(config)
    for neighbour in (match.size - 1, match.size + 1):
        other = architecture_config(arch, RECALL.vocab_size, RECALL.seq_len,
                                    **(fixed | {field: neighbour}))
        assert abs(count - target) <= abs(count_parameters(build_model(other, torch.Generator()))
                                          - target)
    assert abs(match.relative_error) < 0.1


def test_matched_transformer_follows_its_width_with_d_ff():
    config, match = matched_config("transformer", 20, 12, 30_000, multiple_of=4, n_layers=2,
                                   n_heads=4)
    assert config.d_ff == 4 * config.d_model and config.d_model % 4 == 0
    assert varied_size(config) == config.d_model == match.size
    assert count_parameters(build_model(config, torch.Generator())) == match.n_parameters


def test_registry_rejects_bad_arguments():
    with pytest.raises(ValueError, match="arch must be one of"):
        architecture_config("rnn", 10, 8)
    with pytest.raises(ValueError, match=r"sizes has fields \['d_state'\]"):
        architecture_config("lstm", 10, 8, d_state=4)
    with pytest.raises(ValueError, match="config must be one of"):
        build_model({"d_model": 8}, torch.Generator())
    with pytest.raises(ValueError, match="sizes must not fix 'd_model'"):
        matched_config("mamba", 10, 8, 5000, d_model=16)
    with pytest.raises(ValueError, match="target must lie between"):
        matched_config("lstm", 10, 8, 10, high=64)


# ---- training and scoring ----

def test_train_and_evaluate_is_seeded_and_scores_recall():
    training = SequenceTrainingConfig(steps=5, batch_size=8, lr=1e-3)
    config = architecture_config("lstm", RECALL.vocab_size, RECALL.seq_len, **SIZES["lstm"])
    batches = [_batch(64, seed=9)]
    first, run = train_and_evaluate(config, RECALL, training, 4, batches)
    second, again = train_and_evaluate(config, RECALL, training, 4, batches)
    assert torch.equal(run.history.loss, again.history.loss)
    assert run.arch == "lstm" and run.seed == 4 and run.n_parameters == count_parameters(first)
    assert 0 <= run.accuracy <= 1 and not first.training
    rescored = evaluate(second, batches, answer_tokens=RECALL.answer_tokens)
    assert run.report.mae_mean_curve == rescored.mae_mean_curve
    bijection = BijectionTask(4)
    config = architecture_config("mlp", bijection.vocab_size, bijection.seq_len, **SIZES["mlp"])
    _, run = train_and_evaluate(config, bijection, training, 0, [bijection.sample(8, torch.Generator())])
    assert run.accuracy is None
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        train_and_evaluate(config, bijection, training, -1, [bijection.sample(8, torch.Generator())])
    with pytest.raises(ValueError, match="eval_batches must be a non-empty list"):
        train_and_evaluate(config, bijection, training, 0, [])


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_a_few_steps_lower_the_loss_on_a_fixed_recall_batch(arch):
    """Every architecture of the registry trains: a few AdamW steps on one fixed batch lower
    its loss there, with finite gradients throughout. (How far training on fresh sequences
    takes it past what storage alone allows is the ledger's.)"""
    model, batch = _model(arch), _batch(16, seed=5)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)

    def loss() -> torch.Tensor:
        return sequence_loss(model(batch.tokens), batch)

    first = loss().item()
    for _ in range(5):
        optimizer.zero_grad()
        value = loss()
        value.backward()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
        optimizer.step()
    assert loss().item() < first


# ---- routing probes ----

def test_queried_pair_positions_find_the_stored_key():
    batch = _batch(16)
    positions = queried_pair_positions(RECALL, batch)
    assert positions.shape == (16, 2, 2)
    queries = batch.tokens[:, RECALL.query_positions]
    assert torch.equal(batch.tokens.gather(1, positions[..., 0]), queries)
    assert torch.equal(batch.tokens.gather(1, positions[..., 1]), batch.targets[:, RECALL.query_positions])


def test_pair_share_and_offset_profile_on_hand_built_weights():
    batch = _batch(4)
    length, pairs = RECALL.seq_len, queried_pair_positions(RECALL, batch)
    uniform = torch.ones(4, length, length, dtype=F64)
    assert torch.allclose(queried_pair_share(uniform, RECALL, batch), torch.full((4, 2), 1 / 3, dtype=F64))
    on_value = torch.zeros(4, length, length, dtype=F64)
    rows = RECALL.query_positions
    for b in range(4):
        on_value[b, rows, pairs[b, :, 1]] = 1.0
    assert torch.equal(queried_pair_share(on_value, RECALL, batch), torch.ones(4, 2, dtype=F64))
    profile = offset_profile(on_value, RECALL, batch, [-1, 0, 1, 2])
    assert torch.allclose(profile, torch.tensor([0, 0, 1, 0], dtype=F64))
    shifted = on_value.roll(2, dims=-1)  # read two positions later, as a Mamba does
    assert torch.equal(queried_pair_share(shifted, RECALL, batch, delay=2), torch.ones(4, 2, dtype=F64))
    assert (queried_pair_share(shifted, RECALL, batch) < 1).all()
    with pytest.raises(ValueError, match="delay must be an int in 0..3"):
        queried_pair_share(shifted, RECALL, batch, delay=4)
    with pytest.raises(ValueError, match="weights must be non-negative"):
        queried_pair_share(-on_value, RECALL, batch)
    with pytest.raises(ValueError, match="weights must have shape"):
        offset_profile(on_value[:, :-1], RECALL, batch, [0])
    with pytest.raises(ValueError, match="task must be an AssociativeRecallTask"):
        queried_pair_positions(BijectionTask(4), batch)


def test_reading_layer_is_the_layer_with_the_most_mass_on_the_pair():
    batch = _batch(4)
    length, pairs = RECALL.seq_len, queried_pair_positions(RECALL, batch)
    uniform = torch.ones(4, length, length, dtype=F64)
    on_pair = torch.zeros(4, length, length, dtype=F64)
    for b in range(4):
        on_pair[b, RECALL.query_positions, pairs[b, :, 1]] = 1.0
    assert reading_layer([uniform, on_pair, uniform], RECALL, batch) == 1
    assert reading_layer([uniform, uniform], RECALL, batch) == 0  # the first of equal ones
    assert reading_layer([on_pair, on_pair.roll(2, dims=-1)], RECALL, batch, delay=2) == 1
    with pytest.raises(ValueError, match="at least one layer"):
        reading_layer([], RECALL, batch)


def test_pair_read_delay_is_where_the_scan_input_last_holds_the_pair_whole():
    config = architecture_config("mamba", RECALL.vocab_size, RECALL.seq_len, **SIZES["mamba"])
    delay = pair_read_delay(config)
    model = build_model(config, torch.Generator().manual_seed(0))
    tokens = _batch(1).tokens
    with torch.no_grad():
        _, record = model(tokens, return_record=True)

    def reached(position):
        """Positions of the first layer's scan input that the token at ``position`` changes."""
        changed = tokens.clone()
        changed[0, position] = (tokens[0, position] + 1) % RECALL.vocab_size
        with torch.no_grad():
            _, other = model(changed, return_record=True)
        moved = (other.layers[0].scan_input - record.layers[0].scan_input).abs().amax(-1)[0]
        return set(torch.nonzero(moved > 0).flatten().tolist())

    j = 1
    whole = reached(2 * j) & reached(2 * j + 1)  # scan inputs that hold both tokens of pair j
    assert sorted(whole)[-2:] == [2 * j + delay, 2 * j + 1 + delay]
    assert delay == config.d_conv - 2
    transformer = architecture_config("transformer", RECALL.vocab_size, RECALL.seq_len,
                                      **SIZES["transformer"])
    assert pair_read_delay(transformer) == 0
    with pytest.raises(ValueError, match="TransformerConfig or a MambaConfig"):
        pair_read_delay(architecture_config("lstm", RECALL.vocab_size, RECALL.seq_len,
                                            **SIZES["lstm"]))


def test_mixing_weights_are_attention_or_implicit_attention():
    batch = _batch()
    transformer, mamba = _model("transformer"), _model("mamba")
    weights = mixing_weights(transformer, batch.tokens)
    assert len(weights) == 2 and weights[0].shape == (5, RECALL.seq_len, RECALL.seq_len)
    assert torch.allclose(weights[1].sum(-1), torch.ones(5, RECALL.seq_len))
    _, record = mamba(batch.tokens, return_record=True)
    implicit = mixing_weights(mamba, batch.tokens)
    assert torch.allclose(implicit[0], record.layers[0].attention.abs().mean(1))
    with pytest.raises(ValueError, match="has no mixing weights over positions"):
        mixing_weights(_model("lstm"), batch.tokens)


def test_attributions_see_only_what_a_model_can_read():
    batch = _batch()
    for arch in ("transformer", "mamba", "lstm"):
        norms = input_attributions(_model(arch), RECALL, batch)
        assert norms.shape == (5, 2, RECALL.seq_len)
        for m, t in enumerate(RECALL.query_positions.tolist()):  # causal: nothing from later
            assert (norms[:, m, t + 1:] == 0).all() and (norms[:, m, :t + 1] > 0).any()
        share = attribution_share(_model(arch), RECALL, batch)
        assert ((share >= 0) & (share <= 1)).all()
    mlp = input_attributions(_model("mlp"), RECALL, batch)
    for m, t in enumerate(RECALL.query_positions.tolist()):  # per position: only itself
        others = torch.ones(RECALL.seq_len, dtype=torch.bool)
        others[t] = False
        assert (mlp[:, m, others] == 0).all()
    assert attribution_share(_model("mlp"), RECALL, batch).isnan().all()


# ---- gradients through the implicit attention ----

def _scan_inputs(batch=2, length=7, d_inner=3, d_state=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, length, d_inner, generator=gen, dtype=F64)
    delta = torch.nn.functional.softplus(torch.randn(batch, length, d_inner, generator=gen, dtype=F64))
    A = -torch.rand(d_inner, d_state, generator=gen, dtype=F64) * 2 - 0.1
    B = torch.randn(batch, length, d_state, generator=gen, dtype=F64)
    C = torch.randn(batch, length, d_state, generator=gen, dtype=F64)
    grad_y = torch.randn(batch, length, d_inner, generator=gen, dtype=F64)
    return x, delta, A, B, C, grad_y


def test_scan_routing_gradients_match_autograd():
    x, delta, A, B, C, grad_y = _scan_inputs()
    log_delta = delta.log().requires_grad_()
    B_leaf, C_leaf = B.clone().requires_grad_(), C.clone().requires_grad_()
    y = selective_scan_sequential(x, log_delta.exp(), A, B_leaf, C_leaf)
    expected = torch.autograd.grad((grad_y * y).sum(), [C_leaf, B_leaf, log_delta])
    closed = scan_routing_gradients(x, delta, A, B, C, grad_y)
    for mine, reference in zip((closed.C, closed.B, closed.log_delta), expected, strict=True):
        assert torch.allclose(mine, reference, rtol=0, atol=1e-12)
    # dL/dM is g_t x_s on the causal pairs, zero above the diagonal
    M = mamba_implicit_attention(delta, A, B, C).requires_grad_()
    (grad_M,) = torch.autograd.grad((grad_y * torch.einsum("bdts,bsd->btd", M, x)).sum(), M)
    causal = torch.ones(7, 7, dtype=torch.bool).tril()
    assert torch.allclose(closed.compatibility, grad_M * causal, rtol=0, atol=1e-14)
    assert torch.equal(closed.attention, M.detach())


def test_write_and_forget_parts_of_the_step_gradient():
    x, delta, A, B, C, grad_y = _scan_inputs(seed=1)
    closed = scan_routing_gradients(x, delta, A, B, C, grad_y)
    # the write part is the weight times the compatibility, summed over the readers t >= r
    write = (closed.attention * closed.compatibility).sum(-2).transpose(1, 2)
    assert torch.allclose(closed.log_delta_write, write, rtol=0, atol=1e-14)
    assert torch.equal(closed.log_delta_forget[:, 0], torch.zeros_like(closed.log_delta_forget[:, 0]))
    # with one state the forget part is A Delta_r times the same product over the spanned pairs
    one = scan_routing_gradients(x, delta, A[:, :1], B[..., :1], C[..., :1], grad_y)
    product = (one.attention * one.compatibility)                       # (b, d, t, s)
    r = 4
    spanned = product[:, :, r:, :r].sum(dim=(-2, -1))                   # t >= r > s
    assert torch.allclose(one.log_delta_forget[:, r], A[:, 0] * delta[:, r] * spanned,
                          rtol=0, atol=1e-13)
    # without decay (A -> 0) nothing is forgotten
    still = scan_routing_gradients(x, delta, torch.zeros_like(A), B, C, grad_y)
    assert torch.equal(still.log_delta_forget, torch.zeros_like(still.log_delta_forget))


def test_scan_routing_gradients_check_their_inputs():
    x, delta, A, B, C, grad_y = _scan_inputs()
    with pytest.raises(ValueError, match="grad_y must have x's shape"):
        scan_routing_gradients(x, delta, A, B, C, grad_y[:, :-1])
    with pytest.raises(ValueError, match="grad_y must have dtype"):
        scan_routing_gradients(x, delta, A, B, C, grad_y.float())
    with pytest.raises(ValueError, match="x must have delta's shape"):
        scan_routing_gradients(x[..., :2], delta, A, B, C, grad_y[..., :2])
    with pytest.raises(ValueError, match="B must have shape"):
        scan_routing_gradients(x, delta, A, B[..., :2], C, grad_y)


def test_mamba_routing_gradients_reach_the_step_bias():
    """End to end: dL/dlog Delta from the closed form gives autograd's gradient of dt_proj's bias."""
    model = _model("mamba").double()
    batch = _batch(4)
    layers = mamba_routing_gradients(model, batch)
    assert len(layers) == 2 and model.mixers[0].dt_proj.bias.grad is None  # parameters untouched
    model.zero_grad()
    sequence_loss(model(batch.tokens), batch).backward()
    _, record = model(batch.tokens, return_record=True)
    for layer, mixer, grads in zip(record.layers, model.mixers, layers, strict=True):
        delta = layer.delta.detach()
        # delta = softplus(z): d delta / dz = 1 - exp(-delta)
        expected = (grads.log_delta / delta * (-torch.expm1(-delta))).sum(dim=(0, 1))
        assert torch.allclose(expected, mixer.dt_proj.bias.grad, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="model must be a Mamba"):
        mamba_routing_gradients(_model("lstm"), batch)


def test_softmax_rows_reroute_and_implicit_attention_rows_rescale():
    batch = _batch(4)
    scores = transformer_score_gradients(_model("transformer").double(), batch)
    assert len(scores) == 2 and scores[0].shape == (4, 2, RECALL.seq_len, RECALL.seq_len)
    assert zero_sum_fraction(scores[1]) < 1e-12
    mamba = mamba_routing_gradients(_model("mamba").double(), batch)
    assert zero_sum_fraction(mamba[0].compatibility) > 0.01
    with pytest.raises(ValueError, match="model must be a Transformer"):
        transformer_score_gradients(_model("mamba"), batch)


def test_zero_sum_fraction_extremes():
    reroute = torch.tensor([[1.0, -1.0, 0.0], [2.0, -1.0, -1.0]], dtype=F64)
    assert zero_sum_fraction(reroute) == 0.0
    assert math.isclose(zero_sum_fraction(reroute.abs()), 1.0)
    assert math.isclose(zero_sum_fraction(torch.tensor([[1.0, 1.0], [1.0, -1.0]]), torch.tensor([0])),
                        1.0)
    with pytest.raises(ValueError, match="gradient has no row with a non-zero entry"):
        zero_sum_fraction(torch.zeros(2, 2))
    with pytest.raises(ValueError, match="gradient must have at least 2 dimensions"):
        zero_sum_fraction(torch.zeros(3))


def test_probes_reject_models_without_the_named_modules():
    with pytest.raises(ValueError, match="norm_final"):
        final_representations(torch.nn.Linear(2, 2), torch.zeros(1, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="embed"):
        input_attributions(torch.nn.Linear(2, 2), RECALL, _batch())
