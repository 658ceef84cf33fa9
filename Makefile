# symabsorb: `make demo` proves the paper example (the verdicts on screen, report.md), `make test` runs every check.
# Both create a local virtual environment in .venv on first use.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast install extras lint bench clean tables docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## Optional integrations: numpy, scipy, safetensors (weight files), rich (terminal), matplotlib (HTML
## plots), dask (explore/scan on a cluster), nbclient (the notebook test) and PyTorch. The `torch`
## extra accepts any torch >= 2.6; here exactly 2.13.0 (the CPU build the tests run against, and one
## that a range would not pull as a multi-GB CUDA build).
TORCH_VERSION ?= 2.13.0
extras: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,all,notebook,bench]' 'torch==$(TORCH_VERSION)'

demo: $(STAMP)
	$(BIN)/symabsorb prove examples/paper.absorb
	$(BIN)/symabsorb prove examples/paper.absorb -o report.md

## Every check. Tests go to the two workers one at a time as they free up (worksteal: no tail where one
## worker runs a whole heavy file alone); the 15 slowest are listed at the end.
test: $(STAMP)
	$(BIN)/ruff check symabsorb tests benchmarks tools
	$(BIN)/mypy
	$(BIN)/pytest -q -n 2 --dist worksteal --durations=15

## The inner loop (target: a minute on two quiet cores): the unit tier (tests/unit/<layer>/), no test marked slow; the slow tier (browsers, pdfLaTeX,
## cold CLI processes, exhaustive sweeps) still runs in `make test` and .ci/run.
test-fast: $(STAMP)
	$(BIN)/pytest -q -n 2 --dist worksteal tests/unit -m "not slow" --durations=10

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis report.md

## The LALR tables shipped in symabsorb/dsl/lalr_tables.py, after a change of grammar/absorb.lark
tables: $(STAMP)
	$(BIN)/python -c "from symabsorb.dsl.parser import write_tables; print(write_tables())"

## The tables in docs/ built from the code's registries (hypotheses, procedures, skip kinds, formats);
## tests/unit/test_docs_tables.py fails when one is stale
docs: $(STAMP)
	$(BIN)/python tools/doctables.py
