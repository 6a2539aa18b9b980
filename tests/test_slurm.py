"""Submitting a run in parts to Slurm: the job scripts, what counts as a missing part, the errors
without a cluster, and a real one-node cluster (Debian's slurmctld, slurmd and munge, started in
a temporary folder) that runs chapter 5's tiny parts as a job array and merges them into the
bits of a local run."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from attention_dynamics import cli
from attention_dynamics.book.results import Results
from attention_dynamics.parts import SeedRange, Unit, part_paths, run_part
from attention_dynamics.slurm import SlurmError, array_script, find_sbatch, missing_parts, submit

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "tiny_settings" / "content_routing.json"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue")


def test_the_array_script_runs_the_tasks_command_and_refuses_another_task(tmp_path):
    script = tmp_path / "array.sh"
    script.write_text(array_script(["echo first", "echo 'second part'"]))
    for task, expected in ((0, "first\n"), (1, "second part\n")):
        done = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                              env=os.environ | {"SLURM_ARRAY_TASK_ID": str(task)})
        assert (done.returncode, done.stdout) == (0, expected)
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                          env=os.environ | {"SLURM_ARRAY_TASK_ID": "2"})
    assert done.returncode == 2 and "no part for array task 2" in done.stderr


def test_without_sbatch_submit_says_what_it_needs(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SlurmError, match="'sbatch' is not on the PATH"):
        find_sbatch()
    with pytest.raises(SystemExit) as stop:
        cli.main(["submit", "content_routing", "--parts", "2", "--parts-dir", str(tmp_path)])
    assert stop.value.code == 2 and "sbatch" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_submit_refuses_a_chapter_that_does_not_run_in_parts(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["submit", "em_reading", "--parts", "2"])
    assert stop.value.code == 2 and "em_reading does not run in parts" in capsys.readouterr().err


def test_a_part_counts_as_missing_until_both_files_fit_the_merge(tmp_path):
    module = SimpleNamespace(units=lambda chosen: [Unit("x", r) for r in range(2)],
                             unit_trainer=lambda chosen, device, seed: lambda unit: unit.index)
    chosen = {"n_seeds": 2}

    def made(seed: int) -> Results:
        results = Results("toy", "quick", "cpu", seed, directory=tmp_path)
        results.use_settings(chosen)
        return results

    ranges = [SeedRange(0, 1), SeedRange(1, 2)]
    expected = made(0).as_dict()
    assert missing_parts(ranges, tmp_path, "toy", expected) == ranges
    run_part(module, made(0), chosen, torch.device("cpu"), 0, ranges[0])
    assert missing_parts(ranges, tmp_path, "toy", expected) == ranges[1:]
    part_paths(tmp_path, "toy", ranges[0])[1].unlink()  # its units are gone
    assert missing_parts(ranges, tmp_path, "toy", expected) == ranges
    run_part(module, made(7), chosen, torch.device("cpu"), 7, ranges[0])  # another seed
    assert missing_parts(ranges, tmp_path, "toy", expected) == ranges


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


SLURM_CONF = """ClusterName=book
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge.socket
CredType=cred/munge
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={host} CPUs={cpus} State=UNKNOWN
PartitionName=book Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture
def cluster(tmp_path):
    """A one-node Slurm cluster of its own (munge key, configuration, state and spool in a
    temporary folder, its own ports) for the test's duration; the environment that reaches it.
    Skips where the packages or root are missing, unless REQUIRE_SLURM is set."""
    missing = [name for name in DAEMONS if shutil.which(name) is None]
    if missing or os.geteuid() != 0:
        why = (f"Slurm's {', '.join(missing)} not installed" if missing
               else "starting Slurm's daemons needs root")
        if os.environ.get("REQUIRE_SLURM"):
            pytest.fail(f"REQUIRE_SLURM is set but {why}")
        pytest.skip(why)
    folder = tmp_path / "cluster"
    for sub in ("state", "spool"):
        (folder / sub).mkdir(parents=True)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    folder.chmod(0o700)
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=host, folder=folder, ctld_port=_free_port(),
                                      d_port=_free_port(), cpus=os.cpu_count()))
    env = os.environ | {"SLURM_CONF": str(conf)}
    pid_files = [folder / "munged.pid", folder / "slurmctld.pid", folder / "slurmd.pid"]
    try:
        subprocess.run(["munged", f"--key-file={key}", f"--socket={folder}/munge.socket",
                        f"--pid-file={pid_files[0]}", f"--log-file={folder}/munged.log",
                        f"--seed-file={folder}/munge.seed", "--force"], check=True)
        subprocess.run(["slurmctld", "-f", str(conf)], check=True, env=env)
        subprocess.run(["slurmd", "-f", str(conf)], check=True, env=env)
        for _ in range(60):  # the node registers within seconds
            shown = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                                   env=env).stdout.strip()
            if shown in ("idle", "mix", "alloc"):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the node never came up (sinfo: {shown!r}); see {folder}")
        yield env
    finally:
        for pid_file in reversed(pid_files):  # the daemons this fixture started, by their ids
            if pid_file.is_file():
                try:
                    os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
                except ProcessLookupError:
                    pass
        time.sleep(1)


def _metrics(path: Path) -> tuple[dict, dict]:
    content = json.loads(path.read_text())
    timings = set(content["timing_metrics"])
    return {k: v for k, v in content["metrics"].items() if k not in timings}, content


@pytest.mark.slow
def test_a_job_array_on_a_real_cluster_merges_into_the_bits_of_a_local_run(cluster, tmp_path):
    env = cluster | {"PYTHONPATH": str(ROOT / "lib")}
    common = ["content_routing", "--settings", str(TINY), "--device", "cpu", "--quiet"]

    def command(*argv) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "attention_dynamics", *argv], env=env,
                              cwd=tmp_path, capture_output=True, text=True)

    local = command("run", *common, "--out", "local")
    assert local.returncode == 0, local.stderr[-2000:]
    submitted = command("submit", *common, "--parts", "2", "--parts-dir", "parts",
                        "--out", "merged", "--wait")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr[-2000:]
    assert "2 of 2 parts" in submitted.stdout
    merged, content = _metrics(tmp_path / "merged" / "content_routing.json")
    assert merged == _metrics(tmp_path / "local" / "content_routing.json")[0]
    assert [part["seed_range"] for part in content["parts"]] == [[0, 1], [1, 2]]
    assert (tmp_path / "parts" / "content_routing.part-0.log").is_file()
    # a part lost: submitting again submits it alone, then the merge
    for path in part_paths(tmp_path / "parts", "content_routing", SeedRange(1, 2)):
        path.unlink()
    again = command("submit", *common, "--parts", "2", "--parts-dir", "parts", "--out",
                    "again", "--wait")
    assert again.returncode == 0, again.stdout + again.stderr[-2000:]
    assert "1 of 2 parts (seed ranges 1:2)" in again.stdout and "kept" in again.stdout
    assert _metrics(tmp_path / "again" / "content_routing.json")[0] == merged


@pytest.mark.slow
def test_a_failed_part_cancels_the_merge_and_says_so(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", cluster["SLURM_CONF"])
    monkeypatch.chdir(tmp_path)
    parts = {SeedRange(0, 1): "true", SeedRange(1, 2): "false"}
    with pytest.raises(SlurmError, match="did not succeed"):
        submit("toy", "quick", parts, "echo merged", tmp_path / "parts", {}, wait=True)
    merge_log = tmp_path / "parts" / "toy.merge.log"
    assert not merge_log.exists() or "merged" not in merge_log.read_text()
    assert (tmp_path / "parts" / "toy.part-0.log").is_file()  # the part that succeeded ran
