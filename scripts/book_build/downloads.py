"""What readers download: the library's wheel, and notebooks that run outside the book.

The wheel is built before the HTML is rendered (:func:`build_wheel`); the book's Sphinx
extension ``book/_ext/library_wheel.py`` puts it into the HTML as ``wheel/<file>.whl`` and links
it from every page. It declares the extra ``notebooks`` (``pyproject.toml``): what a downloaded
notebook needs beyond the library (myst-nb for its glue, a Jupyter kernel).

Each notebook's page offers its executed notebook for download as
``_sources/notebooks/<name>.ipynb`` (Sphinx copies it there); that copy, and only that one, is
replaced by a runnable one (:func:`runnable_download`): it opens with a "Running this code"
section, a markdown cell that says what running the notebook needs and a code cell that installs
it; its markdown cells hold plain Markdown instead of MyST (:mod:`book_build.plain_markdown`),
and the outputs that only feed the pages (glue) are gone. The page is rendered before this and
shows none of it.

The install cell is one ``%pip install`` line: the wheel with its ``notebooks`` extra, and the
versions the book was built with of what the notebook imports. It runs only when one of the
modules the notebook needs cannot be imported, so it downloads nothing where the library and
its packages are installed already (a second run, a checkout of the book). Before it, where
torch is missing and the machine has no NVIDIA GPU (no ``nvidia-smi``), one more line installs
the pinned torch from PyTorch's CPU index (:data:`CPU_TORCH_INDEX`): PyPI's torch for Linux
carries CUDA, gigabytes that a CPU cannot use, and pip cannot take an index from a wheel's
metadata.
"""

from __future__ import annotations

import ast
import copy
import posixpath
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from book_build import ROOT, BuildError
from book_build.plain_markdown import NotebookContext, glued_values, page_references, plain_markdown

PACKAGE_SOURCES = ("pyproject.toml", "README.md", "lib")
"""What building the library's wheel reads (``pyproject.toml`` packages ``lib/``)."""
WHEEL_FOLDER = "wheel"
"""The wheel's folder in the HTML."""
LIBRARY = "attention_dynamics"
NOTEBOOKS_EXTRA = "notebooks"
"""The wheel's extra with what a downloaded notebook needs (``pyproject.toml``)."""
KERNEL_MODULES = {"IPython", "ipykernel"}
"""Modules every Jupyter kernel has, so the install cell need not install them."""
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;#]+)")
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's package index of its CPU builds (no CUDA libraries), for every platform."""
RUN_COMMAND = "jupyter execute --inplace"
"""Runs a notebook without a Jupyter front end (nbclient, in the ``notebooks`` extra)."""


def notebook_page(name: str) -> str:
    """The path of notebook ``name``'s page from the site's root."""
    return f"notebooks/{name}.html"


def build_wheel(destination: Path, scratch: Path) -> Path:
    """Build the library's wheel into ``destination`` and return its path.

    The sources (:data:`PACKAGE_SOURCES`) are copied into ``scratch`` first, so that the build's
    own folders (``build/``, ``*.egg-info``) stay out of the repository; pip builds without
    network access (no index, no isolated build environment: the backend is installed).
    """
    package = scratch / "package"
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for name in PACKAGE_SOURCES:
        origin = ROOT / name
        if not origin.exists():
            raise BuildError(f"the library's wheel needs {origin}, which does not exist")
        if origin.is_dir():
            shutil.copytree(origin, package / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, package / name)
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--quiet", "--wheel-dir", str(destination), str(package)],
        capture_output=True, text=True)
    wheels = sorted(destination.glob("*.whl"))
    if completed.returncode != 0 or len(wheels) != 1:
        raise BuildError(f"building the library's wheel failed (exit {completed.returncode}, "
                         f"wheels {[path.name for path in wheels]}):\n{completed.stderr[-3000:]}")
    return wheels[0]


def requirement_pins(requirements: Path) -> dict[str, str]:
    """The exact pins (``name==version``) of a requirements file, by the module name they
    install (the name in lower case, ``-`` as ``_``: ``myst-nb`` -> ``myst_nb``)."""
    pins = {}
    for line in requirements.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            pins[match["name"].lower().replace("-", "_").replace(".", "_")] = match[0]
    return pins


def imported_modules(code: str) -> set[str]:
    """The top-level modules that Python ``code`` imports, anywhere in it (IPython magics
    allowed); relative imports do not count."""
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(code))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


def library_modules(package: Path) -> set[str]:
    """The modules the library's source files in ``package`` import."""
    return set().union(*(imported_modules(path.read_text()) for path in package.rglob("*.py")))


@dataclass(frozen=True)
class DownloadSettings:
    """What every downloaded notebook of one build shares."""

    wheel_name: str
    """The wheel's file name."""
    version: str
    """The library's version."""
    pins: dict[str, str]
    """requirements.txt's pins by module name (:func:`requirement_pins`)."""
    library_imports: set[str]
    """The modules the library imports (:func:`library_modules`)."""
    book_title: str
    """The book's title (``_config.yml``)."""
    site_url: str | None = None
    """The published book's address, ending in ``/``."""
    repository_url: str | None = None
    """The book's repository."""

    def wheel_location(self) -> str:
        """What the install cell installs the library from: the wheel's URL on the published
        book, else its file name (a file in the folder where the notebook runs)."""
        if self.site_url:
            return f"{self.site_url}{WHEEL_FOLDER}/{self.wheel_name}"
        return self.wheel_name

    def requirement(self) -> str:
        """The library as the install cell names it: its wheel with the notebooks' extra,
        quoted for the shell (the brackets)."""
        return f'"{self.wheel_location()}[{NOTEBOOKS_EXTRA}]"'


def notebook_pins(name: str, code: str, settings: DownloadSettings) -> list[str]:
    """The pins of requirements.txt for what notebook ``name`` imports (its ``code``) or the
    library imports, in the file's order. A module the notebook imports that is neither in
    the standard library, nor the library, nor a Jupyter kernel, nor pinned is an error."""
    imported = imported_modules(code)
    unpinned = sorted(imported - set(settings.pins) - set(sys.stdlib_module_names)
                      - KERNEL_MODULES - {LIBRARY})
    if unpinned:
        raise BuildError(f"notebooks/{name} imports {unpinned}, which requirements.txt does not "
                         "pin with ==: its downloaded copy could not install them")
    needed = imported | settings.library_imports
    return [pin for module, pin in settings.pins.items() if module in needed]


def torch_pin(pins: list[str]) -> str | None:
    """The pin of torch among ``pins``, if any."""
    return next((pin for pin in pins if PIN.match(pin)["name"].lower() == "torch"), None)


def cpu_torch_line(pin: str) -> str:
    """The command that installs torch at ``pin`` from PyTorch's CPU index."""
    return f"pip install --index-url {CPU_TORCH_INDEX} {pin}"


def install_cell_source(pins: list[str], settings: DownloadSettings) -> str:
    """The code of the install cell: one ``%pip install`` of the wheel with its notebooks'
    extra and of ``pins``, only when a module they provide cannot be imported; before it,
    without torch and without an NVIDIA GPU, torch's CPU build (:func:`cpu_torch_line`)."""
    modules = [LIBRARY, *(PIN.match(pin)["name"].lower().replace("-", "_") for pin in pins)]
    packages = " \\\n        ".join([settings.requirement(), *pins])
    torch = torch_pin(pins)
    cpu = ("    # no NVIDIA GPU: PyTorch's CPU build of torch, without the CUDA libraries\n"
           "    # (gigabytes) that pip would otherwise take from PyPI on Linux\n"
           '    if importlib.util.find_spec("torch") is None and not shutil.which("nvidia-smi"):\n'
           f"        %{cpu_torch_line(torch)}\n") if torch else ""
    return ("# Running this code: installs the book's library and the packages this notebook\n"
            "# imports, unless all of them can be imported already (then it downloads nothing).\n"
            "import importlib.util\n" + ("import shutil\n" if torch else "") + "\n"
            f"NEEDED = {tuple(modules)!r}\n"
            "if any(importlib.util.find_spec(module) is None for module in NEEDED):\n"
            f"{cpu}"
            f"    %pip install \\\n        {packages}\n")


def earlier_notebooks_note(name: str, earlier: list[str], settings: DownloadSettings) -> str:
    """The paragraph of a notebook that reads other notebooks' results: which, and how to get
    them."""
    names = ", ".join(f"`{other}`" for other in earlier)
    checkout = (f"a checkout of [the book's sources]({settings.repository_url})"
                if settings.repository_url else "a checkout of the book's sources")
    return (f"**This notebook needs the results of other notebooks.** It reads the results files "
            f"that the notebooks before it in the book write when they run ({names}): run those "
            f"first, in the same folder, so that their results files land where this one reads "
            f"them (see above). "
            f"In {checkout}, `python scripts/build_book.py --only {' '.join(earlier)} {name}` "
            "runs them all, in order, in one go (the executed notebooks land in "
            "`_build/notebooks`).")


def running_this_code(name: str, parameters: dict, pins: list[str], settings: DownloadSettings,
                      earlier: list[str]) -> str:
    """The markdown cell that opens a downloaded notebook: what running it needs."""
    title = f"*{settings.book_title}*"
    book = f"[{title}]({settings.site_url})" if settings.site_url else title
    ran = ", ".join(f"{key} `{value}`" for key, value in parameters.items())
    versions = ", ".join(pin.replace("==", " ") for pin in pins)
    wheel = f"[its wheel]({settings.wheel_location()})" if settings.site_url else "its wheel"
    paragraphs = [
        "## Running this code",
        f"This is a notebook of the book {book}, with the outputs of the book's run ({ran}). "
        "To run it yourself, run the next cell first: it installs the book's library "
        f"`{LIBRARY}` {settings.version} from {wheel} with its `{NOTEBOOKS_EXTRA}` extra (what "
        "a notebook needs beyond the library), and the packages this notebook imports at "
        f"the versions the book was built with ({versions}). It installs nothing when all of "
        "them can be imported already.",
    ]
    torch = torch_pin(pins)
    if torch:
        paragraphs.append(
            "On a machine without an NVIDIA GPU it first installs the CPU build of torch from "
            f"PyTorch's own index ({CPU_TORCH_INDEX}): from PyPI, pip would take the build "
            "with CUDA on Linux, gigabytes that a CPU cannot use. In a new virtual "
            "environment, without Jupyter, the same install and a run of this notebook are:"
            f"\n\n```bash\n{cpu_torch_line(torch)}\npip install {settings.requirement()}\n"
            f"{RUN_COMMAND} {name}.ipynb\n```\n\n"
            f"(`{RUN_COMMAND.split(' --')[0]}` comes with the `{NOTEBOOKS_EXTRA}` extra; it "
            "writes the outputs into the notebook.)")
    if not settings.site_url:
        relative = posixpath.relpath(f"{WHEEL_FOLDER}/{settings.wheel_name}",
                                     posixpath.dirname(notebook_page(name)))
        paragraphs.append(
            "The book was built without its web address, so the cell looks for the wheel, "
            f"`{settings.wheel_name}`, in the folder where this notebook runs: download it there "
            f"first from the book's `{WHEEL_FOLDER}/` folder (`{relative}` from this notebook's "
            "page).")
    paragraphs.append(
        f"The notebook writes its measured numbers to `_build/results/{name}.json` and its "
        "figures to `_build/figures/`, below the folder it runs in (below the book's root in a "
        "checkout of its sources; the environment variables `ATTENTION_DYNAMICS_RESULTS` and "
        "`ATTENTION_DYNAMICS_FIGURES` choose other folders). Its cross-references to the book "
        "are plain text here" + (", linked to the book's pages." if settings.site_url else "."))
    if earlier:
        paragraphs.append(earlier_notebooks_note(name, earlier, settings))
    return "\n\n".join(paragraphs)


def runnable_download(executed, name: str, page_html: str, settings: DownloadSettings,
                      earlier: list[str]):
    """The downloadable copy of the executed notebook ``executed`` (an nbformat notebook, left
    as it is): the "Running this code" cells first, every markdown cell as plain Markdown, no
    glue outputs (data for the book's pages, which a plain Jupyter cannot show and JupyterLab
    reports as unrenderable) and no build folder in its metadata.

    ``page_html`` is the notebook's rendered page; ``earlier`` the notebooks whose results it
    reads (none for a chapter).
    """
    import nbformat

    notebook = copy.deepcopy(executed)
    page_path = notebook_page(name)
    context = NotebookContext(name, page_path, page_references(page_html, page_path),
                              glued_values(notebook), settings.site_url)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    pins = notebook_pins(name, code, settings)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, context)
        else:
            cell.outputs = [output for output in cell.get("outputs", [])
                            if "scrapbook" not in output.get("metadata", {})]
    papermill = notebook.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):
        papermill.pop(key, None)
    notebook.cells[:0] = [
        nbformat.v4.new_markdown_cell(running_this_code(name, papermill.get("parameters", {}),
                                                        pins, settings, earlier)),
        nbformat.v4.new_code_cell(install_cell_source(pins, settings)),
    ]
    return notebook


def write_downloads(html: Path, parts: list[list[str]], wheel: Path,
                    site_url: str | None = None, repository_url: str | None = None) -> Path:
    """Replace each notebook's download in the rendered book ``html`` (the executed notebook) by
    its runnable copy (:func:`runnable_download`), which installs the library's ``wheel`` (built
    by :func:`build_wheel`, put into the HTML by the render); return the wheel's path there.

    ``parts`` are the toc's notebooks by part (a notebook of a later part reads the results of
    those before it).
    """
    import nbformat

    shipped = html / WHEEL_FOLDER / wheel.name
    if not shipped.is_file():
        raise BuildError(f"the HTML lacks the library's wheel {shipped}: was it rendered with "
                         "book/_ext/library_wheel.py and library_wheel set?")
    wheel = shipped
    settings = DownloadSettings(
        wheel_name=wheel.name, version=wheel.name.split("-")[1],
        pins=requirement_pins(ROOT / "requirements.txt"),
        library_imports=library_modules(ROOT / "lib" / LIBRARY),
        book_title=yaml.safe_load((ROOT / "_config.yml").read_text())["title"],
        site_url=site_url, repository_url=repository_url)
    order = [name for part in parts for name in part]
    for name in order:
        download = html / "_sources" / "notebooks" / f"{name}.ipynb"
        page = html / notebook_page(name)
        if not download.exists() or not page.exists():
            raise BuildError(f"the HTML lacks the page or the download of notebooks/{name} "
                             f"({page}, {download})")
        earlier = [] if name in parts[0] else order[:order.index(name)]
        notebook = runnable_download(nbformat.read(download, as_version=4), name,
                                     page.read_text(), settings, earlier)
        nbformat.write(notebook, download)
    return wheel
