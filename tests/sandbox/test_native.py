"""Where a hung task spins in native code (sandbox.native): sampling, packages, ELF symbols."""
from __future__ import annotations

import ctypes
import os
import sys

import pytest

from sandbox import SandboxPool, Ref, Status, Step, Task
from sandbox import native

from .conftest import BAD

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ptrace and /proc are Linux's")


def _ptrace_allowed() -> bool:
    """Whether this machine lets a process sample another (a container may forbid ptrace)."""
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        import time
        time.sleep(0.2)
        return bool(native.sample(child.pid, samples=2))
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("path, package", [
    ("/x/lib/python3.11/site-packages/numpy/random/mtrand.cpython-311-x86_64-linux-gnu.so", "numpy"),
    ("/x/lib/python3.11/site-packages/scipy.libs/libscipy_openblas-6cdc3b4a.so", "scipy"),
    ("/x/lib/python3/dist-packages/torch/lib/libtorch_cpu.so", "torch"),
    ("/usr/lib/x86_64-linux-gnu/libm.so.6", None),
    ("/x/lib/python3.11/site-packages/lonely.so", None),  # a module file, no package folder
    ("[anon]", None),
])
def test_package_of_names_the_folder_under_site_packages(path, package):
    assert native.package_of(path) == package


def _own_mapping(address: int):
    with open("/proc/self/maps") as fh:
        for line in fh:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= address < hi and len(parts) > 5:
                return parts[5].strip(), address - lo + int(parts[2], 16)
    raise AssertionError(f"{address:#x} is not mapped")


def test_symbol_at_finds_the_function_holding_an_offset():
    libc = ctypes.CDLL(None)
    address = ctypes.cast(libc.getpid, ctypes.c_void_p).value
    path, offset = _own_mapping(address)
    assert "getpid" in (native.symbol_at(path, offset) or "")
    assert native.symbol_at(path, 10 ** 12) is None  # outside every segment
    assert native.symbol_at(__file__, 0) is None     # not ELF


def test_describe_prefers_a_packaged_object_and_counts_its_package():
    spots = (native.NativeSpot("/usr/lib/libm.so.6", 0, 5),
             native.NativeSpot("/v/site-packages/numpy/random/mtrand.so", 1, 2),
             native.NativeSpot("/v/site-packages/numpy/random/_mt19937.so", 2, 1))
    place = native.describe(spots)
    assert (place.package, place.share) == ("numpy", 3 / 8)
    assert place.text().startswith("native code of numpy: mtrand.so")
    assert native.describe(spots[:1]).package is None and native.describe(()) is None


def test_code_generated_at_run_time_is_named_before_the_package_that_runs_it():
    # XLA's executor calling a compiled program that loops: the program is the loop
    spots = (native.NativeSpot(native.ANONYMOUS, 355, 5),
             native.NativeSpot("/v/site-packages/jaxlib/libjax_common.so", 9, 2),
             native.NativeSpot("/usr/lib/libc.so.6", 0, 1))
    place = native.describe(spots)
    assert place.path == native.ANONYMOUS and place.package is None and place.share == 5 / 8
    assert place.text().startswith("code generated at run time")


def test_a_loop_of_python_code_is_told_from_native_code():
    numpy_obj = native.NativeSpot("/v/site-packages/numpy/_core/_multiarray_umath.so", 1, 5)
    interp = native.NativeSpot("/v/bin/python3.11", 2, 3, interpreter=True)
    place = native.describe((numpy_obj, interp))
    assert place.interpreted and place.package == "numpy" and place.text().startswith("Python code, calling")
    # one sample in sixteen is below the share: a C loop that a callback entered once
    numpy_16 = native.NativeSpot(numpy_obj.path, 1, 15)
    assert not native.describe((numpy_16, native.NativeSpot("/v/bin/python3.11", 2, 1, interpreter=True))).interpreted
    only = native.describe((interp,))
    assert only.only_python and only.text() == "Python code"


def test_innermost_frames_read_the_current_thread_of_a_dump():
    dump = ('Thread 0x2 (most recent call first):\n  File "/x/threading.py", line 5 in wait\n\n'
            'Current thread 0x1 (most recent call first):\n'
            '  File "/v/lib/python3.11/site-packages/scipy/stats/_discrete_distns.py", line 812 in _entropy\n'
            '  File "/v/lib/python3.11/site-packages/scipy/stats/_distn_infrastructure.py", line 1180 in entropy\n'
            '  File "/w/tests/badtasks.py", line 3 in run\n')
    assert native.innermost_frames(dump, limit=2) == [
        "scipy/stats/_discrete_distns.py:812 in _entropy", "scipy/stats/_distn_infrastructure.py:1180 in entropy"]
    assert native.innermost_frames("Segmentation fault") == []


def test_cxx_symbols_are_demangled_and_cut():
    assert native._demangled(b"_ZN3xsf7specfun4segvIfEENS0_6StatusEiiT_iPS3_S4_") == (
        "xsf::specfun::Status xsf::specfun::segv<float>(int, int, float, int, float*, float*)")
    assert native._demangled(b"cumtnc") == "cumtnc"
    assert native._demangled(b"_Z" + b"N3foo" * 200).startswith("_ZN3foo")  # not a valid name: as it is
    assert len(native._demangled(b"x" * 1000)) == native._SYMBOL_CHARS


def test_the_thread_sampled_is_the_one_that_runs():
    """A main thread waiting on a worker thread that spins (XLA's and OpenMP's pools work so):
    the sampled thread is the spinning one, not the main thread blocked in a futex."""
    if not _ptrace_allowed():
        pytest.skip("this machine does not allow ptrace")
    import subprocess
    import time
    child = subprocess.Popen([sys.executable, "-c", (
        "import threading\n"
        "def spin():\n"
        "    while True: pass\n"
        "t = threading.Thread(target=spin); t.start(); t.join()")])
    try:
        time.sleep(0.5)
        assert native._busiest_thread(child.pid) != child.pid
    finally:
        child.kill()
        child.wait()


def test_sample_of_a_gone_process_is_empty():
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert native.sample(child.pid, samples=2) == ()


def test_a_timeout_says_which_package_s_native_code_spun():
    """numpy's legacy RandomState.vonmises loops for ever at a huge kappa (its stream is frozen
    by numpy's compatibility policy): the samples land in numpy's own objects."""
    if not _ptrace_allowed():
        pytest.skip("this machine does not allow ptrace")
    task = Task.chain([Step("numpy.random:RandomState", (0,)), Step(".vonmises", (Ref(0), 0.0, 9.2e18))])
    with SandboxPool(preload=["numpy"], workers=1, spares=0, timeout=1.0, confirm=False) as pool:
        hung, looped = pool.run([task, Task(BAD + "endless_loop")])
    assert hung.status == Status.TIMEOUT and hung.native, hung
    place = native.describe(hung.native)
    # the hottest numpy object is mtrand (the loop) or _mt19937 (its generator) by chance of
    # the samples; the loop's own function is among the objects sampled
    assert place.package == "numpy", place
    assert any("vonmises" in (native.symbol_at(s.path, s.offset) or "") for s in hung.native), hung.native
    assert not place.interpreted
    # a loop of Python code runs in the interpreter: no package ships that
    assert looped.status == Status.TIMEOUT and native.describe(looped.native).only_python
    assert native.innermost_frames(looped.stderr_tail)[0].endswith("in endless_loop")


def test_locate_hangs_off_samples_nothing():
    with SandboxPool(workers=1, spares=0, timeout=0.5, confirm=False, locate_hangs=False) as pool:
        (looped,) = pool.run([Task(BAD + "endless_loop")])
    assert looped.status == Status.TIMEOUT and looped.native == ()
