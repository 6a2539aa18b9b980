"""A chapter's run in parts: seed ranges, the unit store, the checks of a merge, and a merge of
two parts run as separate processes that equals one whole run, bit for bit (the command line's
part arguments: tests/test_cli.py)."""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.parts import (
    MissingUnitError,
    PartsError,
    SeedRange,
    Unit,
    Units,
    find_parts,
    load_parts,
    part_paths,
    run_part,
    split_range,
)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "tiny_settings" / "content_routing.json"


def test_a_seed_range_reads_start_colon_stop_and_refuses_anything_else():
    assert SeedRange.parse("2:5") == SeedRange(2, 5)
    assert [i for i in range(7) if i in SeedRange.parse(" 2 : 5 ")] == [2, 3, 4]
    assert str(SeedRange(0, 3)) == "0:3" and SeedRange(0, 3).stem == "part-0-3"
    for text in ("5:2", "3:3", "-1:2", "2", "a:b", "1:2:3"):
        with pytest.raises(ValueError, match="START:STOP|0 <= start < stop"):
            SeedRange.parse(text)


@pytest.mark.parametrize(("n", "parts", "expected"), [
    (6, 2, [(0, 3), (3, 6)]),
    (7, 3, [(0, 3), (3, 5), (5, 7)]),
    (4, 4, [(0, 1), (1, 2), (2, 3), (3, 4)]),
    (5, 1, [(0, 5)]),
])
def test_split_range_covers_every_index_once_in_near_equal_ranges(n, parts, expected):
    assert [(r.start, r.stop) for r in split_range(n, parts)] == expected


def test_split_range_refuses_more_parts_than_indices():
    with pytest.raises(ValueError, match="n_parts must be between 1 and"):
        split_range(3, 4)


def test_units_train_in_place_or_come_from_the_store_and_name_a_missing_one():
    calls = []
    inline = Units()
    assert inline.get(Unit("a", 0), lambda: calls.append(1) or "trained") == "trained"
    assert calls == [1]
    stored = Units({Unit("a", 0): "stored"})
    assert stored.get(Unit("a", 0), lambda: calls.append(2)) == "stored" and calls == [1]
    with pytest.raises(MissingUnitError, match="'b' of seed index 3"):
        stored.get(Unit("b", 3), lambda: None)


def _toy_chapter(n_seeds=4):
    """A chapter module in parts whose units are two jobs per seed, each a tensor fixed by the
    base seed, job and index (no training)."""
    def units(chosen):
        return [Unit(job, r) for job in ("x", "y") for r in range(chosen["n_seeds"])]

    def unit_trainer(chosen, device, seed):
        return lambda unit: torch.full((2,), 100.0 * seed + 10 * (unit.name == "y") + unit.index)

    return types.SimpleNamespace(units=units, unit_trainer=unit_trainer), {"n_seeds": n_seeds}


def _toy_part(tmp_path, seeds: SeedRange, chosen=None, seed=0):
    module, default = _toy_chapter()
    results = Results("toy", "quick", "cpu", seed, directory=tmp_path)
    results.use_settings(chosen or default)
    return run_part(module, results, chosen or default, torch.device("cpu"), seed, seeds)


def _merge_expectation(tmp_path, chosen=None, seed=0):
    results = Results("toy", "quick", "cpu", seed, directory=tmp_path)
    results.use_settings(chosen or _toy_chapter()[1])
    return results.as_dict()


def test_parts_merge_into_every_unit_once_with_each_parts_provenance(tmp_path):
    module, chosen = _toy_chapter()
    info, units_file = _toy_part(tmp_path, SeedRange(2, 4))
    _toy_part(tmp_path, SeedRange(0, 2))
    assert (info, units_file) == part_paths(tmp_path, "toy", SeedRange(2, 4))
    assert [p.name for p in find_parts(tmp_path, "toy")] == ["toy.part-0-2.json",
                                                              "toy.part-2-4.json"]
    assert json.loads(info.read_text())["units"] == [["x", 2], ["x", 3], ["y", 2], ["y", 3]]
    stored, summaries = load_parts(tmp_path, "toy", _merge_expectation(tmp_path),
                                   module.units(chosen))
    assert sorted(stored) == sorted(module.units(chosen))
    assert torch.equal(stored[Unit("y", 3)], torch.full((2,), 13.0))
    assert [s["seed_range"] for s in summaries] == [[0, 2], [2, 4]]
    assert all(s["cpu_model"] and s["commit"] for s in summaries)


def test_a_merge_refuses_missing_overlapping_foreign_and_absent_parts(tmp_path):
    module, chosen = _toy_chapter()
    needed = module.units(chosen)
    with pytest.raises(PartsError, match="no part file of toy"):
        load_parts(tmp_path, "toy", _merge_expectation(tmp_path), needed)
    _toy_part(tmp_path, SeedRange(0, 2))
    with pytest.raises(PartsError, match="lack the units of seed indices 2, 3"):
        load_parts(tmp_path, "toy", _merge_expectation(tmp_path), needed)
    _toy_part(tmp_path, SeedRange(1, 4))
    with pytest.raises(PartsError, match="units that another part holds too: x #1"):
        load_parts(tmp_path, "toy", _merge_expectation(tmp_path), needed)
    with pytest.raises(PartsError, match="another seed"):
        load_parts(tmp_path, "toy", _merge_expectation(tmp_path, seed=5), needed)
    with pytest.raises(PartsError, match="another settings"):
        load_parts(tmp_path, "toy", _merge_expectation(tmp_path, {"n_seeds": 2}), needed)


def test_a_part_made_by_other_code_or_without_the_pin_is_refused(tmp_path):
    module, chosen = _toy_chapter(n_seeds=1)
    info, _ = _toy_part(tmp_path, SeedRange(0, 1), chosen)
    content = json.loads(info.read_text())
    content["library_modules"] = {"attention.py": "py3.11:0000000000000000"}
    content["versions"] = content["versions"] | {"aten_cpu_capability": "avx512"}
    info.write_text(json.dumps(content))
    with pytest.raises(PartsError, match="code changed since it ran: attention.py.*dispatch"):
        load_parts(tmp_path, "toy", _merge_expectation(tmp_path, chosen), module.units(chosen))


def test_a_part_beyond_the_settings_seeds_is_refused_before_training(tmp_path):
    with pytest.raises(PartsError, match=r"beyond the 4 seed indices of these settings \(0:4\)"):
        _toy_part(tmp_path, SeedRange(3, 5))
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_two_parts_in_separate_processes_merge_into_the_whole_runs_bits(tmp_path):
    """Chapter 5 at tiny settings: a whole run, and two parts and their merge, each its own
    process; every metric but the timings is the same to the bit."""
    env = os.environ | {"PYTHONPATH": str(ROOT / "lib")}
    base = [sys.executable, "-m", "attention_dynamics"]
    common = ["content_routing", "--settings", str(TINY), "--device", "cpu", "--quiet"]

    def call(*argv):
        subprocess.run([*base, *argv], check=True, env=env, cwd=tmp_path, capture_output=True)

    call("run", *common, "--out", "whole")
    call("run", *common, "--seed-range", "1:2", "--out", "parts")
    call("run", *common, "--seed-range", "0:1", "--out", "parts")
    call("merge", *common, "--parts", "parts", "--out", "merged")
    whole = json.loads((tmp_path / "whole" / "content_routing.json").read_text())
    merged = json.loads((tmp_path / "merged" / "content_routing.json").read_text())
    timings = set(whole["timing_metrics"])
    assert set(merged["timing_metrics"]) == timings

    def numbers(content):
        return {name: value for name, value in content["metrics"].items() if name not in timings}

    assert numbers(merged) == numbers(whole) and len(numbers(whole)) > 200
    assert [part["seed_range"] for part in merged["parts"]] == [[0, 1], [1, 2]]
    assert "parts" not in whole
    assert merged["library_modules"] == whole["library_modules"]
