# The front door. `make site` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
PORT   ?= 8000
REFERENCE_VENV ?= .venv-reference

.PHONY: site test quick check serve reference clean bench messages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One stamp per extra: re-run pip only when pyproject.toml changes.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$*]'
	touch $@

$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The date shown on pages comes from the last commit, never from the clock. Outside a git checkout (a
# downloaded archive) there is none: the variable is then not passed on at all, since an empty one
# stops setuptools from building the package ("invalid literal for int()") and dates no page.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
ifneq ($(strip $(SOURCE_DATE_EPOCH)),)
export SOURCE_DATE_EPOCH
else
unexport SOURCE_DATE_EPOCH
endif
BASE_URL ?=

site: $(VENV)/.installed-base
	$(BIN)/python -m generator build --models models --out site $(if $(BASE_URL),--base-url $(BASE_URL))

# One pytest worker per processor (pytest-xdist); a test file's tests stay together on one worker, so a
# module's fixture (a build of its own) is made once. The workers build the shared catalog once between them
# (tests/conftest.py). --no-loadscope-reorder: files go out in the order tests/conftest.py gives them, its
# longest first, not in pytest-xdist's order by test count. TEST_JOBS=0 runs everything in this one process.
TEST_JOBS ?= auto
TEST_ORDER = --dist loadfile --no-loadscope-reorder
# --durations: the slowest tests, listed at the end of every run, so CI's log shows where its time goes.
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(TEST_JOBS) $(TEST_ORDER) --durations=25

# The contributor's loop (about a minute): every test that needs neither a browser nor a whole site.
# tests/conftest.py gives each test its tier from what it uses; `make test` runs them all.
QUICK_TIERS = not browser and not site and not slow
quick: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(TEST_JOBS) $(TEST_ORDER) -m "$(QUICK_TIERS)"

check: $(VENV)/.installed-dev
	$(BIN)/ruff check generator tests tools bench
	$(BIN)/ruff format --check generator tests tools bench
	$(BIN)/mypy
	$(BIN)/lint-imports  # the layers contract in pyproject.toml: no module imports a layer above its own
	$(BIN)/python tools/module_sizes.py  # no module of generator/ over 450 lines

# The templates' sentences: extracted into locales/messages.pot, then merged into each language's catalog
# (locales/<language>/LC_MESSAGES/messages.po) for its translator. docs/translating.md says what follows.
messages: $(VENV)/.installed-base
	$(BIN)/pybabel extract -F babel.cfg --no-wrap --sort-by-file --project="BERT Parameter Atlas" -o locales/messages.pot templates
	$(BIN)/pybabel update -i locales/messages.pot -d locales --no-wrap --ignore-obsolete

serve: $(VENV)/.installed-base
	$(BIN)/python -m generator serve --models models --out site --port $(PORT)

# Time the build against Hugo and MkDocs on this machine (about 10 minutes; not part of `make test`).
# BENCH_ARGS=--update-readme writes the figures into bench/README.md; see bench/run.py --help.
BENCH_ARGS ?=
bench: $(VENV)/.installed-bench
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# Regenerate the committed ground truth from transformers (needs torch; not part of `make test`).
reference:
	test -x $(REFERENCE_VENV)/bin/python || $(PYTHON) -m venv $(REFERENCE_VENV)
	$(REFERENCE_VENV)/bin/python -m pip install --quiet '.[reference]'
	$(REFERENCE_VENV)/bin/python tools/reference.py
	$(REFERENCE_VENV)/bin/python tools/own_reference.py
	$(REFERENCE_VENV)/bin/python tools/config_sample.py
	$(REFERENCE_VENV)/bin/python tools/compute_reference.py --check-cpu
	$(REFERENCE_VENV)/bin/python tools/compute_reference.py --sample
	$(REFERENCE_VENV)/bin/python tools/finetune_reference.py
	$(REFERENCE_VENV)/bin/python tools/parameterless_modules.py
	$(REFERENCE_VENV)/bin/python tools/finetune_compute_reference.py
	$(REFERENCE_VENV)/bin/python tools/finetune_compute_reference.py --sample
	$(REFERENCE_VENV)/bin/python tools/finetune_compute_reference.py --explain

clean:
	rm -rf site .cache/atlas $(VENV) $(REFERENCE_VENV) *.egg-info
