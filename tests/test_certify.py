"""Certifying a committed results file by its rerun (scripts/certify.py)."""

import json

import pytest
from certify import certify, main


def results_file(metrics: dict, commit: str, **rest) -> dict:
    return {"notebook": "em_reading", "profile": "decide", "metrics": metrics,
            "timing_metrics": ["seconds"], "commit": commit, "date": "2026-12-0" + commit[-1],
            "versions": {"cpu_model": f"CPU {commit}"}, "library_modules": {"a.py": commit},
            **rest}


@pytest.fixture
def files(tmp_path):
    committed = tmp_path / "committed.json"
    candidate = tmp_path / "candidate.json"
    committed.write_text(json.dumps(results_file({"loss": 0.25, "seconds": 3.0}, "old1")))
    return committed, candidate


def test_an_identical_rerun_certifies_and_rewrites_only_the_provenance(files, capsys):
    committed, candidate = files
    candidate.write_text(json.dumps(results_file({"loss": 0.25, "seconds": 9.0}, "new2",
                                                 settings={"steps": 4})))
    assert certify(committed, candidate) == 0
    written = json.loads(committed.read_text())
    assert written["metrics"] == {"loss": 0.25, "seconds": 3.0}      # the timing kept too
    assert written["commit"] == "new2" and written["settings"] == {"steps": 4}
    assert written["certified_from"]["commit"] == "old1"
    assert written["certified_from"]["versions"] == {"cpu_model": "CPU old1"}
    assert "1 metrics identical" in capsys.readouterr().out


def test_a_rerun_that_differs_in_the_last_bit_leaves_the_file_unless_asked(files, capsys):
    committed, candidate = files
    before = committed.read_text()
    candidate.write_text(json.dumps(results_file({"loss": 0.25000000000000006}, "new2")))
    assert certify(committed, candidate) == 1
    assert committed.read_text() == before
    assert "loss: 0.25 -> 0.25000000000000006" in capsys.readouterr().out
    assert certify(committed, candidate, replace=True) == 1
    assert json.loads(committed.read_text())["commit"] == "new2"
    assert "certified_from" not in json.loads(committed.read_text())


def test_bad_arguments_are_named(capsys):
    with pytest.raises(SystemExit):
        main(["chapter_six"])
    assert "invalid choice" in capsys.readouterr().err
