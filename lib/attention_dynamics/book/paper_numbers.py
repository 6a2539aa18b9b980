"""The numbers the papers report, typed once, with where they come from.

Paper I is *The Bayesian Geometry of Transformer Attention* (arXiv 2512.22471; its numbers vary
between versions v1-v3, and the version is given where it matters); Paper II is *Gradient
Dynamics of Attention: How Cross-Entropy Sculpts Bayesian Manifolds* (arXiv 2512.22473).
Notebooks, the reproduction report and the tests read them from here, so a number quoted in
two places cannot drift apart.

Each entry is a :class:`PaperNumber`: a value that a rule can compare against (``None`` for a
qualitative claim), the text the paper gives, and the source.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperNumber:
    """One reported number.

    Attributes:
        value: the number as a float, in the units of the book's metric (bits, a fraction of
            1, steps, a ratio); a representative value where the paper gives a range; ``None``
            where the paper reports nothing or only a qualitative statement.
        text: what the paper states, as the book quotes it (e.g. ``"0.003 to 0.007"``).
        source: paper, version and section or figure.
        kind: for an entropy MAE, which one: ``"mean curve"`` (average the entropies over
            sequences first) or ``"per sample"``; ``None`` for other numbers.
        precision: the half-width of the values that the text admits, in the value's units:
            half the last stated digit of a rounded number (``0.05`` for "2.3×"), half a
            stated range (``0.03`` for "84-90 %"); ``None`` where no rule compares sizes.
    """

    value: float | None
    text: str
    source: str
    kind: str | None = None
    precision: float | None = None

    def __post_init__(self):
        if self.kind not in (None, *MAE_KINDS):
            raise ValueError(f"kind must be one of {MAE_KINDS} or None; got {self.kind!r}")
        if self.precision is not None and not (self.value is not None and self.precision > 0):
            raise ValueError(f"precision must be positive, on a number with a value; got "
                             f"{self.precision!r} for {self.text!r}")

    @property
    def relative_precision(self) -> float:
        """The precision as a share of the value, the tolerance of a rule that asks for the
        paper's number as stated."""
        if self.precision is None:
            raise ValueError(f"{self.text!r} states no precision")
        return self.precision / abs(self.value)


MAE_KINDS = ("mean curve", "per sample")
"""The two entropy MAEs (see :mod:`attention_dynamics.measures.metrics`)."""


STICKY_CHAIN = {
    "em_steps_to_sgd_final": PaperNumber(430, "about 430 of 1000", "Paper II, sticky chain",
                                         precision=5),
    "em_speedup": PaperNumber(2.3, "2.3×", "Paper II, sticky chain", precision=0.05),
}
"""Paper II's one quantitative experiment (EM-like against SGD on the sticky chain)."""

ENTROPY_MAE_BITS = {
    ("transformer", "bijection"): PaperNumber(5e-3, "0.003 to 0.007", "Paper I, bijection (V = 20)",
                                              "mean curve", precision=2.5e-3),
    ("transformer", "hmm"): PaperNumber(0.049, "7.5 × 10⁻⁵ (v1), 0.049 (v3)", "Paper I, HMM v1 and v3",
                                        "mean curve"),
    ("mamba", "bijection"): PaperNumber(0.010, "0.010", "Paper I v3, architecture comparison",
                                        "mean curve", precision=5e-4),
    ("mamba", "hmm"): PaperNumber(0.024, "0.024", "Paper I v3, architecture comparison; the "
                                  "authors' train_mamba.py, best validation checkpoint",
                                  "per sample"),
    ("lstm", "bijection"): PaperNumber(0.009, "0.009", "Paper I v3, architecture comparison",
                                       "mean curve", precision=5e-4),
    ("lstm", "hmm"): PaperNumber(0.41, "0.41", "Paper I v3, architecture comparison; the authors' "
                                 "training script, best validation checkpoint", "per sample"),
    ("mlp", "bijection"): PaperNumber(1.85, "about 1.85", "Paper I, MLP control (V = 20)",
                                      "mean curve"),
    ("mlp", "hmm"): PaperNumber(None, "not reported", "Paper I"),
}
"""Entropy MAE (bits) by (architecture, task), as Paper I reports it."""

RECALL_ACCURACY = {
    "transformer": PaperNumber(1.0, "100%", "Paper I v3, associative recall"),
    "mamba": PaperNumber(0.978, "97.8%", "Paper I v3, associative recall"),
    "lstm": PaperNumber(0.005, "0.5%", "Paper I v3, associative recall"),
    "mlp": PaperNumber(None, "not reported", "Paper I v3"),
}
"""Associative-recall accuracy (fraction of queries) by architecture."""

VALUE_MANIFOLD_PC1_SHARE = PaperNumber(0.87, "84-90 %", "Paper I, value manifold",
                                       precision=0.03)
"""Share of variance on PC1 of the final-layer representations (the middle of the range)."""

AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY = {
    "trained": PaperNumber(
        0.465, "0.45, 0.43, 0.49, 0.47, 0.48, 0.47 per head",
        "authors' released sepvocab V = 20 checkpoint, experiments/jlens/results/phase1_summary.json"),
    "random init": PaperNumber(
        0.1467, "0.13, 0.15, 0.14, 0.16, 0.15, 0.15 per head",
        "authors' same architecture at random init, experiments/jlens/results/"
        "phase1_randinit_summary.json"),
}
"""Layer-0 key orthogonality (mean absolute cosine after the first norm and W_K, per-head mean) of the
authors' own checkpoint, measured by their ``identify_frame_head``: a peer row, not a paper
claim (the values are the means of the per-head numbers in ``text``)."""

AUTHORS_TRAINING_SEQUENCES = {
    ("transformer", "bijection"): PaperNumber(
        12_800_000, "100,000 steps of 128", "authors' configs/bijection_v20.yaml"),
    ("mamba", "bijection"): PaperNumber(
        12_800_000, "50,000 steps of 256", "authors' experiments/paper1_bijection/train_mamba.py"),
    ("lstm", "bijection"): PaperNumber(
        12_800_000, "50,000 steps of 256", "authors' experiments/paper1_bijection/train_lstm.py"),
    ("transformer", "hmm"): PaperNumber(
        500_000, "50 epochs of 10,000 sequences", "authors' experiments/paper1_hmm/train.py"),
    ("mamba", "hmm"): PaperNumber(
        1_500_000, "30 epochs of 50,000 sequences", "authors' experiments/paper1_hmm/train_mamba.py"),
    ("lstm", "hmm"): PaperNumber(
        1_500_000, "30 epochs of 50,000 sequences", "authors' experiments/paper1_hmm/train_lstm.py"),
}
"""Training sequences (steps times batch size, repeats counted) of the authors' own scripts'
defaults in their repository (``vishalmisra/bayesian-wind-tunnel``), by (architecture, task);
the source names the file. They are the authors' settings, not numbers of the papers. Their
associative-recall models have no released training script."""
