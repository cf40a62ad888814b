"""Misbehaving (and a few well-behaved) task functions for the sandbox tests and benchmark.

Referenced from tasks as ``"tests.badtasks:<name>"``; they run in sandbox workers, never in the
test process. Each bad function misbehaves the way its name says, through the real mechanism
(a null read, a hardware divide trap, a truncated mapping), not by sending itself a signal.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import signal
import sys
import time
from typing import Any

_libc = ctypes.CDLL(None, use_errno=True)


# --- crashes --------------------------------------------------------------------------------

def segfault() -> None:
    """Read through a null pointer (SIGSEGV)."""
    ctypes.string_at(0)


def abort() -> None:
    """``os.abort()`` (SIGABRT)."""
    os.abort()


class _DivT(ctypes.Structure):
    _fields_ = [("quot", ctypes.c_int), ("rem", ctypes.c_int)]


def sigfpe() -> None:
    """Integer division by zero in C: libc ``div(1, 0)`` traps on x86 (SIGFPE)."""
    _libc.div.restype = _DivT
    _libc.div.argtypes = [ctypes.c_int, ctypes.c_int]
    _libc.div(1, 0)


def sigbus() -> None:
    """Touch a mapped page of a file that was truncated underneath the mapping (SIGBUS)."""
    path = "sigbus.bin"  # in the worker's private directory
    with open(path, "wb") as handle:
        handle.write(b"\0" * mmap.PAGESIZE * 2)
    with open(path, "r+b") as handle:
        mapping = mmap.mmap(handle.fileno(), mmap.PAGESIZE * 2)
        address = ctypes.addressof(ctypes.c_char.from_buffer(mapping))
        os.truncate(path, 0)
        ctypes.string_at(address + mmap.PAGESIZE, 1)


def exit3() -> None:
    """Leave the process with exit code 3, skipping all clean-up."""
    os._exit(3)


def crash_marked() -> None:
    """Print ``time.monotonic()`` to stderr, then segfault (the benchmark's crash-to-next timer)."""
    os.write(2, f"CRASH_AT {time.monotonic()!r}\n".encode())
    ctypes.string_at(0)


# --- hangs ----------------------------------------------------------------------------------

def endless_loop() -> None:
    """Spin forever in Python."""
    while True:
        pass


def c_sleep(seconds: int = 3600) -> None:
    """Sleep in C with the usual timeout signals blocked: only SIGKILL ends it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM, signal.SIGINT})
    _libc.sleep(seconds)


# --- resources ------------------------------------------------------------------------------

def memory_bomb(chunk_mb: int = 64, limit_gb: int = 64) -> int:
    """Allocate and touch memory in chunks until something stops it; returns MB held (if ever)."""
    chunks = []
    while len(chunks) * chunk_mb < limit_gb * 1024:
        block = bytearray(chunk_mb << 20)
        block[::4096] = b"\1" * len(block[::4096])  # touch every page
        chunks.append(block)
    return len(chunks) * chunk_mb


def stdout_flood(megabytes: int = 20) -> int:
    """Print ``megabytes`` MB of numbered lines; returns the number of lines."""
    line = "x" * 90
    lines = megabytes * (1 << 20) // 100
    for i in range(lines):
        print(f"{i:08d} {line}")
    print("FLOOD_END")
    return lines


def huge_message(megabytes: int = 10) -> None:
    """Raise an exception whose message is ``megabytes`` MB long."""
    raise ValueError("boom " + "m" * (megabytes << 20))


def unserializable() -> Any:
    """Return a value msgpack cannot carry."""
    return {"ok": [1, 2], "bad": object()}


def recursion(depth: int = 0) -> int:
    """Recurse without bound (RecursionError)."""
    return recursion(depth + 1) + 1


def write_files() -> str:
    """Leave files behind in the working directory; returns it."""
    with open("leftover.txt", "w") as handle:
        handle.write("x")
    os.mkdir("leftover_dir")
    return os.getcwd()


def list_cwd() -> list:
    return sorted(os.listdir("."))


def read_stdin() -> str:
    return sys.stdin.read()


def c_printf(text: str) -> None:
    """Write from C (libc stdio), bypassing Python's sys.stdout."""
    _libc.printf(b"%s\n", text.encode())


def warn_and_return(value: Any) -> Any:
    print("to stdout")
    print("to stderr", file=sys.stderr)
    return value


def oom_killed(chunk_mb: int = 4) -> None:
    """Fill memory up to the limit, then die of SIGKILL, as a victim of the kernel's OOM killer."""
    chunks = []
    try:
        while True:
            block = bytearray(chunk_mb << 20)
            block[::4096] = b"\1" * len(block[::4096])
            chunks.append(block)
    except MemoryError:
        os.kill(os.getpid(), signal.SIGKILL)


def spawn_grandchild(seconds: int = 600) -> int:
    """Start a child process that sleeps (it must not outlive a killed worker); returns its pid."""
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])
    with open("grandchild.pid", "w") as handle:
        handle.write(str(child.pid))
    return child.pid


def spawn_grandchild_and_hang(seconds: int = 600) -> None:
    """Start a sleeping child, publish its pid on stderr, then hang until killed."""
    pid = spawn_grandchild(seconds)
    os.write(2, f"GRANDCHILD {pid}\n".encode())
    while True:
        time.sleep(1)


# --- well-behaved ---------------------------------------------------------------------------

def echo(value: Any) -> Any:
    return value


def add(a: Any, b: Any) -> Any:
    return a + b


def getpid() -> int:
    return os.getpid()


def sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def limits() -> dict:
    import resource

    return {
        "core": resource.getrlimit(resource.RLIMIT_CORE),
        "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
        "data": resource.getrlimit(resource.RLIMIT_DATA),
        "tmpdir": os.environ.get("TMPDIR"),
        "cwd": os.getcwd(),
        "threads": len(os.listdir("/proc/self/task")),
        "pgid_is_pid": os.getpgid(0) == os.getpid(),
    }


def modules_loaded(*names: str) -> dict:
    return {name: name in sys.modules for name in names}


def thread_env() -> dict:
    keys = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_THREADING_LAYER", "TF_NUM_INTRAOP_THREADS")
    return {key: os.environ.get(key) for key in keys}


def type_name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


def python_executable() -> str:
    return sys.executable


def cuda_state() -> dict:
    """What a fresh worker sees of CUDA, before touching it."""
    import torch

    return {"initialized": torch.cuda.is_initialized(), "bad_fork": torch.cuda._is_in_bad_fork(),
            "available": torch.cuda.is_available()}


def sleep_then(seconds: float, value: Any) -> Any:
    time.sleep(seconds)
    return value


def crash_once(marker: str) -> str:
    """Segfault unless ``marker`` exists; create it first (so a re-run succeeds: a flaky crash)."""
    if os.path.exists(marker):
        return "survived"
    with open(marker, "w") as handle:
        handle.write("crashed once")
    ctypes.string_at(0)
    return "unreachable"
