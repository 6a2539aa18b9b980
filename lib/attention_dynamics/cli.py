"""The command line: run a chapter's experiment outside the book.

::

    python -m attention_dynamics run CHAPTER [--profile quick|decide|paper] [--seeds N]
                                             [--device auto|cpu|cuda] [--seed S] [--out DIR]
                                             [--settings FILE.json]
    python -m attention_dynamics list
    python -m attention_dynamics bits
    python -m attention_dynamics metric NAME

``run`` executes the chapter module's ``run`` (:mod:`attention_dynamics.chapters`), the very
experiment its notebook executes, and writes the same results file, ``DIR/CHAPTER.json``, with
its provenance (commit, library files and their hashes, machine). A bar per training run shows
progress on standard error. The file is written only when the whole run has succeeded, and
atomically, so an interrupted run leaves any earlier complete file in place.

``metric`` says what a recorded metric is, in the words and unit its chapter declares
(:mod:`attention_dynamics.book.catalogue`; exit status 1 when no chapter declares it).

``bits`` trains the three reference models of :mod:`attention_dynamics.bitwise` and says whether
this machine computes the book's bits (exit status 1 when it does not).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from attention_dynamics.chapters import CHAPTERS
from attention_dynamics.runtime import DEVICES, PROFILES, resolve_device


def _int_at_least(minimum: int, words: str):
    """An argparse type: an integer of at least ``minimum``, described as ``words``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {words}; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {words}; got {value}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m attention_dynamics``."""
    parser = argparse.ArgumentParser(
        prog="python -m attention_dynamics",
        description="Run a chapter's experiment of the book and write its results file.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="list the chapters, profiles and devices")
    commands.add_parser("bits", help="check that this machine computes the book's bits "
                                     "(three small training runs, about half a minute)")
    metric = commands.add_parser("metric", help="say what a recorded metric is")
    metric.add_argument("name", metavar="NAME", help="the metric's name, as a results file has it")
    run = commands.add_parser("run", help="run one chapter's experiment")
    run.add_argument("chapter", metavar="CHAPTER", choices=CHAPTERS,
                     help=f"the chapter, one of {', '.join(CHAPTERS)}")
    run.add_argument("--profile", choices=PROFILES, default="quick",
                     help="the settings: quick (a CPU, minutes), decide (longer, more seeds), "
                          "paper (the papers' sizes, for a GPU); default quick")
    run.add_argument("--seeds", type=_int_at_least(1, "an integer of at least 1"), default=None, metavar="N",
                     help="the number of seeds of the chapter's trained models (default: the "
                          "profile's)")
    run.add_argument("--seed", type=_int_at_least(0, "a non-negative integer"), default=0, metavar="S",
                     help="the base seed, as the notebook's seed parameter; default 0")
    run.add_argument("--device", choices=DEVICES, default="auto",
                     help="auto picks CUDA where available; default auto")
    run.add_argument("--out", type=Path, default=Path("results"), metavar="DIR",
                     help="the folder of the results file DIR/CHAPTER.json; default ./results")
    run.add_argument("--settings", type=Path, default=None, metavar="FILE",
                     help="a JSON file of the chapter's settings to run with instead of the "
                          "profile's (recorded in the results file)")
    run.add_argument("--quiet", action="store_true", help="show no progress bars")
    return parser


def chapter_module(chapter: str):
    """The module ``attention_dynamics.chapters.<chapter>``; a ValueError names the allowed
    chapters."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    return importlib.import_module(f"attention_dynamics.chapters.{chapter}")


def run_chapter(chapter: str, profile: str = "quick", seeds: int | None = None, seed: int = 0,
                device: str = "auto", out: str | Path = "results", quiet: bool = True,
                settings_file: str | Path | None = None) -> Path:
    """Run ``chapter``'s experiment and write ``out/<chapter>.json``; return its path.

    Args:
        chapter: one of :data:`~attention_dynamics.chapters.CHAPTERS`.
        profile: one of :data:`~attention_dynamics.runtime.PROFILES`.
        seeds: the number of seeds (``None``: the profile's); a chapter without seeds
            refuses a number.
        seed: the base seed (the notebook's ``seed`` parameter).
        device: one of ``"auto"``, ``"cpu"`` or ``"cuda"``.
        out: the folder of the results file (created if missing).
        quiet: ``False`` shows a bar per training run on standard error.
        settings_file: a JSON file of settings to run with instead of the profile's
            (:func:`~attention_dynamics.book.notebook.chapter_settings`).
    """
    from attention_dynamics.book.notebook import chapter_settings, setup_notebook
    from attention_dynamics.chapters.progress import show_progress

    module = chapter_module(chapter)
    resolved, _, results = setup_notebook(chapter, profile, device, seed)
    chosen = chapter_settings(module, profile, results, settings_file, seeds)
    results.directory = Path(out)
    show_progress(None if quiet else sys.stderr)
    try:
        module.run(results, chosen, resolved, seed)
    finally:
        show_progress(None)
    return results.save()


def report_bits() -> int:
    """Print this machine's reference digests beside the book's, and its CPU dispatch; 0 when
    every digest matches, 1 otherwise."""
    from attention_dynamics.bitwise import REFERENCE_DIGESTS, machine_digests
    from attention_dynamics.book.provenance import cpu_features, cpu_model
    from attention_dynamics.dispatch import dispatch_state

    state = dispatch_state()
    print(f"CPU: {cpu_model()} ({cpu_features()}); dispatch: "
          + ", ".join(f"{name}={value}" for name, value in state.items()))
    found = machine_digests()
    for arch, digest in found.items():
        verdict = "same bits" if digest == REFERENCE_DIGESTS[arch] else "DIFFERENT bits"
        print(f"{arch:12s} {digest[:16]}  book {REFERENCE_DIGESTS[arch][:16]}  {verdict}")
    return 0 if found == REFERENCE_DIGESTS else 1


def report_metric(name: str) -> int:
    """Print what ``name`` is in every chapter that declares it; 1 when none does."""
    from attention_dynamics.book.catalogue import find

    found = find(name)
    for chapter, words in found.items():
        print(f"{chapter}: {words}")
    if not found:
        print(f"no chapter declares a metric {name!r}", file=sys.stderr)
    return 0 if found else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the process's arguments), run the command; 0 on success."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        print("chapters:", ", ".join(CHAPTERS))
        print("profiles:", ", ".join(PROFILES))
        print("devices: ", ", ".join(DEVICES))
        return 0
    if args.command == "bits":
        return report_bits()
    if args.command == "metric":
        return report_metric(args.name)
    try:  # the settings and device checked before anything runs
        if args.settings is not None and args.seeds is not None:
            raise ValueError("--seeds cannot be given with --settings (the file sets them)")
        if args.settings is not None and not args.settings.is_file():
            raise ValueError(f"--settings must name a JSON file; {args.settings} does not exist")
        chapter_module(args.chapter).settings(args.profile, n_seeds=args.seeds)
        resolve_device(args.device)
    except (ValueError, RuntimeError) as error:
        parser.error(str(error))
    path = run_chapter(args.chapter, args.profile, args.seeds, args.seed, args.device,
                       args.out, quiet=args.quiet, settings_file=args.settings)
    print(f"wrote {path}")
    return 0
