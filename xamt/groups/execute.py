"""Running a group's members on one input in the sandbox: the worker side and the parent side.

Worker side (resolved by the sandbox as ``"xamt.groups.execute:run_members"``):
:func:`run_members` receives compact member specs and the materialised slot values (numpy arrays,
lists of arrays, ``numpy.dtype`` objects, literals), converts the values to each member's library
through its adapter's ``from_numpy`` / ``dtype`` functions, calls the member, converts the output
back to numpy (:func:`~xamt.groups.normalise.to_numpy_tree`) and normalises it. A member with a
``device`` has its converted values placed there (the adapter's ``place`` hook) and is called
inside the adapter's ``device_scope``. Every member of
one input runs inside one task (one round trip for the whole group); an exception is caught per
member, so one member raising does not hide the others. Parsed members and resolved functions are
cached per worker process, keyed by the member id, because this is the fuzzer's hot path.

Parent side: :class:`GroupExecutor` turns ``(group, input)`` pairs into those tasks, runs many in
one ``pool.run`` and maps the outcomes back to :class:`MemberResult` s. When a group task dies
(crash, timeout, out of memory) its members are re-run one task each, so the death is pinned to
the member that caused it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Iterable, Mapping, Sequence

import msgpack
import numpy as np

from sandbox.classify import exception_status, safe_str
from sandbox.classify import type_name as _type_name

from xamt.exec.normalise import NotComparable, normalise, to_numpy_tree

__all__ = [
    "run_members", "probe_dtypes", "MemberResult", "GroupRun", "ExecItem", "GroupExecutor",
    "member_spec", "pool_settings", "call_key", "RUN_MEMBERS", "PROBE_DTYPES",
]

RUN_MEMBERS = "xamt.groups.execute:run_members"
PROBE_DTYPES = "xamt.groups.execute:probe_dtypes"
_MESSAGE_LIMIT = 2000

# ============================================================================== worker side


class _Prepared:
    """A member ready to call in this worker: parsed plan and resolved conversion functions."""

    __slots__ = ("member", "from_numpy", "to_numpy", "dtype_fn", "slots", "tuple_slots",
                 "key_slots", "key_fn", "device", "place", "scope")

    def __init__(self, spec: Mapping[str, Any]) -> None:
        from xamt.libraries.base import resolve_ref
        from xamt.matching.model import Member

        member = Member.from_json(spec["member"])
        self.from_numpy = resolve_ref(spec["from"])
        self.to_numpy = resolve_ref(spec["to"])
        self.dtype_fn = resolve_ref(spec["dtype"]) if spec.get("dtype") else None
        # a member placed on a device: values go there after conversion, the call runs in scope
        self.device = spec.get("device")
        self.place = resolve_ref(spec["place"]) if spec.get("place") else None
        self.scope = resolve_ref(spec["scope"]) if spec.get("scope") else None
        # fixed dtype arguments of the plan (jax.lax.argmax's index_dtype) become library dtypes
        if self.dtype_fn is not None:
            for specs in (member.plan.args, member.plan.init_args):
                for i, arg in enumerate(specs):
                    if arg.slot is None and arg.transform == "dtype" and isinstance(arg.value, str):
                        specs[i] = dataclasses.replace(arg, value=self.dtype_fn(arg.value))
        # PRNG keys (jax.random's key): an int seed becomes the library's key, for a fixed
        # argument once here, for a slot on every call
        self.key_fn = resolve_ref(spec["prng_key"]) if spec.get("prng_key") else None
        self.key_slots: frozenset[int] = frozenset()
        if self.key_fn is not None:
            for specs in (member.plan.args, member.plan.init_args):
                for i, arg in enumerate(specs):
                    if arg.slot is None and arg.transform == "prng_key":
                        specs[i] = dataclasses.replace(arg, value=self.key_fn(arg.value))
            self.key_slots = frozenset(a.slot for a in member.plan.args + member.plan.init_args
                                       if a.slot is not None and a.transform == "prng_key")
        # fixed sequences (an override's axis = [-2, -1]) arrive as JSON lists: tuples again
        for specs in (member.plan.args, member.plan.init_args):
            for i, arg in enumerate(specs):
                if arg.slot is None and arg.transform == "tuple" and isinstance(arg.value, list):
                    specs[i] = dataclasses.replace(arg, value=tuple(arg.value))
        self.member = member
        # slots this member takes as a sequence (jax.lax.reduce_sum's axes): a scalar is wrapped
        self.tuple_slots = frozenset(a.slot for a in member.plan.args + member.plan.init_args
                                     if a.slot is not None and a.transform == "tuple")
        self.slots = member.plan.slots() | ({member.receiver_slot} if member.receiver_slot is not None else set())


#: per worker process: member id → prepared member, "module:qualname" → function. A memo of
#: immutable data (the id is a content hash), so a stale entry cannot exist.
_PREPARED: dict[str, _Prepared] = {}
_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def _prepared(mid: str, spec_bytes: bytes) -> _Prepared:
    prep = _PREPARED.get(mid)
    if prep is None:
        prep = _PREPARED[mid] = _Prepared(msgpack.unpackb(spec_bytes, raw=False, strict_map_key=False))
    return prep


def _function(ref: str) -> Callable[..., Any]:
    fn = _FUNCTIONS.get(ref)
    if fn is None:
        from xamt.libraries.base import resolve_ref

        fn = _FUNCTIONS[ref] = resolve_ref(ref)
    return fn


def _convert_slot(slot: int, value: Any, prep: _Prepared) -> Any:
    if slot in prep.key_slots and value is not None and not isinstance(value, np.ndarray):
        return prep.key_fn(value)  # type: ignore[misc]
    if slot in prep.tuple_slots and value is not None and not isinstance(value, (tuple, list, np.ndarray)):
        return (value,)
    return _convert(value, prep)


def _convert(value: Any, prep: _Prepared) -> Any:
    t = type(value)
    if t is np.ndarray:
        return prep.from_numpy(value) if prep.place is None else prep.place(prep.from_numpy(value), prep.device)
    if t is list and value and all(type(v) is np.ndarray for v in value):
        if prep.place is None:
            return [prep.from_numpy(v) for v in value]
        return [prep.place(prep.from_numpy(v), prep.device) for v in value]
    if isinstance(value, np.dtype):
        return prep.dtype_fn(value.name) if prep.dtype_fn is not None else value
    return value


def _message(exc: BaseException) -> str:
    text = safe_str(exc)
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "..."


def _error_status(exc: BaseException, type_name: str, text: str) -> str:
    return str(exception_status(exc, type_name, text))


def _invoke(prep: _Prepared, target: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    fn = _function(target)
    if prep.scope is None:
        return fn(*args, **kwargs)
    with prep.scope(prep.device):
        return fn(*args, **kwargs)


def _call(prep: _Prepared, values: Mapping[int, Any]) -> Any:
    conv = {slot: _convert_slot(slot, v, prep) for slot, v in values.items() if slot in prep.slots}
    target, args, kwargs = prep.member.task(conv)
    return _invoke(prep, target, args, kwargs)


class _BindError(Exception):
    """The plan cannot place the given slot values (not the library's doing)."""


def _first_call(prep: _Prepared, values: Mapping[int, Any]) -> Any:
    conv = {slot: _convert_slot(slot, v, prep) for slot, v in values.items() if slot in prep.slots}
    try:
        target, args, kwargs = prep.member.task(conv)
    except ValueError as exc:  # Member.task / ArgumentPlan.bind: a slot the call cannot take
        raise _BindError(str(exc)) from None
    return _invoke(prep, target, args, kwargs)


def _same(a: Any, b: Any) -> bool:
    """Exact equality of two normalised outputs (NaN equals NaN)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    return type(a) is type(b) and a == b


def _run_one(prep: _Prepared, values: Mapping[int, Any], repeat: int, norm: str | None) -> list:
    start = time.perf_counter()
    try:
        raw = _first_call(prep, values)
    except _BindError as exc:
        return ["skipped", f"cannot bind the arguments: {exc}"]
    except BaseException as exc:  # the library's own SystemExit / KeyboardInterrupt included
        return _raised(exc, start)
    seconds = time.perf_counter() - start
    try:
        out = normalise(to_numpy_tree(raw, prep.to_numpy), norm)
    except NotComparable as exc:
        return ["unserializable", f"output not comparable: {exc}", seconds]
    except BaseException as exc:  # conversion runs library code (tensor.numpy()) too
        return ["unserializable", f"output conversion failed: {_type_name(type(exc))}: {_message(exc)}", seconds]
    del raw
    nondet = False
    for _ in range(repeat - 1):
        try:
            again = normalise(to_numpy_tree(_call(prep, values), prep.to_numpy), norm)
        except BaseException:  # a second run that raises is nondeterministic too
            nondet = True
            break
        if not _same(out, again):
            nondet = True
            break
    return ["ok", out, nondet, seconds]


def _raised(exc: BaseException, start: float) -> list:
    type_name = _type_name(type(exc))
    text = _message(exc)
    return ["raised", type_name, text, _error_status(exc, type_name, text), time.perf_counter() - start]


def run_members(members: Sequence[Sequence[Any]], values: Mapping[int, Any],
                options: Mapping[str, Any] | None = None) -> list:
    """Worker entry point: call each member on ``values``; one result list per member.

    ``members`` are ``[member_id, spec_bytes]`` pairs (:func:`member_spec`); ``values`` maps slot
    index → materialised value; ``options``: ``repeat`` (call each member that many times on
    fresh conversions; a differing result marks it nondeterministic) and ``normalise`` (the
    group's normaliser name). Results: ``["ok", output, nondeterministic, seconds]``,
    ``["raised", error_type, message, status, seconds]``, ``["unserializable", why, seconds]`` or
    ``["skipped", why]``.
    """
    options = options or {}
    repeat = int(options.get("repeat", 1))
    norm = options.get("normalise")
    out = []
    for mid, spec_bytes in members:
        prep = _prepared(mid, spec_bytes)
        out.append(_run_one(prep, values, repeat, norm))
    return out


def _abstract_call(prep: _Prepared, values: Mapping[int, Any], evaluator: Callable[..., Any]) -> Any:
    """Trace the member's call with ``evaluator`` (``jax.eval_shape``): the converted arrays are
    traced, everything else stays a constant of the traced function. Nothing is compiled."""
    from xamt.libraries._compile import split_arrays

    converted: set[int] = set()

    def conv(slot: int, v: Any) -> Any:
        out = _convert_slot(slot, v, prep)
        if out is not v:
            for item in (out if isinstance(out, list) else [out]):
                converted.add(id(item))
        return out

    values_c = {slot: conv(slot, v) for slot, v in values.items() if slot in prep.slots}
    try:
        target, args, kwargs = prep.member.task(values_c)
    except ValueError as exc:
        raise _BindError(str(exc)) from None
    fn = _function(target)
    dyn_args, dyn_kwargs, rebuild = split_arrays(tuple(args), dict(kwargs), lambda v: id(v) in converted)

    def traced(a: list, k: dict) -> Any:
        full_args, full_kwargs = rebuild(list(a), dict(k))
        return fn(*full_args, **full_kwargs)

    return evaluator(traced, dyn_args, dyn_kwargs)


def probe_dtypes(member: Sequence[Any], values: Mapping[int, Any], data_slots: Sequence[int],
                 dtypes: Sequence[str], abstract: str | None = None) -> list:
    """Worker entry point: call one member with its data arrays cast to each of ``dtypes``.

    Returns one ``[dtype, status, error_type, message]`` per dtype (``status`` ``ok`` or
    ``raised``; a result that cannot be converted to numpy counts as ``ok``: the call worked).
    ``abstract`` names an evaluator (``"jax:eval_shape"``) that traces the call instead of
    running it, for libraries that compile every new dtype (the probe then costs a trace).
    """
    from xamt.inputs.arrays import numpy_dtype

    mid, spec_bytes = member
    prep = _prepared(mid, spec_bytes)
    evaluator = _function(abstract) if abstract else None
    results = []
    for name in dtypes:
        cast = dict(values)
        try:
            dt = numpy_dtype(name)
            for slot in data_slots:
                v = cast.get(slot)
                with np.errstate(all="ignore"):
                    if isinstance(v, np.ndarray):
                        cast[slot] = _cast(v, dt)
                    elif isinstance(v, list):
                        cast[slot] = [_cast(a, dt) for a in v]
        except (TypeError, ValueError) as exc:
            results.append([name, "raised", _type_name(type(exc)), _message(exc)])
            continue
        try:
            if evaluator is not None:
                _abstract_call(prep, cast, evaluator)
            else:
                raw = _call(prep, cast)
                try:
                    to_numpy_tree(raw, prep.to_numpy)
                except BaseException:
                    pass
            results.append([name, "ok", None, None])
        except BaseException as exc:
            type_name = _type_name(type(exc))
            text = _message(exc)
            results.append([name, _error_status(exc, type_name, text), type_name, text])
    return results


def _cast(a: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu" and a.dtype.kind in "fc":
        a = np.nan_to_num(a.real if a.dtype.kind == "c" else a)
        a = np.rint(a * 3.0)  # ordinary integers, not all zeros
    elif dt.kind == "b" and a.dtype.kind in "fc":
        return (a.real > 0) if a.dtype.kind == "c" else (a > 0)
    elif dt.kind != "c" and a.dtype.kind == "c":
        a = a.real
    return a.astype(dt)


# ============================================================================== parent side


def member_spec(member: Any, libraries: Mapping[str, Any]) -> tuple[str, bytes]:
    """``(member_id, spec_bytes)`` of a :class:`~xamt.matching.model.Member`: the compact form
    the worker parses once. ``libraries`` maps a library name to its adapter."""
    adapter = libraries[member.library]
    data = member.to_json()
    for key in ("aliases", "category", "canonical"):
        data.pop(key, None)
    plan = data["plan"]
    for key in ("notes", "dropped", "score", "source", "overload"):
        plan.pop(key, None)
    for spec in plan["args"] + plan["init_args"]:
        spec.pop("similarity", None)
    spec = {"member": data, "from": adapter.from_numpy_ref, "to": adapter.to_numpy_ref,
            "dtype": adapter.dtype_ref}
    # only members that take a PRNG key name the hook (the other members' ids stay as they were)
    if adapter.prng_key_ref and any(a.transform == "prng_key"
                                    for a in member.plan.args + member.plan.init_args):
        spec["prng_key"] = adapter.prng_key_ref
    if member.device is not None:
        if not adapter.runs_on(member.device):
            from xamt.errors import ConfigError

            raise ConfigError(f"{member.qualname}: the {adapter.name} adapter cannot place calls on "
                              f"{member.device!r} (it has no placement hook)")
        if adapter.placement_ref:
            spec.update(device=member.device, place=adapter.placement_ref, scope=adapter.device_scope_ref)
    text = json.dumps(spec, sort_keys=True, default=str)
    mid = hashlib.blake2b(text.encode(), digest_size=10).hexdigest()
    return mid, msgpack.packb(spec, use_bin_type=True, default=str)


def call_key(member: Any, values: Mapping[int, Any], extra: Any = ()) -> str | None:
    """A digest of the call ``member`` makes on ``values`` (numpy / literal values): its target,
    how its plan places arguments, and the argument values themselves. Equal keys mean the same
    library call on the same bits. None when the plan cannot bind the values."""
    try:
        target, args, kwargs = member.task(dict(values))
    except (ValueError, KeyError, TypeError):
        return None
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{member.library}|{target}|{member.call}|{member.via}|{member.device}|".encode())
    shape = [(a.param, a.position, a.keyword, a.transform, a.star) for a in member.plan.args + member.plan.init_args]
    h.update(repr(shape).encode())
    h.update(repr(extra).encode())

    def feed(obj: Any) -> None:
        if isinstance(obj, np.ndarray):
            h.update(f"a{obj.dtype.str}{obj.shape}".encode())
            h.update(np.ascontiguousarray(obj).tobytes())
        elif isinstance(obj, (list, tuple)):
            h.update(b"(" if isinstance(obj, tuple) else b"[")
            for v in obj:
                feed(v)
            h.update(b")")
        elif isinstance(obj, dict):
            for k in sorted(obj, key=str):
                h.update(f"{k}=".encode())
                feed(obj[k])
        elif isinstance(obj, np.dtype):
            h.update(f"d{obj.name}".encode())
        else:
            h.update(f"{type(obj).__name__}:{obj!r};".encode())

    feed(args)
    feed(kwargs)
    return h.hexdigest()


@dataclass
class MemberResult:
    """One member's result on one input (reads like :class:`sandbox.Outcome` for the oracle).

    ``status``: ``ok``, ``raised``, ``crashed``, ``timeout``, ``oom``, ``unserializable`` (the
    output has no numeric form), ``skipped`` (not called: its plan or the input cannot call it)
    or ``cancelled``. ``outcome`` is the sandbox outcome of the member's own task when it was run
    alone (after its group task died); it holds the crash evidence.
    """

    status: str
    value: Any = None
    error_type: str | None = None
    error_message: str | None = None
    nondeterministic: bool = False
    duration_s: float = 0.0
    outcome: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class ExecItem:
    """One input for one group: which members (indices into ``group.members``; None: all),
    how often to call each (``repeat``), and the normaliser (None: the group's own)."""

    group: Any
    input: Any
    members: Sequence[int] | None = None
    repeat: int = 1
    normalise: str | None = None
    tag: Any = None


@dataclass
class GroupRun:
    """The results of one :class:`ExecItem`: ``results[i]`` belongs to member ``members[i]``."""

    item: ExecItem
    members: list[int]
    results: list[MemberResult]
    values: dict[int, Any] | None = field(default=None, repr=False)

    @property
    def group(self) -> Any:
        return self.item.group

    def outputs(self) -> list[Any]:
        """Normalised outputs of the members that returned (in member order)."""
        return [r.value for r in self.results if r.ok]

    def ok_members(self) -> list[int]:
        return [m for m, r in zip(self.members, self.results) if r.ok]


def pool_settings(libraries: Iterable[Any], out_dir: str | None = None) -> dict[str, Any]:
    """``preload``, ``env`` and ``file_size_limit`` for a :class:`sandbox.SandboxPool` that runs
    these adapters.

    With ``out_dir`` the worker environment of ``validation.toml`` (``[environment]``: on-disk
    caches of compiled programs, JAX's and TorchInductor's, under ``<out_dir>/cache``) is added;
    ``file_size_limit`` leaves room for TorchInductor's precompiled header (~150 MB).
    """
    import os

    preload = ["numpy"]
    env: dict[str, str] = {}
    for adapter in libraries:
        if adapter.import_name not in preload:
            preload.append(adapter.import_name)
        for key, value in adapter.environment.items():
            env[key] = os.environ.get(key, value)
        module = adapter.from_numpy_ref.split(":")[0]
        if module not in preload:
            preload.append(module)
    preload += ["xamt.groups.execute", "xamt.libraries.invoke"]
    if out_dir is not None:
        from xamt.groups.annotations import load_settings

        base = os.path.abspath(out_dir)
        for key, value in load_settings().environment.items():
            env.setdefault(key, os.environ.get(key, value.replace("{out}", base)))
    return {"preload": tuple(preload), "env": env, "file_size_limit": 1 << 30}


def _affinity(group: Any) -> str | None:
    """The sandbox affinity key of a group's tasks (its key)."""
    key = getattr(group, "key", None)
    return None if key is None else str(key)


class GroupExecutor:
    """Runs ``(group, input)`` items in a sandbox pool (see the module docstring).

    ``libraries`` maps library names to adapters (default: every installed adapter);
    ``timeout`` is the limit of one member's call, seconds (a group task gets it per member,
    up to ``max_task_timeout``).
    """

    def __init__(self, pool: Any, libraries: Mapping[str, Any] | None = None, *,
                 timeout: float = 10.0, max_task_timeout: float = 300.0, memo: bool = False,
                 compiled_timeout: float | None = None):
        if libraries is None:
            from xamt.libraries.registry import Registry

            libraries = {a.name: a for a in Registry()}
        self.pool = pool
        self.libraries = dict(libraries)
        self.timeout = float(timeout)
        # a compiled call pays its compilation (torch.compile's first call in a worker: ~15 s)
        self.compiled_timeout = float(compiled_timeout) if compiled_timeout else max(60.0, self.timeout)
        self.max_task_timeout = float(max_task_timeout)
        self._specs: dict[int, tuple[Any, str, bytes]] = {}
        # call key -> result: the same call on the same values is run once (a registry build
        # meets one API in many groups); off for fuzzing, where a repeat is evidence
        self.memo: dict[str, MemberResult] | None = {} if memo else None
        self.probe_memo: dict[str, dict[str, tuple[str, str | None]]] | None = {} if memo else None
        self.stats: dict[str, int] = {"group_tasks": 0, "solo_tasks": 0, "members_run": 0,
                                      "memo_hits": 0, "probe_tasks": 0, "probe_memo_hits": 0}

    # -- building blocks ---------------------------------------------------------------------
    def spec(self, member: Any) -> tuple[str, bytes]:
        """The cached ``(member_id, spec_bytes)`` of ``member``."""
        cached = self._specs.get(id(member))
        if cached is None or cached[0] is not member:
            mid, blob = member_spec(member, self.libraries)
            cached = self._specs[id(member)] = (member, mid, blob)
        return cached[1], cached[2]

    @staticmethod
    def runnable(member: Any, values: Mapping[int, Any]) -> str | None:
        """Why ``member`` cannot be called with these slot values (None: it can)."""
        from xamt.inputs.seed import needed_slots

        if not member.plan.complete:
            return "incomplete argument plan: " + ", ".join(member.plan.unmatched_required)
        missing = needed_slots(member) - set(values)
        if missing:
            return f"input lacks slot(s) {sorted(missing)} this member needs"
        return None

    def _normaliser(self, item: ExecItem) -> str | None:
        if item.normalise is not None:
            return item.normalise or None
        return getattr(item.group, "normalisation", None) or None

    def _task(self, specs: list, values: dict[int, Any], options: dict[str, Any], limit: float,
              group: Any = None) -> Any:
        from sandbox import Task

        # one group's tasks go to one worker: its JIT caches (JAX, XLA, tf.function) then serve
        # every later input of the group, instead of each worker compiling every shape again
        return Task(RUN_MEMBERS, args=(specs, values, options), timeout=min(self.max_task_timeout, limit),
                    affinity=_affinity(group))

    def member_timeout(self, member: Any) -> float:
        """Wall-clock allowance of one call of ``member`` (times the repeat count)."""
        return self.compiled_timeout if member.call == "compiled" else self.timeout

    # -- the batch -------------------------------------------------------------------------------
    def run(self, items: Sequence[ExecItem | tuple]) -> list[GroupRun]:
        """Run every item; one :class:`GroupRun` per item, in order."""
        from xamt.exec.schedule import drive

        return drive(self.pool, self.run_steps(items))

    def run_steps(self, items: Sequence[ExecItem | tuple]) -> Generator[list, list, list[GroupRun]]:
        """:meth:`run` as a step generator (see :mod:`xamt.groups.schedule`): yields task lists,
        receives their outcomes, returns the runs. Lets a scheduler overlap many batches."""
        from xamt.inputs.materialise import materialise
        from xamt.inputs.model import GroupInput

        prepared: list[tuple[ExecItem, list[int], list[MemberResult | None], dict | None]] = []
        tasks, owners = [], []
        for raw in items:
            item = raw if isinstance(raw, ExecItem) else ExecItem(*raw)
            members = list(range(len(item.group.members))) if item.members is None else list(item.members)
            results: list[MemberResult | None] = [None] * len(members)
            try:
                values = item.input if not isinstance(item.input, GroupInput) else materialise(item.input)
            except Exception as exc:  # an input that cannot be built: nothing runs
                why = f"input cannot be materialised: {type(exc).__name__}: {exc}"
                prepared.append((item, members, [MemberResult("skipped", error_message=why)
                                                 for _ in members], None))
                continue
            run_idx = []
            norm = self._normaliser(item)
            keys: dict[int, str] = {}
            for k, mi in enumerate(members):
                member = item.group.members[mi]
                why = self.runnable(member, values)
                if why is not None:
                    results[k] = MemberResult("skipped", error_message=why)
                    continue
                if self.memo is not None:
                    key = call_key(member, values, extra=(item.repeat, norm))
                    if key is not None:
                        hit = self.memo.get(key)
                        if hit is not None:
                            results[k] = dataclasses.replace(hit)
                            self.stats["memo_hits"] += 1
                            continue
                        keys[k] = key
                run_idx.append(k)
            prepared.append((item, members, results, values))
            if run_idx:
                specs = [list(self.spec(item.group.members[members[k]])) for k in run_idx]
                options = {"repeat": item.repeat, "normalise": norm}
                limits = [self.member_timeout(item.group.members[members[k]]) * max(1, item.repeat) for k in run_idx]
                tasks.append(self._task(specs, values, options, sum(limits), item.group))
                owners.append((len(prepared) - 1, run_idx, specs, options, keys, limits))
        outcomes = (yield tasks) if tasks else []
        self.stats["group_tasks"] += len(tasks)
        solo_tasks, solo_owners = [], []
        for (p, run_idx, specs, options, keys, limits), outcome in zip(owners, outcomes):
            item, members, results, values = prepared[p]
            decoded = self._decode(outcome, len(run_idx))
            if decoded is None:  # the group task died or its result is unusable: isolate
                for k, spec, limit in zip(run_idx, specs, limits):
                    solo_tasks.append(self._task([spec], values, options, limit, item.group))  # type: ignore[arg-type]
                    solo_owners.append((p, k, keys.get(k)))
                continue
            for k, res in zip(run_idx, decoded):
                results[k] = res
                if k in keys and self.memo is not None:
                    self.memo[keys[k]] = res
        if solo_tasks:
            self.stats["solo_tasks"] += len(solo_tasks)
            solo_outcomes = yield solo_tasks
            for (p, k, key), outcome in zip(solo_owners, solo_outcomes):
                decoded = self._decode(outcome, 1)
                if decoded is None:
                    res = MemberResult(str(outcome.status), error_type=outcome.error_type,
                                       error_message=outcome.error_message or outcome.summary(),
                                       duration_s=outcome.duration_s, outcome=outcome)
                else:
                    res = decoded[0]
                    res.outcome = outcome
                prepared[p][2][k] = res
                if key is not None and self.memo is not None and res.status != "cancelled":
                    self.memo[key] = res
        runs = []
        for item, members, results, values in prepared:
            self.stats["members_run"] += sum(1 for r in results if r is not None and r.status != "skipped")
            runs.append(GroupRun(item, members, [r if r is not None else MemberResult("cancelled")
                                                 for r in results], values))
        return runs

    @staticmethod
    def _decode(outcome: Any, n: int) -> list[MemberResult] | None:
        if outcome.status != "ok" or not isinstance(outcome.value, list) or len(outcome.value) != n:
            return None
        out = []
        for entry in outcome.value:
            status = entry[0]
            if status == "ok":
                out.append(MemberResult("ok", value=entry[1], nondeterministic=bool(entry[2]),
                                        duration_s=float(entry[3])))
            elif status == "raised":
                out.append(MemberResult(entry[3], error_type=entry[1], error_message=entry[2],
                                        duration_s=float(entry[4])))
            elif status == "unserializable":
                out.append(MemberResult("unserializable", error_message=entry[1],
                                        duration_s=float(entry[2]) if len(entry) > 2 else 0.0))
            else:
                out.append(MemberResult(status, error_message=entry[1] if len(entry) > 1 else None))
        return out

    # -- dtype probing ---------------------------------------------------------------------------
    def probe(self, jobs: Sequence[tuple[Any, int, Mapping[int, Any], Sequence[int]]],
              dtypes: Sequence[str], abstract: Mapping[str, str] | None = None
              ) -> list[dict[str, tuple[str, str | None]]]:
        """Which of ``dtypes`` each member accepts.

        ``jobs``: ``(group, member index, materialised values, data slots)``. Returns per job a
        mapping dtype → ``(status, error_type)``. A probe task that dies is re-run one dtype per
        task, so a dtype that crashes the library is recorded as ``crashed``.
        """
        from xamt.exec.schedule import drive

        return drive(self.pool, self.probe_steps(jobs, dtypes, abstract))

    def probe_steps(self, jobs: Sequence[tuple[Any, int, Mapping[int, Any], Sequence[int]]],
                    dtypes: Sequence[str], abstract: Mapping[str, str] | None = None
                    ) -> Generator[list, list, list[dict[str, tuple[str, str | None]]]]:
        """:meth:`probe` as a step generator. ``abstract``: library → evaluator reference for
        libraries probed by tracing instead of running (see :func:`probe_dtypes`)."""
        abstract = abstract or {}
        from sandbox import Task

        tasks, owner = [], []
        results: list[dict[str, tuple[str, str | None]]] = [{} for _ in jobs]
        keys: dict[int, str] = {}
        for j, (group, mi, values, data_slots) in enumerate(jobs):
            if self.probe_memo is not None:
                key = call_key(group.members[mi], values,
                               extra=(tuple(dtypes), tuple(data_slots), abstract.get(group.members[mi].library)))
                if key is not None:
                    if key in self.probe_memo:
                        results[j] = dict(self.probe_memo[key])
                        self.stats["probe_memo_hits"] += 1
                        continue
                    keys[j] = key
            spec = list(self.spec(group.members[mi]))
            evaluator = abstract.get(group.members[mi].library)
            tasks.append(Task(PROBE_DTYPES, args=(spec, dict(values), list(data_slots), list(dtypes), evaluator),
                              timeout=min(self.max_task_timeout, self.timeout * max(1, len(dtypes))),
                              affinity=_affinity(group)))
            owner.append(j)
        outcomes = (yield tasks) if tasks else []
        self.stats["probe_tasks"] += len(tasks)
        retry, retry_owner = [], []
        for j, outcome in zip(owner, outcomes):
            if outcome.status == "ok" and isinstance(outcome.value, list):
                results[j] = {d: (s, et) for d, s, et, _ in outcome.value}
                if j in keys and self.probe_memo is not None:
                    self.probe_memo[keys[j]] = dict(results[j])
                continue
            group, mi, values, data_slots = jobs[j]
            spec = list(self.spec(group.members[mi]))
            evaluator = abstract.get(group.members[mi].library)
            for d in dtypes:
                retry.append(Task(PROBE_DTYPES, args=(spec, dict(values), list(data_slots), [d], evaluator),
                                  timeout=self.timeout))
                retry_owner.append((j, d))
        if retry:
            retry_outcomes = yield retry
            for (j, d), outcome in zip(retry_owner, retry_outcomes):
                if outcome.status == "ok" and isinstance(outcome.value, list) and outcome.value:
                    _, s, et, _ = outcome.value[0]
                    results[j][d] = (s, et)
                else:
                    results[j][d] = (str(outcome.status), outcome.error_type)
            for j in {j for j, _ in retry_owner}:
                if j in keys and self.probe_memo is not None:
                    self.probe_memo[keys[j]] = dict(results[j])
        return results
