"""Time Paper II's sticky-chain grid (5 seeds x 2 schedules, T = 2000, 1000 steps) batched.

Run: ``python benchmarks/sticky_chain_speed.py [--steps 1000] [--threads 1]``. Prints the wall
time and, per seed, the Bayes reference, the final metrics and the step at which the EM-like run
first goes below the SGD run's final loss. Not a test: the timing depends on the machine. On a
CPU shared with other jobs, one thread is much faster than two (threads wait for each other).
"""

from __future__ import annotations

import argparse
import time

import torch

from attention_dynamics.sticky.training import steps_to_reach, sticky_chain_experiment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--T", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--block-size", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    start = time.perf_counter()
    exp = sticky_chain_experiment(T=args.T, steps=args.steps, block_size=args.block_size)
    seconds = time.perf_counter() - start
    runs = len(exp.seeds)
    print(f"{runs} runs x {args.steps} steps at T={args.T}, {args.threads} threads: "
          f"{seconds:.1f} s ({seconds / args.steps * 1e3:.1f} ms per step of all runs)")

    history, bayes = exp.history, exp.bayes
    final = history.loss[-1]
    sgd = [r for r, s in enumerate(exp.schedules) if s == "sgd"]
    em = [r for r, s in enumerate(exp.schedules) if s == "em"]
    reached = steps_to_reach(history, final[sgd].repeat_interleave(2))
    print(f"lower bound H(Y_t | Y_t-1) = {bayes.lower_bound:.4f} nats")
    print("seed | Bayes: CE  entropy acc | SGD: loss entropy acc | EM: loss entropy acc | "
          "EM steps to SGD's final loss")
    for i, (s_run, e_run) in enumerate(zip(sgd, em, strict=True)):
        cells = [f"{exp.seeds[s_run]:>4}",
                 f"{bayes.cross_entropy[i]:.4f} {bayes.predictive_entropy[i]:.4f} "
                 f"{bayes.accuracy[i]:.3f}"]
        cells += [f"{history.loss[-1, r]:.4f} {history.entropy[-1, r]:.4f} "
                  f"{history.accuracy[-1, r]:.3f}" for r in (s_run, e_run)]
        print(" | ".join([*cells, str(reached[e_run])]))
    pooled = final[sgd].mean()
    pooled_steps = steps_to_reach(exp.history, pooled)
    em_steps = [pooled_steps[r] for r in em]
    print(f"authors' pooled threshold {pooled:.4f}: EM steps {em_steps}")


if __name__ == "__main__":
    main()
