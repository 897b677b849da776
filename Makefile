# irforge: `make demo` and `make test` each set up .venv and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test pytest lit setup clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python examples/demo.py

pytest: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" PYOPENCL_CTX=0 OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest

lit: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/lit --order=lexical tests/filecheck

test: $(STAMP)
	$(MAKE) --no-print-directory pytest
	$(MAKE) --no-print-directory lit

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
