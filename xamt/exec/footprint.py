"""Which Python functions a member's call runs, worker side: evidence that one API calls another.

Triage keys a finding by its outlier API, class and trigger; an API that is a thin wrapper of
another (``tnp.sort`` sorting through ``tf.math.top_k``, ``jax.scipy.special.exp1`` returning
``expn(1, x)``) shows the callee's bug under its own name. :func:`call_footprint` runs the
member's call once under :func:`sys.setprofile` and returns the member's own function and the
public functions its call entered, as short hashes (:func:`code_key`), so that
:func:`xamt.triage.dedup.same_cause` can fold the wrapper's finding into the callee's.

The sandbox resolves :data:`FOOTPRINT`; the parent side is
:meth:`GroupExecutor.footprint <xamt.exec.group.GroupExecutor.footprint>`. Native code (a
numpy ufunc, an ATen kernel) has no Python frames and leaves no trace: such APIs never fold
this way.
"""
from __future__ import annotations

import hashlib
import inspect
import sys
from typing import Any, Mapping, Sequence

__all__ = ["FOOTPRINT", "code_key", "entry_key", "call_footprint"]

FOOTPRINT = "xamt.exec.footprint:call_footprint"
#: our own frames (the worker, the call helpers): never part of an API's footprint
_OWN = ("xamt", "sandbox")


def code_key(module: str, qualname: str) -> str:
    """A short stable hash of one function, ``module:qualname`` (8 hex digits)."""
    return hashlib.blake2b(f"{module}:{qualname}".encode(), digest_size=4).hexdigest()


def entry_key(obj: Any) -> str | None:
    """The :func:`code_key` of the Python function behind a public object (decorators such as
    ``jax.jit`` and TensorFlow's dispatch unwrapped), or None for native code."""
    try:
        fn = inspect.unwrap(obj)
    except ValueError:  # a __wrapped__ cycle
        return None
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    glob = getattr(fn, "__globals__", None)
    if code is None or glob is None:
        return None
    return code_key(str(glob.get("__name__", "")), code.co_qualname)


def _public_object(member: Any) -> Any:
    """The object ``member`` names: its target, or the target's attribute a constructed call
    runs (``torch.distributions:StudentT`` → ``StudentT.entropy``)."""
    from xamt.exec.member import function

    obj = function(member.target)  # resolved once per process, as the calls resolve it
    last = member.qualname.rpartition(".")[2]
    if not member.target.endswith(last) and hasattr(obj, last):
        obj = getattr(obj, last)
    return obj


def call_footprint(member: Sequence[Any], values: Mapping[int, Any], trace: str | None = None,
                   limit: int = 4000) -> dict[str, Any]:
    """Worker entry point: ``{"entry": key or None, "calls": [key, ...]}`` of one member's call.

    ``calls`` holds the public functions (a name not starting with ``_`` or ``<``) entered
    during the call, outside this package and the sandbox, at most ``limit`` of them. ``trace``
    names an evaluator (``"xamt.libraries.jax:trace_python"``) that runs the call's Python
    without executing it, for libraries whose calls compile (a hang in a compiled loop then
    still gives its footprint). What the call raises is part of what it did, not an error here.
    """
    from xamt.exec.member import function, invoke, prepared
    from xamt.exec.probe import abstract_call

    mid, spec_bytes = member
    prep = prepared(mid, spec_bytes)
    try:
        entry = entry_key(_public_object(prep.member))
    except Exception:  # an object that does not resolve here has no entry
        entry = None
    seen: set[str] = set()
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or len(calls) >= limit:
            return
        code = frame.f_code
        if not code.co_name[:1].isalpha():
            return
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] in _OWN:
            return
        key = code_key(module, code.co_qualname)
        if key not in seen:
            seen.add(key)
            calls.append(key)

    evaluator = function(trace) if trace else None
    sys.setprofile(profile)
    try:
        if evaluator is not None:
            abstract_call(prep, values, evaluator)
        else:
            target, args, kwargs = prep.describe(values)
            if prep.member.via and target == prep.member.via:
                # a compiled call runs the API's Python only when it traces, once per signature:
                # the API is called as it is (its Python is what the compiled program was traced from)
                target, args = args[0], args[1:]
            invoke(prep, (target, args, kwargs))
    except Exception:
        pass
    finally:
        sys.setprofile(None)
    return {"entry": entry, "calls": sorted(calls)}
