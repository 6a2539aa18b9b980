"""Certify a committed results file by rerunning it: same numbers to the bit, new provenance.

Usage (from the repository root; ``make certify-decide-CHAPTER`` calls it)::

    python scripts/certify.py CHAPTER [--profile decide] [--candidate FILE] [--replace]

Reruns ``CHAPTER``'s experiment by the command line (``python -m attention_dynamics run``) with
the committed file's profile and number of seeds, into a scratch folder (or takes ``--candidate``,
a results file made that way already), and compares every metric that is not a timing with the
committed ``results/<profile>/CHAPTER.json`` at tolerance 0 (``scripts/compare_results.py``).

- Identical: the committed file keeps its metrics and takes the rerun's provenance (commit, date,
  machine, the modules that ran, settings, claims' rules), with the previous provenance kept
  under ``certified_from``. The numbers were not changed, only what vouches for them.
- Different: the differences are printed and the committed file is left as it is (exit 1);
  ``--replace`` then puts the rerun in its place, as a rerun rather than a certification.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from compare_results import compare

from attention_dynamics.chapters import CHAPTERS
from attention_dynamics.runtime import PROFILES

ROOT = Path(__file__).resolve().parent.parent
PROVENANCE_KEPT = ("commit", "date", "versions", "library_modules", "library_fingerprint")
"""The previous provenance that a certified file keeps under ``certified_from``."""


def committed_path(chapter: str, profile: str, root: Path = ROOT) -> Path:
    """Where the committed results file of ``chapter`` and ``profile`` lies."""
    return root / "results" / profile / f"{chapter}.json"


def rerun(chapter: str, profile: str, seeds: int | None, folder: Path) -> Path:
    """Run ``chapter`` by the command line into ``folder``; return the results file."""
    command = [sys.executable, "-m", "attention_dynamics", "run", chapter, "--profile", profile,
               "--device", "cpu", "--out", str(folder)]
    if seeds is not None:
        command += ["--seeds", str(seeds)]
    subprocess.run(command, cwd=ROOT, check=True)
    return folder / f"{chapter}.json"


def certified(committed: dict, candidate: dict) -> dict:
    """The committed file with the candidate's provenance: its metrics and timing list kept, the
    rest taken from the candidate, the previous provenance under ``certified_from``."""
    earlier = {key: committed.get(key) for key in PROVENANCE_KEPT}
    return candidate | {"metrics": committed["metrics"],
                        "timing_metrics": committed.get("timing_metrics", []),
                        "certified_from": earlier}


def write_atomically(path: Path, content: dict) -> None:
    """Write ``content`` as JSON to ``path`` through a partial file, so that a failure leaves
    the previous file whole."""
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(content, indent=2, sort_keys=True) + "\n")
    partial.replace(path)


def certify(path: Path, candidate_path: Path, replace: bool = False) -> int:
    """Compare the candidate with the committed file at ``path``; certify, or print the
    differences (and with ``replace`` put the candidate in place). 0 when certified."""
    committed = json.loads(path.read_text())
    candidate = json.loads(candidate_path.read_text())
    problems = compare(committed, candidate, tolerance=0.0)
    if not problems:
        write_atomically(path, certified(committed, candidate))
        timings = set(committed.get("timing_metrics", []))
        count = sum(1 for name in committed["metrics"] if name not in timings)
        print(f"certified {path.name}: {count} metrics identical to the bit; provenance rewritten")
        return 0
    print(f"{path.name} differs from its rerun in {len(problems)} metrics:")
    print("\n".join(problems))
    if replace:
        write_atomically(path, candidate)
        print(f"replaced {path} by the rerun (not a certification)")
    else:
        print(f"left {path} as it was (--replace puts the rerun in its place)")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", choices=CHAPTERS)
    parser.add_argument("--profile", default="decide", choices=PROFILES)
    parser.add_argument("--candidate", type=Path, default=None,
                        help="a results file of a rerun made already (default: rerun now)")
    parser.add_argument("--replace", action="store_true",
                        help="when the rerun differs, put it in place of the committed file")
    args = parser.parse_args(argv)
    path = committed_path(args.chapter, args.profile)
    if not path.is_file():
        parser.error(f"there is no committed results file {path} to certify")
    if args.candidate is not None:
        if not args.candidate.is_file():
            parser.error(f"--candidate: no file {args.candidate}")
        return certify(path, args.candidate, args.replace)
    seeds = json.loads(path.read_text()).get("seeds_argument")
    with tempfile.TemporaryDirectory() as scratch:
        return certify(path, rerun(args.chapter, args.profile, seeds, Path(scratch)),
                       args.replace)


if __name__ == "__main__":
    sys.exit(main())
