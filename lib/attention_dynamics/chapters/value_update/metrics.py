"""Every metric chapter 2 (values become prototypes on the toy routing head) records, with its unit
and meaning."""

from attention_dynamics.book.catalogue import Metric

CONDITIONS = ("coupled", "frozen_routing", "frozen_values")
SEQUENTIAL = ("routing_then_values", "values_then_routing")
RUNS = ("em", "coupled")

METRICS: tuple[Metric, ...] = (
    # the chapter's sizes
    Metric("n_seeds", "setting", "Number of seeds of the toy head trained in every condition"),
    Metric("train_steps", "setting", "Full-batch training steps of every toy run"),
    Metric("n_queries", "count", "Queries in the toy's training batch (groups times queries per group)"),
    Metric("n_values", "count", "Value slots of the toy attention head"),

    # the value-update identity, one step
    Metric("value_update_max_abs_error", "1",
           "Largest gap, over seeds and entries, between one SGD step on free values and the "
           "closed-form value update (logits)"),
    Metric("value_update_projected_max_abs_error", "1",
           "The same gap with values projected from fixed 2-dimensional slot embeddings, against "
           "the update filtered by their Gram matrix (logits)"),
    Metric("projected_step_cosine_to_free_step", "cosine",
           "Cosine between the projected form's step of the values and the free-value step from "
           "the same attention, mean over seeds"),

    # the three conditions
    Metric("specialization_{condition}", "1",
           "Final prototype specialization (0 group-blind, 1 fully specialized) in this condition "
           "(coupled, routing frozen, values frozen), seed mean",
           values={"condition": CONDITIONS}),
    Metric("specialization_{condition}_std", "1",
           "Standard deviation over seeds of the final prototype specialization in this condition",
           values={"condition": CONDITIONS}),
    Metric("specialization_auc_{condition}", "1",
           "Prototype specialization averaged over every snapshot of training and over seeds, in "
           "this condition", values={"condition": CONDITIONS}),
    Metric("routing_specialization_{condition}", "ratio",
           "Final routing specialization (mutual information of group and attended value over log "
           "of the number of groups) in this condition, seed mean", values={"condition": CONDITIONS}),
    Metric("routing_specialization_{condition}_std", "ratio",
           "Standard deviation over seeds of the final routing specialization in this condition",
           values={"condition": CONDITIONS}),
    Metric("final_loss_{condition}", "nats",
           "Final training cross-entropy per query in this condition, mean over seeds",
           values={"condition": CONDITIONS}),
    Metric("specialization_margin_min", "1",
           "Lowest seed's final prototype specialization of the coupled run minus that of the "
           "better of the two ablations"),
    Metric("seeds_coupled_beats_both", "count",
           "Seeds on which the coupled run ends more prototype-specialized than both ablations"),
    Metric("routing_margin_vs_frozen_values_mean", "ratio",
           "Final routing specialization of the coupled run minus the values-frozen run's, mean "
           "over seeds"),
    Metric("seeds_coupled_routing_ahead", "count",
           "Seeds on which the coupled run ends with more routing specialization than the "
           "values-frozen run"),
    Metric("coupled_passes_ablation_finals", "flag",
           "Whether the coupled run's seed-mean prototype specialization ends above both "
           "ablations' final seed means"),
    Metric("steps_coupled_passes_ablation_finals", "steps",
           "First step from which the coupled run's seed-mean prototype specialization stays above "
           "both ablations' final means (training length if never)"),
    Metric("steps_fraction_coupled_passes_ablation_finals", "share",
           "That first step as a share of the training steps"),

    # uniform attention
    Metric("uniform_step_advantage_change_rel_min", "ratio",
           "Lowest seed's size of the advantage change after one value step at uniform attention, "
           "relative to the advantages' size"),
    Metric("uniform_step_non_curvature_max_abs", "1",
           "Largest absolute difference between that advantage change and its curvature part, over "
           "seeds, queries and values (advantage units)"),
    Metric("uniform_step_query_spread_max_abs", "1",
           "Largest difference of that advantage change between two queries of one seed "
           "(advantage units)"),
    Metric("uniform_routing_value_difference_drift", "1",
           "Largest drift of the values' deviations from their mean during training with routing "
           "frozen at uniform attention (logits)"),
    Metric("uniform_routing_value_displacement_min", "1",
           "Lowest seed's largest distance a value moves during training with routing frozen at "
           "uniform attention (logits)"),
    Metric("final_loss_uniform_routing", "nats",
           "Final cross-entropy per query with routing frozen at uniform attention, mean over seeds"),
    Metric("routing_specialization_uniform_start_max_abs", "ratio",
           "Largest absolute routing specialization over seeds at the uniform start (zero by "
           "construction)"),
    Metric("routing_specialization_from_uniform_frozen_values", "ratio",
           "Final routing specialization with routing trained from uniform attention against "
           "frozen values, seed mean"),
    Metric("routing_specialization_from_uniform_frozen_values_min", "ratio",
           "Lowest seed's final routing specialization with routing trained from uniform attention "
           "against frozen values"),

    # the first-order advantage change
    Metric("advantage_first_order_rel_error", "ratio",
           "Relative error of the feedback-plus-curvature prediction of the advantage change at the "
           "smallest value step, worse of the first seed's coupled start and end"),
    Metric("advantage_feedback_only_rel_error_start", "ratio",
           "Relative error of the feedback-only prediction of the advantage change at the smallest "
           "value step, first seed's coupled run at its start"),
    Metric("advantage_feedback_only_rel_error_end", "ratio",
           "Relative error of the feedback-only prediction of the advantage change at the smallest "
           "value step, first seed's coupled run at its end"),

    # the feedback alignment along the coupled runs
    Metric("feedback_alignment_start", "cosine",
           "Cosine between the attention-weighted feedback part of a value step's advantage change "
           "and the routing gradient, seed mean, at the start"),
    Metric("feedback_alignment_max", "cosine",
           "Largest over snapshots of the seed-mean feedback alignment with the routing gradient "
           "along the coupled runs"),
    Metric("feedback_alignment_first_positive_step", "steps",
           "First step at which the seed-mean feedback alignment is positive (training length if "
           "never)"),
    Metric("curvature_alignment_max", "cosine",
           "Largest over snapshots of the seed-mean alignment of the curvature part of a value "
           "step's advantage change with the routing gradient"),
    Metric("total_alignment_start", "cosine",
           "Seed-mean alignment of a value step's whole advantage change with the routing "
           "gradient, at the start of the coupled runs"),
    Metric("total_alignment_max", "cosine",
           "Largest over snapshots of the seed-mean alignment of the whole advantage change with "
           "the routing gradient"),
    Metric("total_alignment_peak_step", "steps",
           "Step at which the seed-mean alignment of the whole advantage change peaks"),
    Metric("total_alignment_end", "cosine",
           "Seed-mean alignment of the whole advantage change with the routing gradient at the "
           "end of the coupled runs"),
    Metric("prototype_specialization_at_peak", "1",
           "Coupled run's seed-mean prototype specialization at the step where the whole "
           "alignment peaks"),

    # the capacity controls: recombined halves and sequential orders
    Metric("specialization_recombined", "1",
           "Final prototype specialization of the recombined halves (values-frozen run's routing "
           "with routing-frozen run's values), seed mean"),
    Metric("specialization_recombined_std", "1",
           "Standard deviation over seeds of the recombined halves' final prototype specialization"),
    Metric("final_loss_recombined", "nats",
           "Final cross-entropy per query of the recombined halves, mean over seeds"),
    Metric("seeds_coupled_beats_recombined", "count",
           "Seeds on which the coupled run ends more prototype-specialized than the recombined "
           "halves"),
    Metric("specialization_{order}", "1",
           "Final prototype specialization of this sequential order (routing then values, or "
           "values then routing), seed mean", values={"order": SEQUENTIAL}),
    Metric("specialization_{order}_std", "1",
           "Standard deviation over seeds of this sequential order's final prototype "
           "specialization", values={"order": SEQUENTIAL}),
    Metric("final_loss_{order}", "nats",
           "Final cross-entropy per query of this sequential order, mean over seeds",
           values={"order": SEQUENTIAL}),
    Metric("specialization_coupled_at_switch", "1",
           "Coupled run's seed-mean prototype specialization half-way through training, where "
           "the sequential orders switch"),
    Metric("coupling_margin{suffix}", "1",
           "Coupled run's prototype specialization at the end (or, equal updates, half-way) minus "
           "the better sequential order's final one, per seed", kind="spread",
           values={"suffix": ("", "_equal_updates")}),
    Metric("seeds_coupled_beats_sequential{suffix}", "count",
           "Seeds on which the coupled run beats the better sequential order at equal steps (or "
           "equal updates)", values={"suffix": ("", "_equal_updates")}),
    Metric("sequential_share_of_coupled_lead", "ratio",
           "Better sequential order's final lead over the better ablation in prototype "
           "specialization, over the coupled run's lead (seed means)"),

    # the symmetric state
    Metric("symmetric_value_scale", "setting",
           "Scale of the initial values at the symmetric start, with uniform attention (logits)"),
    Metric("specialization_symmetric_coupled", "1",
           "Final prototype specialization of the coupled run from the symmetric state, seed mean"),
    Metric("specialization_symmetric_coupled_min", "1",
           "Lowest seed's final prototype specialization of the coupled run from the symmetric "
           "state"),
    Metric("symmetric_controls_max_abs", "1",
           "Largest absolute final prototype specialization of any control from the symmetric "
           "state (ablations, sequential orders, recombined halves)"),
    Metric("steps_symmetric_spread_order_one", "steps",
           "First step at which the coupled run's seed-mean spread of the values from their mean "
           "reaches 1 logit, symmetric start (training length if never)"),
    Metric("symmetric_frozen_routing_spread_drift_rel", "ratio",
           "Largest relative change of the values' spread from its start, routing frozen at the "
           "symmetric state"),
    Metric("symmetric_frozen_values_tilt_ratio", "ratio",
           "Values frozen at the symmetric state: attention's largest departure from uniform at "
           "the end over that half-way, seed mean"),
    Metric("symmetric_coupled_efold_steps", "steps",
           "Steps per e-fold of the coupled run's seed-mean value spread while still small, "
           "fitted from the symmetric state"),

    # the sweep over initial scales
    Metric("sweep_configs", "count", "Pairs of initial routing and value scales in the sweep"),
    Metric("sweep_seeds", "count", "Seeds trained at each pair of initial scales in the sweep"),
    Metric("sweep_prototype_margin_min", "1",
           "Smallest over scale pairs of the seed-mean final prototype specialization, coupled "
           "minus the better ablation"),
    Metric("sweep_configs_prototype_all_seeds", "count",
           "Scale pairs at which the coupled run beats both ablations in prototype specialization "
           "on every seed"),
    Metric("sweep_routing_margin_min", "ratio",
           "Smallest over scale pairs of the seed-mean final routing specialization, coupled minus "
           "the better ablation"),
    Metric("sweep_routing_margin_max", "ratio",
           "Largest over scale pairs of the seed-mean final routing specialization, coupled minus "
           "the better ablation"),
    Metric("sweep_configs_routing_all_seeds", "count",
           "Scale pairs at which the coupled run beats both ablations in routing specialization "
           "on every seed"),
    Metric("sweep_coupling_margin_min", "1",
           "Smallest over scale pairs of the seed-mean final prototype specialization, coupled "
           "minus the better sequential order"),
    Metric("sweep_coupling_margin_max", "1",
           "Largest over scale pairs of the seed-mean final prototype specialization, coupled "
           "minus the better sequential order"),
    Metric("sweep_configs_coupling_all_seeds", "count",
           "Scale pairs at which the coupled run beats the better sequential order on every seed"),

    # EM with the values solved, against the coupled run
    Metric("toy_early_step", "steps",
           "Step of the early snapshot (the last at or before a sixteenth of training) of the EM "
           "comparison"),
    Metric("toy_{run}_loss_early", "nats",
           "Cross-entropy per query at the early snapshot, EM with values solved or gradient-trained "
           "coupled run, seed mean", values={"run": RUNS}),
    Metric("toy_{run}_specialization_early", "1",
           "Prototype specialization at the early snapshot, EM with values solved or "
           "gradient-trained coupled run, seed mean", values={"run": RUNS}),
    Metric("toy_{run}_final_loss", "nats",
           "Final cross-entropy per query, EM with values solved or gradient-trained coupled run, "
           "seed mean", values={"run": RUNS}),
    Metric("toy_{run}_final_specialization", "1",
           "Final prototype specialization, EM with values solved or gradient-trained coupled run, "
           "seed mean", values={"run": RUNS}),
    Metric("toy_{run}_steps_to_half_loss", "steps",
           "Steps until the loss first falls half-way from the coupled run's initial to its final "
           "loss, EM or coupled run, seed mean", values={"run": RUNS}),
    Metric("toy_{run}_final_bound", "nats",
           "Final mixture bound per query (attention-weighted cross-entropy of each value's own "
           "prediction), EM or coupled run, seed mean", values={"run": RUNS}),
    Metric("toy_em_seeds_ahead_early", "count",
           "Seeds on which EM's loss at the early snapshot is below the coupled run's"),
    Metric("toy_em_seeds_final_loss_above", "count",
           "Seeds on which EM's final loss is above the coupled run's"),
    Metric("toy_em_seeds_final_specialization_below", "count",
           "Seeds on which EM's final prototype specialization is below the coupled run's"),
)
