# Two entry points: `make book` builds the book into _build/html, `make test` runs the tests.
# Both create the virtual environment .venv with the pinned requirements on first use.
PYTHON ?= python3
VENV ?= .venv
PROFILE ?= quick
DEVICE ?= auto
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book test lint clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/python scripts/build_book.py --profile $(PROFILE) --device $(DEVICE)

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf _build
