"""The one way a group member is called: argument plan → converted values → call → output.

A member (:class:`~xamt.matching.model.Member`) is called with *slot values*: the materialised
input, numpy arrays, lists of arrays, ``numpy.dtype`` objects and literals. Calling it takes:

1. its library's **hooks** (:func:`hook_refs`, :class:`Hooks`): the adapter's ``from_numpy`` /
   ``to_numpy`` / ``dtype`` conversions, its ``prng_key`` hook for a member that takes a PRNG
   key, and for a member placed on a device (``torch.sum@cuda:0``) the ``place`` hook and the
   ``device_scope`` the call runs in;
2. the plan's **fixed arguments** as the library takes them (:class:`PreparedMember`): a dtype
   name becomes the library's dtype (``jax.lax.argmax``'s ``index_dtype``), an int seed the
   library's PRNG key, a sequence read back from JSON (an override's ``axis = [-2, -1]``) a tuple;
3. the **slot values converted** (:meth:`PreparedMember.convert`): arrays to the library's
   tensors (placed on the member's device), dtypes to its dtypes, a seed in a key slot to a key,
   a scalar in a slot the member takes as a sequence (``jax.lax.reduce_sum``'s ``axes``) to a
   1-tuple;
4. **binding** through :meth:`Member.task <xamt.matching.model.Member.task>`: the call's
   ``(target, args, kwargs)`` (:meth:`PreparedMember.describe`), where the target is the API or
   a helper (``xamt.libraries.invoke:call_method``, a ``via`` for compiled / ``out=`` / fill
   calls);
5. the **call** (:func:`invoke`, inside the device scope) and the **output**
   (:func:`normalised_output`: back to numpy, then the group's normaliser).

Everything that calls a member goes through these steps: the sandbox workers
(:func:`run_members`, the ``"xamt.exec.member:run_members"`` task; dtype probing in
:mod:`xamt.exec.probe`), :func:`call_member` in-process, and the reproducer renderer
(:mod:`xamt.repro`), which runs steps 1-4 with hooks that write code instead of converting and
prints the description it gets; its scripts copy :func:`normalised_output` as source.

Worker side: every member of one input runs inside one task (one round trip for the whole
group); an exception is caught per member, so one member raising does not hide the others.
Prepared members and resolved functions are cached per worker process, keyed by the member id,
because this is the fuzzer's hot path.
"""
from __future__ import annotations

import dataclasses
import linecache
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import msgpack
import numpy as np

from sandbox.classify import exception_status, safe_str
from sandbox.classify import type_name as _type_name

from xamt.exec.normalise import NotComparable, normalise, to_numpy_tree

__all__ = [
    "RUN_MEMBERS", "Hooks", "hook_refs", "PreparedMember", "BindError", "invoke",
    "normalised_output", "call_member", "run_members", "prepared", "function",
]

RUN_MEMBERS = "xamt.exec.member:run_members"
_MESSAGE_LIMIT = 2000


# ============================================================================== the call


def hook_refs(member: Any, adapter: Any) -> dict[str, Any]:
    """The adapter hooks a call of ``member`` needs, as ``"module:qualname"`` references:
    ``from``, ``to``, ``dtype``; ``prng_key`` for a member that takes a PRNG key; ``device``,
    ``place`` and ``scope`` for a member placed on a device its adapter can place calls on.

    Only members that take a key name the key hook, and only placed members the device (the
    other members' specs, and so their ids, stay as they were before keys and devices existed).
    Raises :class:`~xamt.errors.ConfigError` for a device the adapter cannot place calls on.
    """
    refs: dict[str, Any] = {"from": adapter.from_numpy_ref, "to": adapter.to_numpy_ref,
                            "dtype": adapter.dtype_ref}
    if adapter.finish_ref:
        refs["finish"] = adapter.finish_ref
    if adapter.prng_key_ref and any(a.transform == "prng_key"
                                    for a in member.plan.args + member.plan.init_args):
        refs["prng_key"] = adapter.prng_key_ref
    if member.device is not None:
        if not adapter.runs_on(member.device):
            from xamt.errors import ConfigError

            raise ConfigError(f"{member.qualname}: the {adapter.name} adapter cannot place calls on "
                              f"{member.device!r} (it has no placement hook)")
        if adapter.placement_ref:
            refs.update(device=member.device, place=adapter.placement_ref, scope=adapter.device_scope_ref)
    return refs


@dataclass(frozen=True)
class Hooks:
    """The library functions a member's call uses (see :func:`hook_refs`).

    In a worker these are the adapter's own functions (:meth:`resolve`); the reproducer renderer
    passes stand-ins that return the code of the same call instead.
    """

    from_numpy: Callable[[Any], Any]
    to_numpy: Callable[[Any], Any] | None = None
    dtype: Callable[[str], Any] | None = None
    prng_key: Callable[[Any], Any] | None = None
    place: Callable[[Any, str], Any] | None = None
    scope: Callable[[str], Any] | None = None
    device: str | None = None
    #: computes a lazy result inside the call (the adapter's ``finish_ref``)
    finish: Callable[[Any], Any] | None = None

    @classmethod
    def resolve(cls, refs: Mapping[str, Any]) -> "Hooks":
        """The hooks ``refs`` (:func:`hook_refs`) name, imported."""
        from xamt.libraries.base import resolve_ref

        def get(key: str) -> Any:
            return resolve_ref(refs[key]) if refs.get(key) else None

        return cls(from_numpy=get("from"), to_numpy=get("to"), dtype=get("dtype"),
                   prng_key=get("prng_key"), place=get("place"), scope=get("scope"),
                   device=refs.get("device"), finish=get("finish"))


class BindError(Exception):
    """The plan cannot place the given slot values (not the library's doing)."""


def _fixed(arg: Any, hooks: Hooks) -> Any:
    """A fixed argument of the plan as the library takes it (a slot's spec as it is)."""
    if arg.slot is not None:
        return arg
    if arg.transform == "dtype" and isinstance(arg.value, str) and hooks.dtype is not None:
        return dataclasses.replace(arg, value=hooks.dtype(arg.value))
    if arg.transform == "prng_key" and hooks.prng_key is not None:
        return dataclasses.replace(arg, value=hooks.prng_key(arg.value))
    if arg.transform == "tuple" and isinstance(arg.value, list):
        return dataclasses.replace(arg, value=tuple(arg.value))
    return arg


class PreparedMember:
    """A member ready to call with these hooks: its fixed arguments converted once, the slots
    it takes as sequences or PRNG keys known. The given member is not modified."""

    __slots__ = ("member", "hooks", "slots", "tuple_slots", "key_slots")

    def __init__(self, member: Any, hooks: Hooks) -> None:
        plan = member.plan
        args = [_fixed(a, hooks) for a in plan.args]
        init_args = [_fixed(a, hooks) for a in plan.init_args]
        self.member = dataclasses.replace(member, plan=dataclasses.replace(plan, args=args, init_args=init_args))
        self.hooks = hooks
        specs = plan.args + plan.init_args
        # slots this member takes as a sequence (jax.lax.reduce_sum's axes): a scalar is wrapped
        self.tuple_slots = frozenset(a.slot for a in specs if a.slot is not None and a.transform == "tuple")
        # PRNG keys (jax.random's key): an int seed in such a slot becomes the library's key
        self.key_slots = frozenset(a.slot for a in specs if a.slot is not None and a.transform == "prng_key"
                                   ) if hooks.prng_key is not None else frozenset()
        self.slots = plan.slots() | ({member.receiver_slot} if member.receiver_slot is not None else set())

    def convert_slot(self, slot: int, value: Any) -> Any:
        """One slot value as the member takes it."""
        if slot in self.key_slots and value is not None and not isinstance(value, np.ndarray):
            return self.hooks.prng_key(value)  # type: ignore[misc]
        if slot in self.tuple_slots and value is not None and not isinstance(value, (tuple, list, np.ndarray)):
            return (value,)
        return self.convert_value(value)

    def convert_value(self, value: Any) -> Any:
        """Arrays (alone or in a list) to the library's tensors, placed on the member's device;
        a numpy dtype to the library's; anything else as it is."""
        h = self.hooks
        t = type(value)
        if t is np.ndarray:
            return h.from_numpy(value) if h.place is None else h.place(h.from_numpy(value), h.device)  # type: ignore[arg-type]
        if t is list and value and all(type(v) is np.ndarray for v in value):
            if h.place is None:
                return [h.from_numpy(v) for v in value]
            return [h.place(h.from_numpy(v), h.device) for v in value]  # type: ignore[arg-type]
        if isinstance(value, np.dtype):
            return h.dtype(value.name) if h.dtype is not None else value
        return value

    def convert(self, values: Mapping[int, Any]) -> dict[int, Any]:
        """The values of the slots this member takes, converted (:meth:`convert_slot`)."""
        return {slot: self.convert_slot(slot, v) for slot, v in values.items() if slot in self.slots}

    def bind(self, converted: Mapping[int, Any]) -> tuple[str, list[Any], dict[str, Any]]:
        """``(target, args, kwargs)`` of the call on converted slot values (``Member.task``).
        Raises :class:`BindError` when the plan cannot place them."""
        try:
            return self.member.task(dict(converted))
        except ValueError as exc:  # Member.task / ArgumentPlan.bind: a slot the call cannot take
            raise BindError(str(exc)) from None

    def describe(self, values: Mapping[int, Any]) -> tuple[str, list[Any], dict[str, Any]]:
        """The call on slot values: :meth:`convert`, then :meth:`bind`."""
        return self.bind(self.convert(values))


#: per worker process: member id → prepared member, "module:qualname" → function. A memo of
#: immutable data (the id is a content hash), so a stale entry cannot exist.
_PREPARED: dict[str, PreparedMember] = {}
_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def prepared(mid: str, spec_bytes: bytes) -> PreparedMember:
    """The member of a spec (``xamt.exec.group.member_spec``), prepared once per process."""
    prep = _PREPARED.get(mid)
    if prep is None:
        from xamt.matching.model import Member

        spec = msgpack.unpackb(spec_bytes, raw=False, strict_map_key=False)
        prep = _PREPARED[mid] = PreparedMember(Member.from_json(spec["member"]), Hooks.resolve(spec))
    return prep


def function(ref: str) -> Callable[..., Any]:
    """The function ``ref`` names, resolved once per process."""
    fn = _FUNCTIONS.get(ref)
    if fn is None:
        from xamt.libraries.base import resolve_ref

        fn = _FUNCTIONS[ref] = resolve_ref(ref)
    return fn


def invoke(prep: PreparedMember, call: tuple[str, Sequence[Any], Mapping[str, Any]]) -> Any:
    """Make the call :meth:`PreparedMember.describe` described (inside the device scope)."""
    target, args, kwargs = call
    fn = function(target)
    scope = prep.hooks.scope
    if scope is None:
        return fn(*args, **kwargs)
    with scope(prep.hooks.device):
        return fn(*args, **kwargs)


def normalised_output(raw: Any, to_numpy: Callable[[Any], Any] | None, norm: str | None) -> Any:
    """A member's output as groups compare it: a numpy tree (:func:`to_numpy_tree`), reduced by
    the normaliser ``norm``. Reproducer scripts run a copy of this very function."""
    return normalise(to_numpy_tree(raw, to_numpy), norm)


def call_member(member: Any, values: Mapping[int, Any], libraries: Mapping[str, Any] | None = None,
                to_numpy: bool = True) -> Any:
    """Call ``member`` on slot values in this process, as a worker does; the output as a numpy
    tree (:func:`to_numpy_tree`) unless ``to_numpy`` is false. ``member`` may be its JSON;
    ``libraries`` maps library names to adapters (default: the installed ones)."""
    from xamt.matching.model import Member

    m = member if isinstance(member, Member) else Member.from_json(dict(member))
    adapter = libraries[m.library] if libraries is not None else _registry().get(m.library)
    prep = PreparedMember(m, Hooks.resolve(hook_refs(m, adapter)))
    raw = invoke(prep, prep.describe({int(k): v for k, v in values.items()}))
    return to_numpy_tree(raw, prep.hooks.to_numpy) if to_numpy else raw


def _registry() -> Any:
    from xamt.libraries.registry import Registry

    return Registry()


# ============================================================================== worker side


def message(exc: BaseException) -> str:
    """An exception's text, cut to a size a result carries."""
    text = safe_str(exc)
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "..."


def error_status(exc: BaseException, type_name: str, text: str) -> str:
    """The sandbox status of an exception a call raised (``raised``, ``oom``...)."""
    return str(exception_status(exc, type_name, text))


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


def _run_one(prep: PreparedMember, values: Mapping[int, Any], repeat: int, norm: str | None) -> list:
    start = time.perf_counter()
    try:
        call = prep.describe(values)
    except BindError as exc:
        return ["skipped", f"cannot bind the arguments: {exc}"]
    finish = prep.hooks.finish
    try:
        raw = invoke(prep, call)
        if finish is not None:  # a lazy library computes here: what it raises is the call's
            raw = finish(raw)
    except BaseException as exc:  # the library's own SystemExit / KeyboardInterrupt included
        return _raised(exc, start)
    del call
    seconds = time.perf_counter() - start
    try:
        out = normalised_output(raw, prep.hooks.to_numpy, norm)
    except NotComparable as exc:
        return ["unserializable", f"output not comparable: {exc}", seconds]
    except BaseException as exc:  # conversion runs library code (tensor.numpy()) too
        return ["unserializable", f"output conversion failed: {_type_name(type(exc))}: {message(exc)}", seconds]
    del raw
    nondet = False
    for _ in range(repeat - 1):
        try:  # fresh conversions every time: a call may consume or modify its inputs
            again = invoke(prep, prep.describe(values))
            again = normalised_output(finish(again) if finish is not None else again, prep.hooks.to_numpy, norm)
        except BaseException:  # a second run that raises is nondeterministic too
            nondet = True
            break
        if not _same(out, again):
            nondet = True
            break
    return ["ok", out, nondet, seconds]


def _raised(exc: BaseException, start: float) -> list:
    type_name = _type_name(type(exc))
    text = message(exc)
    return ["raised", type_name, text, error_status(exc, type_name, text), time.perf_counter() - start,
            raised_at(exc)]


def raised_at(exc: BaseException) -> str:
    """Where ``exc`` was raised: ``"<function>:raise"`` when the innermost Python frame's line is a
    ``raise`` statement (a check the code makes on purpose, ``numpy.split``'s "array split does
    not result in an equal division"), ``"<function>:call"`` when the error came out of what that
    line called (``np.arange`` inside scipy's entropy sum, arithmetic dividing by zero), and ``""``
    without a traceback."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    line = linecache.getline(code.co_filename, tb.tb_lineno).lstrip()
    return f"{code.co_name}:{'raise' if line.startswith('raise') else 'call'}"


def run_members(members: Sequence[Sequence[Any]], values: Mapping[int, Any],
                options: Mapping[str, Any] | None = None) -> list:
    """Worker entry point: call each member on ``values``; one result list per member.

    ``members`` are ``[member_id, spec_bytes]`` pairs (``xamt.exec.group.member_spec``);
    ``values`` maps slot index → materialised value; ``options``: ``repeat`` (call each member
    that many times on fresh conversions; a differing result marks it nondeterministic) and
    ``normalise`` (the group's normaliser name), ``clocks`` (``compile_clock_ref`` s of the
    adapters: each result but a skip then ends with the seconds the libraries spent compiling
    during that call), ``flush_subnormals`` (each call runs with the CPU flushing subnormals
    to zero, :mod:`xamt.exec.fpmode`; a skip where that cannot be set) and ``wide``
    (``{library: wide_ref}``: a member of such a library runs inside that context, JAX with
    float64 enabled). Results: ``["ok", output, nondeterministic, seconds, cpu_seconds]``,
    ``["raised", error_type, message, status, seconds, raised_at, cpu_seconds]`` (``raised_at``:
    :func:`raised_at`), ``["unserializable",
    why, seconds, cpu_seconds]`` or ``["skipped", why]``: ``seconds`` of wall time, ``cpu_seconds`` the worker process used meanwhile (a niced
    worker waits for the CPU others leave, and its wall time says little of what a call costs).
    """
    options = options or {}
    repeat = int(options.get("repeat", 1))
    norm = options.get("normalise")
    clocks = [function(ref) for ref in options.get("clocks", ())]
    from sandbox import mark

    flush = bool(options.get("flush_subnormals"))
    wide = options.get("wide") or {}
    out = []
    for k, (mid, spec_bytes) in enumerate(members):
        mark(k)  # a death names the member that caused it (Outcome.mark)
        prep = prepared(mid, spec_bytes)
        before = _clock(clocks) if clocks else 0.0
        cpu = time.process_time()
        run = _run_flushing if flush else _run_one
        ref = wide.get(prep.member.library)
        if ref:
            with function(ref)():
                result = run(prep, values, repeat, norm)
        else:
            result = run(prep, values, repeat, norm)
        if result[0] != "skipped":
            result.append(time.process_time() - cpu)
            if clocks:
                result.append(_clock(clocks) - before)
        out.append(result)
    return out


def _run_flushing(prep: PreparedMember, values: Mapping[int, Any], repeat: int, norm: str | None) -> list:
    """:func:`_run_one` with the CPU flushing subnormals to zero; a skip where it cannot."""
    from xamt.exec.fpmode import FloatModeUnavailable, flushing_subnormals

    try:
        with flushing_subnormals():
            return _run_one(prep, values, repeat, norm)
    except FloatModeUnavailable as exc:
        return ["skipped", f"cannot flush subnormals here: {exc}"]


def _clock(clocks: Sequence[Callable[[], float]]) -> float:
    """The compile clocks' total (a clock that fails reads 0: it is evidence, never a result)."""
    total = 0.0
    for clock in clocks:
        try:
            total += float(clock())
        except Exception:
            pass
    return total
