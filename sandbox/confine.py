"""Confinement of workers: Landlock rules (writes, TCP, signals) and a network namespace.

A worker confines itself before its first task (a forked one right after the fork, a spawned
one before it imports the preload set, so that no thread escapes: Landlock confines the calling
thread and what it starts later). It may then:

- read and execute anywhere (reads are not restricted);
- write, create, remove, rename or link only beneath its own folder (its capture files,
  progress page and ``TMPDIR``), the caller's extra writable paths, ``/dev/shm`` (shared
  memory), its own ``/proc/self`` entries; and write (not create or remove) the standard
  character devices (``/dev/null``, ``/dev/zero``, ``/dev/full``, ``/dev/random``,
  ``/dev/urandom``, ``/dev/tty``) and accelerator device nodes found when the pool starts;
- make no TCP bind or connect (Landlock ABI 4+);
- send no signal to, and connect to no abstract unix socket of, a process outside its own
  domain (the pool, the zygote, other workers; Landlock ABI 6+).

Programs a worker starts inherit all of it. The zygote (which runs no task) also moves itself,
and so all its workers, into a network namespace of its own when the kernel allows it: only a
loopback interface that is down, so no UDP or TCP reaches anything, not even the machine itself.

The binding is three syscalls through ctypes (``landlock_create_ruleset``, ``landlock_add_rule``,
``landlock_restrict_self``); what the kernel lacks is left out and named (:func:`plan`). Imported
by the pool and by workers (which may run another interpreter): standard library only, Python
3.9 syntax.
"""
from __future__ import annotations

import ctypes
import errno
import glob
import os
import platform
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["landlock_abi", "plan", "confine_self", "enter_network_namespace", "describe"]

# syscall numbers: the asm-generic table (x86_64, aarch64, arm, riscv, powerpc, s390, ...); alpha's differ
_NR = (554, 555, 556) if platform.machine().startswith("alpha") else (444, 445, 446)

_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_RESTRICT_SELF_LOG_SAME_EXEC_OFF = 1 << 0  # ABI 7: no audit record per denial (a fuzzer makes many)

# filesystem access rights (linux/landlock.h)
FS_WRITE_FILE = 1 << 1
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13      # ABI 2: link or rename into another folder
FS_TRUNCATE = 1 << 14   # ABI 3
NET_BIND_TCP = 1 << 0   # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

#: everything that changes the filesystem, by the ABI that introduced it (reads, execution and
#: device ioctls are not handled: they stay allowed everywhere)
_WRITE_ACCESS_ABI1 = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG
                      | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)

#: writable (not creatable) character devices every program may use
STANDARD_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
#: accelerator device nodes (opened read-write by their drivers' user-space libraries), if present
ACCELERATOR_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd", "/dev/accel")
#: shared memory (POSIX shm and semaphores of multiprocessing, numpy and torch): fully writable
SHARED_MEMORY = ("/dev/shm",)

# rule kinds: a folder tree with every write right, or files that may only be written
TREE, FILE = "tree", "file"


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: Any = None
_abi: Optional[Tuple[int, str]] = None


def _syscall() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc.syscall


def landlock_abi() -> Tuple[int, str]:
    """(Landlock ABI version of this kernel, why 0 if it is 0); cached."""
    global _abi
    if _abi is None:
        if not os.uname().sysname == "Linux":
            _abi = (0, "not Linux")
        else:
            try:
                version = _syscall()(_NR[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
                err = ctypes.get_errno()
            except (OSError, AttributeError) as exc:
                _abi = (0, f"no syscall(): {exc}")
            else:
                if version > 0:
                    _abi = (int(version), "")
                elif err == errno.ENOSYS:
                    _abi = (0, "the kernel has no Landlock (ENOSYS)")
                elif err == errno.EOPNOTSUPP:
                    _abi = (0, "Landlock is disabled in this kernel (EOPNOTSUPP: not in lsm=)")
                else:
                    _abi = (0, f"landlock_create_ruleset failed: {os.strerror(err)}")
    return _abi


def handled_access(abi: int) -> Tuple[int, int, int]:
    """(filesystem, network, scope) bits that a ruleset of this ABI handles (denies by default)."""
    fs = _WRITE_ACCESS_ABI1 if abi >= 1 else 0
    if abi >= 2:
        fs |= FS_REFER
    if abi >= 3:
        fs |= FS_TRUNCATE
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return fs, net, scoped


def _existing_devices() -> List[str]:
    found = [p for p in STANDARD_DEVICES if os.path.exists(p)]
    for pattern in ACCELERATOR_DEVICES:
        found.extend(sorted(glob.glob(pattern)))
    return found


def plan(writable: Sequence[str] = (), abi: Optional[int] = None) -> Dict[str, Any]:
    """What workers will enforce (computed once by the pool, sent to every worker).

    ``writable``: extra folders or files the workers may change (absolute paths that exist).
    The worker adds its own folder and ``/proc/self``. Returns ``{"abi", "reason", "rules":
    [[kind, path], ...], "enforced": [...], "off": [...]}``, the last two in words.
    """
    found, reason = landlock_abi()
    if abi is None:
        abi = found
    elif abi > found:
        abi = found  # cannot apply rules this kernel lacks
    rules = [[TREE, os.path.abspath(p)] for p in writable]
    rules += [[TREE, p] for p in SHARED_MEMORY if os.path.isdir(p)]
    rules += [[FILE, p] for p in _existing_devices()]
    enforced: List[str] = []
    off: List[str] = []
    if abi < 1:
        off.append(f"filesystem writes ({reason or 'Landlock off'})")
        off.append("TCP bind/connect")
        off.append("signal and abstract-socket scoping")
    else:
        named = [os.path.abspath(p) for p in writable]
        if len(named) > 3:
            named[3:] = [f"{len(named) - 3} more"]
        enforced.append("writes only beneath the worker's folder, " + "".join(f"{p}, " for p in named)
                        + "/dev/shm and device files")
        if abi < 2:
            enforced.append("links and renames across folders refused")
        if abi < 3:
            off.append("truncate() of existing files outside (needs Landlock ABI 3)")
        if abi >= 4:
            enforced.append("no TCP bind/connect")
        else:
            off.append("TCP bind/connect (needs Landlock ABI 4)")
        if abi >= 6:
            enforced.append("no signals or abstract-socket connections outside the worker")
        else:
            off.append("signal and abstract-socket scoping (needs Landlock ABI 6)")
    return {"abi": abi, "reason": reason, "rules": rules, "enforced": enforced, "off": off}


def confine_self(confinement: Dict[str, Any], workdir: str) -> Dict[str, Any]:
    """Confine this thread and what it starts later (a worker, before its first task).

    Returns ``{"abi": applied ABI (0: none), "error": None or why not, "skipped": [paths
    without a rule], "seconds": time taken}``. Never raises: failing to confine is reported,
    and the pool says so.
    """
    import time

    start = time.perf_counter()
    result: Dict[str, Any] = {"abi": 0, "error": None, "skipped": [], "seconds": 0.0}
    abi = int(confinement.get("abi") or 0)
    if abi < 1:
        result["error"] = confinement.get("reason") or "Landlock off"
        return result
    try:
        syscall = _syscall()
        fs, net, scoped = handled_access(abi)
        attr = _RulesetAttr(fs, net, scoped)
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        ruleset = syscall(_NR[0], ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if ruleset < 0:
            result["error"] = f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
            return result
        file_access = FS_WRITE_FILE | (fs & FS_TRUNCATE)
        try:
            rules = [[TREE, workdir]] + list(confinement.get("rules") or []) + [[FILE, "/proc/self"]]
            for kind, path in rules:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    result["skipped"].append(path)  # vanished since the pool looked
                    continue
                try:
                    err = _add_rule(syscall, ruleset, fs if kind == TREE else file_access, fd)
                    if err == errno.EINVAL and kind == TREE:
                        err = _add_rule(syscall, ruleset, file_access, fd)  # a file, not a folder
                    if err:
                        if path == workdir:
                            result["error"] = f"landlock_add_rule({path}): {os.strerror(err)}"
                            return result
                        result["skipped"].append(path)
                finally:
                    os.close(fd)
            if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                result["error"] = f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}"
                return result
            flags = _RESTRICT_SELF_LOG_SAME_EXEC_OFF if abi >= 7 else 0
            if syscall(_NR[2], ctypes.c_int(ruleset), ctypes.c_uint32(flags)) < 0:
                result["error"] = f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
                return result
        finally:
            os.close(ruleset)
    except (OSError, AttributeError) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        return result
    result["abi"] = abi
    result["seconds"] = time.perf_counter() - start
    return result


def _add_rule(syscall: Any, ruleset: int, access: int, fd: int) -> int:
    """0, or the errno of landlock_add_rule."""
    rule = _PathBeneathAttr(access, fd)
    if syscall(_NR[1], ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
               ctypes.c_uint32(0)) < 0:
        return ctypes.get_errno() or errno.EINVAL
    return 0


_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000


def enter_network_namespace() -> Tuple[bool, str]:
    """Move this (single-threaded) process into a new network namespace; (done, how or why not).

    Privileged (CAP_SYS_ADMIN): a plain ``unshare(CLONE_NEWNET)``. Otherwise, where unprivileged
    user namespaces are allowed, together with a user namespace that maps only this user and
    group to themselves, after which the process drops the capabilities it got in it.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(_CLONE_NEWNET) == 0:
            return True, "unshare(CLONE_NEWNET)"
        first = ctypes.get_errno()
        if first != errno.EPERM:
            return False, f"unshare(CLONE_NEWNET): {os.strerror(first)}"
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            return False, f"unshare(CLONE_NEWNET) needs privileges; with a user namespace: {os.strerror(err)}"
        how = "unshare(CLONE_NEWUSER | CLONE_NEWNET), user and group mapped to themselves"
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as handle:
                    handle.write(text)
        except OSError as exc:  # in the namespaces already: the user shows as the overflow id
            how = f"unshare(CLONE_NEWUSER | CLONE_NEWNET); the user could not be mapped ({exc})"
        _drop_capabilities(libc)
        return True, how
    except (OSError, AttributeError) as exc:
        return False, f"{type(exc).__name__}: {exc}"


def _drop_capabilities(libc: Any) -> None:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), f"capset: {os.strerror(ctypes.get_errno())}")


def describe(confinement: Optional[Dict[str, Any]]) -> str:
    """One line: what the workers enforce and what is off."""
    if not confinement or not confinement.get("enabled"):
        return "confinement off (confine=False)"
    parts = list(confinement.get("enforced") or [])
    if confinement.get("netns"):
        parts.append("own network namespace (no network at all)")
    abi = confinement.get("abi") or 0
    head = f"confined (Landlock ABI {abi})" if abi else "not confined by Landlock"
    text = head + (": " + "; ".join(parts) if parts else "")
    off = list(confinement.get("off") or [])
    if not confinement.get("netns") and confinement.get("netns_error"):
        off.append(f"network namespace ({confinement['netns_error']})")
    if off:
        text += "; OFF: " + "; ".join(off)
    return text
