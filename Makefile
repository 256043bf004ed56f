# Two commands for a new user: `make demo` and `make test`.
# Each creates .venv and installs what it needs on first use; later runs reuse it
# (the stamp is remade only when pyproject.toml or this Makefile changes).
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.stamp-install

# One BLAS thread: dense recall does small matrix-vector products, and OpenBLAS threads
# fighting the local LLM server for 2 cores made a query ~50x slower (0.28 ms -> 16 ms).
export OPENBLAS_NUM_THREADS ?= 1

# llama.cpp's AMX kernels crash the local model server (a general protection fault on the first
# prompt of more than one token) on x86-64 machines whose CPU lists AMX but whose kernel or
# hypervisor does not enable it, as on this project's 2-core VMs; llama-cpp-python builds with
# -march=native, so on x86-64 it is built without AMX (the AVX-512/AVX2 kernels serve instead).
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS ?= -DCMAKE_C_FLAGS="$(NO_AMX)" -DCMAKE_CXX_FLAGS="$(NO_AMX)"
endif

.PHONY: demo test lab install clean notebooks docs

$(STAMP): pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip wheel setuptools
	@echo "installing lyra-lab and its dependencies (llama-cpp-python builds from source the first time: ~5 min on 2 cores)"
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/python -m pip install --quiet -e ".[all]"
	@# a llama-cpp-python built before (or taken from pip's cache) with AMX is rebuilt without it
	@if $(BIN)/python -c "import sys, llama_cpp; sys.exit(b'AMX_INT8 = 1' not in llama_cpp.llama_print_system_info())"; then \
	  echo "rebuilding llama-cpp-python without AMX"; \
	  CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/python -m pip install --quiet --force-reinstall --no-deps --no-cache-dir \
	    "llama-cpp-python==$$($(BIN)/python -c 'import llama_cpp; print(llama_cpp.__version__)')"; fi
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/lyra-lab demo

# pytest-xdist: one worker more than the cores (at most 4), a test file per worker at a time: the
# workers often wait (on the local model's one-thread server, subprocesses, Ray), so with one
# worker per core the cores sat idle a third of the time (a clean run on 2 quiet cores: 33.5 min of
# CPU over 22.6 min of wall). Files go in collection order (--no-loadscope-reorder), which
# tests/conftest.py starts with the longest.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(min(4, (os.cpu_count() or 1) + 1))')
test: $(STAMP)
	$(BIN)/python -m ruff check lyra_lab notebooks docs
	$(BIN)/python -m mypy lyra_lab notebooks docs
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The notebooks' .ipynb from their Jupytext sources (notebooks/NN_name.py), executed in small mode so
# they carry their outputs; NB="01_quickstart 03_probe_review" for some of them. Minutes per notebook.
notebooks: $(STAMP)
	$(BIN)/python notebooks/_sync.py $(NB)

# The documentation site (mkdocs), built offline into site/; open site/index.html.
docs: $(STAMP)
	$(BIN)/python -m mkdocs build --strict --site-dir site

# Optional: JupyterLab on this project's .venv, opened on the notebooks.
lab: $(STAMP)
	$(BIN)/python -m jupyter lab --ip=127.0.0.1 notebooks/

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site
