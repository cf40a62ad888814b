# Two entry points, each doing all of its own set-up on a fresh machine:
#   make fuzz   - create/update .venv (and the libraries' .venv-*), then run the default campaign and write a report
#   make test   - create/update .venv (and the libraries' .venv-*), then run the test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= xamt-out

.PHONY: all venv venvs fuzz test test-all bench clean chromium

all: test

# Re-install whenever the pins or the C kernels change.
$(STAMP): setup.py $(wildcard csrc/*.c csrc/*.h csrc/build_*.py)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Libraries whose pins conflict with ours live in venvs of their own, where their calls run and
# their catalog is mined (the adapter's Runtime). One `$(eval $(call lib_venv,...))` line each:
#   $(1) the venv's suffix (.venv-$(1)), $(2) a description, $(3) the pins (installed together),
#   $(4) optional pip arguments of a second install, after the first (a package that must build
#   against the first's setuptools or numpy).
# The pins of each were measured to install together on Python 3.11, with what the sandbox's
# worker needs there (numpy, msgpack; ml_dtypes to decode a bfloat16 input). Best effort: without
# network or a wheel the venv is removed (the adapter then reports the library not installed and
# every command skips it), one line says so and `make fuzz`/`make test` go on.
LIB_STAMPS :=
define lib_venv
.venv-$(1)/.installed: Makefile
	@echo "making .venv-$(1) ($(2))"
	@{ test -x .venv-$(1)/bin/python || $(PYTHON) -m venv .venv-$(1); } >.venv-$(1).log 2>&1 && \
	  .venv-$(1)/bin/python -m pip install $(3) >>.venv-$(1).log 2>&1 && \
	  { test -z "$(strip $(4))" || .venv-$(1)/bin/python -m pip install $(4) >>.venv-$(1).log 2>&1; } && \
	  touch $$@ && rm -f .venv-$(1).log || { \
	  echo "$(1) skipped: .venv-$(1) could not be made: $$$$({ grep -E '^ERROR' .venv-$(1).log || tail -n 1 .venv-$(1).log; } | tail -n 1) (see .venv-$(1).log)"; \
	  rm -rf .venv-$(1); }
venv-$(1): .venv-$(1)/.installed
.PHONY: venv-$(1)
LIB_STAMPS += .venv-$(1)/.installed
LIB_VENVS += .venv-$(1) .venv-$(1).log
endef

# MXNet 1.9.1 (its last release) needs numpy < 2 (requests ... are for gluon's downloads)
$(eval $(call lib_venv,mxnet,MXNet 1.9.1 beside numpy 1.23.5,\
  mxnet==1.9.1 numpy==1.23.5 msgpack==1.2.4 ml_dtypes==0.5.4 graphviz==0.8.4 \
  requests==2.34.2 urllib3==2.8.0 idna==3.20 charset-normalizer==3.5.3 certifi==2026.10.19.post1))

# PaddlePaddle 3.3.1 (CPU) pins opt_einsum==3.3.0 (ours has jax's 3.4.0) and bundles its own
# native libraries; the rest are its dependencies as pip resolved them beside numpy 2.4.6
$(eval $(call lib_venv,paddle,PaddlePaddle 3.3.1 (CPU) beside numpy 2.4.6,\
  paddlepaddle==3.3.1 numpy==2.4.6 msgpack==1.2.4 ml_dtypes==0.7.0 protobuf==7.36.2 \
  Pillow==13.0.0 networkx==3.6.1 opt_einsum==3.3.0 safetensors==0.8.0 typing_extensions==4.16.0 \
  httpx==0.29.0 httpcore==1.0.9 h11==0.16.0 anyio==4.16.0 idna==3.20 certifi==2026.10.19.post1))
# Chainer 7.8.1 (its last release) needs numpy < 2 and builds from an sdist against the venv's
# setuptools (< 70: its setup.py and its import use pkg_resources), hence the second install;
# scipy is its optional dependency for the special functions (lgamma, digamma, erfinv, zeta ...)
$(eval $(call lib_venv,chainer,Chainer 7.8.1 beside numpy 1.26.4,\
  numpy==1.26.4 scipy==1.13.1 setuptools==65.5.0 wheel==0.48.0 packaging==26.4 msgpack==1.2.4 \
  ml_dtypes==0.5.4 typing_extensions==4.16.0 filelock==4.3.2 protobuf==7.36.2 six==1.17.0,\
  --no-build-isolation chainer==7.8.1))
# MindSpore 2.10.0 (CPU): its binaries are built against numpy 1.x (under numpy 2 every
# operator fails converting its arguments, although its metadata asks only numpy>=1.25); the rest
# are its dependencies
$(eval $(call lib_venv,mindspore,MindSpore 2.10.0 on the CPU beside numpy 1.26.4,\
  mindspore==2.10.0 numpy==1.26.4 msgpack==1.2.4 ml_dtypes==0.5.4 scipy==1.17.1 protobuf==7.36.2 \
  asttokens==3.0.2 astunparse==1.6.3 dill==0.4.1 packaging==26.4 pillow==13.0.0 psutil==7.2.2 \
  safetensors==0.8.0 six==1.17.0 wheel==0.48.0))

# MLX 0.32.4, its Linux CPU build (mlx-cpu, the native library mlx[cpu] pulls): it would install
# beside our pins, but a library outside the reference six gets a venv of its own so that ours
# never changes; nothing else is a dependency of it
$(eval $(call lib_venv,mlx,MLX 0.32.4 (CPU build) beside numpy 2.4.6,\
  mlx==0.32.4 mlx-cpu==0.32.4 numpy==2.4.6 msgpack==1.2.4 ml_dtypes==0.7.0))
# ndonnx 0.23.0 builds ONNX graphs and computes them eagerly through ONNX Runtime (the backend
# of spox's value propagation when onnxruntime is installed, which ndonnx's metadata does not
# require); the rest are what pip resolved for both beside numpy 2.4.6
$(eval $(call lib_venv,ndonnx,ndonnx 0.23.0 on ONNX Runtime 1.32.0 beside numpy 2.4.6,\
  ndonnx==0.23.0 onnxruntime==1.32.0 onnx==1.23.2 spox==0.18.2 numpy==2.4.6 msgpack==1.2.4 \
  ml_dtypes==0.7.0 protobuf==7.36.2 flatbuffers==25.12.19 packaging==26.4 typing_extensions==4.16.0))
# PyTensor 3.0.7 (its C backend: a C compiler at run time) beside numpy 2.4.6: in a venv of its own
# so that its dependencies (numba, llvmlite, scipy, miniKanren ...) leave ours unchanged; the rest
# are its dependencies as pip resolved them
$(eval $(call lib_venv,pytensor,PyTensor 3.0.7 beside numpy 2.4.6,\
  pytensor==3.0.7 numpy==2.4.6 scipy==1.17.1 msgpack==1.2.4 ml_dtypes==0.7.0 numba==0.65.1 \
  llvmlite==0.47.0 filelock==4.3.2 etuples==0.3.10 logical-unification==0.4.7 miniKanren==1.0.5 \
  cons==0.4.7 multipledispatch==1.0.0 toolz==1.2.0 typing_extensions==4.16.0))
# tinygrad 0.14.0 has no dependency of its own; it runs on its PYTHON device (its CPU device
# compiles with clang, which a fresh machine lacks): numpy, msgpack and ml_dtypes are the worker's
$(eval $(call lib_venv,tinygrad,tinygrad 0.14.0 beside numpy 2.4.6,\
  tinygrad==0.14.0 numpy==2.4.6 msgpack==1.2.4 ml_dtypes==0.7.0))

venvs: $(LIB_STAMPS)

FUZZ_BUDGET ?= 5m
# the registry build starts no candidate after this long (cross-library groups come first); each
# later run resumes with the rest, so the registry grows run by run
BUILD_BUDGET ?= 15m
# LIBS=numpy,torch,... narrows every step to those libraries (default: every installed one)
LIBS ?=
LIBS_OPT := $(if $(strip $(LIBS)),--libs $(LIBS))

# The main job: every step is incremental (cached or resumable), so a rerun skips built work.
fuzz: $(STAMP) venvs
	$(PY) -m xamt.cli catalog --out $(OUT) $(LIBS_OPT)
	$(PY) -m xamt.cli match --out $(OUT) $(LIBS_OPT)
	$(PY) -m xamt.cli groups build --out $(OUT) --budget $(BUILD_BUDGET) $(LIBS_OPT)
	$(PY) -m xamt.cli fuzz --out $(OUT) --budget $(FUZZ_BUDGET) $(LIBS_OPT)
	$(PY) -m xamt.cli report --out $(OUT)

# The report's browser test needs a headless Chromium: install Debian's package where missing.
# Best effort: without root, apt or a reachable mirror the test run goes on and that test skips.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
	  echo "chromium could not be installed: the report's browser test will be skipped"

test: $(STAMP) venvs chromium
	$(PY) -m pytest -q

test-all: $(STAMP) venvs chromium
	$(PY) -m pytest -q -m "slow or not slow"

bench: $(STAMP)
	for b in bench/*_bench.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) $(LIB_VENVS) build *.egg-info xamt-out
