# Two entry points, each doing all of its own set-up on a fresh machine:
#   make fuzz   - create/update .venv (and .venv-mxnet), then run the default campaign and write a report
#   make test   - create/update .venv (and .venv-mxnet), then run the test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= xamt-out

.PHONY: all venv venv-mxnet fuzz test test-all bench clean chromium

all: test

# Re-install whenever the pins or the C kernels change.
$(STAMP): setup.py $(wildcard csrc/*.c csrc/*.h csrc/build_*.py)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# MXNet 1.9.1 (its last release) needs numpy < 2: it lives in a venv of its own, where its calls
# run and its catalog is mined (xamt/libraries/mxnet.py). Pins measured to install together on
# Python 3.11: mxnet and its dependencies (requests ... for gluon's downloads), plus what the
# sandbox's worker needs there (numpy, msgpack; ml_dtypes to decode a bfloat16 input).
# Best effort: without network or a wheel the venv is removed (the adapter then reports MXNet not
# installed and every command skips it), one line says so and `make fuzz`/`make test` go on.
MXNET_VENV  := .venv-mxnet
MXNET_STAMP := $(MXNET_VENV)/.installed
MXNET_PINS  := mxnet==1.9.1 numpy==1.23.5 msgpack==1.2.4 ml_dtypes==0.5.4 graphviz==0.8.4 \
               requests==2.34.2 urllib3==2.8.0 idna==3.20 charset-normalizer==3.5.3 \
               certifi==2026.10.19.post1

MXNET_LOG   := $(MXNET_VENV).log

$(MXNET_STAMP): Makefile
	@echo "making $(MXNET_VENV) (MXNet 1.9.1 beside numpy 1.23.5)"
	@{ test -x $(MXNET_VENV)/bin/python || $(PYTHON) -m venv $(MXNET_VENV); } >$(MXNET_LOG) 2>&1 && \
	  $(MXNET_VENV)/bin/python -m pip install $(MXNET_PINS) >>$(MXNET_LOG) 2>&1 && \
	  touch $@ && rm -f $(MXNET_LOG) || { \
	  echo "MXNet skipped: $(MXNET_VENV) could not be made: $$({ grep -E '^ERROR' $(MXNET_LOG) || tail -n 1 $(MXNET_LOG); } | tail -n 1) (see $(MXNET_LOG))"; \
	  rm -rf $(MXNET_VENV); }

venv-mxnet: $(MXNET_STAMP)

FUZZ_BUDGET ?= 5m
# LIBS=numpy,torch,... narrows every step to those libraries (default: every installed one)
LIBS ?=
LIBS_OPT := $(if $(strip $(LIBS)),--libs $(LIBS))

# The main job: every step is incremental (cached or resumable), so a rerun skips built work.
fuzz: $(STAMP) $(MXNET_STAMP)
	$(PY) -m xamt.cli catalog --out $(OUT) $(LIBS_OPT)
	$(PY) -m xamt.cli match --out $(OUT) $(LIBS_OPT)
	$(PY) -m xamt.cli groups build --out $(OUT) $(LIBS_OPT)
	$(PY) -m xamt.cli fuzz --out $(OUT) --budget $(FUZZ_BUDGET) $(LIBS_OPT)
	$(PY) -m xamt.cli report --out $(OUT)

# The report's browser test needs a headless Chromium: install Debian's package where missing.
# Best effort: without root, apt or a reachable mirror the test run goes on and that test skips.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
	  echo "chromium could not be installed: the report's browser test will be skipped"

test: $(STAMP) $(MXNET_STAMP) chromium
	$(PY) -m pytest -q

test-all: $(STAMP) $(MXNET_STAMP) chromium
	$(PY) -m pytest -q -m "slow or not slow"

bench: $(STAMP)
	for b in bench/*_bench.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) $(MXNET_VENV) $(MXNET_LOG) build *.egg-info xamt-out
