"""The command line (``python -m attention_dynamics``): its arguments, its results file, its
progress bars, and what an interrupted run leaves behind."""

import io
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from attention_dynamics import cli
from attention_dynamics.chapters import CHAPTERS
from attention_dynamics.chapters.progress import show_progress, training_run

ROOT = Path(__file__).resolve().parents[1]


def _fails(capsys, *argv) -> str:
    """Run the command line with ``argv``; assert a usage error (exit 2); return stderr."""
    with pytest.raises(SystemExit) as stop:
        cli.main(list(argv))
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("argv", "names"), [
    (["run", "chapter_six"], ["CHAPTER", "invalid choice", *CHAPTERS]),
    (["run", "em_reading", "--profile", "fast"], ["--profile", "quick", "decide", "paper"]),
    (["run", "em_reading", "--device", "tpu"], ["--device", "auto", "cpu", "cuda"]),
    (["run", "em_reading", "--seeds", "0"], ["--seeds", "at least 1", "0"]),
    (["run", "em_reading", "--seeds", "six"], ["--seeds", "'six'"]),
    (["run", "em_reading", "--seed", "-1"], ["--seed", "non-negative"]),
    (["walk"], ["COMMAND", "invalid choice", "run", "list"]),
])
def test_bad_arguments_name_the_argument_and_the_allowed_values(capsys, argv, names):
    message = _fails(capsys, *argv)
    for name in names:
        assert name in message


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_refused_before_anything_runs(capsys, tmp_path):
    message = _fails(capsys, "run", "value_update", "--device", "cuda", "--out", str(tmp_path))
    assert "device='cuda'" in message and "cpu" in message
    assert not list(tmp_path.iterdir())


def test_list_names_every_chapter(capsys):
    assert cli.main(["list"]) == 0
    shown = capsys.readouterr().out
    assert all(chapter in shown for chapter in CHAPTERS)


def test_metric_says_what_a_name_is_in_each_chapter_that_declares_it(capsys):
    assert cli.main(["metric", "em_faster_share_seed2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("em_reading: ") and "seed 3 alone" in out
    assert cli.main(["metric", "no_such_metric"]) == 1
    assert "no chapter declares a metric 'no_such_metric'" in capsys.readouterr().err


def test_bits_compares_this_machines_digests_with_the_books(monkeypatch, capsys):
    from attention_dynamics import bitwise

    monkeypatch.setattr(bitwise, "machine_digests", lambda: dict(bitwise.REFERENCE_DIGESTS))
    assert cli.main(["bits"]) == 0
    shown = capsys.readouterr().out
    assert "pinned=yes" in shown and shown.count("same bits") == 3
    monkeypatch.setattr(bitwise, "machine_digests",
                        lambda: dict(bitwise.REFERENCE_DIGESTS) | {"lstm": "0" * 64})
    assert cli.main(["bits"]) == 1
    assert "DIFFERENT bits" in capsys.readouterr().out


def _fake_chapter(record, fail=False):
    """A chapter module whose ``run`` records ``record`` (and then raises if ``fail``)."""
    def settings(profile, n_seeds=None):
        if n_seeds is not None and n_seeds > 3:
            raise ValueError(f"n_seeds must be at most 3; got {n_seeds}")
        return {"profile": profile, "n_seeds": n_seeds or 2}

    def run(results, chosen, device, seed):
        results.record_all(record)
        if fail:
            raise KeyboardInterrupt  # as if the user stopped it
    return types.SimpleNamespace(settings=settings, run=run)


def test_a_run_writes_its_results_file_with_provenance(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cli, "chapter_module", lambda chapter: _fake_chapter({"answer": 42.0}))
    assert cli.main(["run", "em_reading", "--out", str(tmp_path), "--quiet", "--seed", "3"]) == 0
    written = json.loads((tmp_path / "em_reading.json").read_text())
    assert written["metrics"] == {"answer": 42.0}
    assert (written["notebook"], written["profile"], written["seed"]) == ("em_reading", "quick", 3)
    assert "library_modules" in written and "commit" in written
    assert written["settings"] == {"profile": "quick", "n_seeds": 2}
    assert written["seeds_argument"] is None and written["versions"]["pinned"] == "yes"
    assert "em-faster-share" in written["claims"]   # the rules of the claims it feeds
    assert str(tmp_path / "em_reading.json") in capsys.readouterr().out


def test_a_setting_the_chapter_refuses_is_a_usage_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cli, "chapter_module", lambda chapter: _fake_chapter({"answer": 1.0}))
    message = _fails(capsys, "run", "em_reading", "--seeds", "4", "--out", str(tmp_path))
    assert "n_seeds must be at most 3" in message
    assert not list(tmp_path.iterdir())


def test_an_interrupted_run_leaves_the_complete_file_in_place(monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "chapter_module", lambda chapter: _fake_chapter({"answer": 1.0}))
    cli.main(["run", "em_reading", "--out", str(tmp_path), "--quiet"])
    complete = (tmp_path / "em_reading.json").read_text()
    monkeypatch.setattr(cli, "chapter_module",
                        lambda chapter: _fake_chapter({"answer": 2.0}, fail=True))
    with pytest.raises(KeyboardInterrupt):
        cli.main(["run", "em_reading", "--out", str(tmp_path), "--quiet"])
    assert (tmp_path / "em_reading.json").read_text() == complete
    assert sorted(p.name for p in tmp_path.iterdir()) == ["em_reading.json"]


def test_progress_bars_show_only_when_asked():
    shown = io.StringIO()
    with training_run("silent", 10) as advance:
        advance(5)
    show_progress(shown)
    try:
        with training_run("bijection, seed 1", 200) as advance:
            advance(50, "a model, ignored")
            advance(500)  # past the end: held at the total
    finally:
        show_progress(None)
    text = shown.getvalue()
    assert "silent" not in text
    assert "bijection, seed 1" in text and "200/200" in text


def test_a_bar_refuses_negative_steps():
    with pytest.raises(ValueError, match="steps must be non-negative"):
        with training_run("x", -1):
            pass


@pytest.mark.slow
def test_the_command_line_writes_the_notebooks_numbers(results, tmp_path):
    """Chapter 2 run from the command line gives every (non-timing) metric of its notebook in
    the book build."""
    completed = subprocess.run(
        [sys.executable, "-m", "attention_dynamics", "run", "value_update", "--device", "cpu",
         "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    written = json.loads((tmp_path / "value_update.json").read_text())
    notebook = results["value_update"]
    timings = set(notebook["timing_metrics"]) | set(written["timing_metrics"])
    assert written["metrics"].keys() == notebook["metrics"].keys()
    for name, value in notebook["metrics"].items():
        if name not in timings:
            assert written["metrics"][name] == value, name


TINY_ROUTING = ROOT / "tests" / "tiny_settings" / "content_routing.json"


@pytest.mark.parametrize(("argv", "names"), [
    (["run", "em_reading", "--seed-range", "0:2"], ["em_reading does not run in parts",
                                                    *cli.IN_PARTS]),
    (["merge", "value_update", "--parts", "x"], ["value_update does not run in parts"]),
    (["run", "content_routing", "--seed-range", "4:2"], ["--seed-range", "0 <= start < stop"]),
    (["run", "content_routing", "--seed-range", "two"], ["--seed-range", "START:STOP"]),
    (["plan", "content_routing", "--parts", "0"], ["--parts", "at least 1"]),
    (["plan", "content_routing", "--parts", "3"], ["n_parts", "between 1 and", "(2)"]),
])
def test_bad_part_arguments_name_the_argument_and_what_is_allowed(capsys, argv, names):
    message = _fails(capsys, *argv)
    for name in names:
        assert name in message


def test_a_merge_without_its_parts_is_a_usage_error_before_anything_trains(capsys, tmp_path):
    message = _fails(capsys, "merge", "content_routing", "--settings", str(TINY_ROUTING), "--device",
                     "cpu", "--parts", str(tmp_path / "none"), "--out", str(tmp_path))
    assert "no part file of content_routing" in message
    assert not (tmp_path / "content_routing.json").exists()


def test_plan_prints_each_part_and_then_the_merge(capsys, tmp_path):
    assert cli.main(["plan", "content_routing", "--profile", "decide", "--device", "cpu",
                     "--parts", "4", "--parts-dir", str(tmp_path), "--out", "out"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("--seed-range ")[1].split()[0] for line in lines[:4]] == [
        "0:2", "2:4", "4:5", "5:6"]
    assert all(f"--out {tmp_path}" in line for line in lines[:4])
    assert lines[4].startswith("python -m attention_dynamics merge content_routing")
    assert lines[4].endswith(f"--parts {tmp_path} --out out") and len(lines) == 5
