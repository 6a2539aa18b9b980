"""Compare two builds' results files: every metric that is not a timing must agree.

Usage::

    python scripts/compare_results.py BEFORE_DIR AFTER_DIR [--tolerance 1e-12] [--only NAME ...]

Each folder holds ``<notebook>.json`` results files (``_build/results`` of a build). For every
notebook in both, every metric that neither file marks as a timing is compared: equal, or
within ``tolerance`` relative to the larger magnitude. Prints one line per notebook and every
metric that differs, was added or was removed; exits 1 if any differs or is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load(folder: Path) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def compare(before: dict, after: dict, tolerance: float) -> list[str]:
    """Lines describing every disagreement between two results files (empty if they agree)."""
    timings = set(before.get("timing_metrics", [])) | set(after.get("timing_metrics", []))
    old = {k: v for k, v in before["metrics"].items() if k not in timings}
    new = {k: v for k, v in after["metrics"].items() if k not in timings}
    problems = [f"  removed {name} = {old[name]!r}" for name in sorted(old.keys() - new.keys())]
    problems += [f"  added {name} = {new[name]!r}" for name in sorted(new.keys() - old.keys())]
    for name in sorted(old.keys() & new.keys()):
        a, b = old[name], new[name]
        if a != b and abs(a - b) > tolerance * max(abs(a), abs(b)):
            problems.append(f"  {name}: {a!r} -> {b!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-12)
    parser.add_argument("--only", nargs="+", metavar="NAME")
    args = parser.parse_args(argv)
    before, after = load(args.before), load(args.after)
    names = args.only or sorted(before.keys() | after.keys())
    failed, compared = False, 0
    for name in names:
        if name not in before or name not in after:
            print(f"{name}: missing in {'before' if name not in before else 'after'}")
            failed = True
            continue
        problems = compare(before[name], after[name], args.tolerance)
        timings = set(before[name].get("timing_metrics", []))
        count = sum(1 for k in before[name]["metrics"] if k not in timings)
        compared += count
        print(f"{name}: {count} metrics, {'identical' if not problems else 'DIFFERENT'}")
        if problems:
            print("\n".join(problems))
        failed |= bool(problems)
    print(f"{compared} metrics compared; {'some differ' if failed else 'all agree'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
