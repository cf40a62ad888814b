"""An import-only interpreter that runs reproducer scripts, each in a fork of itself.

Started by :class:`xamt.replay.ReplayServer` as ``python replay_server.py numpy,torch,...``: it
imports the listed modules (and runs nothing else), then serves one JSON request per line on
stdin: ``{"script": path, "stdout": path, "stderr": path, "timeout": s, "memory_limit": bytes}``. Each script runs in a
fresh fork, as ``python script`` would run it (``__main__``, its folder first on ``sys.path`` and
as the working directory, standard input from /dev/null, the exit status of ``sys.exit`` or 1
for an uncaught exception, death by signal visible to the waiting parent), so the replay is
still a process that ran nothing before, without paying the libraries' import each time.
Forking is safe only while this interpreter has one thread (``../shared`` fork hazard): when it
has more, it answers ``{"fork": false}`` and the client runs the script in a new interpreter.

This file imports only the standard library: it must not put Xamt into the replays.
"""
import json
import os
import runpy
import select
import signal
import sys
import time
import traceback


def _threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _reply(channel, data):
    channel.write(json.dumps(data) + "\n")
    channel.flush()


def _limit_memory(limit):
    """Data segment limit: the size now plus ``limit`` bytes (as the sandbox's workers have it), so
    a reproducer that allocates without bound fails instead of taking the machine's memory."""
    import resource

    with open("/proc/self/status") as fh:
        now = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmData:"))
    resource.setrlimit(resource.RLIMIT_DATA, (now + int(limit), now + int(limit)))


def _child(script, stdout_path, stderr_path, channel, memory_limit=None):
    code = 1
    try:
        os.close(channel.fileno())  # the replay must not hold the protocol pipe open
        os.setpgid(0, 0)  # the server kills the whole group on a timeout
        if memory_limit:
            _limit_memory(memory_limit)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
        os.dup2(os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
        if os.environ.get("PYTHONFAULTHANDLER"):
            import faulthandler

            faulthandler.enable()
        folder = os.path.dirname(os.path.abspath(script))
        os.chdir(folder)
        sys.argv = [script]
        sys.path.insert(0, folder)
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exc:  # as the interpreter treats it
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
    finally:
        os._exit(code & 0xFF)


def _run(request, channel):
    pid = os.fork()
    if pid == 0:
        _child(request["script"], request["stdout"], request["stderr"], channel, request.get("memory_limit"))
    deadline = time.monotonic() + float(request.get("timeout", 120.0))
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    timed_out = False
    while True:
        wpid, status = os.waitpid(pid, os.WNOHANG)
        if wpid:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except OSError:
                    pass
            os.waitpid(pid, 0)
            break
        if pidfd is not None:
            select.select([pidfd], [], [], min(left, 1.0))
        else:
            time.sleep(min(left, 0.01))
    if pidfd is not None:
        os.close(pidfd)
    if timed_out:
        return {"fork": True, "rc": None, "timed_out": True}
    return {"fork": True, "rc": os.waitstatus_to_exitcode(status), "timed_out": False}


def main():
    del sys.path[0]  # this file's folder: nothing in it may shadow a library
    names = [n for n in (sys.argv[1] if len(sys.argv) > 1 else "").split(",") if n]
    # the protocol gets a descriptor of its own: what an import prints goes to /dev/null
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    failed = []
    for name in names:
        try:
            __import__(name)
        except Exception as exc:  # the script itself will report it (exit status 3)
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    _reply(channel, {"ready": True, "threads": _threads(), "failed": failed})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        threads = _threads()
        if threads > 1:
            _reply(channel, {"fork": False, "why": f"the replay interpreter has {threads} threads"})
            continue
        _reply(channel, _run(request, channel))


if __name__ == "__main__":
    main()
