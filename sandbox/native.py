"""Where a hung worker spins in native code (Linux, x86-64 and AArch64).

A timeout's faulthandler dump shows the Python frames only: the innermost one is the library
the task called, even when the loop runs in a shared object that library merely links (a LAPACK
routine, another package's random sampler). Before the kill, the pool samples the program
counter of the worker's busiest thread a few times (``PTRACE_SEIZE`` and ``PTRACE_INTERRUPT``:
the worker sees no signal) and maps each to the shared object and file offset that hold it.
Only before a kill: a sample whose stop never came leaves the thread traced until it dies.
:func:`describe` turns those samples into the object, the Python package that ships it and the
ELF symbol around the hottest offset.

Everything here degrades to "nothing known": a platform without ptrace, a process that is gone,
a kernel that refuses the attach.
"""
from __future__ import annotations

import collections
import ctypes
import ctypes.util
import functools
import os
import platform
import re
import struct
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .procfs import state_and_ticks

__all__ = ["ANONYMOUS", "INTERPRETED_SHARE", "NativeSpot", "NativePlace", "sample", "describe", "package_of",
           "symbol_at", "innermost_frames"]

_PTRACE_GETREGSET = 0x4204
_PTRACE_SEIZE = 0x4206
_PTRACE_INTERRUPT = 0x4207
_PTRACE_DETACH = 17
_NT_PRSTATUS = 1
_WALL = 0x40000000
# (registers in the NT_PRSTATUS set, index of the program counter): user_regs_struct's rip on
# x86-64, user_pt_regs' pc on AArch64
_PC_SLOT = {"x86_64": (27, 16), "aarch64": (34, 32)}
#: the path of executable memory that maps no file: code a JIT compiler (XLA, LLVM) made
ANONYMOUS = "[anon]"
#: the share of samples in the interpreter from which a loop counts as Python code: a loop in a
#: C extension never enters it, a Python loop calling numpy spent a quarter to two thirds there
INTERPRETED_SHARE = 0.15


@dataclass(frozen=True)
class NativeSpot:
    """``hits`` of the samples fell in ``path`` (a mapped file, or :data:`ANONYMOUS`), the
    hottest at file offset ``offset``; ``interpreter``: the file is the Python interpreter's
    own (its executable or ``libpython``)."""
    path: str
    offset: int
    hits: int
    interpreter: bool = False


@dataclass(frozen=True)
class NativePlace:
    """Where a hang spins, for a report: the shared ``path``, the Python ``package`` that ships
    it (None: a system library), the ELF ``symbol`` around the hottest offset (None: stripped or
    unknown), and the ``share`` of samples in the package's objects (in ``path`` for a system
    library). ``interpreted``: a good part of the samples (:data:`INTERPRETED_SHARE`) ran the
    Python interpreter itself: the loop is Python code (its innermost frame says where), and
    ``path`` is only what that code calls most."""
    path: str
    package: Optional[str]
    symbol: Optional[str]
    share: float
    interpreted: bool = False

    @property
    def only_python(self) -> bool:
        """Whether nothing but the interpreter was sampled: no native code to name."""
        return self.interpreted and self.package is None and self.symbol is None and self.path != ANONYMOUS

    def text(self) -> str:
        if self.only_python:
            return "Python code"
        if self.interpreted:
            return f"Python code, calling {self._native()}"
        return self._native()

    def _native(self) -> str:
        if self.path == ANONYMOUS:
            return f"code generated at run time (anonymous memory), {self.share:.0%} of samples"
        name = os.path.basename(self.path)
        where = f"{name} ({self.symbol})" if self.symbol else name
        owner = f"native code of {self.package}" if self.package else "native code"
        return f"{owner}: {where}, {self.share:.0%} of samples"


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


@functools.lru_cache(maxsize=None)
def _ptrace_fn():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    return libc.ptrace


@functools.lru_cache(maxsize=None)
def _cxa_demangle():
    """libstdc++'s demangler (None where the C++ runtime cannot be loaded)."""
    try:
        cxx = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
        fn = cxx.__cxa_demangle
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    return fn


def _wait_stop(pid: int, limit_s: float) -> bool:
    end = time.monotonic() + limit_s
    while True:
        try:
            got, _ = os.waitpid(pid, os.WNOHANG | _WALL)
        except ChildProcessError:
            return False
        if got == pid:
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.0005)


def _program_counter(pid: int) -> Optional[int]:
    """One sample of ``pid``'s program counter: seize, interrupt, read, detach."""
    slot = _PC_SLOT.get(platform.machine())
    if slot is None:
        return None
    ptrace = _ptrace_fn()
    if ptrace(_PTRACE_SEIZE, pid, None, None) != 0:
        return None
    try:
        if ptrace(_PTRACE_INTERRUPT, pid, None, None) != 0 or not _wait_stop(pid, 0.05):
            return None
        regs = (ctypes.c_ulonglong * slot[0])()
        iov = _IoVec(ctypes.cast(regs, ctypes.c_void_p), ctypes.sizeof(regs))
        if ptrace(_PTRACE_GETREGSET, pid, ctypes.c_void_p(_NT_PRSTATUS), ctypes.byref(iov)) != 0:
            return None
        return int(regs[slot[1]])
    finally:
        ptrace(_PTRACE_DETACH, pid, None, None)


def _mappings(pid: int) -> List[Tuple[int, int, int, str]]:
    rows = []
    try:
        with open(f"/proc/{pid}/maps") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) < 5 or "x" not in parts[1]:
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                rows.append((lo, hi, int(parts[2], 16), parts[5].strip() if len(parts) > 5 else ANONYMOUS))
    except OSError:
        return []
    return rows


def _busiest_thread(pid: int) -> int:
    """The thread of ``pid`` that is running and has used the most CPU: a main thread blocked
    in a futex while a pool thread (XLA's, OpenMP's) does the work would show only the wait.
    ``pid`` itself when no thread is running (a sleep, a deadlock) or nothing can be read."""
    best, best_cpu = pid, -1
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return pid
    for tid in tids:
        got = state_and_ticks(f"/proc/{pid}/task/{tid}/stat")
        if got is None:  # the thread is gone
            continue
        state, cpu = got
        if state == b"R" and cpu > best_cpu:
            best, best_cpu = int(tid), cpu
    return best


def sample(pid: int, samples: int = 16, gap_s: float = 0.002) -> Tuple[NativeSpot, ...]:
    """Sample the program counter of ``pid``'s busiest thread (:func:`_busiest_thread`)
    ``samples`` times and group the samples by the mapped file that holds them, the most hit
    first (empty when nothing could be read)."""
    pcs = []
    tid = _busiest_thread(pid)
    for i in range(samples):
        pc = _program_counter(tid)
        if pc is not None:
            pcs.append(pc)
        if i + 1 < samples:
            time.sleep(gap_s)
    if not pcs:
        return ()
    maps = _mappings(pid)
    try:
        exe = os.path.realpath(f"/proc/{pid}/exe")
    except OSError:
        exe = None
    by_path: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for pc in pcs:
        row = next((r for r in maps if r[0] <= pc < r[1]), None)
        if row is not None:
            by_path[row[3]][pc - row[0] + row[2]] += 1
    spots = [NativeSpot(path, offsets.most_common(1)[0][0], sum(offsets.values()),
                        interpreter=path == exe or os.path.basename(path).startswith("libpython"))
             for path, offsets in by_path.items()]
    return tuple(sorted(spots, key=lambda s: -s.hits))


def package_of(path: str) -> Optional[str]:
    """The top-level Python package that ships the shared object at ``path``: the first folder
    under ``site-packages`` (``scipy.libs``, a wheel's vendored libraries, counts as ``scipy``);
    None outside an installed package."""
    parts = path.replace("\\", "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            i = len(parts) - 1 - parts[::-1].index(marker)
            if i + 1 < len(parts) - 1:  # a folder under it, then the file
                top = parts[i + 1]
                return top[:-len(".libs")] if top.endswith(".libs") else top
    return None


def describe(spots: Sequence[NativeSpot]) -> Optional[NativePlace]:
    """The place a report names: the most sampled object that an installed package ships, or
    code generated at run time (:data:`ANONYMOUS`; the C library or libm under them are where a
    package's loop spends its time, not its cause), else the most sampled object other than the
    interpreter, else the interpreter (:attr:`NativePlace.only_python`)."""
    if not spots:
        return None
    total = sum(s.hits for s in spots)
    interpreted = sum(s.hits for s in spots if s.interpreter) >= INTERPRETED_SHARE * total
    packaged = [s for s in spots if package_of(s.path) or s.path == ANONYMOUS]
    compiled = [s for s in spots if not s.interpreter]
    best = packaged[0] if packaged else compiled[0] if compiled else spots[0]
    if best.interpreter:
        return NativePlace(best.path, None, None, best.hits / total, True)
    package = package_of(best.path)
    hits = sum(s.hits for s in spots if package_of(s.path) == package) if package else best.hits
    return NativePlace(best.path, package, symbol_at(best.path, best.offset), hits / total, interpreted)


_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


def innermost_frames(dump: str, limit: int = 5) -> List[str]:
    """The innermost Python frames of the current thread in a faulthandler ``dump`` (a crash's
    or a timeout's ``stderr_tail``), innermost first, each as ``path:line in function`` with
    the path cut after ``site-packages/``; empty when the dump has no such block."""
    at = max(dump.rfind("Current thread"), dump.rfind("Stack (most recent call first)"))
    if at < 0:
        return []
    frames = []
    for line in dump[at:].splitlines()[1:]:
        m = _FRAME.match(line)
        if m is None:
            break
        path = m["path"].replace("\\", "/")
        for marker in ("site-packages/", "dist-packages/"):
            if marker in path:
                path = path.rsplit(marker, 1)[1]
        frames.append(f"{path}:{m['line']} in {m['func']}")
        if len(frames) == limit:
            break
    return frames


def symbol_at(path: str, offset: int) -> Optional[str]:
    """The function symbol of the ELF file at ``path`` whose extent holds file offset
    ``offset`` (its static symbol table, else its dynamic one); None when there is none."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(64)
            if data[:4] != b"\x7fELF" or data[4] != 2:  # 64-bit ELF only
                return None
            end = "<" if data[5] == 1 else ">"
            (phoff, shoff) = struct.unpack_from(end + "QQ", data, 32)
            (phentsize, phnum, shentsize, shnum) = struct.unpack_from(end + "HHHH", data, 54)
            vaddr = _vaddr_of(fh, end, phoff, phentsize, phnum, offset)
            if vaddr is None:
                return None
            fh.seek(shoff)
            sections = [struct.unpack_from(end + "IIQQQQIIQQ", fh.read(shentsize)) for _ in range(shnum)]
            for wanted in (2, 11):  # SHT_SYMTAB, then SHT_DYNSYM
                for sh in sections:
                    if sh[1] == wanted and sh[6] < len(sections):
                        name = _symbol_in(fh, end, sh, sections[sh[6]], vaddr)
                        if name:
                            return name
    except (OSError, struct.error, ValueError, IndexError):
        return None
    return None


def _vaddr_of(fh, end: str, phoff: int, phentsize: int, phnum: int, offset: int) -> Optional[int]:
    fh.seek(phoff)
    for _ in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(end + "IIQQQQ", fh.read(phentsize))
        if p_type == 1 and p_offset <= offset < p_offset + p_filesz:  # PT_LOAD
            return offset - p_offset + p_vaddr
    return None


def _symbol_in(fh, end: str, sh: tuple, strtab: tuple, vaddr: int) -> Optional[str]:
    fh.seek(sh[4])
    table = fh.read(sh[5])
    found = None
    for name_at, info, _other, _shndx, value, size in struct.iter_unpack(end + "IBBHQQ", table[:len(table) // 24 * 24]):
        if info & 0xF == 2 and value <= vaddr < value + max(size, 1):  # STT_FUNC
            found = name_at
            break
    if found is None:
        return None
    fh.seek(strtab[4] + found)
    raw = fh.read(4096).split(b"\0", 1)[0]
    return _demangled(raw) or None


_SYMBOL_CHARS = 160  # a templated C++ name runs to kilobytes: its head says what it is


def _demangled(raw: bytes) -> str:
    """A C++ symbol as source code spells it (libstdc++'s ``__cxa_demangle``, where the C++
    runtime can be loaded), cut to :data:`_SYMBOL_CHARS`; any other symbol as it is."""
    name = raw.decode("ascii", "replace")
    demangle = _cxa_demangle() if name.startswith("_Z") else None
    if demangle is not None:
        status = ctypes.c_int(-1)
        out = demangle(raw, None, None, ctypes.byref(status))
        if out and status.value == 0:
            name = ctypes.string_at(out).decode("ascii", "replace")
            ctypes.CDLL(None).free(ctypes.c_void_p(out))
    return name if len(name) <= _SYMBOL_CHARS else name[:_SYMBOL_CHARS - 1] + "…"
