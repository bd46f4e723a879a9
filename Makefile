# Two commands do all the setup: `make run` serves the app, `make test` runs every test.
# Both create .venv/ on first use and reinstall only when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
HOST   ?= 127.0.0.1
PORT   ?= 8501
# The unit tests run niced on this many pytest-xdist workers (0: one process), beside the
# wall-clock and browser tests, which run one at a time (tests/run_suite.sh says why).
TEST_WORKERS ?= 2
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
# Python writes each module's bytecode when it is first imported, as it does by default,
# rather than pip compiling every file of every package at install time (torch's alone is
# thousands): an environment that turns bytecode off would otherwise leave every test
# process compiling what it imports, again and again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint docs docs-images gallery bench results chromium nginx clean

# The same command an installed package gives (nca-explorer app): the app in app_pages/, its
# settings in app_pages/.streamlit/config.toml.
run: $(VENV)/.installed-app
	@echo "NCA Explorer: open http://$(HOST):$(PORT) in your browser (Ctrl+C stops it)"
	$(PY) -m nca_core app --address $(HOST) --port $(PORT)

test: $(VENV)/.installed-test chromium nginx
	$(PY) -m ruff check .
	@$(MAKE) --no-print-directory docs
	bash tests/run_suite.sh $(PY) $(TEST_WORKERS)

lint: $(VENV)/.installed-test
	$(PY) -m ruff check .

# The documentation site in site/, warnings as errors (a broken link, a docstring mkdocstrings
# cannot read); seconds, so the test run builds it too.
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

# The app's screenshots in the docs and the README: docs/images/take.py serves the app, takes
# each at 1440 x 900 in Chromium and makes it small (a few minutes).
docs-images: $(VENV)/.installed-test chromium
	$(PY) docs/images/take.py

# What each example prints in its small mode, and the figure it draws (docs/gallery/<name>.png),
# shown under its code in the gallery.
gallery: $(VENV)/.installed-test
	@if [ -z "$$NCA_DATA_DIR" ] && [ -d ../shared/data ]; then export NCA_DATA_DIR="$$(cd ../shared/data && pwd)"; fi; \
	for example in examples/*.py; do \
		name=$$(basename $$example .py); echo "$$example"; \
		NCA_EXAMPLES_FIGURES=docs/gallery $(PY) $$example > docs/gallery/$$name.txt || exit 1; \
	done

# Every benchmark's quick mode, one table of ratios (the real datasets beside us when present).
bench: $(VENV)/.installed-test
	@if [ -z "$$NCA_DATA_DIR" ] && [ -d ../shared/data ]; then export NCA_DATA_DIR="$$(cd ../shared/data && pwd)"; fi; \
	$(PY) benchmarks/run_all.py

# benchmarks/RESULTS.md from the tables the benchmarks keep in benchmarks/results/*.json.
results: $(VENV)/.installed-test
	$(PY) benchmarks/render.py

$(PY):
	$(PYTHON) -m venv $(VENV)

# A torch wheel that already lies on this machine (pip's find-links, no index) is taken
# first: it avoids downloading a multi-GB build. Elsewhere this step finds nothing and the
# project install below resolves torch from the index as usual.
$(VENV)/.installed-torch: | $(PY)
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install --no-compile --no-index --no-deps "torch>=2.2" \
		|| echo "No local torch wheel; torch comes from the package index."
	@touch $@

$(VENV)/.installed-app: pyproject.toml $(VENV)/.installed-torch
	$(PIP) install --no-compile -e ".[app]"
	@touch $@

# The test extra holds the app's, so one install gives both (a second resolve costs seconds).
$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-torch
	$(PIP) install --no-compile -e ".[test]"
	@touch $(VENV)/.installed-app $@

# Browser tests drive Debian's chromium. Install it when missing and we are root;
# otherwise the browser tests skip and say why.
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
		echo "chromium is missing and we are not root: browser tests will be skipped"; \
	fi

# The replicas' browser test puts Debian's nginx in front of two app processes
# (docs/guide/serving.md). Install it when missing and we are root; otherwise that test
# skips and says why. Only the program is used: the test runs its own nginx in a temp folder.
nginx:
	@if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Debian's nginx for the replicas' browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; \
	else \
		echo "nginx is missing and we are not root: the replicas' browser test will be skipped"; \
	fi

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info site
