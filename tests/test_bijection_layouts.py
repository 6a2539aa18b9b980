"""Both token layouts of the bijection task: the posterior against brute-force enumeration,
and the layout's tokens, targets and scored positions."""

import itertools
import math

import pytest
import torch

from attention_dynamics.tasks.base import IGNORE_INDEX, Task
from attention_dynamics.tasks.bijection import LAYOUTS, BijectionTask, mean_entropy_gap_of_marginal

CASES = [(V, L, repl, layout) for layout in LAYOUTS
         for V, L, repl in [(3, None, False), (4, None, False), (4, 2, False), (3, 6, True),
                            (4, 7, True)]]


def _enumerated_predictive(n_symbols, keys, values, query_index):
    """Bayes predictive over value symbols at each scored step of one sequence, ``(Q, V)``,
    by counting the ``V!`` bijections consistent with the pairs revealed before the step."""
    perms = torch.tensor(list(itertools.permutations(range(n_symbols))))  # (V!, V)
    consistent = torch.ones(len(perms), dtype=torch.bool)
    rows = []
    for key, value in zip(keys.tolist(), values.tolist(), strict=True):
        counts = torch.bincount(perms[consistent, key], minlength=n_symbols).double()
        rows.append(counts / counts.sum())
        consistent &= perms[:, key] == value
    if query_index is not None:  # the final query, after every pair
        counts = torch.bincount(perms[consistent, keys[query_index]], minlength=n_symbols)
        rows.append(counts.double() / counts.sum())
    return torch.stack(rows)


@pytest.mark.parametrize("n_symbols, n_pairs, with_replacement, layout", CASES)
def test_posterior_matches_enumeration(n_symbols, n_pairs, with_replacement, layout):
    task = BijectionTask(n_symbols, n_pairs, with_replacement=with_replacement, layout=layout)
    batch = task.sample(8, torch.Generator().manual_seed(n_symbols + 10 * with_replacement))
    scored, answers = task.query_positions, task.hypothesis_tokens
    for b in range(8):
        index = None if batch.query_index is None else batch.query_index[b].item()
        expected = _enumerated_predictive(n_symbols, batch.keys[b], batch.values[b], index)
        predictive = batch.bayes_predictive[b][scored]
        torch.testing.assert_close(predictive[:, answers], expected, rtol=0, atol=1e-12)
        assert predictive.sum().item() == pytest.approx(len(scored), abs=1e-12)  # nothing elsewhere
        entropy = -torch.special.xlogy(expected, expected).sum(-1) / math.log(2)
        torch.testing.assert_close(batch.bayes_entropy_bits[b][scored], entropy, rtol=0, atol=1e-12)


@pytest.mark.parametrize("with_replacement", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_shapes_vocab_and_scored_positions(layout, with_replacement):
    V, L = 4, (6 if with_replacement else 4)
    task = BijectionTask(V, L, with_replacement=with_replacement, layout=layout)
    batch = task.sample(16, torch.Generator().manual_seed(3))
    shared = layout == "shared"
    assert isinstance(task, Task)
    assert task.vocab_size == (V if shared else 2 * V)
    assert task.seq_len == (2 * L + 1 if shared else 2 * L - 1)
    assert task.key_positions.tolist() == list(range(0, 2 * L - 1, 2))
    assert task.value_positions.tolist() == list(range(1, 2 * L - (0 if shared else 1), 2))
    final = [2 * L] if shared else []
    assert task.query_positions.tolist() == task.key_positions.tolist() + final
    assert task.hypothesis_tokens.tolist() == list(range(0 if shared else V, V if shared else 2 * V))
    assert torch.equal(task.answer_tokens, task.hypothesis_tokens)
    assert batch.tokens.shape == (16, task.seq_len) and batch.tokens.dtype == torch.int64
    assert batch.bayes_predictive.shape == (16, task.seq_len, task.vocab_size)
    assert int(batch.tokens.max()) < task.vocab_size and int(batch.tokens.min()) >= 0
    assert torch.equal(batch.mask[0].nonzero().flatten(), task.query_positions)
    assert torch.all(batch.mask == batch.mask[0])
    offset = 0 if shared else V
    assert torch.equal(batch.tokens[:, task.key_positions], batch.keys)
    n_values = len(task.value_positions)
    assert torch.equal(batch.tokens[:, task.value_positions], (batch.values + offset)[:, :n_values])
    assert torch.equal(batch.targets[:, task.key_positions], batch.values + offset)
    assert torch.all(batch.targets[:, task.value_positions] == IGNORE_INDEX)


@pytest.mark.parametrize("with_replacement", [False, True])
def test_shared_query_is_a_context_key_with_its_value_as_answer(with_replacement):
    V, L = 5, (8 if with_replacement else 5)
    task = BijectionTask(V, L, with_replacement=with_replacement, layout="shared")
    batch = task.sample(64, torch.Generator().manual_seed(4))
    query = batch.tokens[:, -1]
    assert batch.query_index.shape == (64,) and batch.query_index.dtype == torch.int64
    assert int(batch.query_index.min()) >= 0 and int(batch.query_index.max()) < L
    assert torch.equal(query, batch.keys.gather(1, batch.query_index[:, None])[:, 0])
    assert torch.equal(batch.targets[:, -1], batch.bijections.gather(1, query[:, None])[:, 0])
    # the answer is the value shown right after the query key's pair in the context
    shown = batch.tokens.gather(1, 1 + 2 * batch.query_index[:, None])[:, 0]
    assert torch.equal(batch.targets[:, -1], shown)
    scored = batch.targets[batch.mask]
    assert int(scored.min()) >= 0 and int(scored.max()) < V  # every answer is a token < V
    assert torch.equal(batch.bayes_predictive[:, -1],
                       torch.nn.functional.one_hot(batch.targets[:, -1], V).double())
    assert torch.all(batch.bayes_entropy_bits[:, -1] == 0)


def test_separate_layout_is_the_default_and_unchanged():
    generator = torch.Generator().manual_seed(5)
    default = BijectionTask(5).sample(4, generator)
    explicit = BijectionTask(5, layout="separate").sample(4, torch.Generator().manual_seed(5))
    assert default.query_index is None
    for name in ("tokens", "targets", "bayes_predictive", "bijections", "keys"):
        assert torch.equal(getattr(default, name), getattr(explicit, name))
    # the shared layout draws the same bijections and keys, then the query
    shared = BijectionTask(5, layout="shared").sample(4, torch.Generator().manual_seed(5))
    assert torch.equal(shared.bijections, default.bijections) and torch.equal(shared.keys, default.keys)


def test_entropy_curve_and_marginal_gap_of_the_shared_layout():
    task = BijectionTask(5, layout="shared")
    curve = torch.tensor([math.log2(5 - i) for i in range(5)] + [0.0], dtype=torch.float64)
    torch.testing.assert_close(task.bayes_entropy_curve(), curve)
    batch = task.sample(6, torch.Generator().manual_seed(6))
    torch.testing.assert_close(batch.bayes_entropy_bits[:, task.query_positions], curve.expand(6, -1))
    for V in (2, 5, 10):
        gaps = [math.log2(V) - math.log2(V - i) for i in range(V)] + [math.log2(V)]
        assert mean_entropy_gap_of_marginal(V, "shared") == pytest.approx(sum(gaps) / (V + 1), abs=1e-12)
    with pytest.raises(ValueError, match="layout must be one of 'separate', 'shared'"):
        mean_entropy_gap_of_marginal(4, "mixed")


def test_bad_layout_is_rejected():
    with pytest.raises(ValueError, match="layout must be one of 'separate', 'shared'; got 'joint'"):
        BijectionTask(4, layout="joint")
    with pytest.raises(ValueError, match="layout"):
        BijectionTask(4, layout=None)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sequences_of_keeps_the_chosen_sequences_whole(layout):
    from attention_dynamics.tasks.base import sequences_of

    batch = BijectionTask(5, layout=layout).sample(6, torch.Generator().manual_seed(0))
    part = sequences_of(batch, slice(2, 4))
    assert type(part) is type(batch)
    for name in ("tokens", "targets", "bayes_predictive", "bayes_entropy_bits", "bijections",
                 "keys", "values"):
        assert torch.equal(getattr(part, name), getattr(batch, name)[2:4])
    assert (part.query_index is None) == (layout == "separate")
    picked = sequences_of(batch, torch.tensor([5, 0]))
    assert torch.equal(picked.tokens, batch.tokens[[5, 0]])
    with pytest.raises(ValueError, match="selects no sequence"):
        sequences_of(batch, slice(6, 9))
