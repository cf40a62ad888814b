"""Work sharded over the nodes of a Ray cluster: one actor per node, each owning a sandbox pool.

A campaign and a registry build both run many independent *jobs* (a group-iteration, the
validation of one candidate), each a step generator over a sandbox pool
(:mod:`xamt.exec.schedule`). :class:`Shards` runs them on a Ray cluster instead of one local pool:

- **One actor per node** (:class:`ShardWorker`, pinned to its node), owning a
  :class:`sandbox.SandboxPool` sized to that node's CPUs. Inside, one thread drives a
  :class:`~xamt.exec.schedule.Scheduler` over the pool, as the local loop does.
- **Sharded by key.** Every job carries a key (a group's); a key stays with one actor while it
  lives, so that group's compiled programs and JIT state stay warm in that actor's workers.
- **Few Ray calls.** The driver sends the jobs of one turn of its loop in one ``submit`` per
  actor and keeps one long-polling ``collect`` per actor in flight, which returns every job
  finished by then: a handful of Ray calls per turn, not one per job.
- **Faults.** When an actor dies (its node lost, its raylet killed), its keys go to the other
  actors and the jobs it had in flight run again there. Only when no actor is left does
  :meth:`Shards.wait` raise :class:`ClusterError`.

What a job is, is the caller's: a picklable :class:`JobKind` turns a payload into a step
generator on the actor's pool and trims the result for the trip back. Ray and the pool are
the only transport; there is no protocol of our own.
"""
from __future__ import annotations

import os
import queue
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping, Protocol, Sequence

from xamt.errors import XamtError
from xamt.log import get_logger

__all__ = ["ClusterError", "JobKind", "ShardWorker", "Shards", "RaySession", "RemotePool", "connect",
           "add_ray_option"]

_log = get_logger("cluster")

#: seconds a ``collect`` call waits on the actor for the first finished job, and then at most
#: for a quarter of its jobs in flight to finish (fewer Ray calls, results a little later)
_COLLECT_WAIT = 0.2
_LINGER = 0.02


class ClusterError(XamtError):
    """The Ray cluster cannot be reached, has no node to run on, or lost every node."""


class JobKind(Protocol):
    """What the actors run (picklable: it travels to every actor once)."""

    def setup(self, pool: Any, where: str) -> None:
        """Called once on the actor, with its pool and its node's short name."""

    def steps(self, payload: Any) -> Any:
        """The step generator of one job."""

    def trim(self, value: Any) -> Any:
        """The job's value as it travels back to the driver."""


def connect(address: str, *, num_cpus: int | None = None) -> bool:
    """Join or start Ray. ``local`` starts an instance on this machine (``num_cpus``: its CPUs,
    default all); ``auto`` joins the cluster named by ``RAY_ADDRESS``; anything else is a
    cluster address (``HOST:PORT`` or ``ray://...``). Returns True when this call started Ray
    (the caller then shuts it down)."""
    try:
        import ray
    except ImportError as exc:  # pinned in setup.py: only a broken install lands here
        raise ClusterError(f"--ray needs the ray package ({exc}); `make venv` installs it") from None
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "configure_logging": False}
    if address == "local":
        kwargs.update(address="local", num_cpus=num_cpus or os.cpu_count() or 1)
        # the raylet reads it at start: workers at normal priority (see _normal_priority)
        os.environ.setdefault("RAY_worker_niceness", "0")
    elif address == "auto":
        if not os.environ.get("RAY_ADDRESS"):
            raise ClusterError("--ray auto joins the cluster in RAY_ADDRESS, which is not set "
                               "(give --ray HOST:PORT, or --ray local for one machine)")
        kwargs["address"] = os.environ["RAY_ADDRESS"]
    else:
        kwargs["address"] = address
    # the actors import xamt from where the driver does (a cluster's nodes install it the same way)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"cannot join Ray at {address!r}: {exc}") from None
    return True


def add_ray_option(parser: Any) -> None:
    """The ``--ray`` option of ``xamt fuzz`` and ``xamt groups build``."""
    parser.add_argument("--ray", default=None, metavar="ADDRESS|auto|local",
                        help="run on a Ray cluster: one actor per node with a sandbox pool sized to "
                             "its CPUs; local starts Ray on this machine, auto joins RAY_ADDRESS "
                             "(default: one local pool, no Ray)")


class ShardWorker:
    """The actor of one node (wrapped with ``ray.remote`` by :class:`Shards`): a sandbox pool and
    a thread that drives every job on it (see the module docstring)."""

    def __init__(self, pool_kwargs: Mapping[str, Any], kind: JobKind, where: str, out_dir: str | None = None):
        from xamt.exec.pools import open_pool
        from xamt.exec.schedule import Scheduler

        self.niceness = _normal_priority()
        self.where = where
        self.pool = open_pool(**_node_local(pool_kwargs, out_dir))
        self.kind = kind
        kind.setup(self.pool, where)
        self._scheduler = Scheduler(self.pool)
        self._inbox: "queue.Queue[list[tuple[int, Any]]]" = queue.Queue()
        self._done: list[tuple[int, bool, Any]] = []
        self._cv = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._drive, name="shard-driver", daemon=True)
        self._thread.start()

    def _drive(self) -> None:
        """Start what arrived, hand back what finished; one thread (the scheduler is not
        thread-safe)."""
        while not self._closing:
            try:
                # idle: wait for work here; busy: the scheduler's wait wakes for new work too
                batch = self._inbox.get(timeout=0.2) if not len(self._scheduler) else self._inbox.get_nowait()
            except queue.Empty:
                batch = []
            while True:
                for token, payload in batch:
                    try:
                        self._scheduler.start(token, _guarded(self.kind.steps(payload)))
                    except Exception as exc:  # a payload that cannot even start: the driver sees why
                        self._finish([(token, False, _describe(exc))])
                try:
                    batch = self._inbox.get_nowait()
                except queue.Empty:
                    break
            if len(self._scheduler):
                try:
                    done = self._scheduler.wait(timeout=0.2)
                except queue.Empty:
                    continue
                self._finish([(token, ok, self.kind.trim(value) if ok else value)
                              for token, (ok, value) in done])

    def _finish(self, rows: list[tuple[int, bool, Any]]) -> None:
        if rows:
            with self._cv:
                self._done.extend(rows)
                self._cv.notify_all()

    def submit(self, jobs: list[tuple[int, Any]]) -> int:
        """Queue jobs ``(token, payload)``; returns how many."""
        self._inbox.put(list(jobs))
        self._scheduler.wake()
        return len(jobs)

    def collect(self, wait: float = _COLLECT_WAIT) -> list[tuple[int, bool, Any]]:
        """``(token, ok, value)`` of every job finished since the last call, waiting up to
        ``wait`` s for the first (``ok`` False: the value is the error's description). After
        the first it lingers a few milliseconds for more, so one call carries several."""
        with self._cv:
            if not self._done:
                self._cv.wait(timeout=wait)
            if self._done:
                want = max(1, len(self._scheduler) // 4)
                end = time.monotonic() + _LINGER
                while len(self._done) < want and (left := end - time.monotonic()) > 0:
                    self._cv.wait(timeout=left)
            out, self._done = self._done, []
        return out

    def exchange(self, jobs: list[tuple[int, Any]], wait: float = _COLLECT_WAIT) -> list[tuple[int, bool, Any]]:
        """:meth:`submit` then :meth:`collect`, in one call."""
        if jobs:
            self.submit(jobs)
        return self.collect(wait)

    def run_tasks(self, tasks: list, timeout: float | None = None) -> list:
        """Sandbox tasks run on this actor's pool (triage, device discovery): their outcomes."""
        return self.pool.run(tasks, timeout=timeout)

    def info(self) -> dict[str, Any]:
        """Where it runs and what its pool enforces."""
        return {"where": self.where, "pid": os.getpid(), "workers": self.pool.workers,
                "niceness": self.niceness, "describe": self.pool.describe(), "stats": dict(self.pool.stats)}

    def close(self) -> dict[str, Any]:
        """Stop driving and close the pool (in-flight tasks are cancelled); its last stats."""
        self._closing = True
        self._thread.join(timeout=5.0)
        info = self.info()
        summary = getattr(self.kind, "summary", None)
        info["job"] = summary() if callable(summary) else {}
        self.pool.close(wait=False)
        return info


def _node_local(pool_kwargs: Mapping[str, Any], out_dir: str | None) -> dict[str, Any]:
    """The pool's settings on this node: folders of the workers' environment below the driver's
    output folder (compile caches) are made here; where that folder cannot be written (another
    machine), they move below this node's temporary folder."""
    kwargs = dict(pool_kwargs)
    if not out_dir:
        return kwargs
    env = dict(kwargs.get("env") or {})
    local = os.path.join(tempfile.gettempdir(), "xamt-node-cache")
    for key, value in env.items():
        if not value.startswith(out_dir + os.sep):
            continue
        try:
            os.makedirs(value, exist_ok=True)
        except OSError:
            env[key] = local + value[len(out_dir):]
            os.makedirs(env[key], exist_ok=True)
    kwargs["env"] = env
    return kwargs


def _normal_priority() -> int:
    """Ray starts its workers at niceness 15 (``RAY_worker_niceness``), and the sandbox's zygote
    and workers would inherit it: on a busy node they then lose the CPU to everything else, and
    a group-iteration took three times as long as in the local loop. Back to 0 where allowed;
    returns the niceness kept (shown by :meth:`Shards.describe`)."""
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) > 0:
            os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:  # lowering niceness needs CAP_SYS_NICE: start the nodes with RAY_worker_niceness=0
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _guarded(gen: Any) -> Any:
    """A step generator whose value is ``(True, value)``, or ``(False, why)`` when it raised: one
    broken job must not stop the actor's other jobs."""
    try:
        tasks = next(gen)
        while True:
            outcomes = yield tasks
            tasks = gen.send(outcomes)
    except StopIteration as stop:
        return True, stop.value
    except Exception as exc:
        return False, _describe(exc)


#: jobs in flight per worker that an actor may have beyond twice the least loaded one's
_REBALANCE_SLACK = 4


def _load(actor: "_Actor") -> float:
    return len(actor.inflight) / actor.workers


@dataclass
class _Actor:
    handle: Any
    where: str
    node_id: str
    workers: int
    inflight: dict[int, tuple[Hashable, Any]] = field(default_factory=dict)
    outbox: list[tuple[int, Any]] = field(default_factory=list)
    collecting: Any = None
    keys: int = 0
    alive: bool = True


class Shards:
    """Jobs sharded by key over one actor per node (see the module docstring).

    Args:
        kind: what the actors run.
        pool_kwargs: the actors' :class:`sandbox.SandboxPool` settings, less ``workers`` (each
            actor's pool has one worker per CPU of its node).
        out_dir: the driver's output folder (the workers' compile caches live below it; a
            node that cannot write there keeps them in its temporary folder).
    """

    def __init__(self, kind: JobKind, pool_kwargs: Mapping[str, Any], *, out_dir: str | None = None):
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._ray = ray
        self.owner: dict[Hashable, _Actor] = {}
        #: ``on_moved(token, key, payload) -> payload``: a lost actor's job as it is sent to
        #: another (the caller may need to send more with it, as a group the new actor lacks)
        self.on_moved: Any = None
        self.lost: list[str] = []
        #: keys moved to a less loaded actor (see actor_for)
        self.moved = 0
        self.resubmitted = 0
        self.calls = 0
        alive = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
        alive.sort(key=lambda n: (not n.get("Resources", {}).get("node:__internal_head__"), n["NodeID"]))
        if not alive:
            raise ClusterError("the Ray cluster has no alive node with a CPU")
        remote = ray.remote(num_cpus=0, max_concurrency=8, max_restarts=0)(ShardWorker)
        self.actors: list[_Actor] = []
        for i, node in enumerate(alive):
            workers = max(1, int(node["Resources"]["CPU"]))
            where = f"n{i}"
            handle = remote.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                name=None).remote({**pool_kwargs, "workers": workers}, kind, where,
                                  os.path.abspath(out_dir) if out_dir else None)
            self.actors.append(_Actor(handle, where, node["NodeID"], workers))
        # an actor is ready once its pool started: fail here, not in the middle of a campaign
        infos = self._gather([a.handle.info.remote() for a in self.actors], "start")
        self.info = {a.where: info for a, info in zip(self.actors, infos) if info is not None}
        if not any(a.alive for a in self.actors):
            raise ClusterError("no Ray actor could start its sandbox pool")

    # -- placement --------------------------------------------------------------------------
    def _live(self) -> list[_Actor]:
        return [a for a in self.actors if a.alive]

    def actor_for(self, key: Hashable) -> _Actor:
        """The actor that holds ``key``. A new key goes where the fewest jobs per worker are in
        flight (then the fewest keys per worker). A key moves when its actor has far more jobs
        in flight per worker than the least loaded one: that actor is stuck behind slow calls
        (compilations, hangs) while the other runs dry, as an idle worker of one pool takes
        over a busy one's keys."""
        actor = self.owner.get(key)
        live = self._live()
        if actor is not None and actor.alive:
            if len(live) > 1:
                best = min(live, key=_load)
                if _load(actor) >= 2 * _load(best) + _REBALANCE_SLACK:
                    actor.keys -= 1
                    best.keys += 1
                    self.owner[key] = actor = best
                    self.moved += 1
            return actor
        if not live:
            raise ClusterError("every Ray node of the campaign was lost: " + ", ".join(self.lost))
        actor = min(live, key=lambda a: (_load(a), a.keys / a.workers, a.where))
        actor.keys += 1
        self.owner[key] = actor
        return actor

    @property
    def workers(self) -> int:
        """Sandbox workers over every live actor."""
        return sum(a.workers for a in self._live())

    def __len__(self) -> int:
        return sum(len(a.inflight) for a in self.actors if a.alive)

    # -- jobs -------------------------------------------------------------------------------
    def start(self, token: int, key: Hashable, payload: Any, actor: _Actor | None = None) -> None:
        """Run ``payload`` on the actor of ``key`` (sent at the next :meth:`wait`); ``actor``:
        the one :meth:`actor_for` just chose for it."""
        actor = actor if actor is not None and actor.alive else self.actor_for(key)
        actor.inflight[token] = (key, payload)
        actor.outbox.append((token, payload))

    def wait(self, timeout: float) -> list[tuple[int, Any, str]]:
        """``(token, value, where)`` of jobs finished by now, waiting up to ``timeout`` s for
        the first. Raises :class:`ClusterError` when a job raised on its actor (with why) or
        when no actor is left."""
        for actor in self.actors:
            if not actor.alive and actor.inflight:  # marked lost by a RemotePool call
                self._lose(actor, ClusterError("lost during a task"))
        self._flush()
        pending = {a.collecting: a for a in self._live() if a.collecting is not None}
        if not pending:
            return []
        ready, _ = self._ray.wait(list(pending), num_returns=1, timeout=max(0.0, timeout))
        out: list[tuple[int, Any, str]] = []
        while ready:
            for ref in ready:
                actor = pending.pop(ref)
                actor.collecting = None
                try:
                    rows = self._ray.get(ref)
                except self._lost_errors() as exc:
                    self._lose(actor, exc)
                    continue
                for token, ok, value in rows:
                    if actor.inflight.pop(token, None) is None:
                        continue  # already run again elsewhere
                    if not ok:
                        raise ClusterError(f"a job failed on Ray node {actor.where}: {value}")
                    out.append((token, value, actor.where))
            self._flush()
            # take what else is ready without waiting again
            ready, _ = self._ray.wait(list(pending), num_returns=len(pending), timeout=0) if pending else ([], [])
        return out

    def _flush(self) -> None:
        """Send what is waiting: with the next collect when none is in flight (one Ray call),
        else on its own (a lost actor's failure shows in its collect)."""
        for actor in self._live():
            batch, actor.outbox = actor.outbox, []
            if actor.collecting is None and actor.inflight:
                actor.collecting = actor.handle.exchange.remote(batch, _COLLECT_WAIT)
                self.calls += 1
            elif batch:
                actor.handle.submit.remote(batch)
                self.calls += 1

    def _lost_errors(self) -> tuple[type, ...]:
        exc = self._ray.exceptions
        return tuple(getattr(exc, n) for n in ("RayActorError", "ActorDiedError", "NodeDiedError",
                                               "ActorUnavailableError", "OwnerDiedError")
                     if hasattr(exc, n))

    def _lose(self, actor: _Actor, exc: BaseException) -> None:
        """``actor`` is gone: its keys go to the others, its in-flight jobs run again there."""
        actor.alive = False
        if actor.where not in self.lost:
            self.lost.append(actor.where)
        jobs = list(actor.inflight.items())
        actor.inflight.clear()
        actor.outbox.clear()
        _log.warning("Ray node %s lost (%s); %d job(s) in flight run again on %d other node(s)",
                     actor.where, type(exc).__name__, len(jobs), len(self._live()))
        for key in [k for k, a in self.owner.items() if a is actor]:
            del self.owner[key]
        for token, (key, payload) in jobs:
            if self.on_moved is not None:
                payload = self.on_moved(token, key, payload)
            self.start(token, key, payload)  # raises ClusterError when none is left
            self.resubmitted += 1

    # -- plain sandbox tasks -----------------------------------------------------------------
    def pool_for(self, key: Hashable | None = None) -> "RemotePool":
        """A pool-like view (``run(tasks)``) on the actor of ``key`` (None: the first live one)."""
        return RemotePool(self, key)

    def _gather(self, refs: Sequence[Any], what: str) -> list[Any]:
        out = []
        for actor, ref in zip(self.actors, refs):
            try:
                out.append(self._ray.get(ref))
            except self._lost_errors() as exc:
                actor.alive = False
                self.lost.append(actor.where)
                _log.warning("Ray node %s lost at %s (%s)", actor.where, what, exc)
                out.append(None)
            except self._ray.exceptions.RayTaskError as exc:
                raise ClusterError(f"Ray node {actor.where} failed at {what}: {exc}") from None
        return out

    def describe(self) -> str:
        """One line per node: its sandbox pool's description."""
        return "\n".join(f"ray node {w}: {i['workers']} worker(s)"
                         + (f" at niceness {i['niceness']} (start the node with RAY_worker_niceness=0)"
                            if i.get("niceness") else "") + f"; {i['describe']}"
                         for w, i in sorted(self.info.items()))

    def close(self) -> dict[str, dict[str, float]]:
        """Close every live actor's pool and end the actors. Returns their pools' counters
        (``pool``) and their jobs' (``job``, the :class:`JobKind`'s ``summary()``), summed."""
        live = self._live()
        infos = self._gather_live(live, [a.handle.close.remote() for a in live])
        stats: dict[str, dict[str, float]] = {"pool": {}, "job": {}}
        for info in infos:
            for part, into in (("stats", stats["pool"]), ("job", stats["job"])):
                for k, v in (info or {}).get(part, {}).items():
                    if isinstance(v, (int, float)):
                        into[k] = into.get(k, 0) + v
        for a in live:
            try:
                self._ray.kill(a.handle)
            except Exception:  # already gone
                pass
            a.alive = False
        return stats

    def _gather_live(self, live: list[_Actor], refs: list[Any]) -> list[Any]:
        out = []
        for actor, ref in zip(live, refs):
            try:
                out.append(self._ray.get(ref, timeout=30))
            except Exception as exc:  # closing: a lost node only costs its counters
                _log.warning("Ray node %s did not close cleanly: %s", actor.where, exc)
                out.append(None)
        return out


class RaySession:
    """Ray joined (or started, for ``local``) and one actor per node, for one campaign or one
    registry build: :meth:`close` ends the actors, and Ray when this session started it.

    Args:
        address: ``--ray``'s value (see :func:`connect`).
        kind, pool_kwargs, out_dir: as for :class:`Shards`.
        local_cpus: the CPUs of a ``local`` Ray instance.
    """

    def __init__(self, address: str, kind: JobKind, pool_kwargs: Mapping[str, Any], *,
                 local_cpus: int, out_dir: str | None = None):
        self.address = address
        self.started = connect(address, num_cpus=local_cpus if address == "local" else None)
        try:
            self.shards = Shards(kind, pool_kwargs, out_dir=out_dir)
        except BaseException:
            self._shutdown()
            raise
        #: :meth:`summary` as it was when the session closed
        self.final: dict[str, Any] = {}

    def summary(self) -> dict[str, Any]:
        """Where it ran: the address, the nodes and their workers, nodes lost, jobs run again,
        keys moved and Ray calls made."""
        s = self.shards
        return {"address": self.address, "nodes": [a.where for a in s.actors],
                "workers": {a.where: a.workers for a in s.actors}, "lost": list(s.lost),
                "resubmitted": s.resubmitted, "moved": s.moved, "ray_calls": s.calls}

    def close(self) -> dict[str, dict[str, float]]:
        """End the actors (their summed counters, see :meth:`Shards.close`) and Ray if this
        session started it."""
        self.final = self.summary()  # before Ray goes away
        try:
            return self.shards.close()
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        if self.started:
            import ray

            ray.shutdown()


class RemotePool:
    """``run(tasks)`` on the actor that holds a key: lets code written for one
    :class:`sandbox.SandboxPool` (triage, device discovery) run its few tasks on the cluster,
    next to the group's compiled state. A lost actor's tasks run again on another."""

    def __init__(self, shards: Shards, key: Hashable | None = None):
        self._shards = shards
        self._key = key

    def run(self, tasks: Iterable[Any], timeout: float | None = None) -> list[Any]:
        tasks = list(tasks)
        if not tasks:
            return []
        key = self._key
        if key is None:
            key = next((t.affinity for t in tasks if getattr(t, "affinity", None)), None)
        while True:
            live = self._shards._live()
            if not live:
                raise ClusterError("every Ray node of the campaign was lost: " + ", ".join(self._shards.lost))
            actor = self._shards.owner.get(key) if key is not None else None
            if actor is None or not actor.alive:
                actor = live[0]
            try:
                return self._shards._ray.get(actor.handle.run_tasks.remote(tasks, timeout))
            except self._shards._lost_errors():
                actor.alive = False  # the campaign's wait() hands its jobs on when it sees it
                if actor.where not in self._shards.lost:
                    self._shards.lost.append(actor.where)

