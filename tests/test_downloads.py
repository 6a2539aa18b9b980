"""What readers download: the library's wheel, and notebooks that run outside the book.

The fast tests check the pieces (plain Markdown for MyST, the install cell, the wheel and what it
declares); the slow ones read the built book and run one downloaded notebook in a fresh virtual
environment where its install line put the library and its packages (the package registry must
be reachable).
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from attention_dynamics.book.results import book_notebooks
from book_build import BuildError
from book_build.downloads import (
    KERNEL_MODULES,
    LIBRARY,
    NOTEBOOKS_EXTRA,
    PIN,
    DownloadSettings,
    build_wheel,
    cpu_torch_line,
    imported_modules,
    install_cell_source,
    library_modules,
    notebook_pins,
    requirement_pins,
    runnable_download,
)
from book_build.plain_markdown import NotebookContext, page_references, plain_markdown

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = book_notebooks(ROOT / "_toc.yml")
RAW_MYST = re.compile(r"\{[\w:+-]+\}`|^\s*(:::|```\{)|^\s*\([\w:.-]+\)=\s*$|\[\^", re.M)
PAGE = """<nav><a class="reference internal" href="../book/ch.html">1. Chapter in the menu</a></nav>
<article class="bd-article">
<a class="reference internal" href="../book/ch.html"><span class="doc">The chapter</span></a>
<a class="reference internal" href="../book/ch.html#prop-law">Proposition 1.2</a>
<a class="reference internal" href="../book/ch.html#equation-eq-law">(1.3)</a>
<a class="reference internal" href="../book/api.html#module-pkg.verdicts" title="pkg.verdicts">
<code class="xref py py-mod"><span class="pre">verdicts</span></code></a>
</article>"""
GLUED = {"gap": {"text/plain": "0.123456"}, "steps": {"text/plain": "400.0"}}


def _context(site_url=None) -> NotebookContext:
    path = "notebooks/demo.html"
    return NotebookContext("demo", path, page_references(PAGE, path), GLUED, site_url)


def _settings(**overrides) -> DownloadSettings:
    return DownloadSettings(**{
        "wheel_name": "attention_dynamics-0.1.0-py3-none-any.whl", "version": "0.1.0",
        "pins": {"torch": "torch==2.13.0", "myst_nb": "myst-nb==1.4.0", "pandas": "pandas==3.1.1"},
        "library_imports": {"torch", "myst_nb", "math"}, "book_title": "Demo", **overrides})


def test_roles_become_the_text_their_page_shows():
    source = ("See {doc}`/book/ch`, {prf:ref}`prop-law` and {eq}`eq-law`; module "
              "{mod}`~pkg.verdicts`; a gap of {glue:text}`gap:.2f` after {glue:text}`steps:.0f` "
              "steps ({glue}`steps`), {cite}`Agarwal2025a`, {math}`x^2` and {sub}`low`.")
    assert plain_markdown(source, _context()) == (
        "See *The chapter*, Proposition 1.2 and (1.3); module `verdicts`; a gap of 0.12 after "
        "400 steps (400.0), [Agarwal2025a], $x^2$ and low.")
    linked = plain_markdown("{doc}`the law </book/ch>` and {prf:ref}`prop-law`",
                            _context("https://example.org/book/"))
    assert linked == ("[the law](https://example.org/book/book/ch.html) and "
                      "[Proposition 1.2](https://example.org/book/book/ch.html#prop-law)")


def test_directives_and_targets_become_plain_markdown():
    source = ("(sec-demo)=\n## Demo\n\n:::{note}\nSee {eq}`eq-law`.\n:::\n\n"
              "```{math}\n:label: eq-x\nx = 1\n```\n\n::::{admonition} Why\n:::{tip}\nin\n:::\n"
              "::::")
    assert plain_markdown(source, _context()) == (
        "## Demo\n\n> **Note**\n>\n> See (1.3).\n\n$$\nx = 1\n$$\n\n"
        "> **Why**\n>\n> > **Tip**\n> >\n> > in")
    with pytest.raises(BuildError, match="never closed"):
        plain_markdown(":::{note}\nopen", _context())


def test_footnotes_become_numbers_and_notes_at_the_end_of_their_cell():
    """Numbered across the notebook in order of first reference (a footnote referenced again in a
    later cell keeps its number), each note at the end of the cell that defines it, in order."""
    context = _context()
    cells = ["Layers[^encoder] (pre-norm) and a scan.[^scan] See {eq}`eq-law`.\n\n"
             "[^scan]: The default, `scan=\"auto\"`; not `[^a-z]`.\n"
             "[^encoder]: PyTorch's encoder layers,\n    `TransformerEncoder`.",
             "The same layers[^encoder] again[^encoder](twice)."]
    assert [plain_markdown(cell, context) for cell in cells] == [
        "Layers[1] (pre-norm) and a scan.[2] See (1.3).\n\n---\n\n"
        "1. PyTorch's encoder layers,\n   `TransformerEncoder`.\n"
        "2. The default, `scan=\"auto\"`; not `[^a-z]`.",
        "The same layers[1] again\\[1\\](twice)."]
    assert context.footnotes == {"encoder": 1, "scan": 2}
    # a rule ends a list the cell closes with, so that the notes keep their numbers; a note
    # defined apart from the one before it in number starts a list of its own
    context = _context()
    assert plain_markdown("One[^b].", context) == "One[1]."
    assert plain_markdown("1. a\n2. c[^c] and d[^d]\n\n[^d]: D.\n[^b]: B.", context) == (
        "1. a\n2. c[2] and d[3]\n\n---\n\n1. B.\n\n3) D.")


class _Anything(dict):
    """A page's links or a notebook's glued values that hold any key (a stand-in value)."""

    def __contains__(self, key):
        return True

    def __missing__(self, key):
        return self.default


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.py")), ids=lambda p: p.stem)
def test_no_footnote_is_left_raw_in_a_downloaded_notebook(path):
    """Every notebook's markdown, converted cell by cell as its download is, keeps no ``[^``, and
    each footnote it references has its one note."""
    import jupytext

    references, glued = _Anything(), _Anything()
    references.default = page_references(PAGE, "notebooks/demo.html")["#prop-law"]
    glued.default = {"text/plain": "1", "text/markdown": "1"}
    context = NotebookContext(path.stem, "notebooks/demo.html", references, glued, None)
    converted = [plain_markdown(cell.source, context)
                 for cell in jupytext.read(path).cells if cell.cell_type == "markdown"]
    assert not [cell for cell in converted if "[^" in cell]
    notes = [int(note) for cell in converted
             for note in re.findall(r"^(\d+)[.)] ", cell.partition("\n---\n")[2], re.M)]
    assert sorted(notes) == list(range(1, len(context.footnotes) + 1))


def test_a_reference_the_page_does_not_show_is_an_error():
    with pytest.raises(BuildError, match=r"notebooks/demo: \{eq\}`eq-other` has no link"):
        plain_markdown("{eq}`eq-other`", _context())
    with pytest.raises(BuildError, match="does not glue"):
        plain_markdown("{glue:text}`missing:.2f`", _context())
    with pytest.raises(BuildError, match="no <article>"):
        page_references("<html></html>", "notebooks/demo.html")


def test_the_install_cell_pins_what_the_notebook_and_the_library_import(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# pins\ntorch==2.13.0\njupyter-book>=1,<2\nmyst-nb==1.4.0  # glue\n"
                            "-e .\n")
    assert requirement_pins(requirements) == {"torch": "torch==2.13.0",
                                              "myst_nb": "myst-nb==1.4.0"}
    settings = _settings()
    pins = notebook_pins("demo", "import json\nimport pandas as pd\n%time 1", settings)
    assert pins == ["torch==2.13.0", "myst-nb==1.4.0", "pandas==3.1.1"]
    with pytest.raises(BuildError, match=r"notebooks/demo imports \['scipy'\]"):
        notebook_pins("demo", "from scipy import stats", settings)
    cell = install_cell_source(pins, _settings(site_url="https://example.org/book/"))
    assert "NEEDED = ('attention_dynamics', 'torch', 'myst_nb', 'pandas')" in cell
    assert ('    %pip install \\\n        "https://example.org/book/wheel/attention_dynamics-0.1.0-'
            'py3-none-any.whl[notebooks]" \\\n        torch==2.13.0 \\\n') in cell
    # without the book's address, the wheel is a file beside the notebook
    assert '        "attention_dynamics-0.1.0-py3-none-any.whl[notebooks]" \\\n' in install_cell_source(
        pins, settings)
    # without torch and an NVIDIA GPU, torch's CPU build first, from PyTorch's CPU index
    assert ('    if importlib.util.find_spec("torch") is None and not shutil.which("nvidia-smi"):\n'
            "        %pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0\n"
            "    %pip install \\\n") in cell
    assert "download.pytorch.org" not in install_cell_source(["pandas==3.1.1"], settings)


def test_the_pages_cpu_install_names_the_pinned_torch_and_the_wheels_version():
    """The introduction and the README give the by-hand install of a laptop: torch's CPU build at
    requirements.txt's pin, then the wheel of pyproject.toml's version with its extra."""
    torch = requirement_pins(ROOT / "requirements.txt")["torch"]
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for page in (ROOT / "book" / "intro.md", ROOT / "README.md"):
        text = page.read_text()
        assert cpu_torch_line(torch) in text, page.name
        assert f'pip install "attention_dynamics-{version}-py3-none-any.whl[notebooks]"' in text, \
            page.name


def test_the_download_opens_with_running_this_code_and_leaves_the_notebook_as_it_was():
    record = "application/papermill.record/"
    glue = nbformat.v4.new_output("display_data", data={f"{record}text/plain": "1"},
                                  metadata={"scrapbook": {"name": "n", "mime_prefix": record}})
    executed = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Demo\n\nChecks {prf:ref}`prop-law`."),
        nbformat.v4.new_code_cell("import torch\nfrom attention_dynamics import heads",
                                  outputs=[nbformat.v4.new_output("stream", text="1\n"), glue])])
    executed.metadata["papermill"] = {"input_path": "/build/.stage/demo.ipynb",
                                      "parameters": {"profile": "quick", "seed": 0}}
    download = runnable_download(executed, "demo", PAGE, _settings(), earlier=["a", "b"])
    first, install, title = download.cells[:3]
    assert first.source.startswith("## Running this code") and "profile `quick`" in first.source
    assert "`a`, `b`" in first.source and "--only a b demo" in first.source
    # how a laptop installs it by hand (torch's CPU build first) and runs it without Jupyter
    assert ("```bash\npip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0\n"
            'pip install "attention_dynamics-0.1.0-py3-none-any.whl[notebooks]"\n'
            "jupyter execute --inplace demo.ipynb\n```") in first.source
    assert install.cell_type == "code" and "%pip install" in install.source
    assert title.source == "# Demo\n\nChecks Proposition 1.2."
    assert [output["output_type"] for output in download.cells[3].outputs] == ["stream"]  # no glue
    assert "input_path" not in download.metadata["papermill"]
    assert executed.cells[0].source.endswith("{prf:ref}`prop-law`.")  # the original is untouched
    assert "input_path" in executed.metadata["papermill"]


def test_the_wheel_builds_offline_with_every_module_of_the_library(tmp_path):
    wheel = build_wheel(tmp_path / "wheel", tmp_path / "scratch")
    assert wheel.name.startswith("attention_dynamics-") and wheel.name.endswith("-py3-none-any.whl")
    packaged = {name for name in zipfile.ZipFile(wheel).namelist() if name.endswith(".py")}
    sources = {path.relative_to(ROOT / "lib").as_posix()
               for path in (ROOT / "lib" / "attention_dynamics").rglob("*.py")}
    assert packaged == sources
    assert not (ROOT / "build").exists()  # built from a copy: nothing left in the repository


def test_the_wheel_declares_what_a_downloaded_notebook_needs():
    """The library's dependencies and its ``notebooks`` extra name a package for every module
    that a notebook or the library imports (and a Jupyter kernel), and requirements.txt pins the
    extra's and satisfies every one it pins: the downloaded notebook's one install line resolves,
    at the versions the book was built with."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = [Requirement(text) for text in project["optional-dependencies"][NOTEBOOKS_EXTRA]]
    declared = [Requirement(text) for text in project["dependencies"]] + extra
    names = {canonicalize_name(requirement.name) for requirement in declared}
    assert {"myst-nb", "ipykernel", "nbclient"} <= {canonicalize_name(r.name) for r in extra}

    pinned = {canonicalize_name(match["name"]): match["version"]
              for line in (ROOT / "requirements.txt").read_text().splitlines()
              if (match := PIN.match(line.strip()))}
    assert all(canonicalize_name(requirement.name) in pinned for requirement in extra)
    for requirement in declared:
        name = canonicalize_name(requirement.name)
        assert name not in pinned or requirement.specifier.contains(pinned[name], prereleases=True), \
            f"{requirement} in pyproject.toml, {name}=={pinned[name]} in requirements.txt"

    notebooks = sorted((ROOT / "notebooks").glob("*.py"))
    assert notebooks
    imported = set().union(*(imported_modules(path.read_text()) for path in notebooks))
    imported |= library_modules(ROOT / "lib" / LIBRARY)
    distributions = packages_distributions()
    missing = sorted(
        module for module in imported - set(sys.stdlib_module_names) - {LIBRARY}
        if not ({canonicalize_name(d) for d in distributions.get(module, [])} & names
                or (module in KERNEL_MODULES and "ipykernel" in names)))
    assert not missing, f"imported, but neither a dependency nor in [{NOTEBOOKS_EXTRA}]: {missing}"


@pytest.mark.slow
def test_the_book_carries_the_wheel_and_runnable_downloads(built_book):
    html = built_book / "html"
    assert len(list((html / "wheel").glob("attention_dynamics-*-py3-none-any.whl"))) == 1
    for name in NOTEBOOKS:
        download = nbformat.read(html / "_sources" / "notebooks" / f"{name}.ipynb", as_version=4)
        assert download.cells[0].source.startswith("## Running this code"), name
        assert "%pip install" in download.cells[1].source, name
        reads_others = "needs the results of other notebooks" in download.cells[0].source
        # every notebook after the chapters gets the note, the rule log too (it reads none)
        assert reads_others == (name in ("benchmarks", "reproduction_report", "rule_log",
                                         "execution_report")), name
        raw = [match[0] for cell in download.cells if cell.cell_type == "markdown"
               for match in RAW_MYST.finditer(cell.source)]
        assert not raw, (name, raw)
        assert not [output for cell in download.cells for output in cell.get("outputs", [])
                    if "scrapbook" in output.get("metadata", {})], name
        # the page shows the notebook as the book ran it, without the install cells
        assert "Running this code" not in (html / "notebooks" / f"{name}.html").read_text()


PROBE = ("import json, sys, attention_dynamics, myst_nb\n"
         "print(json.dumps({'library': attention_dynamics.__file__, 'myst_nb': myst_nb.__file__, "
         "'prefix': sys.prefix, 'path': sys.path}))")
RUNNER = """import sys
import nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(notebook, kernel_name="python3", timeout=900,
               resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(notebook, sys.argv[3])
"""


def _fresh_environment(folder: Path) -> Path:
    """A new virtual environment in ``folder``: pip, and this environment's torch alone (the
    one package that pip would otherwise download, at gigabytes for its GPU build), reached
    through a ``.pth`` file to a folder that holds nothing else. Returns its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    torch = distribution("torch")
    installed = Path(torch.locate_file(""))
    shared = folder / "shared_torch"
    shared.mkdir()
    for top in sorted({Path(str(file)).parts[0] for file in torch.files}):
        if top != ".." and (installed / top).exists():
            (shared / top).symlink_to(installed / top)
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "shared_torch.pth").write_text(f"{shared}\n")
    return python


def _install_line(install_cell: str) -> list[str]:
    """The arguments of the ``%pip install`` line of a downloaded notebook's install cell that
    installs the wheel (the last; torch's CPU build comes before it)."""
    line = install_cell.rsplit("%pip install", 1)[1].replace("\\\n", " ").splitlines()[0]
    return shlex.split(line)


@pytest.mark.slow
def test_a_downloaded_notebook_runs_from_the_wheel_in_a_fresh_environment(built_book, tmp_path):
    """The install cell's one line (the wheel with its notebooks extra, and the pins) installs,
    from the package registry, all that the downloaded chapter notebook needs into an empty
    environment (torch aside, shared from this one); the notebook then runs there."""
    html = built_book / "html"
    (wheel,) = (html / "wheel").glob("*.whl")
    python = _fresh_environment(tmp_path / "fresh")
    notebook = nbformat.read(html / "_sources" / "notebooks" / "score_gradient.ipynb",
                             as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    run = tmp_path / "run"  # outside the repository: no _toc.yml above it
    run.mkdir()
    (run / "score_gradient.ipynb").write_text(nbformat.writes(notebook))
    shutil.copy2(wheel, run / wheel.name)  # a book built without its address: the wheel beside
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTHONPATH" and not key.startswith("ATTENTION_DYNAMICS_")}
    arguments = _install_line(notebook.cells[1].source)
    assert arguments[0] == f"{wheel.name}[notebooks]"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
         *arguments], cwd=run, env=environment, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-5000:]
    completed = subprocess.run(
        [str(python), "-c", RUNNER, str(run / "score_gradient.ipynb"), str(run),
         str(run / "executed.ipynb")], cwd=run, env=environment, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-5000:]
    executed = nbformat.read(run / "executed.ipynb", as_version=4)
    assert executed.cells[1].outputs == []  # the install cell found everything: no second pip
    probe = json.loads(executed.cells[-1].outputs[0]["text"])
    assert probe["prefix"] == str(tmp_path / "fresh")
    assert Path(probe["library"]).is_relative_to(tmp_path / "fresh")
    assert Path(probe["myst_nb"]).is_relative_to(tmp_path / "fresh")  # from the extra
    assert str(ROOT / "lib") not in probe["path"]
    results = json.loads((run / "_build" / "results" / "score_gradient.json").read_text())
    assert results["metrics"]["routing_law_max_abs_error"] < 1e-10
