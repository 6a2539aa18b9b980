"""Provenance of results files: code fingerprints by syntax tree, settings, claims' rules and the
CPU dispatch decide whether a committed file is current."""

import json
import shutil

import pytest

from attention_dynamics.book.provenance import (
    CHANGED_DURING_RUN,
    PACKAGE_ROOT,
    changed_library_modules,
    changed_rules,
    chapter_settings,
    claim_fingerprints,
    code_fingerprint,
    loaded_library_modules,
    stale_reasons,
)
from attention_dynamics.book.results import load_profile_results
from attention_dynamics.dispatch import dispatch_state

SOURCE = '''"""A module."""

WIDTH = 64  # the model's width


def scale(x):
    """Twice x."""
    return 2 * x
'''


def test_code_fingerprints_ignore_docstrings_comments_and_layout_but_not_code():
    same = SOURCE.replace('"""Twice x."""', '"""Twice ``x``, as a float."""')
    same = same.replace("# the model's width", "# width").replace("return 2 * x", "return 2*x")
    assert code_fingerprint(same) == code_fingerprint(SOURCE)
    assert code_fingerprint(SOURCE.replace('    """Twice x."""\n', "")) == code_fingerprint(SOURCE)
    assert code_fingerprint(SOURCE.replace("WIDTH = 64", "WIDTH = 32")) != code_fingerprint(SOURCE)
    assert code_fingerprint(SOURCE.replace("2 * x", "3 * x")) != code_fingerprint(SOURCE)
    # a string that is a value, not a bare statement, is code
    assert code_fingerprint("NAME = 'a'\n") != code_fingerprint("NAME = 'b'\n")
    assert code_fingerprint(SOURCE).startswith("py3.")


def test_a_settings_table_is_data_that_the_settings_record_covers():
    table = "SETTINGS = {'quick': 1}\n_QUICK = 2\nSTRIDE = 11\n"
    names = frozenset({"SETTINGS", "_QUICK"})
    edited = table.replace("'quick': 1", "'quick': 5").replace("_QUICK = 2", "_QUICK = 7")
    assert code_fingerprint(edited, names) == code_fingerprint(table, names)
    assert code_fingerprint(table.replace("11", "12"), names) != code_fingerprint(table, names)


@pytest.fixture
def package_copy(tmp_path):
    """A copy of the library's code, to edit without touching the real one."""
    copy = tmp_path / "attention_dynamics"
    shutil.copytree(PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_docstring_edit_keeps_a_recorded_run_current_and_a_constant_stales_it(package_copy):
    import attention_dynamics.chapters.value_update  # noqa: F401 (a chapter's modules loaded)

    recorded = loaded_library_modules()
    assert "chapters/value_update/settings.py" in recorded and "toy_routing.py" in recorded
    assert changed_library_modules(recorded, package_copy) == []
    module = package_copy / "toy_routing.py"
    text = module.read_text()
    docstring_end = text.index('"""', 3)
    module.write_text(text[:docstring_end] + " Edited." + text[docstring_end:] + "\n# a comment\n")
    assert changed_library_modules(recorded, package_copy) == []
    settings = package_copy / "chapters" / "value_update" / "settings.py"
    settings.write_text(settings.read_text().replace('"steps": 400', '"steps": 500'))
    assert changed_library_modules(recorded, package_copy) == []  # data, compared by value
    text = settings.read_text()
    assert "LR_CHECK = 0.5" in text
    settings.write_text(text.replace("LR_CHECK = 0.5", "LR_CHECK = 0.25"))
    assert changed_library_modules(recorded, package_copy) == ["chapters/value_update/settings.py"]


def test_a_file_changed_during_the_run_never_matches(package_copy):
    recorded = {"runtime.py": CHANGED_DURING_RUN}
    assert changed_library_modules(recorded, package_copy) == ["runtime.py"]


def current_content(notebook: str = "value_update", profile: str = "decide") -> dict:
    """A results file's provenance as a run of the library now would write it."""
    import attention_dynamics.chapters.value_update  # noqa: F401

    return {"notebook": notebook, "profile": profile, "metrics": {},
            "library_modules": loaded_library_modules(),
            "settings": chapter_settings(notebook, profile, None), "seeds_argument": None,
            "claims": claim_fingerprints(notebook), "versions": dispatch_state()}


def test_stale_reasons_name_code_settings_rules_and_the_pin():
    content = current_content()
    assert content["claims"] and stale_reasons(content) == []
    settings = json.loads(json.dumps(content["settings"]))
    settings["steps"] += 1
    assert stale_reasons(content | {"settings": settings}) == ["the decide settings changed since"]
    key = next(iter(content["claims"]))
    changed = content | {"claims": {**content["claims"], key: "0" * 16}}
    assert stale_reasons(changed) == [f"rule changed or added since: {key}"]
    # a changed rule makes only its own claim's row stale, not the file
    assert changed_rules(changed) == [key] and stale_reasons(changed, rules=False) == []
    added = content | {"claims": {name: value for name, value in content["claims"].items()
                                  if name != key}}
    assert changed_rules(added) == [key] and changed_rules(content) == []
    assert stale_reasons(content | {"versions": {"pinned": "no"}}) == [
        "made without the CPU dispatch pin (or no record of it)"]
    unstrict = content["versions"] | {"mkl_cbwr": "AVX2"}
    assert stale_reasons(content | {"versions": unstrict}) == [
        "made with another CPU dispatch than the pin: mkl_cbwr AVX2 (pinned: AVX2,STRICT)"]
    modules = {**content["library_modules"], "runtime.py": "py3.11:0123456789abcdef"}
    assert stale_reasons(content | {"library_modules": modules}) == [
        "code changed since: runtime.py"]
    assert stale_reasons(content | {"library_modules": {"runtime.py": "0123456789abcdef"}}) == [
        "its modules were recorded by byte hash, before code fingerprints, and cannot be "
        "compared: runtime.py"]
    bare = {key: value for key, value in content.items()
            if key not in ("library_modules", "settings", "claims")}
    assert len(stale_reasons(bare)) == 3


def test_committed_profile_results_carry_their_reasons(tmp_path):
    assert load_profile_results("decide", tmp_path) == {}
    folder = tmp_path / "results" / "decide"
    folder.mkdir(parents=True)
    (folder / "value_update.json").write_text(json.dumps(current_content()))
    old = current_content() | {"library_modules": {"runtime.py": "py3.11:0123456789abcdef"}}
    (folder / "old.json").write_text(json.dumps(old | {"notebook": "old"}))
    found = load_profile_results("decide", tmp_path)
    assert found["value_update"]["stale"] is False and found["value_update"]["stale_reasons"] == []
    assert found["old"]["stale"] is True
    assert found["old"]["stale_reasons"] == ["code changed since: runtime.py"]
    assert found["value_update"]["stale_claims"] == found["old"]["stale_claims"] == []
    content = current_content()
    key = next(iter(content["claims"]))
    (folder / "value_update.json").write_text(json.dumps(
        content | {"claims": {**content["claims"], key: "0" * 16}}))
    found = load_profile_results("decide", tmp_path)["value_update"]
    assert found["stale"] is False and found["stale_claims"] == [key]
    assert found["stale_reasons"] == [f"rule changed or added since: {key}"]
    with pytest.raises(ValueError, match="profile"):
        load_profile_results("fast", tmp_path)


def test_the_scheduler_names_a_slurm_array_task_a_job_or_none():
    from attention_dynamics.book.provenance import scheduler

    assert scheduler({"SLURM_ARRAY_JOB_ID": "12", "SLURM_ARRAY_TASK_ID": "3",
                      "SLURM_JOB_ID": "15"}) == "Slurm array job 12, task 3"
    assert scheduler({"SLURM_JOB_ID": "15"}) == "Slurm job 15"
    assert scheduler({"HOME": "/root"}) == "none"
