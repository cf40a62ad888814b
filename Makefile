# Two entry points, each doing all of its own set-up on a fresh machine:
#   make fuzz   - create/update .venv, then run the default campaign and write a report
#   make test   - create/update .venv, then run the test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= xamt-out

.PHONY: all venv fuzz test test-all bench clean chromium

all: test

# Re-install whenever the pins or the C kernels change.
$(STAMP): setup.py $(wildcard csrc/*.c csrc/*.h csrc/build_*.py)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

FUZZ_BUDGET ?= 5m

# The main job: every step is incremental (cached or resumable), so a rerun skips built work.
fuzz: $(STAMP)
	$(PY) -m xamt.cli catalog --out $(OUT)
	$(PY) -m xamt.cli match --out $(OUT)
	$(PY) -m xamt.cli groups build --out $(OUT)
	$(PY) -m xamt.cli fuzz --out $(OUT) --budget $(FUZZ_BUDGET)
	$(PY) -m xamt.cli report --out $(OUT)

# The report's browser test needs a headless Chromium: install Debian's package where missing.
# Best effort: without root, apt or a reachable mirror the test run goes on and that test skips.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
	  echo "chromium could not be installed: the report's browser test will be skipped"

test: $(STAMP) chromium
	$(PY) -m pytest -q

test-all: $(STAMP) chromium
	$(PY) -m pytest -q -m "slow or not slow"

bench: $(STAMP)
	for b in bench/*_bench.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info xamt-out
