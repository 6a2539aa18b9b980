"""Chapter 1's metrics: the closed-form gradients against autograd, a descent step on the scores and
on the weights (random and trained sticky-chain heads), and the routing diagnostics' cost."""

from attention_dynamics.book.catalogue import Metric

CONDITION = ("score", "weight", "orthonormal")
"""The names of the weight step's conditions (a score step, a weight step, and a weight step
on orthonormal inputs)."""

STICKY_CONDITION = ("score", "weight")
"""The names of the trained heads' conditions (a score step and a weight step)."""

WHEN = ("init", "trained")
"""When the sticky-chain heads are measured (at initialisation and after training)."""

METRICS: tuple[Metric, ...] = (
    # (a) the closed form against autograd, on random float64 problems
    Metric("routing_law_max_abs_error", "nats",
           "Largest absolute difference between the closed-form score gradient (attention weight "
           "times advantage) and autograd's, over all random problems, in nats per score unit"),
    Metric("closed_form_max_abs_error", "nats",
           "Largest absolute difference between any closed-form gradient of the loss (attention weights, "
           "scores, queries, keys, values, the three projection matrices) and autograd's, over all "
           "random problems"),
    Metric("row_sum_max_abs", "nats",
           "Largest absolute sum over the keys of one query's score gradient, over all random "
           "problems (zero by the routing law), in nats per score unit"),
    Metric("n_random_problems", "count",
           "Random attention problems on which the closed-form gradients were checked"),
    Metric("max_problem_length", "count",
           "Longest sequence, in positions, among the random problems of the gradient check"),
    # (c) one exact descent step on the scores, random problems
    Metric("mass_shift_rows", "count",
           "Query rows, over all random problems, whose predicted change of attention mass on the "
           "better-than-average keys is resolvable in float64, at the smallest score step"),
    Metric("mass_shift_fraction_up", "share",
           "Share of resolvable query rows whose attention mass on the better-than-average keys rises "
           "after one descent step on the scores, at the smallest step"),
    Metric("mass_shift_ratio_to_first_order", "ratio",
           "Median over resolvable query rows of the measured change of mass on the better-than-average "
           "keys over its first-order prediction, at the smallest score step"),
    Metric("loss_decrease_fraction", "share",
           "Share of the random problems (with a resolvable row) whose loss falls after one descent "
           "step on the scores, at the smallest step"),
    Metric("mass_shift_fraction_up_large_step", "share",
           "Share of resolvable query rows whose attention mass on the better-than-average keys rises "
           "after one descent step on the scores, at the largest step"),
    # (d) a step on the weights W_Q, W_K of random single heads, against a step on their scores
    Metric("kernel_fraction_up_{condition}_mean", "share",
           "Mean over random single heads of the share of rows whose mass on the better-than-average "
           "keys rises, at the smallest step (score step, weight step, or weight step on orthonormal "
           "inputs)", values={"condition": CONDITION}),
    Metric("kernel_fraction_up_{condition}_worst", "share",
           "Lowest over random single heads of the share of rows whose mass on the better-than-average "
           "keys rises, at the smallest step (score step, weight step, or weight step on orthonormal "
           "inputs)", values={"condition": CONDITION}),
    Metric("kernel_heads_all_rows_up_{condition}", "share",
           "Share of random single heads in which every resolvable row's mass on the better-than-average "
           "keys rises, at the smallest step (score step, weight step, or weight step on orthonormal "
           "inputs)", values={"condition": CONDITION}),
    Metric("kernel_heads", "setting",
           "Random single heads per step size in the comparison of a weight step with a score step "
           "(a count)"),
    Metric("kernel_step", "setting",
           "Smallest step of the weight-step comparison, in score units (the largest score moves by "
           "this much)"),
    Metric("kernel_fraction_up_weight_mean_large_step", "share",
           "Mean over random single heads of the share of rows whose mass on the better-than-average "
           "keys rises after one step on the query and key weights, at the largest step"),
    # (e) the same steps on one-head sticky-chain models, at initialisation and trained
    Metric("sticky_fraction_up_{condition}_{when}_mean", "share",
           "Mean over Paper II's five sticky-chain heads (at initialisation or trained) of the "
           "share of rows whose mass on the better-than-average keys rises after a score or weight step",
           values={"condition": STICKY_CONDITION, "when": WHEN}),
    Metric("sticky_fraction_up_{condition}_{when}_worst", "share",
           "Lowest over Paper II's five sticky-chain heads (at initialisation or trained) of the "
           "share of rows whose mass on the better-than-average keys rises after a score or weight step",
           values={"condition": STICKY_CONDITION, "when": WHEN}),
    Metric("sticky_heads", "count",
           "Sticky-chain heads measured, one per seed of the paper's EM-like versus SGD comparison"),
    Metric("sticky_steps", "setting",
           "Full-batch training steps of the EM-like schedule given to each sticky-chain head"),
    Metric("sticky_sequence_length", "setting",
           "Symbols in each sticky-chain head's training sequence (a count of positions)"),
    Metric("sticky_window", "setting",
           "Positions of a fresh sequence on which each sticky-chain head's steps are measured"),
    # (f) the cost of the closed-form routing diagnostics
    Metric("diagnostics_overhead_ratio", "ratio",
           "Time of a training step with the routing diagnostics over a plain step's time (median of "
           "repeats, machine-dependent)"),
    Metric("diagnostics_speedup_vs_autograd", "ratio",
           "Time of one autograd call per allowed score pair over a diagnosed step's time "
           "(machine-dependent)"),
    Metric("timing_length", "setting",
           "Sequence length, in positions, of the problem on which the diagnostics are timed"),
    Metric("timing_pairs", "count",
           "Allowed (causal) query-key pairs per sequence and head of the timed problem, one autograd "
           "call each in the per-pair baseline"),
)
