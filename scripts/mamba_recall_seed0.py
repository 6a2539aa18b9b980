"""Train chapter 5's first-seed Mamba recall run (decide profile; quick shares the recall
settings) with whichever attention_dynamics is first on PYTHONPATH, and print its recall
accuracy (the measure recorded as recall_accuracy_mamba_seed0) and torch's CPU capability.

Old code (14d8a4e): the settings are exec'd from that commit's notebook text
(notebooks/content_routing.py, its `quick = ...` and `settings = select(...)` statements), the
matched config, training config, held-out batches and checkpoints follow the notebook's cells
line for line, all through the old library. New code (HEAD): the chapter package's own
functions (settings, build_tasks, matched_architectures, training_config, held_out_sets).
Both call sequence_training.train_and_evaluate, as the chapter does. Prints one JSON line.

How results/mamba_recall_seed0.json was made (one thread, on an AMD EPYC with AVX-512)::

    git worktree add /tmp/old_14d8a4e 14d8a4e
    PYTHONPATH=/tmp/old_14d8a4e/lib python scripts/mamba_recall_seed0.py         # unpinned
    PYTHONPATH=/tmp/old_14d8a4e/lib ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2 \
        ONEDNN_MAX_CPU_ISA=AVX2 python scripts/mamba_recall_seed0.py             # pinned
    ATTENTION_DYNAMICS_UNPINNED=1 python scripts/mamba_recall_seed0.py          # HEAD unpinned
    python scripts/mamba_recall_seed0.py                                         # HEAD pinned

(and ``ATEN_CPU_CAPABILITY=avx512`` or ``avx2`` alone). A one-off investigation: the book reads
its JSON, no build runs it.
"""
import hashlib
import json
import os

import torch

import attention_dynamics  # pins the dispatch at HEAD unless ATTENTION_DYNAMICS_UNPINNED=1

PROFILE, SEED = "decide", 0
torch.set_num_threads(1)
LIB = os.path.dirname(attention_dynamics.__file__)
OLD = not os.path.isdir(os.path.join(LIB, "chapters"))


def digest(tensors):
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


from attention_dynamics.models.registry import architecture_config, build_model, matched_config  # noqa: E402
from attention_dynamics.models.sizing import count_parameters  # noqa: E402
from attention_dynamics.runtime import resolve_device, seed_everything  # noqa: E402
from attention_dynamics.sequence_training import (  # noqa: E402
    SequenceTrainingConfig,
    geometric_checkpoints,
    held_out_batches,
    train_and_evaluate,
)

dev = resolve_device("cpu")
seed_everything(SEED, dev)  # as setup_notebook does (global RNG; the run draws from its own)

if OLD:
    from attention_dynamics.runtime import select
    from attention_dynamics.tasks.associative_recall import AssociativeRecallTask
    nb = open(os.path.join(LIB, "..", "..", "notebooks", "content_routing.py")).read()
    block = nb[nb.index("\nquick = dict(") + 1: nb.index("\nTASKS = (")]
    ns = {"select": select, "profile": PROFILE}
    exec(block, ns)
    settings = ns["settings"]
    task = AssociativeRecallTask(**settings["tasks"]["recall"])
    seeds = [SEED + 11 * (r + 1) for r in range(settings["n_seeds"])]
    reference = architecture_config("transformer", task.vocab_size, task.seq_len,
                                    **settings["reference"])
    target = count_parameters(build_model(reference, torch.Generator()))
    config, _ = matched_config("mamba", task.vocab_size, task.seq_len, target,
                               high=settings["width_limit"], **settings["fixed"]["mamba"])
    training = SequenceTrainingConfig(
        steps=settings["steps"]["recall"], batch_size=settings["batch_size"]["recall"],
        lr=settings["lr"]["mamba"]["recall"], warmup_steps=settings["warmup_steps"],
        weight_decay=0.0, loss="sampled")
    k = ("bijection", "hmm", "recall").index("recall")
    eval_batches = held_out_batches(task, settings["eval_batches"], settings["eval_batch_size"],
                                    SEED + 1000 + k, dev)
    keep = geometric_checkpoints(settings["steps"]["recall"], settings["recall_checkpoints"])
else:
    import importlib
    cs = importlib.import_module("attention_dynamics.chapters.content_routing.settings")
    from attention_dynamics.chapters.content_routing.architectures import build_tasks, matched_architectures
    from attention_dynamics.chapters.content_routing.training import held_out_sets, training_config

    settings = cs.settings(PROFILE)
    tasks = build_tasks(settings)
    task = tasks["recall"]
    seeds = cs.chapter_seeds(settings, SEED)
    config = matched_architectures(settings, tasks).configs["recall"]["mamba"]
    training = training_config(settings, "recall", "mamba")
    eval_batches = held_out_sets(settings, tasks, SEED, dev)["recall"]
    keep = geometric_checkpoints(settings["steps"]["recall"], settings["recall_checkpoints"])

run_seed = seeds[0]
init = build_model(config, torch.Generator().manual_seed(run_seed))
first_batch = task.sample(training.batch_size, torch.Generator(device=dev).manual_seed(run_seed + 1))
model, run = train_and_evaluate(config, task, training, run_seed, eval_batches, dev,
                                checkpoint_steps=keep)
loss = run.history.loss
steps = [1, 2, 10, 50, 100, 200, 300, 500, 750, 1000]
out = {
    "library": LIB,
    "code": "14d8a4e" if OLD else "HEAD",
    "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    "env": {v: os.environ.get(v, "unset") for v in
            ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "ATTENTION_DYNAMICS_UNPINNED")},
    "threads": torch.get_num_threads(),
    "torch": torch.__version__,
    "run_seed": run_seed,
    "config": repr(config),
    "training": repr(training),
    "checkpoints": keep,
    "n_parameters": run.n_parameters,
    "init_weights_sha": digest(init.state_dict().values()),
    "first_batch_sha": digest([first_batch.tokens, first_batch.targets, first_batch.mask]),
    "eval_batches_sha": digest([t for b in eval_batches for t in (b.tokens, b.targets, b.mask)]),
    "step10_weights_sha": (digest(run.history.checkpoints[10].values())
                           if 10 in run.history.checkpoints else None),
    "final_weights_sha": digest(model.state_dict().values()),
    "loss_at_steps": {s: float(loss[s - 1]) for s in steps},
    "loss_last_100_mean": float(loss[-100:].mean()),
    "recall_accuracy": run.accuracy,
    "seconds": run.seconds,
    "loss_all": [float(x) for x in loss],
}
print(json.dumps(out))
