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


def steps_then(fail_at: int, how: str = "segfault", steps: int = 5) -> int:
    """Walk ``steps`` steps, marking each (sandbox.mark); at ``fail_at`` segfault or hang."""
    from sandbox import mark

    for step in range(steps):
        mark(step)
        if step == fail_at:
            if how == "hang":
                while True:
                    pass
            ctypes.string_at(0)
    return steps


def paced_steps(pause: float, steps: int, hang_at: int = -1) -> int:
    """Walk ``steps`` steps of ``pause`` seconds each, marking each; at ``hang_at`` spin forever."""
    from sandbox import mark

    for step in range(steps):
        mark(step)
        if step == hang_at:
            while True:
                pass
        time.sleep(pause)
    return steps


# --- hangs ----------------------------------------------------------------------------------

def endless_loop() -> None:
    """Spin forever in Python."""
    while True:
        pass


def spin(seconds: float) -> float:
    """Busy for ``seconds`` of wall time: CPU seconds the worker then holds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return seconds


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


_HELD: list = []


def hold(megabytes: int) -> int:
    """Allocate ``megabytes`` (every page written) and keep them, as a cache that only grows
    does; returns the worker's pid."""
    _HELD.append(bytearray(b"\x01") * (megabytes << 20))
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
    """Segfault unless ``marker`` exists; create it first (so a re-run succeeds: a flaky crash).

    A confined worker cannot write the marker's folder: the marker then lives in /dev/shm (which
    workers may write), named after ``marker``, and the run that survives removes it.
    """
    import hashlib

    if os.path.exists(marker):
        return "survived"
    shared = "/dev/shm/sandbox-test-" + hashlib.sha1(marker.encode()).hexdigest()[:16]
    if os.path.exists(shared):
        os.unlink(shared)
        return "survived"
    try:
        handle = open(marker, "w")
    except PermissionError:
        handle = open(shared, "w")
    with handle:
        handle.write("crashed once")
    ctypes.string_at(0)
    return "unreachable"


# --- side effects outside the worker's folder (confinement) ---------------------------------
#
# Each takes paths inside a *sentinel* folder (outside every worker's folder) made by
# make_sentinel() and tries to change it, through the mechanism its name says. With the pool's
# confinement on, each must raise (PermissionError, or OSError for a cross-folder link) and leave
# the sentinel as it was (tree_digest); with it off, each changes it.

def write_outside(path: str) -> str:
    with open(path, "w") as handle:
        handle.write("overwritten")
    return path


def append_outside(path: str) -> str:
    with open(path, "a") as handle:
        handle.write("appended")
    return path


def create_outside(folder: str) -> str:
    path = os.path.join(folder, "created.txt")
    with open(path, "x") as handle:
        handle.write("created")
    return path


def mkdir_outside(folder: str) -> str:
    path = os.path.join(folder, "new_folder")
    os.mkdir(path)
    return path


def remove_outside(path: str) -> str:
    os.remove(path)
    return path


def remove_tree_outside(folder: str) -> str:
    import shutil

    shutil.rmtree(folder)  # raises at the first entry it cannot remove
    return folder


def rename_outside(path: str) -> str:
    os.rename(path, path + ".renamed")
    return path + ".renamed"


def move_into_worker(path: str) -> str:
    """Move an outside file into the worker's folder (which is emptied after the task)."""
    os.rename(path, "moved_in")
    return os.path.abspath("moved_in")


def truncate_outside(path: str) -> str:
    os.truncate(path, 0)
    return path


def subprocess_write(path: str) -> str:
    """A child process writes the file; its failure is raised here, with its own error."""
    import subprocess

    child = subprocess.run([sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write('from a child')", path],
                           capture_output=True, text=True, timeout=60)
    if child.returncode:
        last = (child.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise (PermissionError if "PermissionError" in last else OSError)(f"the child process failed: {last}")
    return path


def shell_write(path: str) -> str:
    """``sh -c 'echo ... > path'``: a program that is not Python."""
    import subprocess

    child = subprocess.run(["sh", "-c", 'echo "from a shell" > "$1"', "sh", path], capture_output=True, text=True,
                           timeout=60)
    if child.returncode:
        raise PermissionError(f"the shell failed: {child.stderr.strip()}")
    return path


def symlink_write(target: str) -> str:
    """Make a symlink inside the worker's folder pointing at ``target`` and write through it."""
    os.symlink(target, "link_out")
    with open("link_out", "w") as handle:
        handle.write("written through a symlink")
    return target


def hardlink_write(target: str) -> str:
    """Hard-link ``target`` into the worker's folder and write through the link."""
    os.link(target, "hard_link")
    with open("hard_link", "w") as handle:
        handle.write("written through a hard link")
    return target


def tcp_connect(port: int, host: str = "127.0.0.1") -> str:
    import socket

    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"hello from a task")
    return f"connected to {host}:{port}"


def tcp_bind(host: str = "127.0.0.1") -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        sock.listen()
        return sock.getsockname()[1]


def udp_send(port: int, host: str = "127.0.0.1") -> int:
    """Send a datagram (Landlock does not cover UDP: the network namespace does)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        return sock.sendto(b"hello from a task", (host, port))


def torch_compile_add(x: Any) -> Any:
    """``torch.compile`` a small function and run it (TorchInductor writes its cache, runs a C compiler)."""
    import torch

    def f(a):
        return torch.sin(a) + a * 2

    compiled = torch.compile(f)
    tensor = torch.from_numpy(x)
    out = compiled(tensor)
    assert torch.allclose(out, f(tensor))
    return out.numpy()


def write_inside_and_in(folder: str) -> list:
    """Write in the worker's folder, TMPDIR (a tempfile) and ``folder`` (a writable extra path)."""
    import tempfile

    with open("here.txt", "w") as handle:
        handle.write("x")
    with tempfile.NamedTemporaryFile() as handle:
        handle.write(b"x")
        name = handle.name
    path = os.path.join(folder, "allowed.txt")
    with open(path, "w") as handle:
        handle.write("allowed")
    return [os.path.abspath("here.txt"), name, path]


def signal_parent() -> int:
    """Send signal 0 (a probe) to the worker's parent, the zygote."""
    os.kill(os.getppid(), 0)
    return os.getppid()


def make_sentinel(folder: str) -> None:
    """A small tree the side-effect tasks aim at: ``file.txt``, ``sub/inner.txt``."""
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    with open(os.path.join(folder, "file.txt"), "w") as handle:
        handle.write("sentinel")
    with open(os.path.join(folder, "sub", "inner.txt"), "w") as handle:
        handle.write("inner sentinel")


def tree_digest(folder: str) -> dict:
    """Relative path -> kind and content hash (symlink targets, file bytes) of everything under ``folder``."""
    import hashlib

    digest = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path):
                digest[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                digest[rel] = ("dir", None)
            else:
                with open(path, "rb") as handle:
                    digest[rel] = ("file", hashlib.sha256(handle.read()).hexdigest())
    return digest


#: the side-effect corpus: (name, function reference, how its argument is made from the case's
#: sentinel folder: "file" (its file.txt), "sub" (its sub folder), "folder" (itself), "port" (the
#: listener's port) or "none"). numpy.save, torch.save and tf.io.write_file are called directly.
SIDE_EFFECTS = [
    ("write", "tests.badtasks:write_outside", "file"),
    ("append", "tests.badtasks:append_outside", "file"),
    ("create", "tests.badtasks:create_outside", "folder"),
    ("mkdir", "tests.badtasks:mkdir_outside", "folder"),
    ("remove", "tests.badtasks:remove_outside", "file"),
    ("remove_tree", "tests.badtasks:remove_tree_outside", "sub"),
    ("rename", "tests.badtasks:rename_outside", "file"),
    ("move_in", "tests.badtasks:move_into_worker", "file"),
    ("truncate", "tests.badtasks:truncate_outside", "file"),
    ("numpy_save", "numpy:save", "npy"),
    ("subprocess", "tests.badtasks:subprocess_write", "child"),
    ("shell", "tests.badtasks:shell_write", "child"),
    ("symlink", "tests.badtasks:symlink_write", "file"),
    ("hardlink", "tests.badtasks:hardlink_write", "file"),
    ("tcp_connect", "tests.badtasks:tcp_connect", "port"),
    ("tcp_bind", "tests.badtasks:tcp_bind", "none"),
    ("signal", "tests.badtasks:signal_parent", "none"),
]
#: the Landlock ABI a case needs (the others need 1); below it, only a network namespace stops TCP
SIDE_EFFECT_ABI = {"tcp_connect": 4, "tcp_bind": 4, "signal": 6}


def side_effect_args(kind: str, folder: str, port: int) -> tuple:
    """The arguments of a SIDE_EFFECTS case whose sentinel folder is ``folder`` (made here)."""
    make_sentinel(folder)
    if kind == "file":
        return (os.path.join(folder, "file.txt"),)
    if kind == "sub":
        return (os.path.join(folder, "sub"),)
    if kind == "folder":
        return (folder,)
    if kind == "npy":
        import numpy as np

        return (os.path.join(folder, "array.npy"), np.arange(3.0))
    if kind == "child":
        return (os.path.join(folder, "child.txt"),)
    if kind == "port":
        return (port,)
    return ()


def refuse_complex(result: Any) -> Any:
    """A lazy library's ``finish`` hook (tests of dtype probing) that refuses complex results
    only when it computes them."""
    if getattr(result, "dtype", None) is not None and result.dtype.kind == "c":
        raise TypeError("complex results are not computed")
    return result
