# Two entry points, each doing all of its own set-up on a fresh machine:
#   make fuzz   - create/update .venv, then run the default campaign and write a report
#   make test   - create/update .venv, then run the test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= xamt-out

.PHONY: all venv fuzz test test-all bench clean

all: test

# Re-install whenever the pins or the C kernels change.
$(STAMP): setup.py $(wildcard csrc/*.c csrc/*.h csrc/build_*.py)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

fuzz: $(STAMP)
	$(PY) -m xamt.cli fuzz --out $(OUT)

test: $(STAMP)
	$(PY) -m pytest -q

test-all: $(STAMP)
	$(PY) -m pytest -q -m "slow or not slow"

bench: $(STAMP)
	for b in bench/*_bench.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info xamt-out
