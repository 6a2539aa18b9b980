"""What made a results file, and whether it is still what the library would make now.

A results file records, during its run: the library modules its process had imported, each by
:func:`code_fingerprint` (its syntax tree without docstrings, so that comments, layout and
docstrings do not count, tagged with the Python minor version whose parser read it); the
chapter's settings as resolved for the run (a chapter's settings module is fingerprinted without
its table of settings per profile, :data:`SETTINGS_DATA`, which the settings as resolved cover
instead: a change to the quick profile's settings leaves a decide file current); the
fingerprints of the registry's claims that the file feeds (their rules as registered when it
ran); and the machine (:func:`environment_versions`:
the CPU, its instruction sets and the CPU dispatch of :mod:`attention_dynamics.dispatch`).

:func:`stale_reasons` compares a committed file with the library now: it is current while every
recorded module has its fingerprint, its chapter's settings for its profile are the same and its
claims' rules are the ones it ran under. A rerun that gives the same numbers to the bit
certifies it (``scripts/certify.py``), which rewrites only this provenance.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
"""The folder of the ``attention_dynamics`` package.

:meta hide-value:
"""

RUNNER_FILES = frozenset({"__main__.py", "cli.py", "chapters/__init__.py", "chapters/progress.py",
                          "dispatch.py"})
"""The package's files that do not make numbers by their code (the command line, the list of
chapter names, the progress bars, and the CPU dispatch pin, whose effect each results file
records by value in its ``versions`` and :func:`stale_reasons` compares with the pin). A change
to their code leaves every results file current."""

CODE_TAG = f"py{sys.version_info.major}.{sys.version_info.minor}"
"""The parser of a code fingerprint (syntax trees differ between Python versions)."""


PAGE_MODULES = frozenset({"words.py", "tables.py", "figures.py", "metrics.py"})
"""A chapter's page modules (``chapters/<chapter>/<name>``), which make the page's words, tables
and figures from a finished run, or declare its metrics in words, and no part of a run imports
them (a test checks it), so an edit to a page never stales a number."""


def _makes_results(relative: Path) -> bool:
    """Whether the package file at ``relative`` path can change a result: not in the ``book``
    subpackage, not one of :data:`RUNNER_FILES`, not a chapter's :data:`PAGE_MODULES`."""
    page = (len(relative.parts) == 3 and relative.parts[0] == "chapters"
            and relative.name in PAGE_MODULES)
    return relative.parts[0] != "book" and relative.as_posix() not in RUNNER_FILES and not page


SETTINGS_DATA = frozenset({"SETTINGS", "_QUICK"})
"""The names of a chapter's settings module (``chapters/<chapter>/settings.py``) that hold its
settings per profile: their assignments are left out of its code fingerprint, because a
results file records the settings of its own profile as resolved."""


def _data_names(relative: Path) -> frozenset[str]:
    """The top-level names whose assignments the fingerprint of the file at ``relative``
    leaves out: :data:`SETTINGS_DATA` in a chapter's settings module, none elsewhere."""
    parts = relative.parts
    is_settings = len(parts) == 3 and parts[0] == "chapters" and parts[2] == "settings.py"
    return SETTINGS_DATA if is_settings else frozenset()


def _assigns_only(statement: ast.stmt, names: frozenset[str]) -> bool:
    """Whether ``statement`` is a top-level assignment to names of ``names`` only."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    else:
        return False
    return all(isinstance(target, ast.Name) and target.id in names for target in targets)


def _is_docstring(statement: ast.stmt) -> bool:
    """Whether ``statement`` is a bare string (a docstring, or an attribute's docstring): an
    expression statement that computes nothing."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def code_fingerprint(source: str, data_names: frozenset[str] = frozenset()) -> str:
    """``<CODE_TAG>:<16 hex digits>``: SHA-256 of ``source``'s syntax tree with every bare
    string statement removed (docstrings of modules, classes, functions and attributes), without
    line numbers; comments and layout never reach the tree. Two sources with the same
    fingerprint execute the same code. Top-level assignments to ``data_names`` are left out
    too (data that a results file records by value)."""
    tree = ast.parse(source)
    tree.body = [statement for statement in tree.body
                 if not _assigns_only(statement, data_names)]
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [statement for statement in block if not _is_docstring(statement)]
                setattr(node, field, kept or [ast.Pass()])
    dump = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return f"{CODE_TAG}:{hashlib.sha256(dump.encode()).hexdigest()[:16]}"


def module_fingerprint(path: Path, relative: Path) -> str:
    """:func:`code_fingerprint` of the file at ``path``, which lies at ``relative`` in the
    package (which says whether it is a chapter's settings module)."""
    return code_fingerprint(path.read_text(encoding="utf-8"), _data_names(relative))


def library_fingerprint(package: str | Path | None = None) -> str:
    """SHA-256 (hex, first 16 digits) of the library code that produces results.

    Every ``.py`` file of ``package`` (default: :data:`PACKAGE_ROOT`) except the ``book``
    subpackage (the report's rules and the page helpers, which read results but do not make
    them) and the :data:`RUNNER_FILES`, by relative path and :func:`code_fingerprint`.
    """
    package = Path(package or PACKAGE_ROOT)
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if _makes_results(relative):
            digest.update(f"{relative.as_posix()}\0{module_fingerprint(path, relative)}\0".encode())
    return digest.hexdigest()[:16]


CHANGED_DURING_RUN = "changed during the run"
"""Recorded by :func:`loaded_library_modules` for a file written after the run began (its code
now need not be the code that ran), so that it never matches a fingerprint."""


def loaded_library_modules(package: str | Path | None = None,
                           since: float | None = None) -> dict[str, str]:
    """The result-making library files imported so far in this process: ``{relative path:
    code fingerprint}`` for every module in ``sys.modules`` whose file lies in ``package``
    (default: :data:`PACKAGE_ROOT`) outside its ``book`` subpackage and the
    :data:`RUNNER_FILES`; a file modified after ``since`` (seconds since the epoch: when the
    run began) is recorded as :data:`CHANGED_DURING_RUN`."""
    package = Path(package or PACKAGE_ROOT).resolve()
    found = {}
    for module in list(sys.modules.values()):
        location = getattr(module, "__file__", None)
        if location is None:
            continue
        path = Path(location).resolve()
        if not path.is_relative_to(package):
            continue
        relative = path.relative_to(package)
        if not _makes_results(relative):
            continue
        changed = since is not None and path.stat().st_mtime > since
        found[relative.as_posix()] = (CHANGED_DURING_RUN if changed
                                      else module_fingerprint(path, relative))
    return dict(sorted(found.items()))


def changed_library_modules(recorded: Mapping[str, str],
                            package: str | Path | None = None) -> list[str]:
    """The files of ``recorded`` (as :func:`loaded_library_modules` gives them) whose code
    differs from, or is missing in, ``package`` (default: :data:`PACKAGE_ROOT`) now; a file
    recorded under another Python version's parser (or by a byte hash, as files before code
    fingerprints did) counts as changed. The :data:`RUNNER_FILES` are not compared."""
    package = Path(package or PACKAGE_ROOT)
    return [relative for relative, digest in recorded.items()
            if _makes_results(Path(relative))
            and (not (package / relative).is_file()
                 or module_fingerprint(package / relative, Path(relative)) != digest)]


def jsonable(settings: object) -> object:
    """``settings`` as JSON reads it back (tuples become lists), so that a recorded copy and
    a fresh one compare equal when they hold the same values."""
    return json.loads(json.dumps(settings, sort_keys=True))


def chapter_settings(notebook: str, profile: str, seeds: int | None) -> object | None:
    """The settings the chapter module named ``notebook`` gives now for ``profile`` (and the
    run's ``--seeds``, ``None`` for the profile's own), as JSON reads them; ``None`` when
    ``notebook`` is not a chapter module."""
    try:
        module = importlib.import_module(f"attention_dynamics.chapters.{notebook}")
    except ModuleNotFoundError:
        return None
    return jsonable(module.settings(profile, n_seeds=seeds))


def claim_fingerprints(notebook: str) -> dict[str, str]:
    """``{key: fingerprint}`` of the registry's claims judged on ``notebook``'s numbers."""
    from attention_dynamics.book.claims import REGISTRY

    return {key: claim.fingerprint for key, claim in REGISTRY.items() if claim.notebook == notebook}


def dispatch_difference(versions: Mapping[str, str]) -> str | None:
    """How the CPU dispatch recorded in a results file's ``versions`` differs from today's pin
    (:data:`~attention_dynamics.dispatch.PINNED_DISPATCH`), in words; ``None`` when it is the
    pin's."""
    from attention_dynamics.dispatch import PINNED_CAPABILITY, PINNED_DISPATCH

    if "cpu_capability" not in versions:
        return "made without the CPU dispatch pin (or no record of it)"
    expected = {"cpu_capability": PINNED_CAPABILITY} | {
        name.lower(): value for name, value in PINNED_DISPATCH.items()}
    differs = [f"{name} {versions.get(name, 'unset')} (pinned: {value})"
               for name, value in expected.items()
               if versions.get(name, "unset").upper() != value.upper()]
    return "made with another CPU dispatch than the pin: " + ", ".join(differs) if differs else None


def changed_rules(content: Mapping) -> list[str]:
    """The keys of the claims fed by the results file ``content`` whose rule changed since its
    run, or that were registered after it (empty when it records no claims: that is a reason of
    the whole file, :func:`stale_reasons`). Such a claim's row cannot rest on the file, whose
    other rows still can: their rules were registered before the run and are unchanged."""
    recorded = content.get("claims")
    if recorded is None:
        return []
    now = claim_fingerprints(content.get("notebook", ""))
    return sorted(key for key in now if recorded.get(key) != now[key])


def rules_reason(changed: list[str]) -> str:
    """The reason, in words, that the claims ``changed`` (:func:`changed_rules`) give."""
    return "rule changed or added since: " + ", ".join(changed)


def stale_reasons(content: Mapping, package: str | Path | None = None,
                  rules: bool = True) -> list[str]:
    """Why the results file ``content`` is no longer what the library would make, in words
    (empty while it is current): library files whose code changed since its run, a chapter
    setting of its profile that changed, a claim it feeds whose rule changed (or that it does not
    list), a run without the CPU dispatch pin, or no record of one of these. ``rules=False``
    leaves out the claims whose rule changed (:func:`changed_rules`), which make only their own
    rows stale."""
    reasons = []
    if (dispatch := dispatch_difference(content.get("versions", {}))) is not None:
        reasons.append(dispatch)
    modules = content.get("library_modules")
    if modules is None:
        reasons.append("no record of the library modules that ran")
    elif untagged := [name for name, digest in modules.items() if not digest.startswith("py")]:
        reasons.append("its modules were recorded by byte hash, before code fingerprints, "
                       "and cannot be compared: " + ", ".join(untagged))
    elif changed := changed_library_modules(modules, package):
        reasons.append("code changed since: " + ", ".join(changed))
    notebook, profile = content.get("notebook", ""), content.get("profile", "")
    now = chapter_settings(notebook, profile, content.get("seeds_argument"))
    if now is not None and "settings" not in content:
        reasons.append("no record of the settings it ran with")
    elif now is not None and jsonable(content["settings"]) != now:
        reasons.append(f"the {profile} settings changed since")
    claims = claim_fingerprints(notebook)
    if claims and "claims" not in content:
        reasons.append("no record of the claims' rules it ran under")
    elif claims and rules and (changed := changed_rules(content)):
        reasons.append(rules_reason(changed))
    return reasons


def source_commit() -> str:
    """The git commit of the library's checkout (``+dirty`` when its files differ from it);
    ``unknown`` outside a git checkout (an installed wheel)."""
    def git(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *arguments], cwd=PACKAGE_ROOT, capture_output=True,
                              text=True)

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".")
    except OSError:
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _cpu_info(field: str) -> str | None:
    """The first ``field`` line of ``/proc/cpuinfo``, if there is one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.split(":", 1)[0].strip() == field:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The processor's name (``/proc/cpuinfo``'s first model name, else what the platform
    says, else ``unknown``)."""
    return _cpu_info("model name") or platform.processor() or "unknown"


CPU_FEATURES = ("avx2", "fma", "avx512f")
"""Instruction sets that a results file names (the name "AMD EPYC" covers CPUs with and
without AVX-512)."""


def cpu_features() -> str:
    """Which of :data:`CPU_FEATURES` the processor has, space separated (``unknown`` where
    ``/proc/cpuinfo`` says nothing)."""
    flags = _cpu_info("flags")
    if flags is None:
        return "unknown"
    return " ".join(feature for feature in CPU_FEATURES if feature in flags.split()) or "none"


def scheduler(environment: Mapping[str, str] | None = None) -> str:
    """What started this process, from Slurm's variables in ``environment`` (default: this
    process's): ``"Slurm array job J, task T"``, ``"Slurm job J"``, or ``"none"`` (a local run)."""
    environment = os.environ if environment is None else environment
    if "SLURM_ARRAY_JOB_ID" in environment:
        return (f"Slurm array job {environment['SLURM_ARRAY_JOB_ID']}, "
                f"task {environment.get('SLURM_ARRAY_TASK_ID', 'unknown')}")
    if "SLURM_JOB_ID" in environment:
        return f"Slurm job {environment['SLURM_JOB_ID']}"
    return "none"


def environment_versions() -> dict[str, str]:
    """Versions of what produced a result: library, torch, Python, platform, CPU model and its
    instruction sets, threads, the scheduler that started it (:func:`scheduler`), and the CPU
    dispatch
    (:func:`~attention_dynamics.dispatch.dispatch_state`: torch's capability, MKL's and
    oneDNN's modes, whether the pin held)."""
    import torch

    from attention_dynamics import __version__
    from attention_dynamics.dispatch import dispatch_state

    return {
        **dispatch_state(),
        "attention_dynamics": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_features": cpu_features(),
        "torch_threads": str(torch.get_num_threads()),
        "cuda_device": torch.cuda.get_device_name() if torch.cuda.is_available() else "none",
        "scheduler": scheduler(),
    }
