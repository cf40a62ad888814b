"""Which objects of a namespace are APIs of the library being mined: routine-like callables
(and, for class namespaces, concrete subclasses) defined in the library's own modules, or, for
objects that carry no module, not objects of a library others re-export."""
from __future__ import annotations

import importlib
import inspect
from typing import Any, Sequence

from xamt.libraries.base import LibraryAdapter, resolve_ref
from xamt.libraries.registry import Registry

__all__ = ["is_api_callable", "origin_module", "owned", "public", "foreign_objects",
           "owned_subclasses"]


#: callable objects that are not routines but are APIs (ufuncs, dispatchers, jit wrappers,
#: nanobind's functions: ``inspect.isroutine`` is False for them)
_ROUTINE_LIKE_TYPES = frozenset({
    "ufunc", "_ArrayFunctionDispatcher", "PjitFunction", "custom_jvp", "custom_vjp",
    "_Function", "cython_function_or_method", "partial", "vectorize", "_lru_cache_wrapper",
    "OpOverloadPacket", "nb_func",
})


def is_api_callable(obj: Any, routine_types: frozenset[str] = frozenset()) -> bool:
    """True for routines and routine-like callables (also instances of the types an adapter
    names in ``routine_types``); classes and modules are not APIs here."""
    if inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
        return False
    if inspect.isroutine(obj):
        return True
    name = type(obj).__name__
    return name in _ROUTINE_LIKE_TYPES or name in routine_types


def origin_module(obj: Any) -> str | None:
    """The module an object was defined in (bound methods: their instance's class module)."""
    mod = getattr(obj, "__module__", None)
    if isinstance(mod, str) and mod:
        return mod
    owner = getattr(obj, "__self__", None)
    if owner is not None and not inspect.ismodule(owner):
        mod = getattr(type(owner), "__module__", None)
        if isinstance(mod, str):
            return mod
    objclass = getattr(obj, "__objclass__", None)
    if objclass is not None:
        return getattr(objclass, "__module__", None)
    return None


def owned(adapter: LibraryAdapter, obj: Any, foreign: Sequence[Any]) -> bool:
    """True when ``obj`` belongs to ``adapter``'s library (``foreign``: :func:`foreign_objects`)."""
    mod = origin_module(obj)
    if mod is not None and mod not in ("builtins",):
        return adapter.owns(mod)
    # No module (ufuncs, C builtins): foreign only when it *is* an object of another library.
    return not any(obj is other for other in foreign)


def public(name: str) -> bool:
    """True for a public attribute name (no leading underscore)."""
    return bool(name) and not name.startswith("_")


def foreign_objects(adapter: LibraryAdapter, libraries: Registry) -> list[Any]:
    """The top-level objects of the other libraries whose objects others re-export (numpy's
    ufuncs), to recognise such an object when it carries no module.

    Which library that is, is a fact about that library, so its adapter states it once
    (``reexported_by_others``) rather than every re-exporting adapter naming it; ``pivot_rank``
    would pick the same library today but orders argument plans, which is another matter.
    """
    found: list[Any] = []
    for other in libraries:
        if other.name == adapter.name or not other.reexported_by_others:
            continue
        try:
            # imported lazily, only to recognise re-exports
            module = importlib.import_module(other.import_name)
        except ImportError:
            continue
        found.extend(getattr(module, n) for n in dir(module) if public(n))
    return found


def owned_subclasses(adapter: LibraryAdapter, module_name: str, base_ref: str,
                      foreign: Sequence[Any], notes: list[str], label: str) -> list[tuple[str, Any]]:
    """``(name, class)`` of the public, concrete subclasses of ``base_ref`` that ``module_name``
    holds and the library owns; a module or base that cannot be loaded is a note, not an error."""
    try:
        module = importlib.import_module(module_name)
        base = resolve_ref(base_ref)
    except Exception as exc:
        notes.append(f"{label} {module_name} not usable: {exc}")
        return []
    out = []
    for name in sorted(dir(module)):
        if not public(name):
            continue
        try:
            obj = getattr(module, name)
        except Exception:
            continue
        if not inspect.isclass(obj) or obj is base or not issubclass(obj, base):
            continue
        if owned(adapter, obj, foreign) and not inspect.isabstract(obj):
            out.append((name, obj))
    return out
