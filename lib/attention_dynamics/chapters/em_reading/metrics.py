"""Every metric chapter 3 records (the sticky chain, EM-like against SGD), with its unit and meaning."""

from attention_dynamics.book.catalogue import Metric

_SCHEDULE = {"schedule": ("sgd", "em")}
"""The reproduction's two schedules, SGD and EM-like (ten times the rate on the values)."""

_WHEN = ("init", "final")
"""At initialisation and at the end of training."""

_PART = ("attention", "values")
"""The attention rows and the value vectors."""

_BOUND = {"bound": ("low", "high")}
"""The two ends of a bootstrap interval."""

METRICS: tuple[Metric, ...] = (
    # the sizes the page quotes
    Metric("sequence_length", "setting", "Symbols per training sequence of the faithful reproduction"),
    Metric("train_steps", "setting", "Full-batch gradient steps of the faithful reproduction"),
    Metric("n_seeds", "setting",
           "Seeds of the faithful reproduction, each fixing a training sequence and initial weights"),
    Metric("sweep_sequence_length", "setting", "Symbols per training sequence of the value-multiplier sweep"),
    Metric("sweep_n_seeds", "setting", "Seeds per schedule of the value-multiplier sweep"),
    Metric("sweep_steps", "setting", "Full-batch gradient steps of each run of the value-multiplier sweep"),
    Metric("adam_sequence_length", "setting", "Symbols per training sequence of the Adam comparison"),
    Metric("adam_n_seeds", "setting",
           "Seeds of the Adam comparison, each trained with and without ten times the value rate"),
    Metric("adam_lr", "setting", "Adam's learning rate on every weight group in the Adam comparison"),

    # the chain and its exact predictors
    Metric("self_transition_script", "share",
           "Probability of staying on the same symbol, in the chain as the authors' script builds it"),
    Metric("self_transition_text", "share",
           "Probability of staying on the same symbol, in the chain as the paper's text describes it"),
    Metric("markov_lower_bound", "nats",
           "Entropy of the next symbol given the previous one in the script's chain: the authors' minimum "
           "loss"),
    Metric("markov_lower_bound_text", "nats",
           "Entropy of the next symbol given the previous one in the chain as the paper's text describes "
           "it"),
    Metric("uniform_loss", "nats", "Cross-entropy of the uniform predictor over the eight symbols (log 8)"),
    Metric("bayes_optimal_loss", "nats",
           "Cross-entropy of the exact Bayes predictor (forward filter) on the training sequences, seed "
           "mean"),
    Metric("bayes_optimal_entropy", "nats",
           "Entropy of the exact Bayes predictor's predictions on the training sequences, mean over seeds"),
    Metric("bayes_optimal_accuracy", "accuracy",
           "Accuracy of the exact Bayes predictor's most likely symbol on the training sequences, seed "
           "mean"),
    Metric("bayes_loss_min", "nats",
           "Lowest seed's cross-entropy of the exact Bayes predictor on its training sequence"),
    Metric("bayes_loss_max", "nats",
           "Highest seed's cross-entropy of the exact Bayes predictor on its training sequence"),
    Metric("bayes_seeds_below_bound", "count",
           "Seeds whose training sequence lets the exact Bayes predictor score below the entropy bound"),
    Metric("bayes_entropy_gap_to_bound", "nats",
           "Exact Bayes predictor's mean predictive entropy on the training sequences minus the entropy "
           "bound"),
    Metric("bayes_heldout_loss", "nats",
           "Cross-entropy of the exact Bayes predictor on the held-out sequences, mean over seeds"),
    Metric("bayes_heldout_accuracy", "accuracy",
           "Accuracy of the exact Bayes predictor's most likely symbol on the held-out sequences, seed "
           "mean"),
    Metric("memoryless_loss", "nats",
           "Cross-entropy of the best predictor from the current input alone on the training sequences, "
           "seed mean"),
    Metric("history_value", "nats",
           "What the history is worth: the memoryless predictor's cross-entropy minus the Bayes "
           "predictor's"),

    # the faithful reproduction: final metrics and EM-like's steps to SGD's final loss
    Metric("reproduction_seconds", "seconds",
           "Wall-clock time to train the SGD and EM-like runs of the faithful reproduction"),
    Metric("{schedule}_final_loss", "nats",
           "Final training cross-entropy under SGD or EM-like, mean over seeds", values=_SCHEDULE),
    Metric("{schedule}_final_loss_std", "nats",
           "Standard deviation over seeds (population) of the final training cross-entropy, per schedule",
           values=_SCHEDULE),
    Metric("{schedule}_final_entropy", "nats",
           "Final mean entropy of the head's predictions on its training sequence, per schedule, seed "
           "mean", values=_SCHEDULE),
    Metric("{schedule}_final_entropy_std", "nats",
           "Standard deviation over seeds (population) of the final predictive entropy, per schedule",
           values=_SCHEDULE),
    Metric("{schedule}_final_accuracy", "accuracy",
           "Final accuracy of the head's most likely symbol on its training sequence, per schedule, seed "
           "mean", values=_SCHEDULE),
    Metric("{schedule}_final_accuracy_std", "accuracy",
           "Standard deviation over seeds (population) of the final training accuracy, per schedule",
           values=_SCHEDULE),
    Metric("{schedule}_loss_fall_last_tenth", "ratio",
           "Relative fall of the training loss over the last tenth of training against the tenth before, "
           "least settled seed, per schedule", values=_SCHEDULE),
    Metric("em_steps_to_sgd_final", "steps",
           "Steps EM-like needs to go below its own seed's final SGD training loss (all if never), seed "
           "mean"),
    Metric("em_speedup", "ratio",
           "SGD's training steps over EM-like's mean steps to go below its own seed's final SGD loss"),
    Metric("em_steps_min", "steps",
           "Fewest steps any seed's EM-like run needs to go below its own seed's final SGD training loss"),
    Metric("em_steps_max", "steps",
           "Most steps any seed's EM-like run needs to go below its own seed's final SGD training loss"),
    Metric("em_faster_seeds", "count",
           "Seeds whose EM-like run goes below its own seed's final SGD training loss before training "
           "ends"),
    Metric("em_faster_share", "share",
           "EM-like goes below its own seed's final SGD training loss before training ends (share of "
           "seeds)", "seeds"),
    Metric("em_faster_sign_test_p", "1",
           "One-sided sign-test p-value over seeds that EM-like reaches SGD's final loss first, against a "
           "coin flip"),
    Metric("em_speedup_ci_{bound}", "ratio",
           "End of the 95% bootstrap interval over seeds of EM-like's speed-up to its seed's final SGD "
           "loss", values=_BOUND),
    Metric("sgd_final_loss_pooled", "nats",
           "SGD's final training cross-entropy averaged over seeds, the threshold of the authors' count"),
    Metric("em_steps_to_sgd_final_pooled", "steps",
           "Steps EM-like needs to go below the seed mean of SGD's final losses (authors' count), seed "
           "mean"),
    Metric("em_speedup_pooled", "ratio",
           "The authors' speed-up: SGD's training steps over EM-like's mean steps to the seed mean of "
           "SGD's final losses"),
    Metric("em_steps_pooled_min", "steps",
           "Fewest steps any seed's EM-like run needs to go below the seed mean of SGD's final losses"),
    Metric("em_steps_pooled_max", "steps",
           "Most steps any seed's EM-like run needs to go below the seed mean of SGD's final losses"),
    Metric("em_steps_to_sgd_final_pooled_ci_{bound}", "steps",
           "End of the 95% bootstrap interval over seeds of EM-like's mean steps to the seed mean SGD "
           "final loss", values=_BOUND),
    Metric("em_speedup_pooled_ci_{bound}", "ratio",
           "End of the 95% bootstrap interval over seeds of the authors' speed-up of EM-like over SGD",
           values=_BOUND),

    # the reproduction against the references
    Metric("{schedule}_gap_to_bayes", "nats",
           "Final training cross-entropy minus the exact Bayes predictor's on the same sequence, per "
           "schedule, seed mean", values=_SCHEDULE),
    Metric("{schedule}_gap_to_bound", "nats",
           "Final training cross-entropy minus the entropy bound, per schedule, mean over seeds",
           values=_SCHEDULE),
    Metric("{schedule}_entropy_gap_to_bound", "nats",
           "Final mean predictive entropy minus the entropy bound, per schedule, mean over seeds",
           values=_SCHEDULE),
    Metric("{schedule}_progress_to_bayes", "share",
           "Share of the way from the uniform predictor's loss to the exact Bayes predictor's that "
           "training covered, per schedule, seed mean", values=_SCHEDULE),
    Metric("em_gap_closed", "share",
           "Share of SGD's final gap to the exact Bayes predictor that EM-like closes (one minus their "
           "ratio)"),
    Metric("em_minus_sgd_final_entropy", "nats",
           "EM-like's final predictive entropy minus SGD's, paired by seed (same sequence and initial "
           "weights)", "spread"),
    Metric("em_minus_sgd_final_accuracy", "accuracy",
           "EM-like's final training accuracy minus SGD's, paired by seed (same sequence and initial "
           "weights)", "spread"),
    Metric("em_minus_sgd_gap_to_bayes", "nats",
           "EM-like's final gap to the exact Bayes predictor minus SGD's, paired by seed", "spread"),

    # the reproduction on the held-out sequences
    Metric("{schedule}_heldout_loss", "nats",
           "Final cross-entropy on each seed's held-out sequence, per schedule, mean over seeds",
           values=_SCHEDULE),
    Metric("{schedule}_heldout_entropy", "nats",
           "Final mean predictive entropy on each seed's held-out sequence, per schedule, mean over seeds",
           values=_SCHEDULE),
    Metric("{schedule}_heldout_accuracy", "accuracy",
           "Final accuracy of the most likely symbol on each seed's held-out sequence, per schedule, seed "
           "mean", values=_SCHEDULE),
    Metric("{schedule}_generalisation_gap", "nats",
           "Final held-out cross-entropy minus final training cross-entropy, per schedule, mean over "
           "seeds", values=_SCHEDULE),
    Metric("{schedule}_heldout_gap_to_bayes", "nats",
           "Final held-out cross-entropy minus the exact Bayes predictor's on the same sequence, per "
           "schedule, seed mean", values=_SCHEDULE),
    Metric("em_heldout_steps_to_sgd_final", "steps",
           "First snapshot step with EM-like's held-out loss below its seed's final SGD one (all if "
           "never), seed mean"),
    Metric("em_heldout_speedup", "ratio",
           "SGD's training steps over EM-like's mean steps to its seed's final SGD held-out loss"),
    Metric("em_heldout_faster_seeds", "count",
           "Seeds whose EM-like run gets below its seed's final SGD held-out loss before training ends"),

    # the paths of the value prototypes (each symbol's mean value vector)
    Metric("{schedule}_path_length", "1",
           "Length of each symbol's value-prototype path over the whole run (value-space units), per "
           "schedule, mean over symbols and seeds", values=_SCHEDULE),
    Metric("{schedule}_path_displacement", "1",
           "Distance between each symbol's first and last value prototype (value-space units), per "
           "schedule, mean over symbols and seeds", values=_SCHEDULE),
    Metric("{schedule}_path_straightness", "ratio",
           "Displacement over length of each symbol's value-prototype path (1: straight), per schedule, "
           "mean over symbols and seeds", values=_SCHEDULE),
    Metric("{schedule}_path_persistence", "cosine",
           "Cosine between consecutive steps of each symbol's value-prototype path, per schedule, mean "
           "over steps, symbols and seeds", values=_SCHEDULE),
    Metric("em_path_length_ratio", "ratio",
           "EM-like's mean value-prototype path length over SGD's, both over their whole runs"),
    Metric("em_path_length_matched", "1",
           "EM-like's value-prototype path length up to reaching its seed's final SGD loss (value-space "
           "units), seed mean"),
    Metric("em_path_straightness_matched", "ratio",
           "Straightness of EM-like's value-prototype paths up to reaching its seed's final SGD loss, "
           "seed mean"),
    Metric("em_path_length_matched_ratio", "ratio",
           "EM-like's value-prototype path length up to reaching SGD's final loss over SGD's whole-run "
           "length, by seed", "spread"),
    Metric("em_path_length_rate_adjusted_ratio", "ratio",
           "That path-length ratio at equal loss over what the tenfold value rate and the step counts "
           "alone give, by seed", "spread"),
    Metric("em_minus_sgd_path_straightness_matched", "ratio",
           "Straightness of EM-like's value-prototype paths at equal loss minus SGD's over its whole run, "
           "by seed", "spread"),
    Metric("pca_top2_share", "share",
           "Share of variance of the first seed's SGD and EM-like value prototypes on their two principal "
           "axes"),

    # how the reproduction's attention and values approach their final state
    Metric("frame_rows", "count",
           "Query positions (every 16th) whose attention rows the reproduction's settling analysis "
           "compares"),
    Metric("{schedule}_attention_half_step", "steps",
           "Step from which the attention rows stay within half their initial distance to the final rows, "
           "per schedule, seed mean", values=_SCHEDULE),
    Metric("{schedule}_values_half_step", "steps",
           "Step from which the value vectors stay within half their initial distance to the final "
           "values, per schedule, seed mean", values=_SCHEDULE),
    Metric("{schedule}_attention_first_seeds", "count",
           "Seeds on which the attention gets half-way to its final state before the values, per schedule",
           values=_SCHEDULE),
    Metric("{schedule}_attention_first_share", "share",
           "The attention gets half-way to its final state before the values, per schedule (share of "
           "seeds)", "seeds", values=_SCHEDULE),
    Metric("{schedule}_attention_total_change", "1",
           "Mean total-variation distance between the initial and the final attention rows, per schedule, "
           "seed mean", values=_SCHEDULE),
    Metric("{schedule}_value_total_change", "ratio",
           "Distance between the final and the initial value vectors over the initial ones' norm, per "
           "schedule, seed mean", values=_SCHEDULE),
    Metric("{schedule}_attention_speed_ratio", "ratio",
           "Attention rows' change per step over the last snapshot interval over the first, per schedule, "
           "seed mean", values=_SCHEDULE),
    Metric("{schedule}_value_speed_ratio", "ratio",
           "Values' relative change per step over the last snapshot interval over the first, per "
           "schedule, seed mean", values=_SCHEDULE),
    Metric("{schedule}_attention_uniformity", "ratio",
           "Final attention rows' entropy over that of uniform attention (1: uniform), per schedule, seed "
           "mean", values=_SCHEDULE),
    Metric("{schedule}_symbol_routing", "ratio",
           "Final attention mass on keys of the query's own hidden symbol over their share of keys (1: "
           "uniform), per schedule, seed mean", values=_SCHEDULE),
    Metric("{schedule}_linear_response_error", "ratio",
           "Relative error of the first-order expansion of the final head's logits (near 0: it only tilts "
           "a uniform average), per schedule, seed mean", values=_SCHEDULE),

    # the EM reading put to the heads at initialisation and at the end
    Metric("{schedule}_{when}_evidence_fall_share", "share",
           "Share of query rows whose log-evidence a small descent step on the scores lowers, at "
           "initialisation or at the end, per schedule, seed mean", values={**_SCHEDULE, "when": _WHEN}),
    Metric("{schedule}_{when}_value_step_raises_q", "count",
           "Seeds whose small descent step on the values raises the M-step objective, at initialisation "
           "or at the end, per schedule", values={**_SCHEDULE, "when": _WHEN}),
    Metric("{schedule}_{when}_loss_below_m_step_floor", "count",
           "Seeds whose head's loss lies below the lowest M-step objective over free values, at "
           "initialisation or at the end, per schedule", values={**_SCHEDULE, "when": _WHEN}),
    Metric("em_prefix", "setting", "Positions at the start of each training sequence that the EM checks use"),

    # the baseline that takes SGD's step on queries, keys and readout and solves the values exactly
    Metric("exact_steps", "setting", "Steps of the baseline with the values solved exactly"),
    Metric("exact_final_loss", "nats",
           "Final training cross-entropy of the baseline with the values solved exactly, mean over seeds"),
    Metric("exact_heldout_gap_to_bayes", "nats",
           "Exact-values baseline's final held-out cross-entropy minus the exact Bayes predictor's, seed "
           "mean"),
    Metric("exact_best_heldout_gap_to_bayes", "nats",
           "Smallest over snapshots of the exact-values baseline's seed-mean held-out gap to the Bayes "
           "predictor"),
    Metric("{schedule}_best_heldout_gap_to_bayes", "nats",
           "Smallest over snapshots of the seed-mean held-out gap to the exact Bayes predictor, per "
           "schedule", values=_SCHEDULE),
    Metric("exact_best_heldout_step", "steps",
           "Snapshot step with the exact-values baseline's smallest seed-mean held-out gap to the Bayes "
           "predictor"),
    Metric("exact_step_cost_ratio", "ratio",
           "Wall-clock time of a step of the exact-values baseline over a plain SGD step on the same runs"),
    Metric("exact_seeds_reaching_{schedule}_final", "count",
           "Seeds whose exact-values baseline goes below the seed's final training loss under SGD or "
           "EM-like", values=_SCHEDULE),
    Metric("exact_steps_to_{schedule}_final", "steps",
           "Steps the exact-values baseline needs to go below the seed's final loss under SGD or EM-like, "
           "mean over the seeds that do (all if none)", values=_SCHEDULE),
    Metric("exact_time_to_sgd_final_ratio", "ratio",
           "Wall-clock time the exact-values baseline needs to reach SGD's final loss over SGD's whole "
           "run"),

    # SGD and EM-like trained online on fresh sequences
    Metric("fresh_steps", "setting",
           "Steps of the runs on fresh sequences (a new training sequence every step)"),
    Metric("fresh_sequence_length", "setting",
           "Symbols per training sequence of the runs on fresh sequences"),
    Metric("fresh_n_seeds", "setting",
           "Seeds trained on fresh sequences, each under SGD and EM-like on the same data"),
    Metric("fresh_base_lr", "setting",
           "Learning rate on fresh sequences: the paper's times the run's scale (EM-like's values take "
           "ten times)"),
    Metric("fresh_settling_window_steps", "steps",
           "Steps spanned by the tenth of the records that the smoothed and settled timings on fresh "
           "sequences use"),
    Metric("fresh_memoryless_gap_to_bayes", "nats",
           "Cross-entropy of the best predictor from the current input alone minus the Bayes predictor's, "
           "on the probe"),
    Metric("fresh_{schedule}_{part}_half_step", "steps",
           "On fresh sequences, step from which the attention rows or the values stay within half their "
           "initial distance to the final state on the probe, per schedule",
           "spread", values={**_SCHEDULE, "part": _PART}),
    Metric("fresh_{schedule}_attention_first_seeds", "count",
           "On fresh sequences, seeds on which the attention gets half-way to its final state before the "
           "values", values=_SCHEDULE),
    Metric("fresh_{schedule}_values_first_seeds", "count",
           "On fresh sequences, seeds on which the values get half-way to their final state before the "
           "attention", values=_SCHEDULE),
    Metric("fresh_{schedule}_attention_first_share", "share",
           "On fresh sequences the attention gets half-way to its final state before the values (share of "
           "seeds)", "seeds", values=_SCHEDULE),
    Metric("fresh_{schedule}_smoothed_{part}_half_step", "steps",
           "On fresh sequences, half-way step of the attention rows or the values on trajectories "
           "averaged over a tenth of the records, per schedule",
           "spread", values={**_SCHEDULE, "part": _PART}),
    Metric("fresh_{schedule}_smoothed_attention_first_seeds", "count",
           "On fresh sequences, averaged trajectories: seeds on which the attention gets half-way first",
           values=_SCHEDULE),
    Metric("fresh_{schedule}_smoothed_values_first_seeds", "count",
           "On fresh sequences, averaged trajectories: seeds on which the values get half-way first",
           values=_SCHEDULE),
    Metric("fresh_{schedule}_smoothed_attention_first_share", "share",
           "On fresh sequences, averaged trajectories: the attention gets half-way first (share of seeds)",
           "seeds", values=_SCHEDULE),
    Metric("fresh_{schedule}_settled_{part}_settle_step", "steps",
           "On fresh sequences, step from which the attention rows or the values stay near the end "
           "window's mean (a tenth of the start's distance or the end jitter), per schedule",
           "spread", values={**_SCHEDULE, "part": _PART}),
    Metric("fresh_{schedule}_settled_attention_first_seeds", "count",
           "On fresh sequences, seeds on which the attention settles near its end state before the values",
           values=_SCHEDULE),
    Metric("fresh_{schedule}_settled_values_first_seeds", "count",
           "On fresh sequences, seeds on which the values settle near their end state before the "
           "attention", values=_SCHEDULE),
    Metric("fresh_{schedule}_settled_attention_first_share", "share",
           "On fresh sequences the attention settles near its end state before the values (share of "
           "seeds)", "seeds", values=_SCHEDULE),
    Metric("fresh_{schedule}_attention_uniformity_{when}", "ratio",
           "On fresh sequences, attention rows' entropy over uniform attention's on the probe (1: "
           "uniform), at initialisation or at the end, seed mean", values={**_SCHEDULE, "when": _WHEN}),
    Metric("fresh_{schedule}_symbol_routing_{when}", "ratio",
           "On fresh sequences, attention mass on keys of the query's own hidden symbol over their share "
           "(1: uniform) on the probe, at initialisation or at the end, seed mean",
           values={**_SCHEDULE, "when": _WHEN}),
    Metric("fresh_{schedule}_heldout_gap_to_bayes_{when}", "nats",
           "On fresh sequences, probe cross-entropy minus the exact Bayes predictor's, at initialisation "
           "or at the end, seed mean", values={**_SCHEDULE, "when": _WHEN}),
    Metric("fresh_{schedule}_score_value_gradient_ratio_{when}", "ratio",
           "On fresh sequences, norm of the probe loss's gradient in the attention scores over that in "
           "the values, at initialisation or at the end, seed mean", values={**_SCHEDULE, "when": _WHEN}),
    Metric("fresh_{schedule}_score_value_gradient_ratio_max", "ratio",
           "On fresh sequences, largest over records of the seed-mean ratio of score to value gradient "
           "norms", values=_SCHEDULE),
    Metric("fresh_{schedule}_heldout_gap_min", "nats",
           "On fresh sequences, smallest over records of the seed-mean probe gap to the exact Bayes "
           "predictor", values=_SCHEDULE),
    Metric("fresh_{schedule}_loss_fall_last_tenth", "ratio",
           "On fresh sequences, relative fall of the seed-mean probe loss over the last tenth of the "
           "records against the tenth before", values=_SCHEDULE),
    Metric("fresh_{schedule}_{part}_remaining_{when}", "ratio",
           "On fresh sequences, attention rows' or values' distance to their final state over that at the "
           "start, at 10% or 80% of training or the second-last record, seed mean",
           values={**_SCHEDULE, "part": _PART, "when": ("early", "late", "penultimate")}),

    # the value-multiplier sweep and its controls
    Metric("value_edge_multiplier", "ratio",
           "Stability edge of the value rate at initialisation (two over the largest curvature in the "
           "values), as a multiple of the paper's rate", "spread"),
    Metric("value_edge_lr", "1",
           "Largest stable learning rate on the values alone at initialisation (two over the largest "
           "curvature), seed mean"),
    Metric("sweep_seconds", "seconds",
           "Wall-clock time to train every schedule of the value-multiplier sweep"),
    Metric("sweep_speedup_{group}_x10", "ratio",
           "SGD's steps over the seed-mean steps to SGD's final loss with ten times the rate on the "
           "values, the routing, the readout or every group",
           values={"group": ("value", "routing", "readout", "all")}),
    Metric("sweep_max_multiplier", "setting",
           "Largest value-rate multiplier (over the paper's rate) of the sweep"),
    Metric("sweep_fastest_multiplier", "ratio",
           "Value-rate multiplier (over the paper's rate) that reaches SGD's final loss fastest in the "
           "sweep"),
    Metric("sweep_fastest_speedup", "ratio",
           "SGD's steps over the seed-mean steps to SGD's final loss at the sweep's fastest value-rate "
           "multiplier"),
    Metric("sweep_speedup_max_multiplier", "ratio",
           "SGD's steps over the seed-mean steps to SGD's final loss at the sweep's largest value-rate "
           "multiplier"),
    Metric("sweep_largest_smooth_multiplier", "ratio",
           "Largest value-rate multiplier whose training loss never rises above its initial value on any "
           "seed"),
    Metric("sweep_first_spike_multiplier", "ratio",
           "Smallest value-rate multiplier whose training loss rises above its initial value on some seed "
           "(0: none)"),
    Metric("sweep_peak_ratio_max_multiplier", "ratio",
           "Peak training loss over the initial at the sweep's largest value-rate multiplier, worst seed"),
    Metric("sweep_best_heldout_multiplier", "ratio",
           "Value-rate multiplier with the lowest seed-mean final held-out loss in the sweep"),
    Metric("sweep_best_heldout_loss", "nats",
           "Lowest final held-out cross-entropy over the sweep's value-rate multipliers, mean over seeds"),
    Metric("sweep_sgd_heldout_loss", "nats",
           "Final held-out cross-entropy of plain SGD (multiplier 1) in the sweep, mean over seeds"),
    Metric("sweep_heldout_loss_max_multiplier", "nats",
           "Final held-out cross-entropy at the sweep's largest value-rate multiplier, mean over seeds"),
    Metric("sweep_training_loss_max_multiplier", "nats",
           "Final training cross-entropy at the sweep's largest value-rate multiplier, mean over seeds"),
    Metric("sweep_bayes_heldout_loss", "nats",
           "Cross-entropy of the exact Bayes predictor on the sweep's held-out sequences, mean over seeds"),

    # the long horizon: the sweep's runs at ten times every rate
    Metric("long_{schedule}_attention_half_step", "steps",
           "At ten times every rate, step (counted at the paper's rate) from which the attention rows "
           "stay within half their initial distance to the final ones, seed mean", values=_SCHEDULE),
    Metric("long_{schedule}_values_half_step", "steps",
           "At ten times every rate, step (counted at the paper's rate) from which the values stay within "
           "half their initial distance to the final ones, seed mean", values=_SCHEDULE),
    Metric("long_{schedule}_attention_first_seeds", "count",
           "At ten times every rate, seeds on which the attention gets half-way before the values",
           values=_SCHEDULE),
    Metric("long_{schedule}_training_loss", "nats",
           "At ten times every rate, final training cross-entropy under SGD or EM-like, seed mean",
           values=_SCHEDULE),
    Metric("long_{schedule}_heldout_loss", "nats",
           "At ten times every rate, final held-out cross-entropy under SGD or EM-like, seed mean",
           values=_SCHEDULE),

    # Adam on every group, with and without ten times its rate on the values
    Metric("adam_seconds", "seconds", "Wall-clock time to train the Adam comparison"),
    Metric("adam_em_steps_to_adam_final", "steps",
           "Steps Adam with a tenfold value rate needs to go below its seed's final plain-Adam loss (all "
           "if never), seed mean"),
    Metric("adam_em_speedup", "ratio",
           "Adam's training steps over the seed-mean steps Adam with a tenfold value rate needs to reach "
           "plain Adam's final loss"),
    Metric("{variant}_final_loss", "nats",
           "Final training cross-entropy of plain Adam or of Adam with a tenfold value rate, mean over "
           "seeds", values={"variant": ("adam", "adam_em")}),
    Metric("{variant}_heldout_loss", "nats",
           "Final held-out cross-entropy of plain Adam or of Adam with a tenfold value rate, mean over "
           "seeds", values={"variant": ("adam", "adam_em")}),
    Metric("{variant}_best_heldout_loss", "nats",
           "Lowest held-out cross-entropy over snapshots of plain Adam or of Adam with a tenfold value "
           "rate, seed mean", values={"variant": ("adam", "adam_em")}),
    Metric("{variant}_best_heldout_step", "steps",
           "Snapshot step of each seed's lowest held-out loss under plain Adam or Adam with a tenfold "
           "value rate, seed mean", values={"variant": ("adam", "adam_em")}),
    Metric("adam_bayes_heldout_loss", "nats",
           "Cross-entropy of the exact Bayes predictor on the Adam comparison's held-out sequences, seed "
           "mean"),

    # the authors' deep variant (the paper profile only)
    Metric("deep_variant_seeds", "setting",
           "Seeds the authors' deep model is trained on (none in some profiles)"),
    Metric("{model}_train_loss", "nats",
           "The authors' deep model's final training cross-entropy, without or with a tenfold value rate, "
           "seed mean", values={"model": ("deep", "deep_em")}),
    Metric("{model}_heldout_loss", "nats",
           "The authors' deep model's final held-out cross-entropy, without or with a tenfold value rate, "
           "seed mean", values={"model": ("deep", "deep_em")}),
    Metric("{model}_heldout_entropy", "nats",
           "The authors' deep model's final mean predictive entropy held out, without or with a tenfold "
           "value rate, seed mean", values={"model": ("deep", "deep_em")}),
    Metric("{model}_heldout_accuracy", "accuracy",
           "The authors' deep model's final held-out accuracy, without or with a tenfold value rate, seed "
           "mean", values={"model": ("deep", "deep_em")}),
)
