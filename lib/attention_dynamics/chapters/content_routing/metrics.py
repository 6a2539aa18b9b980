"""Chapter 5's metrics: four architectures matched in parameters on bijection elimination, HMM
filtering and associative recall, scored against the exact answers, then looked inside."""

from attention_dynamics.book.catalogue import Metric

_ARCHS = ("transformer", "mamba", "lstm", "mlp")
_TASKS = ("bijection", "hmm", "recall")
_ENTROPY_TASKS = ("bijection", "hmm")
_MIXERS = ("transformer", "mamba")  # the recall models with mixing weights over positions
_PROBED = ("transformer", "mamba", "lstm")  # the recall models whose checkpoints were probed
_VARIANTS = ("standard", "authors")  # the deeper Mamba on HMM filtering

METRICS: tuple[Metric, ...] = (
    # the architectures matched in parameters, and the sizes the page quotes
    Metric("n_parameters_{arch}_{task}", "count",
           "trainable parameters of each architecture on each task, matched to the transformer's",
           values={"arch": _ARCHS, "task": _TASKS}),
    Metric("parameter_mismatch_max", "ratio",
           "largest relative gap, over architectures and tasks, between a matched model's parameter "
           "count and its task's transformer's"),
    Metric("n_seeds", "setting", "number of seeds every architecture trained on every task (count)"),
    Metric("steps_{task}", "setting", "training steps of every architecture on each task (steps)",
           values={"task": _TASKS}),
    Metric("training_sequences_{task}", "sequences",
           "training sequences seen on each task by each model (steps times batch size)",
           values={"task": _TASKS}),
    Metric("bijection_n_symbols", "setting", "symbols of the bijection task (count)"),
    Metric("hmm_n_states", "setting", "hidden states of the HMM filtering task (count)"),
    Metric("hmm_length", "setting", "observations per sequence of the HMM filtering task (count)"),
    Metric("hmm_sequence_length", "count",
           "tokens per sequence of the HMM filtering task, prompt and observations together"),
    Metric("recall_n_pairs", "setting", "key-value pairs stored per associative recall sequence (count)"),
    Metric("recall_n_values", "setting", "distinct values of the associative recall task (count)"),
    Metric("recall_n_queries", "setting", "queries per associative recall sequence (count)"),
    Metric("mamba_layers", "setting", "layers of the table's Mamba (count)"),
    Metric("mamba_d_state", "setting", "state size of the table's Mamba, its addresses per channel (count)"),
    # training
    Metric("training_seconds", "seconds",
           "wall-clock time of training every architecture on every task and seed (machine-dependent)"),
    Metric("training_seconds_{arch}", "seconds",
           "wall-clock time of training each architecture on every task and seed (machine-dependent)",
           values={"arch": _ARCHS}),
    # the table and its nulls
    Metric("mae_bits_{arch}_{task}", "bits",
           "held-out gap between the model's and the Bayes predictive entropy curves averaged over "
           "sequences, mean absolute over scored positions",
           "spread", {"arch": _ARCHS, "task": _ENTROPY_TASKS}),
    Metric("mae_per_sample_bits_{arch}_{task}", "bits",
           "held-out mean absolute gap between the model's and the Bayes predictive entropy, "
           "sequence by sequence at every scored position",
           "spread", {"arch": _ARCHS, "task": _ENTROPY_TASKS}),
    Metric("recall_accuracy_{arch}", "accuracy",
           "held-out associative recall accuracy of each architecture at the end of training",
           "spread", {"arch": _ARCHS}),
    Metric("hmm_uniform_predictor_mae_bits", "bits",
           "held-out per-sample entropy gap to Bayes of the uniform predictor over hidden states "
           "on HMM filtering (the plateau of a model that learned nothing)"),
    Metric("hmm_average_curve_predictor_mae_bits", "bits",
           "held-out per-sample entropy gap to Bayes of the observation-blind predictor that "
           "outputs the Bayes entropy averaged over sequences, on HMM filtering"),
    # the transformer's solve steps
    Metric("transformer_solved_{task}", "flag",
           "whether the transformer's first seed reaches and stays at the report's bar on each "
           "task by the end of training",
           values={"task": _TASKS}),
    Metric("transformer_solve_step_{task}", "steps",
           "first checkpoint from which the transformer's first seed stays at the report's bar "
           "on each task (all its steps where it never does)",
           values={"task": _TASKS}),
    # whether training had settled, and the floors and chance levels
    Metric("loss_fall_last_tenth_{arch}_{task}", "ratio",
           "relative fall of the training loss over the last tenth of training against the tenth "
           "before it, on the least settled seed",
           values={"arch": _ARCHS, "task": _TASKS}),
    Metric("bijection_marginal_gap_bits", "bits",
           "mean entropy gap to Bayes of a predictor that ignores the context on the bijection task"),
    Metric("recall_chance_accuracy", "accuracy",
           "associative recall accuracy of guessing without the context (one over the values)"),
    Metric("recall_unbound_accuracy", "accuracy",
           "associative recall accuracy knowing the stored values but not their keys (one over the "
           "pairs)"),
    Metric("recall_solved_seeds_transformer", "count",
           "transformer seeds whose held-out associative recall accuracy reaches the solved bar"),
    Metric("recall_mamba_solved_seeds", "count",
           "Mamba seeds whose held-out associative recall accuracy reaches the solved bar"),
    # the capacity question
    Metric("capacity_d_state", "setting",
           "state size of the smaller-state Mamba on associative recall, fewer addresses than pairs "
           "(count)"),
    Metric("capacity_pairs_per_address", "ratio",
           "stored pairs per state address of the smaller-state Mamba on associative recall"),
    Metric("recall_accuracy_mamba_capacity", "accuracy",
           "held-out associative recall accuracy of the smaller-state Mamba, matched in parameters",
           "spread"),
    Metric("recall_mamba_capacity_solved_seeds", "count",
           "smaller-state Mamba seeds whose associative recall accuracy reaches the solved bar"),
    # the deeper Mambas on HMM filtering
    Metric("n_parameters_mamba_{variant}_deep_hmm", "count",
           "trainable parameters of the deeper Mamba of each variant on HMM filtering, matched to "
           "the transformer's",
           values={"variant": _VARIANTS}),
    Metric("mae_per_sample_bits_mamba_{variant}_deep_hmm", "bits",
           "held-out mean absolute gap between the deeper Mamba's and the Bayes predictive entropy "
           "on HMM filtering, sequence by sequence, for each variant",
           "spread", {"variant": _VARIANTS}),
    Metric("loss_fall_last_tenth_mamba_{variant}_deep_hmm", "ratio",
           "relative fall of the deeper Mamba's training loss on HMM filtering over the last tenth "
           "of training against the tenth before it, least settled seed, for each variant",
           values={"variant": _VARIANTS}),
    Metric("deep_mamba_layers", "setting", "layers of the deeper Mamba on HMM filtering (count)"),
    Metric("hmm_seeds_off_plateau_{model}", "count",
           "seeds of each model whose per-sample entropy gap on HMM filtering lies more than a set "
           "margin below the uniform predictor's",
           values={"model": (*_ARCHS, "mamba_standard_deep", "mamba_authors_deep")}),
    Metric("deep_mamba_seeds", "setting", "seeds the deeper Mamba trained on, on HMM filtering (count)"),
    Metric("budget_share_{arch_task}", "share",
           "training sequences of this run as a share of those the authors trained the same "
           "architecture on the same task with",
           values={"arch_task": ("mamba_hmm", "lstm_bijection")}),
    # who reads the HMM's matrices
    Metric("hmm_entropy_correlation_{arch}", "correlation",
           "Pearson correlation of the model's predictive entropy with the Bayes entropy over "
           "held-out HMM sequences and positions, first seed (0 for a constant entropy)",
           values={"arch": _ARCHS}),
    Metric("hmm_model_entropy_sd_{arch}", "bits",
           "standard deviation across held-out HMM sequences of the model's predictive entropy at "
           "a position, first seed",
           values={"arch": _ARCHS}),
    Metric("hmm_bayes_entropy_sd", "bits",
           "standard deviation across held-out HMM sequences of the Bayes entropy at a position"),
    # the value manifolds
    Metric("pc1_share_{arch}_{task}", "share",
           "share of the variance of the final representations at the scored positions along their "
           "first principal component, first seed, probe batch",
           values={"arch": _ARCHS, "task": _ENTROPY_TASKS}),
    Metric("pc1_entropy_spearman_{arch}_{task}", "correlation",
           "absolute Spearman correlation of the representations' first principal component with "
           "the Bayes entropy at the scored positions, first seed",
           values={"arch": _ARCHS, "task": _ENTROPY_TASKS}),
    Metric("pc12_entropy_r2_{arch}_{task}", "r2",
           "coefficient of determination of the Bayes entropy fitted on the representations' first "
           "two principal components, first seed",
           values={"arch": _ARCHS, "task": _ENTROPY_TASKS}),
    # where each model reads on associative recall
    Metric("recall_offset_peak_{arch}", "count",
           "position, relative to the queried key, that gets the largest share of a query's mixing "
           "weights at the end of training (shown seed)",
           values={"arch": _MIXERS}),
    Metric("recall_shown_seed_{arch}", "1",
           "training seed (its number) shown for each model: the first that solves associative "
           "recall on the probe batch, else the first",
           values={"arch": _MIXERS}),
    Metric("recall_pair_share_{arch}_init", "share",
           "share of a query's mixing weights on the queried pair at initialisation, mean over "
           "queries, probe sequences and seeds",
           values={"arch": _MIXERS}),
    Metric("recall_pair_share_{arch}_final", "share",
           "share of a query's mixing weights on the queried pair at the end of training, mean "
           "over queries, probe sequences and seeds",
           values={"arch": _MIXERS}),
    Metric("recall_attribution_share_{arch}_init", "share",
           "share of a correct answer's input attribution on the queried pair among all stored "
           "pairs at initialisation, mean over queries, probe sequences and seeds",
           values={"arch": _PROBED}),
    Metric("recall_attribution_share_{arch}_final", "share",
           "share of a correct answer's input attribution on the queried pair among all stored "
           "pairs at the end of training, mean over queries, probe sequences and seeds",
           values={"arch": _PROBED}),
    Metric("recall_pair_share_mamba_final_shown", "share",
           "share of a query's mixing weights on the queried pair at the end of training, Mamba's "
           "shown seed alone"),
    # the gradient at the Mamba's implicit attention against the softmax's
    Metric("scan_gradient_max_rel_error", "ratio",
           "largest relative error of the closed-form selective-scan gradients against automatic "
           "differentiation, on the trained recall Mamba in double precision"),
    Metric("transformer_score_gradient_net_fraction", "share",
           "net over gross of each query row of the transformer's attention-score gradient on "
           "recall (0 pure re-routing, 1 pure rescaling), largest over layers"),
    Metric("mamba_attention_gradient_net_fraction", "share",
           "net over gross of each query row of the recall Mamba's gradient with respect to its "
           "implicit attention, per channel, mean over layers"),
    Metric("mamba_log_delta_forget_share", "share",
           "share of the recall Mamba's step-size gradient magnitude that comes from decaying "
           "earlier writes rather than scaling the current write"),
    Metric("mamba_log_weight_gradient_net_fraction", "share",
           "net over gross of each query row of the recall Mamba's implicit attention times its "
           "gradient, per channel, mean over layers"),
    Metric("mamba_log_weight_gradient_pooled_net_fraction", "share",
           "net over gross of each query row of the recall Mamba's implicit attention times its "
           "gradient, channels pooled, mean over layers"),
    Metric("mamba_{variant}_hmm_log_weight_gradient_net_fraction", "share",
           "net over gross of each row of the deeper HMM Mamba's implicit attention times its "
           "gradient, per channel, mean over layers, for each variant",
           values={"variant": _VARIANTS}),
    Metric("mamba_{variant}_hmm_pooled_layers_measured", "count",
           "layers of the deeper HMM Mamba with a reader no clamp touched, where the pooled net "
           "fraction could be measured, for each variant",
           values={"variant": _VARIANTS}),
    Metric("mamba_{variant}_hmm_log_weight_gradient_pooled_net_fraction", "share",
           "net over gross of each unclamped reader's row of the deeper HMM Mamba's implicit "
           "attention times its gradient, channels pooled, mean over measured layers",
           values={"variant": _VARIANTS}),
    Metric("mamba_authors_hmm_clamped_reader_share", "share",
           "share of the authors' deeper HMM Mamba's readers whose scan a clamp touched in some "
           "channel"),
    Metric("mamba_attention_negative_fraction", "share",
           "share of the non-zero entries of the recall Mamba's implicit attention at query rows "
           "that are negative"),
    Metric("mamba_attention_row_sum_mean", "1",
           "mean sum of a query row of the recall Mamba's implicit attention, over channels, queries "
           "and sequences (a softmax row sums to one)"),
)
