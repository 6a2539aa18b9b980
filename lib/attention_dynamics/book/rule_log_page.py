"""The rule log in words: the texts of the book's page of the log (for those who audit the
ledger), its changelog of verdicts (for readers), and the report's paragraph about both.

Every function takes the log (:data:`~attention_dynamics.book.rule_log.RULE_LOG`) and the claims'
registry (:data:`~attention_dynamics.book.claims.REGISTRY`, whose order numbers the report's
rows), and names a claim by its row and its short name
(:data:`~attention_dynamics.book.rule_log.CLAIM_NAMES`), a claim no longer registered as retired.
The texts are Markdown without headings (a notebook's output may hold none): the page's
notebook sets the headings around them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

from attention_dynamics.book.formatting import capitalised
from attention_dynamics.book.rule_log import CLAIM_NAMES, RuleChange, moving_changes
from attention_dynamics.book.verdicts import Claim

ARROW = "→"
"""Between a verdict before a change and after it."""


def row_numbers(registry: dict[str, Claim]) -> dict[str, int]:
    """Each registered claim's row in the report's table (numbered from 1, in the registry's
    order)."""
    return {key: number for number, key in enumerate(registry, start=1)}


def claim_label(key: str, registry: dict[str, Claim]) -> str:
    """A claim by its row and short name, ``"row 32 (routing gradients fade)"``; one no longer
    registered as ``"a retired row (…)"``."""
    rows = row_numbers(registry)
    name = CLAIM_NAMES[key]
    return f"row {rows[key]} ({name})" if key in rows else f"a retired row ({name})"


def _joined(parts: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def claims_phrase(keys: Iterable[str], registry: dict[str, Claim]) -> str:
    """Several claims by row and short name, registered ones first in row order, then the
    retired ones."""
    rows = row_numbers(registry)
    ordered = sorted(keys, key=lambda key: (key not in rows, rows.get(key, 0)))
    return _joined([claim_label(key, registry) for key in ordered])


def long_date(iso: str) -> str:
    """``"2026-12-06"`` as ``"6 December 2026"``."""
    day = date.fromisoformat(iso)
    return f"{day.day} {day:%B %Y}"


def _by_date(changes: Sequence[RuleChange]) -> list[tuple[str, list[RuleChange]]]:
    """The changes grouped by date, newest first, each group newest first (the log is oldest
    first)."""
    groups: dict[str, list[RuleChange]] = {}
    for change in reversed(changes):
        groups.setdefault(change.date, []).append(change)
    return sorted(groups.items(), key=lambda item: item[0], reverse=True)


def _move(before: str, after: str, strong: bool) -> str:
    words = f"{before} {ARROW} {after}"
    return f"**{words}**" if strong else words


def moves_phrase(change: RuleChange, registry: dict[str, Claim], strong: bool = False) -> str:
    """The verdicts a change moved: ``"row 32 (routing gradients fade), reproduced →
    inconclusive"``, claims that moved alike named together; with ``strong``, each move in
    bold (Markdown)."""
    alike: dict[tuple[str, str], list[str]] = {}
    for key, move in change.moved.items():
        alike.setdefault((move.before, move.after), []).append(key)
    return "; ".join(f"{claims_phrase(keys, registry)}, {_move(before, after, strong)}"
                     for (before, after), keys in alike.items())


def _profiles(change: RuleChange) -> str:
    """The profiles whose results the change's moves are on: ``"decide profile"``, ``"quick
    and decide profiles"``."""
    named = {profile for move in change.moved.values() for profile in move.profile.split(" and ")}
    profiles = [profile for profile in ("quick", "decide") if profile in named]
    return f"{_joined(profiles)} profile{'s' if len(profiles) > 1 else ''}"


def _sentence(text: str) -> str:
    """``text`` with a capital first letter and a full stop."""
    text = capitalised(text)
    return text + ("" if text.endswith(".") else ".")


def changelog_text(rule_log: Sequence[RuleChange], registry: dict[str, Claim]) -> str:
    """The changelog of verdicts (Markdown): every change that moved a verdict, newest first,
    under its date, with the verdicts it moved, the profile whose results they are on, and in
    one sentence what changed."""
    parts = []
    for day, changes in _by_date(moving_changes(rule_log)):
        items = [f"- {capitalised(moves_phrase(change, registry, strong=True))} "
                 f"({_profiles(change)}). "
                 f"{_sentence(change.in_brief)}" for change in changes]
        parts.append(f"**{long_date(day)}**\n\n" + "\n".join(items))
    return "\n\n".join(parts)


def _commit(change: RuleChange) -> str:
    """Where the change was made, its commit as code: ``"`0ebf0d9`"``, or ``"the commit after
    `3e9f893`"`` for a change logged in the commit that made it."""
    if change.commit.startswith("after "):
        return f"the commit after `{change.commit.removeprefix('after ').strip()}`"
    return f"`{change.commit}`"


def _moved_here(change: RuleChange, registry: dict[str, Claim]) -> str:
    """The verdicts a change moved, after its claims have been named: only ``"reproduced →
    inconclusive (decide profile)"`` when every claim of the change moved alike."""
    moves = set(change.moved.values())
    if set(change.moved) == set(change.claims) and len(moves) == 1:
        (move,) = moves
        return f"{_move(move.before, move.after, True)} ({_profiles(change)})"
    return f"{moves_phrase(change, registry, strong=True)} ({_profiles(change)})"


def rule_log_text(rule_log: Sequence[RuleChange], registry: dict[str, Claim]) -> str:
    """Every change of the log (Markdown), newest first under its date: the claims it changed,
    whether it moved a verdict, the rule before and after, why, the verdict before and after,
    and, last, its commit."""
    parts = []
    for day, changes in _by_date(rule_log):
        entries = []
        for change in changes:
            moved = f" *Moved a verdict:* {_moved_here(change, registry)}." if change.moved else ""
            entries.append(
                f"{_sentence(claims_phrase(change.claims, registry))}{moved}\n\n"
                f"- *Rule before:* {change.old_rule}.\n"
                f"- *Rule after:* {change.new_rule}.\n"
                f"- *Why:* {change.reason}.\n"
                f"- *Verdict before:* {change.verdict_before}.\n"
                f"- *Verdict after:* {change.verdict_after}.\n"
                f"- *Commit:* {_commit(change)}.")
        parts.append(f"**{long_date(day)}**\n\n" + "\n\n".join(entries))
    return "\n\n".join(parts)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def summary_phrase(rule_log: Sequence[RuleChange]) -> str:
    """How many changes the log holds and how many moved a verdict, in one sentence."""
    moving = moving_changes(rule_log)
    claims = {key for change in moving for key in change.moved}
    moved = (f"{len(moving)} of them moved the verdict of {_counted(len(claims), 'claim')}"
             if moving else "none of them moved a verdict")
    return (f"The rule log holds {_counted(len(rule_log), 'change')}, each made after results "
            f"under the old rule had been seen; {moved}.")


def _times(count: int) -> str:
    return {1: "", 2: ", twice", 3: ", three times"}.get(count, f", {count} times")


def report_phrase(rule_log: Sequence[RuleChange], registry: dict[str, Claim]) -> str:
    """The report's sentence on the log (plain text, to glue): how many changes, how many
    moved a verdict, and the claims whose verdict they moved, in row order, by row and short
    name, with how often where more than once."""
    times: dict[str, int] = {}
    for change in moving_changes(rule_log):
        for key in change.moved:
            times[key] = times.get(key, 0) + 1
    rows = row_numbers(registry)
    named = [claim_label(key, registry) + _times(count)
             for key, count in sorted(times.items(), key=lambda item: (
                 item[0] not in rows, rows.get(item[0], 0)))]
    summary = summary_phrase(rule_log)
    if not named:
        return summary
    # "; and" before the last where a count ends the one before it ("…, twice and row 3")
    last = "; and" if len(named) > 2 or ", " in named[0].rsplit(")", 1)[-1] else " and"
    listed = named[0] if len(named) == 1 else f"{'; '.join(named[:-1])}{last} {named[-1]}"
    return f"{summary[:-1]}: {listed}."
