"""Profiles, devices, seeds and the results file."""

import json

import pytest
import torch

from attention_dynamics.book.results import Results, load_results
from attention_dynamics.runtime import evaluation_mode, resolve_device, seed_everything, select


def test_unknown_profile_and_device_name_the_allowed_values():
    with pytest.raises(ValueError, match=r"profile must be one of 'quick', 'decide', 'paper'"):
        select("fast", quick=1, paper=2)
    with pytest.raises(ValueError, match=r"device must be one of 'auto', 'cpu', 'cuda'"):
        resolve_device("gpu")
    with pytest.raises(ValueError, match="missing"):
        select("quick", quick=1)


def test_select_and_device():
    assert select("paper", quick=1, paper=2) == 2
    assert select("decide", quick=1, paper=2) == 1          # decide changes only what it names
    assert select("decide", quick=1, decide=3, paper=2) == 3
    with pytest.raises(ValueError, match="unknown"):
        select("quick", quick=1, paper=2, fast=3)
    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            resolve_device("cuda")


def test_seeding_is_reproducible():
    a = torch.randn(5, generator=seed_everything(3))
    b = torch.randn(5, generator=seed_everything(3))
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)


def test_results_file_round_trip(tmp_path):
    res = Results("demo", "quick", "cpu", 7, directory=tmp_path)
    res.record("error", torch.tensor(1e-17, dtype=torch.float64))
    res.record("speedup", 12.5, timing=True)
    with pytest.raises(ValueError, match="already recorded"):
        res.record("error", 0.0)
    with pytest.raises(ValueError, match="finite"):
        res.record("broken", float("nan"))
    path = res.save()
    content = json.loads(path.read_text())
    assert content["metrics"] == {"error": 1e-17, "speedup": 12.5}
    assert content["timing_metrics"] == ["speedup"]
    assert set(content) >= {"notebook", "profile", "device", "seed", "wall_time_s", "versions"}
    assert load_results(tmp_path)["demo"]["seed"] == 7
    assert not list(tmp_path.glob("*.partial"))


def test_build_results_refuse_missing_and_stale_files(tmp_path, monkeypatch):
    from attention_dynamics.book.results import BUILD_ID_VARIABLE, load_build_results

    monkeypatch.setenv(BUILD_ID_VARIABLE, "old")
    Results("first", "quick", "cpu", 0, directory=tmp_path).save()
    monkeypatch.setenv(BUILD_ID_VARIABLE, "new")
    Results("second", "quick", "cpu", 0, directory=tmp_path).save()
    assert set(load_build_results(["second"], tmp_path)) == {"second"}
    with pytest.raises(RuntimeError, match=r"missing for \['third'\] and stale .* for \['first'\]"):
        load_build_results(["first", "second", "third"], tmp_path)


def test_evaluation_mode_restores_training_even_after_an_error():
    model = torch.nn.Dropout(0.5)
    with evaluation_mode(model):
        assert not model.training
    assert model.training
    with pytest.raises(RuntimeError, match="inside"), evaluation_mode(model):
        assert not model.training
        raise RuntimeError("inside")
    assert model.training
    model.eval()
    with evaluation_mode(model):
        pass
    assert not model.training  # a model in eval mode stays there
    function = len
    with evaluation_mode(function) as same:
        assert same is function
