# PyTorch Internals, rebuilt. `make book` and `make test` are all a fresh machine needs
# (python3 >= 3.10 with venv, GNU make); both create .venv with the pinned environment first.

PY    ?= python3
VENV   = .venv
BIN    = $(VENV)/bin
STAMP  = $(VENV)/.installed

# One book build, shared by `book` and `test`. The book never executes notebooks
# (_config.yml: execute_notebooks "off"): it renders the outputs nbval validated.
# --all rebuilds every page, so warnings from unchanged pages are not hidden.
BOOK_BUILD = $(BIN)/jupyter-book build . --all --warningiserror --nitpick --keep-going

# Same hash order everywhere, so set and dict outputs match between `make notebooks` and nbval.
export PYTHONHASHSEED = 0

# Python's bytecode caches on, whatever the calling shell says: with PYTHONDONTWRITEBYTECODE set,
# each pytest worker rewrites and compiles every test module again, and every subprocess a test
# or a notebook starts compiles the package's sources again (about a second each).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: book test test-slow check screenshots portability notebooks bench lab clean distclean vendor colab-check

# The book's scripts (MathJax, the Jupyter widgets HTML manager) come from npm at the versions
# package-lock.json pins, and are served from the book's own _static (_config.yml: html_static_path
# _vendor, mathjax_path, nb_ipywidgets_js), so the built book renders math and widgets offline.
VENDOR = _vendor/.installed
$(VENDOR): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	rm -rf _vendor && mkdir -p _vendor
	cp -r node_modules/mathjax/es5 _vendor/mathjax
	cp -r node_modules/@jupyter-widgets/html-manager/dist _vendor/jupyter-widgets
	rm -f _vendor/jupyter-widgets/*.map
	touch $@

vendor: $(VENDOR)

$(STAMP): requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps -e .
	touch $@

# The live figures' data comes from the package, written into the book's static files first.
FIGURE_DATA = $(BIN)/python scripts/figure_data.py

book: $(STAMP) $(VENDOR)
	$(FIGURE_DATA)
	$(BOOK_BUILD)
	@echo "Open $(CURDIR)/_build/html/index.html"

# Lint first (rules in pyproject.toml), then the tests. The unit tests draw with Agg (tests/conftest.py); notebooks keep the inline backend to store figures.
# The tests run without nbval's plugin (-p no:nbval): it imports nbformat into every worker and checks
# no test file; scripts/notebooks_alone.py runs nbval over the chapters next. Each test file runs
# whole on one worker (--dist loadfile): split between the two, both compiled its kernels at once,
# before either had written them to Numba's cache. The book's checks run
# on two workers too, each with its own Chromium: a page mostly waits on its browser's rendering.
test: $(STAMP) $(VENDOR)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/python -m pytest tests -n 2 --dist loadfile -q -p no:nbval -m "not slow"
	$(BIN)/python scripts/notebooks_alone.py --nbval
	$(FIGURE_DATA)
	$(BOOK_BUILD)
	$(BIN)/python -m pytest tests/book_offline.py tests/book_pages.py tests/book_figures.py -q -n 2 -p no:nbval

# The page and figure checks of `make test` again, each page and figure also saved as a picture in
# _build/screenshots for a person to look at (left out of `make test`: the pictures take Chromium
# longer than the checks).
screenshots: book
	BOOK_SCREENSHOTS=1 $(BIN)/python -m pytest tests/book_pages.py tests/book_figures.py -q -n 2 -p no:nbval

# The tests marked slow (tests/conftest.py describes the marker), which `make test` leaves out to
# stay within 15 minutes: those that compile kernels again in a fresh process or cache, run every CUDA kernel
# on the simulator or to PTX, train whole tutorial programs, or gradcheck every mode of an operator.
# CI (.ci/run) runs them after `make test`.
test-slow: $(STAMP)
	$(BIN)/python -m pytest tests -n 2 --dist loadfile -q -p no:nbval -m slow

# The edit-test loop: lint, then the core layers' tests (c10, the exercises' plug-in, the repository
# layout and the import directions). One subject alone: .venv/bin/python -m pytest tests/aten/test_views.py
check: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/python -m pytest tests/c10 tests/course/test_repository_layout.py tests/course/test_imports.py \
		tests/amp -n 2 --dist loadfile -q -p no:nbval

# The differential tests and nbval again under other CPU code paths (torch's ATEN_CPU_CAPABILITY,
# MKL's MKL_CBWR and MKL_ENABLE_INSTRUCTIONS, oneDNN's ONEDNN_MAX_CPU_ISA, Numba's
# NUMBA_CPU_NAME=generic), one summary line per
# setting: what CONTRIBUTING.md promises on every CPU. Long (each setting is most of `make test`);
# SETTINGS=default,avx2 picks some.
portability: $(STAMP)
	$(BIN)/python scripts/portability.py $(if $(SETTINGS),--settings $(SETTINGS))

# Syncs the Colab setup cells, then re-executes every chapter in order and stores outputs and
# widget state in place. The first-compile notice is off: whether kernels were cached on the
# machine that regenerated the outputs is no part of what the book shows.
notebooks: $(STAMP)
	$(BIN)/python scripts/colab_cell.py
	INTERNALS_COMPILE_NOTICE=0 $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=600 --ExecutePreprocessor.store_widget_state=True \
		notebooks/*.ipynb
	$(BIN)/python scripts/colab_cell.py --check

# Colab's stack (older than requirements.txt): runs each chapter alone, as Colab opens it, in a
# separate venv, so a change that breaks the chapters there shows up here first. Not part of
# `make test`. PyPI's torch is a CUDA build (several GB with its nvidia-* libraries); where
# download.pytorch.org is reachable, COLAB_PIP_ARGS="--extra-index-url https://download.pytorch.org/whl/cpu"
# gets the CPU build (about 200 MB) instead: the chapters never use torch's CUDA. The package is
# installed as Colab installs it (pip, with the loose dependencies of pyproject.toml), which must
# keep the torch and numba already there.
COLAB_PY    ?= python3.12   # Colab's Python
COLAB_VENV   = .venv-colab
COLAB_STACK  = torch==2.11.* numba==0.62.* numba-cuda==0.21.* ipython==7.34.* ipywidgets==7.7.* \
	"ipykernel<7" nbconvert nbclient matplotlib pyyaml hypothesis scikit-learn
COLAB_PIP_ARGS ?=
$(COLAB_VENV)/.installed: Makefile pyproject.toml
	$(COLAB_PY) -m venv $(COLAB_VENV)
	$(COLAB_VENV)/bin/python -m pip install $(COLAB_PIP_ARGS) $(COLAB_STACK)
	$(COLAB_VENV)/bin/python -m pip install .
	$(COLAB_VENV)/bin/python -c "import torch, numba; assert torch.__version__.startswith('2.11'), torch.__version__; \
		assert numba.__version__.startswith('0.62'), numba.__version__"
	touch $@

# The package is reinstalled from the working tree each time (no dependencies: those stay Colab's).
# The executed chapters are kept in _build/colab, to be read beside the stored (torch 2.13) outputs.
colab-check: $(COLAB_VENV)/.installed
	$(COLAB_VENV)/bin/python -m pip install -q --no-deps --force-reinstall .
	$(COLAB_VENV)/bin/python scripts/notebooks_alone.py --python $(COLAB_VENV)/bin/python --keep _build/colab

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \
		-o -name '*.egg-info' \) -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) $(COLAB_VENV) node_modules _vendor
