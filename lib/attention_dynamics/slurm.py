"""A chapter's run in parts submitted to Slurm: the parts as one job array, the merge as a job
that runs once every part has succeeded.

:func:`submit` writes two scripts beside the parts (``DIR/<chapter>.array.sh``, whose array task
``i`` runs the ``i``-th part, and ``DIR/<chapter>.merge.sh``) and submits them with ``sbatch``:
the array for the parts whose files are missing (or were made by other code or at other
settings), then the merge with ``--dependency=afterok`` on it. Each task writes its own part
file (:mod:`attention_dynamics.parts`) and its log, ``DIR/<chapter>.part-<task>.log``; a task
that fails leaves the others' files, the merge is then cancelled, and submitting again submits
only the parts still missing, then the merge.

Resources come from the profile (:data:`RESOURCES`: one CPU per task for ``quick`` and
``decide``, whose runs use one thread; one GPU per task for ``paper``); partition, account and
time limit are options. Nothing here runs during a chapter's run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from attention_dynamics.parts import SeedRange, part_paths, part_problems

RESOURCES: dict[str, tuple[str, ...]] = {
    "quick": ("--cpus-per-task=1",),
    "decide": ("--cpus-per-task=1",),
    "paper": ("--cpus-per-task=4", "--gres=gpu:1"),
}
"""``sbatch`` options per profile for every task (a part or the merge)."""


class SlurmError(RuntimeError):
    """Slurm is not there, or refused a submission (the message says which and why)."""


@dataclass(frozen=True)
class Submission:
    """What :func:`submit` submitted.

    Attributes:
        array_job: the job array's id (``None`` when every part was already there).
        merge_job: the merge job's id.
        submitted: the parts submitted, as seed ranges, in task order.
        kept: the parts already there, made by this code at these settings.
        scripts: the array's and the merge's script.
    """

    array_job: str | None
    merge_job: str
    submitted: tuple[SeedRange, ...]
    kept: tuple[SeedRange, ...]
    scripts: tuple[Path, Path]

    def summary(self) -> str:
        """What was submitted, in a few lines."""
        lines = []
        if self.array_job is not None:
            lines.append(f"job array {self.array_job}: {len(self.submitted)} of "
                         f"{len(self.submitted) + len(self.kept)} parts (seed ranges "
                         + ", ".join(map(str, self.submitted)) + ")")
        if self.kept:
            lines.append("kept (already made by this code at these settings): "
                         + ", ".join(map(str, self.kept)))
        lines.append(f"merge job {self.merge_job}, after "
                     + ("every part has succeeded" if self.array_job else "nothing"))
        return "\n".join(lines)


def find_sbatch(sbatch: str = "sbatch") -> str:
    """The path of ``sbatch``; a :class:`SlurmError` where it is not on the ``PATH``."""
    found = shutil.which(sbatch)
    if found is None:
        raise SlurmError(f"{sbatch!r} is not on the PATH: submit needs a Slurm cluster's "
                         "client (sbatch); on one machine, run the parts that `plan` prints")
    return found


def missing_parts(ranges: Sequence[SeedRange], directory: Path, chapter: str,
                  expected: Mapping) -> list[SeedRange]:
    """The parts of ``ranges`` that must run: those whose two files are not both in
    ``directory``, or whose provenance does not fit a merge with ``expected``
    (:func:`~attention_dynamics.parts.part_problems`)."""
    missing = []
    for seeds in ranges:
        info, units = part_paths(directory, chapter, seeds)
        if not (info.is_file() and units.is_file()) or part_problems(
                json.loads(info.read_text()), expected):
            missing.append(seeds)
    return missing


def array_script(commands: Sequence[str]) -> str:
    """A bash script that runs ``commands[i]`` as array task ``i``."""
    cases = "\n".join(f"  {task}) exec {command} ;;" for task, command in enumerate(commands))
    return ("#!/bin/bash\n# one part of the run per array task: the task id picks its command\n"
            "set -euo pipefail\ncase \"$SLURM_ARRAY_TASK_ID\" in\n" + cases + "\n"
            "  *) echo \"no part for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n")


def _sbatch(arguments: Sequence[str], sbatch: str) -> str:
    """Run ``sbatch --parsable`` with ``arguments``; the job id it prints. With ``--wait`` among
    them, a job that did not succeed is a :class:`SlurmError` that names it."""
    done = subprocess.run([sbatch, "--parsable", *arguments], capture_output=True, text=True)
    job = done.stdout.strip().split(";")[0]
    if done.returncode != 0 and job.isdigit():
        raise SlurmError(f"job {job} did not succeed (exit status {done.returncode}): a part "
                         "failed, or the merge did; the parts' and the merge's logs say which")
    if done.returncode != 0:
        raise SlurmError(f"sbatch refused the job: {done.stderr.strip() or done.stdout.strip()}")
    return job


def job_state(job: str, sbatch: str = "sbatch") -> str:
    """The state Slurm gives job ``job`` (``COMPLETED``, ``FAILED``, ``CANCELLED``, ...), from
    ``scontrol``, found beside ``sbatch``; ``UNKNOWN`` where it no longer knows the job."""
    scontrol = Path(find_sbatch(sbatch)).with_name("scontrol")
    shown = subprocess.run([str(scontrol), "show", "job", "--oneliner", job],
                           capture_output=True, text=True).stdout
    for field in shown.split():
        if field.startswith("JobState="):
            return field.split("=", 1)[1]
    return "UNKNOWN"


def submit(chapter: str, profile: str, parts: Mapping[SeedRange, str], merge: str,
           directory: str | Path, expected: Mapping, *, partition: str | None = None,
           account: str | None = None, time_limit: str | None = None, wait: bool = False,
           sbatch: str = "sbatch") -> Submission:
    """Submit ``chapter``'s parts still missing in ``directory`` as a job array and ``merge``
    as a job after them.

    Args:
        chapter: the chapter (its part files' prefix).
        profile: its profile, which picks the tasks' resources (:data:`RESOURCES`).
        parts: each part's command line, by seed range, in order.
        merge: the merge's command line.
        directory: where the parts, the scripts and the logs go (created if missing).
        expected: the merge's provenance (as a results file's), against which a part file
            already there is checked.
        partition, account, time_limit: ``sbatch``'s ``--partition``, ``--account``,
            ``--time`` (none by default: the cluster's).
        wait: return only once the merge has ended (``sbatch --wait``); a
            :class:`SlurmError` when it failed or was cancelled because a part failed.
        sbatch: the ``sbatch`` command.
    """
    if profile not in RESOURCES:
        raise ValueError(f"profile must be one of {', '.join(RESOURCES)}; got {profile!r}")
    command = find_sbatch(sbatch)
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    ranges = list(parts)
    todo = missing_parts(ranges, folder, chapter, expected)
    kept = tuple(seeds for seeds in ranges if seeds not in todo)
    array_path, merge_path = folder / f"{chapter}.array.sh", folder / f"{chapter}.merge.sh"
    array_path.write_text(array_script([parts[seeds] for seeds in ranges]))
    merge_path.write_text(f"#!/bin/bash\nset -euo pipefail\nexec {merge}\n")
    common = [f"--chdir={Path.cwd()}", *RESOURCES[profile]]
    common += [f"--{name}={value}" for name, value in (
        ("partition", partition), ("account", account), ("time", time_limit)) if value]
    array_job = None
    if todo:
        tasks = ",".join(str(ranges.index(seeds)) for seeds in todo)
        array_job = _sbatch([f"--array={tasks}", f"--job-name={chapter}-parts",
                             f"--output={folder / f'{chapter}.part-%a.log'}", *common,
                             str(array_path)], command)
    after = [f"--dependency=afterok:{array_job}", "--kill-on-invalid-dep=yes"] if array_job else []
    merge_job = _sbatch([*after, *(["--wait"] if wait else []), f"--job-name={chapter}-merge",
                         f"--output={folder / f'{chapter}.merge.log'}", *common,
                         str(merge_path)], command)
    if wait and (state := job_state(merge_job, sbatch)) != "COMPLETED":
        raise SlurmError(f"the merge job {merge_job} did not succeed ({state}): "
                         + (f"a part of job array {array_job} failed and the merge was "
                            f"cancelled; the parts' logs ({folder}/{chapter}.part-<task>.log) "
                            "say which" if state == "CANCELLED" else "its log says why"))
    return Submission(array_job, merge_job, tuple(todo), kept, (array_path, merge_path))

