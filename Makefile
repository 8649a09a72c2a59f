# Set-up and entry points. Needs only python3.11 (or newer) on PATH.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export JAX_PLATFORMS ?= cpu

.PHONY: venv demo lint test test-slow mutants bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/saferl reproduce safety-demo --scale demo --out runs/demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not slow" tests benchmarks/tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile -m slow tests benchmarks/tests

# one-line mutations of the mathematics, each against its tests (tests/mutants/mutants.yaml); not part of test
mutants: $(STAMP)
	$(BIN)/python tests/mutants/run.py

bench: $(STAMP)
	$(BIN)/saferl bench

clean:
	rm -rf $(VENV) .jax_cache

# saferl's environments against the original packages, in their own venv (benchmarks/fidelity/); not part of test
.PHONY: fidelity
fidelity: $(STAMP)
	$(MAKE) -C benchmarks/fidelity run MAIN_PYTHON=$(BIN)/python
