"""The command line: run a chapter's experiment outside the book.

::

    python -m attention_dynamics run CHAPTER [--profile quick|decide|paper] [--seeds N]
                                             [--device auto|cpu|cuda] [--seed S] [--out DIR]
                                             [--settings FILE.json] [--seed-range A:B]
    python -m attention_dynamics merge CHAPTER --parts DIR [the run's options]
    python -m attention_dynamics plan CHAPTER --parts N [the run's options]
    python -m attention_dynamics submit CHAPTER --parts N [--partition P] [--account A]
                                         [--time LIMIT] [--wait] [the run's options]
    python -m attention_dynamics list
    python -m attention_dynamics bits
    python -m attention_dynamics metric NAME

``run`` executes the chapter module's ``run`` (:mod:`attention_dynamics.chapters`), the very
experiment its notebook executes, and writes the same results file, ``DIR/CHAPTER.json``, with
its provenance (commit, library files and their hashes, machine). A bar per training run shows
progress on standard error. The file is written only when the whole run has succeeded, and
atomically, so an interrupted run leaves any earlier complete file in place.

A chapter that runs in parts (:mod:`attention_dynamics.parts`; :data:`IN_PARTS`) splits its
trainings by seed: ``run --seed-range A:B`` trains those of seed indices ``A`` to ``B - 1`` and
writes them with their provenance to ``DIR/CHAPTER.part-A-B.pt`` and ``.json``; ``merge --parts
DIR`` checks that the parts in ``DIR`` hold every training once, made by this library at these
settings, and writes ``CHAPTER.json`` as a whole run would. ``plan --parts N`` prints the commands
of N parts and their merge (one line each, for a job array); ``submit --parts N`` submits them to
Slurm (:mod:`attention_dynamics.slurm`): the parts still missing as a job array, then the merge.

``metric`` says what a recorded metric is, in the words and unit its chapter declares
(:mod:`attention_dynamics.book.catalogue`; exit status 1 when no chapter declares it).

``bits`` trains the three reference models of :mod:`attention_dynamics.bitwise` and says whether
this machine computes the book's bits (exit status 1 when it does not).
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from attention_dynamics.chapters import CHAPTERS
from attention_dynamics.parts import PartsError, SeedRange
from attention_dynamics.runtime import DEVICES, PROFILES, resolve_device

IN_PARTS = ("content_routing",)
"""The chapters that run in parts (their modules declare ``units`` and ``unit_trainer``)."""


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


def _seed_range(text: str) -> SeedRange:
    """An argparse type: a :class:`~attention_dynamics.parts.SeedRange` written ``A:B``."""
    try:
        return SeedRange.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _add_run_options(command: argparse.ArgumentParser) -> None:
    """The options shared by ``run``, ``merge`` and ``plan``: what a chapter runs at."""
    command.add_argument("chapter", metavar="CHAPTER", choices=CHAPTERS,
                         help=f"the chapter, one of {', '.join(CHAPTERS)}")
    command.add_argument("--profile", choices=PROFILES, default="quick",
                         help="the settings: quick (a CPU, minutes), decide (longer, more "
                              "seeds), paper (the papers' sizes, for a GPU); default quick")
    command.add_argument("--seeds", type=_int_at_least(1, "an integer of at least 1"),
                         default=None, metavar="N",
                         help="the number of seeds of the chapter's trained models (default: the "
                              "profile's)")
    command.add_argument("--seed", type=_int_at_least(0, "a non-negative integer"), default=0,
                         metavar="S", help="the base seed, as the notebook's seed parameter; "
                                           "default 0")
    command.add_argument("--device", choices=DEVICES, default="auto",
                         help="auto picks CUDA where available; default auto")
    command.add_argument("--out", type=Path, default=Path("results"), metavar="DIR",
                         help="the folder of the results file DIR/CHAPTER.json (of a part: "
                              "its two files); default ./results")
    command.add_argument("--settings", type=Path, default=None, metavar="FILE",
                         help="a JSON file of the chapter's settings to run with instead of the "
                              "profile's (recorded in the results file)")
    command.add_argument("--quiet", action="store_true", help="show no progress bars")


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
    run = commands.add_parser("run", help="run one chapter's experiment (or one part of it)")
    _add_run_options(run)
    run.add_argument("--seed-range", type=_seed_range, default=None, metavar="A:B",
                     help="run only the trainings of seed indices A to B-1 and write them as a "
                          "part (DIR/CHAPTER.part-A-B.pt and .json) for a later merge; chapters "
                          f"that run in parts: {', '.join(IN_PARTS)}")
    merge = commands.add_parser("merge", help="merge a chapter's parts into its results file")
    _add_run_options(merge)
    merge.add_argument("--parts", type=Path, required=True, metavar="DIR",
                       help="the folder of the part files")
    plan = commands.add_parser("plan", help="print the commands of a run in parts and its merge")
    _add_run_options(plan)
    plan.add_argument("--parts", type=_int_at_least(1, "an integer of at least 1"),
                      required=True, metavar="N", help="the number of parts")
    plan.add_argument("--parts-dir", type=Path, default=Path("results/parts"), metavar="DIR",
                      help="where the parts go; default results/parts")
    submit = commands.add_parser("submit", help="submit a run in parts to Slurm: the parts as a "
                                                "job array, then their merge")
    _add_run_options(submit)
    submit.add_argument("--parts", type=_int_at_least(1, "an integer of at least 1"),
                        required=True, metavar="N", help="the number of parts (array tasks)")
    submit.add_argument("--parts-dir", type=Path, default=Path("results/parts"), metavar="DIR",
                        help="where the parts, the job scripts and their logs go; default "
                             "results/parts")
    submit.add_argument("--partition", default=None, help="sbatch's --partition")
    submit.add_argument("--account", default=None, help="sbatch's --account")
    submit.add_argument("--time", default=None, metavar="LIMIT",
                        help="sbatch's --time for every task, e.g. 02:00:00")
    submit.add_argument("--wait", action="store_true",
                        help="return once the merge has ended (exit status 1 if it failed)")
    return parser


def chapter_module(chapter: str):
    """The module ``attention_dynamics.chapters.<chapter>``; a ValueError names the allowed
    chapters."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    return importlib.import_module(f"attention_dynamics.chapters.{chapter}")


def run_chapter(chapter: str, profile: str = "quick", seeds: int | None = None, seed: int = 0,
                device: str = "auto", out: str | Path = "results", quiet: bool = True,
                settings_file: str | Path | None = None, seed_range: SeedRange | None = None,
                parts: str | Path | None = None) -> Path:
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
        seed_range: run only the trainings of these seed indices, as a part
            (:func:`~attention_dynamics.parts.run_part`); the path returned is the part's
            provenance file.
        parts: merge the parts in this folder (:func:`~attention_dynamics.parts.load_parts`)
            instead of training.
    """
    from attention_dynamics.book.notebook import chapter_settings, setup_notebook
    from attention_dynamics.chapters.progress import show_progress
    from attention_dynamics.parts import Units, load_parts, run_part

    if seed_range is not None or parts is not None:
        check_in_parts(chapter)
    if seed_range is not None and parts is not None:
        raise ValueError("a seed range runs one part and parts merge them: give one of the two")
    module = chapter_module(chapter)
    resolved, _, results = setup_notebook(chapter, profile, device, seed)
    chosen = chapter_settings(module, profile, results, settings_file, seeds)
    results.directory = Path(out)
    show_progress(None if quiet else sys.stderr)
    try:
        if seed_range is not None:
            return run_part(module, results, chosen, resolved, seed, seed_range)[0]
        if parts is None:
            module.run(results, chosen, resolved, seed)
        else:
            stored, results.parts = load_parts(parts, chapter, results.as_dict(),
                                               module.units(chosen))
            module.run(results, chosen, resolved, seed, units=Units(stored))
    finally:
        show_progress(None)
    return results.save()


def check_in_parts(chapter: str) -> None:
    """A ValueError unless ``chapter`` runs in parts (:data:`IN_PARTS`)."""
    if chapter not in IN_PARTS:
        raise ValueError(f"{chapter} does not run in parts; the chapters that do: "
                         f"{', '.join(IN_PARTS)}")


def plan_parts(chapter: str, n_parts: int, argv: Sequence[str], parts_dir: Path, out: Path,
               chosen: dict, python: str = "python") -> tuple[dict[SeedRange, str], str]:
    """The command lines of ``chapter``'s run in ``n_parts`` parts (seed ranges as equal as can
    be), each writing to ``parts_dir``, by seed range, and of their merge into ``out``; each
    runs ``python`` and repeats the run's options ``argv``."""
    from attention_dynamics.parts import seed_indices, split_range

    module = chapter_module(chapter)
    ranges = split_range(seed_indices(module.units(chosen)), n_parts)
    base = " ".join([shlex.quote(python), "-m attention_dynamics {}", chapter,
                     *map(shlex.quote, argv)])
    parts = {r: base.format("run") + f" --seed-range {r} --out {shlex.quote(str(parts_dir))}"
             for r in ranges}
    return parts, base.format("merge") + (f" --parts {shlex.quote(str(parts_dir))} "
                                          f"--out {shlex.quote(str(out))}")


def merge_provenance(chapter: str, profile: str, seeds: int | None, seed: int, device: str,
                     settings_file: str | Path | None) -> dict:
    """The provenance a merge of ``chapter``'s parts at these settings would record (as a
    results file's, without metrics), against which parts are checked before they run."""
    from attention_dynamics.book.notebook import chapter_settings
    from attention_dynamics.book.results import Results

    results = Results(chapter, profile, resolve_device(device), seed)
    chapter_settings(chapter_module(chapter), profile, results, settings_file, seeds)
    return results.as_dict()


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
        chosen = chapter_module(args.chapter).settings(args.profile, n_seeds=args.seeds)
        if args.settings is not None:
            chosen = json.loads(args.settings.read_text())
        resolve_device(args.device)
        if args.command != "run" or args.seed_range is not None:
            check_in_parts(args.chapter)
        if args.command == "plan":
            parts, merge = plan_parts(args.chapter, args.parts, _run_options(args),
                                      args.parts_dir, args.out, chosen)
            print("\n".join([*parts.values(), merge]))
            return 0
        if args.command == "submit":
            return submit_parts(args, chosen)
    except (ValueError, RuntimeError) as error:
        parser.error(str(error))
    try:
        path = run_chapter(args.chapter, args.profile, args.seeds, args.seed, args.device,
                           args.out, quiet=args.quiet, settings_file=args.settings,
                           seed_range=args.seed_range if args.command == "run" else None,
                           parts=args.parts if args.command == "merge" else None)
    except PartsError as error:  # parts that do not fit these settings, found before training
        parser.error(str(error))
    print(f"wrote {path}")
    return 0


def submit_parts(args: argparse.Namespace, chosen: dict) -> int:
    """The ``submit`` command: the run's parts still missing as a Slurm job array and the merge
    after them (:func:`attention_dynamics.slurm.submit`), with this interpreter; 1 when
    ``--wait`` saw the merge fail."""
    from attention_dynamics.slurm import SlurmError, find_sbatch, submit

    find_sbatch()  # before anything is written
    parts, merge = plan_parts(args.chapter, args.parts, _run_options(args), args.parts_dir,
                              args.out, chosen, python=sys.executable)
    expected = merge_provenance(args.chapter, args.profile, args.seeds, args.seed, args.device,
                                args.settings)
    try:
        done = submit(args.chapter, args.profile, parts, merge, args.parts_dir, expected,
                      partition=args.partition, account=args.account, time_limit=args.time,
                      wait=args.wait)
    except SlurmError as error:
        print(error, file=sys.stderr)
        return 1
    print(done.summary())
    return 0


def _run_options(args: argparse.Namespace) -> list[str]:
    """The options of ``args`` that fix what a chapter runs at, as command-line words."""
    words = ["--profile", args.profile, "--seed", str(args.seed), "--device", args.device]
    if args.seeds is not None:
        words += ["--seeds", str(args.seeds)]
    if args.settings is not None:
        words += ["--settings", str(args.settings)]
    return words + (["--quiet"] if args.quiet else [])
