"""Chapter 4's metrics (manifold formation in the Bayesian wind tunnels): name, unit and meaning.

Entropies, MAEs and KLs are in bits; the bare name of a metric recorded seed by seed is seed 0's run.
"""

from attention_dynamics.book.catalogue import Metric

_LAYOUTS = ("separate", "shared")  # the bijections' token layouts
_TASKS = (*_LAYOUTS, "hmm")  # the tasks whose value manifold is measured
_PROTOCOLS = ("scored_final", "value_prenorm", "value_standardised", "value_best_pc", "per_sequence")
_UNSEEDED = tuple(p for p in _PROTOCOLS if p != "value_standardised")  # no share per seed
_LENGTHS = ("18", "30", "50")  # HMM test lengths: 30 and 50 in every profile, 18 in the tests' tiny run
_LAYERS = tuple(str(layer) for layer in range(6))  # bijection transformer layers: 2, or 6 in paper
_BEYOND = ("hmm", "replacement")  # the runs whose entropy varies within a position

METRICS: tuple[Metric, ...] = (
    # (a) bijection elimination, in both layouts
    Metric("n_symbols", "setting", "The number V of symbols of every bijection, keys and values alike"),
    Metric("bijection_steps", "setting",
           "Training steps of every bijection transformer (both layouts, keys with replacement, every seed)"),
    Metric("bijection_training_sequences", "sequences",
           "Sequences each bijection transformer trained on (steps times batch size, each one fresh)"),
    Metric("separate_bijection_entropy_mae_keys_bits", "bits",
           "Separate layout: mean absolute gap of the trained transformer's mean entropy curve to the "
           "Bayes curve at the key positions, on held-out bijections", "seeds"),
    Metric("shared_bijection_entropy_mae_keys_bits", "bits",
           "Shared layout: mean absolute gap of the trained transformer's mean entropy curve to the "
           "Bayes curve at the key positions only (final query left out), on held-out bijections",
           "seeds"),
    Metric("shared_bijection_final_query_entropy_bits", "bits",
           "Shared layout: the trained transformer's mean predictive entropy at the final query, "
           "whose answer is in the context (Bayes entropy 0)"),
    Metric("bijection_context_free_entropy_bits", "bits",
           "Entropy of the uniform guess over the V symbols (log2 V), what a predictor blind to the "
           "context outputs"),
    Metric("{layout}_bijection_parameters", "count", "Parameters of the bijection transformer, by layout",
           values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_train_seconds", "seconds",
           "Wall-clock training time of the bijection transformer, by layout (machine-dependent)",
           values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_entropy_mae_bits", "bits",
           "Mean absolute gap of the trained transformer's mean entropy curve to the Bayes curve over "
           "the scored positions of held-out bijections, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_entropy_mae_per_sample_bits", "bits",
           "Mean absolute gap of the trained transformer's entropy to the Bayes entropy per sequence "
           "and scored position of held-out bijections, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_kl_bits", "bits",
           "Mean KL divergence from the Bayes posterior to the trained transformer's predictive at the "
           "scored positions of held-out bijections, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_leaked_mass", "share",
           "Probability the trained transformer puts outside the answer tokens at the scored positions "
           "of held-out bijections, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_loss_fall_last_tenth", "ratio",
           "Relative fall of the bijection transformer's training loss, last tenth of training against "
           "the tenth before it (0.05: fell 5 %), by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_solve_step", "steps",
           "First checkpoint from which the bijection transformer stays solved: its entropy MAE at "
           "the key positions of held-out bijections at most 0.05 bits (its last checkpoint where it "
           "is not solved there), by layout", values={"layout": _LAYOUTS}),
    # (b) HMM filtering, trained at one length and tested at longer ones
    Metric("hmm_parameters", "count", "Parameters of the HMM-filtering transformer"),
    Metric("hmm_steps", "setting", "Training steps of every HMM-filtering transformer"),
    Metric("hmm_training_sequences", "sequences",
           "Sequences the HMM-filtering transformer trained on (steps times batch size, each one fresh)"),
    Metric("hmm_train_seconds", "seconds",
           "Wall-clock training time of the HMM-filtering transformer (machine-dependent)"),
    Metric("hmm_train_length", "setting", "Observations per training sequence K of HMM filtering"),
    Metric("hmm_entropy_mae_bits", "bits",
           "HMM filtering at the training length: mean absolute gap of the trained transformer's mean "
           "entropy curve to the Bayes curve, on held-out sequences", "seeds"),
    Metric("hmm_entropy_mae_per_sample_bits", "bits",
           "HMM filtering at the training length: mean absolute gap of the trained transformer's "
           "entropy to the Bayes entropy per sequence and position, on held-out sequences", "seeds"),
    Metric("hmm_kl_bits", "bits",
           "HMM filtering at the training length: mean KL divergence from the Bayes posterior to the "
           "trained transformer's predictive, on held-out sequences"),
    Metric("hmm_leaked_mass", "share",
           "HMM filtering at the training length: probability the trained transformer puts outside the "
           "answer tokens, on held-out sequences"),
    Metric("hmm_average_curve_predictor_mae_bits", "bits",
           "HMM filtering at the training length: per-sample entropy MAE of a predictor blind to the "
           "observations that gives each position its Bayes entropy averaged over sequences"),
    Metric("hmm_uniform_predictor_mae_bits", "bits",
           "HMM filtering at the training length: per-sample entropy MAE of the uniform predictive "
           "over the hidden states, a model that learned nothing"),
    Metric("hmm_loss_fall_last_tenth", "ratio",
           "Relative fall of the HMM-filtering transformer's training loss, last tenth of training "
           "against the tenth before it"),
    Metric("hmm_error_step_at_train_length_bits", "bits",
           "HMM filtering at the longest test length: the trained transformer's mean entropy error over "
           "the five observations after the training length minus the five before"),
    Metric("hmm_error_step_within_train_max_bits", "bits",
           "The largest such error step inside the second half of the training length, where nothing "
           "changes: the null the step at the training length must exceed"),
    Metric("hmm_length_kl_ratio", "ratio",
           "The authors' length-generalisation ratio: mean KL to the Bayes posterior over the longer "
           "test lengths over the KL at the training length (below 2: strong)", "seeds"),
    Metric("hmm_entropy_mae_per_sample_bits_length_{length}", "bits",
           "HMM filtering tested at the named number of observations: per-sample entropy MAE of the "
           "trained transformer against Bayes", values={"length": _LENGTHS}),
    Metric("hmm_entropy_mae_bits_length_{length}", "bits",
           "HMM filtering tested at the named number of observations: mean-curve entropy MAE of the "
           "trained transformer against Bayes", values={"length": _LENGTHS}),
    Metric("hmm_kl_bits_length_{length}", "bits",
           "HMM filtering tested at the named number of observations: mean KL divergence from the Bayes "
           "posterior to the trained transformer's predictive", values={"length": _LENGTHS}),
    Metric("hmm_average_curve_predictor_mae_bits_length_{length}", "bits",
           "HMM filtering tested at the named number of observations: per-sample entropy MAE of the "
           "predictor blind to the observations (average Bayes curve)", values={"length": _LENGTHS}),
    # (c) the capacity-matched MLPs, which cannot see their context
    Metric("{layout}_mlp_parameters", "count",
           "Parameters of the capacity-matched MLP, which cannot see the context, by layout",
           values={"layout": _LAYOUTS}),
    Metric("{layout}_mlp_bijection_entropy_mae_bits", "bits",
           "Mean-curve entropy MAE against Bayes of the capacity-matched MLP, which cannot see the "
           "context, on the layout's held-out bijections", values={"layout": _LAYOUTS}),
    Metric("{layout}_mlp_bijection_loss_fall_last_tenth", "ratio",
           "Relative fall of the capacity-matched MLP's training loss, last tenth of training against "
           "the tenth before it, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_marginal_gap_bits", "bits",
           "Mean-curve entropy MAE of the context-free marginal (uniform over the V values) against "
           "Bayes: the floor of a predictor blind to the context, by layout", values={"layout": _LAYOUTS}),
    # (d) the keys, by the authors' two definitions, against independent initialisations
    Metric("{layout}_key_orthogonality", "cosine",
           "Mean absolute cosine between the trained transformer's layer-0 keys of the V hypothesis "
           "tokens after the first norm, per head, averaged over heads (authors' analysis suite)",
           "seeds", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_orthogonality_random_init", "cosine",
           "The same mean absolute hypothesis-key cosine for the same transformer at its initialisation",
           values={"layout": _LAYOUTS}),
    Metric("{layout}_key_orthogonality_init_low", "cosine",
           "2.5 % quantile of the mean absolute hypothesis-key cosine over 100 independent "
           "initialisations, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_orthogonality_init_high", "cosine",
           "97.5 % quantile of the mean absolute hypothesis-key cosine over 100 independent "
           "initialisations, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine", "cosine",
           "Signed mean cosine between the trained transformer's raw hypothesis-token embeddings "
           "through the layer-0 key weights, per head, averaged (authors' figure script)",
           "seeds", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine_random_init", "cosine",
           "The same signed mean raw hypothesis-key cosine for the same transformer at its "
           "initialisation", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine_init_low", "cosine",
           "2.5 % quantile of the signed mean raw hypothesis-key cosine over 100 independent "
           "initialisations, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine_init_high", "cosine",
           "97.5 % quantile of the signed mean raw hypothesis-key cosine over 100 independent "
           "initialisations, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine_layer_1", "cosine",
           "Signed mean cosine between the trained transformer's raw hypothesis-token embeddings "
           "through layer 1's key weights, per head, averaged", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine_first_tokens", "cosine",
           "Signed mean raw layer-0 key cosine of the trained transformer over tokens 0 to V-1, the "
           "authors' token set (the key tokens in the separate layout)", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_orthogonality_in_context", "cosine",
           "Mean absolute cosine between the trained transformer's layer-0 keys of the hypotheses in "
           "context (value positions of probe sequences, averaged per symbol)", values={"layout": _LAYOUTS}),
    Metric("{layout}_key_signed_cosine_in_context", "cosine",
           "Signed mean cosine between the trained transformer's layer-0 keys of the hypotheses in "
           "context (value positions of probe sequences, averaged per symbol)", values={"layout": _LAYOUTS}),
    Metric("key_orthogonality_n_inits", "count",
           "Independent initialisations per layout whose key statistics give the null range"),
    Metric("authors_checkpoint_key_orthogonality_{model}", "cosine",
           "Mean absolute layer-0 hypothesis-key cosine of the authors' released separate-layout V = 20 "
           "checkpoint, trained or at random init as named, from their own summaries",
           values={"model": ("trained", "random_init")}),
    Metric("key_orthogonality_random_directions", "cosine",
           "Expected mean absolute cosine between random directions of a head's key space, "
           "sqrt(2 / (pi d)) for head dimension d"),
    Metric("key_orthogonality_simplex", "cosine",
           "Absolute cosine between any two of V keys forming a regular simplex, 1 / (V - 1)"),
    # (d) query-key alignment
    Metric("{layout}_qk_alignment_{against}_layer_{layer}", "cosine",
           "Trained transformer: mean cosine between the query at each key position and the keys at "
           "earlier value or key positions (as named), in one layer, over heads and probe sequences",
           values={"layout": _LAYOUTS, "against": ("value", "key"), "layer": _LAYERS}),
    Metric("{layout}_qk_alignment_{against}_layer_{layer}_random_init", "cosine",
           "The same query-key cosine for the same transformer at its initialisation",
           values={"layout": _LAYOUTS, "against": ("value", "key"), "layer": _LAYERS}),
    # (e) the heads that carry the computation
    Metric("largest_single_head_ablation_mae_bits", "bits",
           "Separate layout: the trained transformer's mean-curve entropy MAE on held-out bijections with "
           "one head masked, the largest over heads"),
    Metric("smallest_single_head_ablation_mae_bits", "bits",
           "Separate layout: the trained transformer's mean-curve entropy MAE on held-out bijections with "
           "one head masked, the smallest over heads"),
    Metric("n_important_heads", "count",
           "Separate layout: heads whose masking at least doubles the trained transformer's entropy MAE"),
    # (f) the value manifold under every protocol, against its nulls
    Metric("{task}_manifold_{protocol}_share", "share",
           "Variance share of the axis a manifold protocol reads (PC1, or the best of PC1-5) in the "
           "trained transformer's representations of probe sequences, by task",
           values={"task": _TASKS, "protocol": _UNSEEDED}),
    Metric("hmm_manifold_value_standardised_share", "share",
           "HMM filtering: variance share of PC1 of the trained transformer's standardised "
           "representations at the scored positions of probe sequences"),
    Metric("{layout}_manifold_value_standardised_share", "share",
           "Variance share of PC1 of the trained transformer's standardised representations at the "
           "value positions of the layout's probe sequences", "seeds", values={"layout": _LAYOUTS}),
    Metric("{task}_manifold_{protocol}_entropy_corr", "correlation",
           "Absolute correlation of that axis with the Bayes entropy (Spearman; Pearson for the best of "
           "PC1-5), trained transformer, by task and protocol",
           values={"task": _TASKS, "protocol": _PROTOCOLS}),
    Metric("{task}_manifold_{protocol}_share_strongest_null", "share",
           "The largest variance share of the protocol's axis among its nulls (the transformer at "
           "initialisation; for bijections also the MLP)", values={"task": _TASKS, "protocol": _PROTOCOLS}),
    Metric("{task}_manifold_{protocol}_position_alone", "correlation",
           "The protocol's correlation with the Bayes entropy for a coordinate that knows only the "
           "position (the entropy averaged over sequences there)",
           values={"task": _TASKS, "protocol": _PROTOCOLS}),
    Metric("{task}_manifold_{protocol}_entropy_corr_strongest_null", "correlation",
           "The largest of the nulls' axis-entropy correlations and the position-alone correlation, "
           "by task and protocol", values={"task": _TASKS, "protocol": _PROTOCOLS}),
    Metric("{task}_manifold_{protocol}_entropy_corr_beyond_position", "correlation",
           "Absolute correlation of the trained transformer's axis with the Bayes entropy after removing "
           "each position's mean (0 where undefined)", values={"task": _TASKS, "protocol": _PROTOCOLS}),
    Metric("{task}_manifold_{protocol}_entropy_corr_random_init", "correlation",
           "The protocol's axis-entropy correlation for the same transformer at its initialisation",
           values={"task": _TASKS, "protocol": _PROTOCOLS}),
    Metric("{layout}_manifold_{protocol}_entropy_corr_mlp", "correlation",
           "The protocol's axis-entropy correlation for the capacity-matched MLP, which cannot see the "
           "context", values={"layout": _LAYOUTS, "protocol": _PROTOCOLS}),
    Metric("{layout}_manifold_value_standardised_share_{end}", "share",
           "Low or high end (as named) of the 95 % t interval of the trained transformer's PC1 share at "
           "standardised value positions over 8 disjoint parts of the probe",
           "seeds", values={"layout": _LAYOUTS, "end": ("low", "high")}),
    Metric("bayes_predictive_pc1_share", "share",
           "Separate layout: variance share of PC1 of the Bayes predictive vectors at the key positions "
           "of the probe sequences"),
    # (f) an entropy axis beyond the position
    Metric("{run}_manifold_best_pc_beyond_position", "correlation",
           "Absolute within-position correlation with the Bayes entropy of the trained transformer's best "
           "of PC1-5 before the final norm (HMM, or bijection keys drawn with replacement)",
           values={"run": _BEYOND}),
    Metric("{run}_manifold_best_pc_beyond_position_{null}", "correlation",
           "A null of that within-position correlation, as named: its 99th percentile over 200 "
           "within-position entropy shuffles, the transformer at initialisation, or the larger",
           values={"run": _BEYOND, "null": ("null_q99", "random_init", "strongest_null")}),
    Metric("{run}_manifold_best_pc_beyond_position_component", "1",
           "Which principal component (1 for PC1) the trained transformer's best of PC1-5 is, in the "
           "protocol beyond position", values={"run": _BEYOND}),
    Metric("{run}_manifold_best_pc_beyond_position_variance_share", "share",
           "Variance share of the component the protocol beyond position chose, trained transformer",
           values={"run": _BEYOND}),
    Metric("manifold_n_permutations", "count",
           "Within-position shuffles of the entropies that give the protocol beyond position its null"),
    Metric("replacement_bijection_entropy_mae_per_sample_bits", "bits",
           "Bijections with keys drawn with replacement: per-sample entropy MAE of the trained transformer "
           "against Bayes, on held-out sequences"),
    Metric("replacement_bijection_average_curve_predictor_mae_bits", "bits",
           "Bijections with keys drawn with replacement: per-sample entropy MAE of the predictor blind to "
           "the sequence that gives each position its average Bayes entropy"),
    Metric("replacement_bijection_loss_fall_last_tenth", "ratio",
           "Bijections with keys drawn with replacement: relative fall of the training loss, last tenth "
           "of training against the tenth before it"),
    # (g) frame and precision over constant-rate training (separate layout, every seed)
    Metric("frame_steps", "setting", "Training steps of every constant-rate run"),
    Metric("frame_training_sequences", "sequences",
           "Sequences each constant-rate run trained on (steps times batch size, each one fresh)"),
    Metric("frame_n_checkpoints", "count",
           "Checkpoints measured on each constant-rate run (geometric early, even over the second half)"),
    Metric("frame_routing_value_gradient_ratio_fall", "ratio",
           "Constant-rate runs: the routing-over-value gradient norm ratio over the end window against "
           "its peak, mean of layers, on a second probe batch (1: no fall)", "spread"),
    Metric("frame_routing_value_gradient_ratio_fall_high", "ratio",
           "Constant-rate runs: upper end of the 95 % t interval, over probe parts, of the gradient ratio "
           "at the end against its peak", "spread"),
    Metric("frame_routing_value_gradient_fall_beyond_jitter", "ratio",
           "Constant-rate runs: the end window's largest gradient ratio over its peak before the end, the "
           "largest over layers (below 1: a fall beyond the end's jitter)", "spread"),
    Metric("frame_routing_value_gradient_fall_beyond_jitter_high", "ratio",
           "Constant-rate runs: upper end of the 95 % t interval, over probe parts, of the end window's "
           "largest routing-over-value gradient ratio over its peak, largest over layers (below 1: a fall "
           "beyond the end's jitter)", "spread"),
    Metric("frame_mae_gain_after_attention_settle", "ratio",
           "Constant-rate runs: entropy MAE when the attention settled over the end window's largest, "
           "on held-out parts (above 1: precision gained afterwards beyond the end's jitter)",
           "spread"),
    Metric("frame_mae_gain_after_attention_settle_low", "ratio",
           "Constant-rate runs: lower end of the 95 % t interval, over held-out parts, of the entropy MAE "
           "when the attention settled over the end window's largest (above 1: precision gained "
           "afterwards beyond the end's jitter)", "spread"),
    Metric("frame_attention_settle_step", "steps",
           "Constant-rate runs: step from which the attention of the heads that matter stays settled "
           "near its end state", "spread"),
    Metric("frame_precision_settle_step", "steps",
           "Constant-rate runs: step from which the entropy MAE stays settled near its end value",
           "spread"),
    Metric("frame_bijection_entropy_mae_keys_bits", "bits",
           "Constant-rate runs (separate layout): the last checkpoint's mean-curve entropy MAE against "
           "Bayes at the key positions of held-out bijections", "spread"),
    Metric("frame_bijection_loss_fall_last_tenth", "ratio",
           "Constant-rate runs: relative fall of the training loss, last tenth of training against the "
           "tenth before it", "spread"),
    Metric("frame_bijection_solve_step", "steps",
           "Constant-rate runs: first checkpoint from which the run stays solved, its entropy MAE at "
           "the key positions of held-out bijections at most 0.05 bits (its last checkpoint where it "
           "is not solved there)", "spread"),
    Metric("frame_attention_first_share", "share",
           "Share of the constant-rate seeds on which the attention settles strictly before the precision"),
    Metric("{measure}_settle_step", "steps",
           "The first constant-rate run: step from which the named measure (key frame, attention, entropy "
           "direction, or entropy MAE) stays settled near its end state",
           values={"measure": ("key_frame", "attention", "entropy_direction", "precision")}),
    Metric("key_subspace_similarity_random", "1",
           "Chance level of the key-frame similarity (mean squared cosine of principal angles) between "
           "random 3-dimensional subspaces of a head's key space"),
    # (h) the judged numbers on every seed
    Metric("{layout}_bijection_loss_fall_last_tenth_seeds_max", "ratio",
           "Relative fall of the bijection transformer's training loss over the last tenth of "
           "training (a's settings), the largest over seeds, by layout", values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_solve_step_seeds_max", "steps",
           "First checkpoint from which the bijection transformer (a's settings) stays solved at the "
           "key positions of held-out bijections (at most 0.05 bits), the latest over seeds, by layout",
           values={"layout": _LAYOUTS}),
    Metric("{layout}_bijection_entropy_mae_keys_bits_seeds_max", "bits",
           "Mean-curve entropy MAE of the bijection transformer (a's settings) at the key positions "
           "of held-out bijections, the largest over seeds, by layout", values={"layout": _LAYOUTS}),
    Metric("hmm_entropy_mae_per_sample_bits_seeds_max", "bits",
           "HMM filtering at the training length: per-sample entropy MAE of the trained transformer "
           "against Bayes, the largest over seeds"),
    Metric("hmm_error_step_over_within_train_max_bits", "bits",
           "HMM filtering: the error step at the training length minus the largest step inside the "
           "training length (above 0: a jump)", "spread"),
    Metric("hmm_beyond_position_over_strongest_null", "correlation",
           "HMM filtering: the trained transformer's within-position entropy correlation of its best of "
           "PC1-5 minus the stronger of its nulls", "spread"),
    Metric("hmm_loss_fall_last_tenth_seeds_max", "ratio",
           "HMM filtering: relative fall of the transformer's training loss over the last tenth of "
           "training, the largest over seeds"),
    Metric("hmm_beyond_position_component_worst_seed", "1",
           "HMM filtering: the principal component carrying the within-position entropy order on the "
           "weakest seed (the latest component)"),
    Metric("hmm_beyond_position_variance_share_worst_seed", "share",
           "HMM filtering: variance share of the component carrying the within-position entropy order on "
           "the weakest seed"),
)
"""Every metric chapter 4's experiment records, in the order its parts record them."""
