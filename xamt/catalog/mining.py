"""Mining one library in this process: :func:`mine_library`.

What is mined, per object:

* functions, builtins, ufuncs and other routine-like callables of the namespaces (classes,
  modules, constants and objects defined in another library are not);
* tensor methods of the adapter's ``method_owners`` (``torch.Tensor.abs``), minus plumbing;
* callable classes of ``class_namespaces`` (``torch.nn.ReLU``) **that have a functional form** in
  the same library (``torch.nn.functional.relu``), found by name;
* methods of the classes of ``constructed_namespaces`` (``torch.distributions.Normal.log_prob``,
  kind ``constructed``): the method's parameters as ``params``, the constructor's as
  ``init_params``; a namespace ``named_by_class`` yields one record per class, named after it
  (``keras.initializers.HeNormal``, called through ``__call__``);
* functions of ``factory_namespaces`` (``jax.nn.initializers.he_normal``) are ``constructed``
  too: their parameters the constructor's, the declared ``call_params`` the call's;
* functions of ``fill_namespaces`` that fill a tensor they are given
  (``torch.nn.init.kaiming_uniform_(tensor)``) are kind ``filling``: the tensor parameter is a
  positional ``shape`` (the ``fill`` call makes the tensor);
* the same object under several public names is one record; the other names are its ``aliases``.

Signatures: :mod:`xamt.catalog.signatures`; documentation references: :mod:`xamt.catalog.docs`.
"""
from __future__ import annotations

import importlib
import inspect
import platform
import re
import time
import types
import warnings
from typing import Any, Callable, Sequence

from xamt.catalog.callstyles import as_factories, as_fillings, keyword_only
from xamt.catalog.docs import DocPatterns, doc_references, getdoc, is_deprecated
from xamt.catalog.ownership import (foreign_objects, is_api_callable, origin_module, owned,
                                    owned_subclasses, public)
from xamt.catalog.records import ApiRecord, LibraryCatalog, Param
from xamt.catalog.signatures import extract_signature
from xamt.errors import MiningError
from xamt.libraries.base import ConstructedNamespace, LibraryAdapter, resolve_ref
from xamt.libraries.registry import Registry
from xamt.log import get_logger

__all__ = ["mine_library", "DOC_LIMIT"]

_log = get_logger("catalog")


#: docstrings are stored up to this length (term similarity reads the start of the docs)
DOC_LIMIT = 2000


def mine_library(adapter: LibraryAdapter, registry: Registry | None = None) -> LibraryCatalog:
    """Import ``adapter``'s library in this process and mine it (see the module docstring).

    ``registry`` (default: the installed adapters) holds the other libraries: their
    documentation prefixes are read in docstrings, and the objects of those that others
    re-export are not this library's. ``adapter`` takes the place of its namesake there.
    """
    t0 = time.perf_counter()
    adapter.prepare_environment()
    notes: list[str] = []
    try:
        importlib.import_module(adapter.import_name)
    except Exception as exc:
        raise MiningError(f"cannot import {adapter.import_name}: {exc}") from exc
    hook = adapter.signature_hook()
    sub_apis = resolve_ref(adapter.sub_apis_ref) if adapter.sub_apis_ref else None
    libraries = Registry([adapter, *(a for a in registry or Registry() if a.name != adapter.name)])
    patterns = DocPatterns.of(libraries)
    foreign = foreign_objects(adapter, libraries)
    keepalive: list[Any] = []

    # Pass 1: every public name of every namespace, grouped by object identity.
    by_id: dict[int, list[tuple[int, str, str, str]]] = {}
    objects: dict[int, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns_targets: dict[str, str] = {}
        for ns_index, ns in enumerate(adapter.namespaces):
            try:
                module, target_prefix = _resolve_namespace(ns)
            except Exception as exc:
                notes.append(f"namespace {ns} not importable: {type(exc).__name__}: {exc}")
                continue
            ns_targets[ns] = target_prefix
            is_object = not inspect.ismodule(module)
            for name in sorted(dir(module)):
                if not public(name):
                    continue
                if is_object and name not in adapter.object_members:
                    continue
                qualname = f"{ns}.{name}"
                if adapter.is_excluded(qualname):
                    continue
                try:
                    obj = getattr(module, name)
                except Exception:  # lazy attributes that fail to load are not APIs here
                    continue
                if not is_api_callable(obj, adapter.routine_types) or not owned(adapter, obj, foreign):
                    continue
                origins = adapter.namespace_origins.get(ns)
                if origins is not None and origin_module(obj) not in origins:
                    continue
                keepalive.append(obj)
                objects[id(obj)] = obj
                by_id.setdefault(id(obj), []).append((ns_index, name, ns, qualname))

        records: list[ApiRecord] = []
        for key, names in by_id.items():
            obj = objects[key]
            real = getattr(obj, "__name__", None)
            names.sort(key=lambda n: (n[0], n[1] != real, len(n[1]), n[1]))
            _, name, ns, qualname = names[0]
            params, source, overloads = extract_signature(
                obj, name, method=False, hook=hook, owner=None,
                hook_on_variadic=adapter.signature_hook_on_variadic,
            )
            if ns in adapter.keyword_only_namespaces:
                params, overloads = keyword_only(params), [keyword_only(o) for o in overloads]
            rec = _record(adapter, patterns, obj, name, ns, qualname, f"{ns_targets[ns]}{name}", "function",
                          params, source, overloads, [n[3] for n in names[1:]])
            rec.qualifier = _qualifier(adapter, ns)
            records.append(rec)
            if sub_apis is not None:
                records.extend(_sub_api_records(adapter, patterns, obj, rec, sub_apis, hook,
                                                keepalive))

        for owner in adapter.method_owners:
            try:
                cls = resolve_ref(f"{owner.module}:{owner.qualname}")
            except Exception as exc:
                notes.append(f"method owner {owner.module}.{owner.qualname} missing: {exc}")
                continue
            seen: dict[int, ApiRecord] = {}
            for name in sorted(dir(cls)):
                if not public(name) or name in owner.exclude:
                    continue
                try:
                    obj = getattr(cls, name)
                except Exception:
                    continue
                if inspect.isclass(obj) or not callable(obj):
                    continue
                keepalive.append(obj)
                qualname = f"{owner.module}.{owner.qualname}.{name}"
                if id(obj) in seen:
                    seen[id(obj)].aliases.append(qualname)
                    continue
                # a plain function set on the class binds its first parameter to the receiver
                bound = isinstance(inspect.getattr_static(cls, name, None), types.FunctionType)
                params, source, overloads = extract_signature(
                    obj, name, method=True, hook=hook, owner=owner.qualname, bound_function=bound
                )
                rec = _record(adapter, patterns, obj, name, owner.module, qualname,
                              f"{owner.module}:{owner.qualname}.{name}", "method",
                              params, source, overloads, [])
                rec.owner = owner.qualname
                rec.receiver = True
                seen[id(obj)] = rec
                records.append(rec)

        functions_by_key: dict[str, list[str]] = {}
        for rec in records:
            if rec.kind == "function":
                for qn in rec.names:
                    if adapter.inplace_suffix and qn.endswith(adapter.inplace_suffix):
                        continue
                    functions_by_key.setdefault(_simple(qn.rsplit(".", 1)[1]), []).append(
                        rec.qualname)
        for cns in adapter.class_namespaces:
            for name, obj in owned_subclasses(adapter, cns.module, cns.base, foreign, notes,
                                               "class namespace"):
                forms: list[str] = []
                for k in _functional_keys(name):
                    forms.extend(q for q in functions_by_key.get(k, []) if q not in forms)
                if not forms:
                    continue
                keepalive.append(obj)
                call = getattr(obj, cns.call_method, None)
                params, source, overloads = ([], "none", [])
                if call is not None:
                    params, source, overloads = extract_signature(
                        call, cns.call_method, method=True, hook=None, owner=name
                    )
                init_params, _, _ = extract_signature(
                    obj.__init__, "__init__", method=True, hook=None, owner=name
                )
                qualname = f"{cns.module}.{name}"
                rec = _record(adapter, patterns, obj, name, cns.module, qualname, f"{cns.module}:{name}",
                              "class", params, source, overloads, [])
                rec.init_params = init_params
                rec.functional_forms = forms
                records.append(rec)

        for cons in adapter.constructed_namespaces:
            records.extend(_mine_constructed(adapter, patterns, cons, foreign, keepalive, notes))
        for factory in adapter.factory_namespaces:
            as_factories(records, factory)
        for fill in adapter.fill_namespaces:
            as_fillings(records, fill)

    info: dict[str, Any] = {
        "namespaces": list(adapter.namespaces),
        "notes": notes,
        "python": platform.python_version(),
    }
    try:
        info["devices"] = adapter.devices()
    except Exception as exc:  # device discovery is informative; mining does not depend on it
        info["devices"] = ["cpu"]
        notes.append(f"device discovery failed: {exc}")
    info["compile"] = _compile_status(adapter)
    records.sort(key=lambda r: r.qualname)
    return LibraryCatalog(
        library=adapter.name, version=adapter.version(), records=records, info=info,
        seconds=time.perf_counter() - t0,
    )


def _sub_api_records(adapter: LibraryAdapter, patterns: DocPatterns, obj: Any, rec: ApiRecord,
                     sub_apis: Callable[[Any], list[str]], hook: Callable[..., Any] | None,
                     keepalive: list[Any]) -> list[ApiRecord]:
    """Records of the APIs a mined function carries as attributes (``numpy.add.reduce``).

    The name is qualified by the function's (``add_reduce``): ``reduce`` alone says nothing.
    The docstring is the method's, shared by every function that has it (``ufunc.reduce``), so
    its references and declared equivalences are not this API's and are left out.
    """
    try:
        names = list(sub_apis(obj))
    except Exception as exc:  # a hook that fails leaves the function without sub-APIs
        _log.debug("sub-API hook failed for %s: %s", rec.qualname, exc)
        return []
    out = []
    for attr in names:
        try:
            sub = getattr(obj, attr)
        except Exception:
            continue
        keepalive.append(sub)
        params, source, overloads = extract_signature(
            sub, attr, method=False, hook=hook, owner=None,
            hook_on_variadic=adapter.signature_hook_on_variadic,
        )
        sub_rec = _record(adapter, patterns, sub, attr, rec.namespace, f"{rec.qualname}.{attr}",
                          f"{rec.target}.{attr}", "function", params, source, overloads,
                          [f"{a}.{attr}" for a in rec.aliases])
        sub_rec.doc_refs, sub_rec.doc_equiv, sub_rec.alias_of = [], [], None
        sub_rec.qualifier = rec.name
        sub_rec.sub_api_of = rec.qualname
        sub_rec.defined_in = rec.defined_in
        out.append(sub_rec)
    return out


def _mine_constructed(adapter: LibraryAdapter, patterns: DocPatterns, cons: ConstructedNamespace,
                      foreign: Sequence[Any], keepalive: list[Any], notes: list[str]) -> list[ApiRecord]:
    """Records of a constructed namespace (see :class:`~xamt.libraries.base.ConstructedNamespace`):
    ``torch.distributions.Normal.log_prob`` with the method's parameters as ``params`` and the
    constructor's as ``init_params``."""
    records: list[ApiRecord] = []
    classes = owned_subclasses(adapter, cons.module, cons.base, foreign, notes, "constructed namespace")
    base = resolve_ref(cons.base) if classes else None
    by_class: dict[int, ApiRecord] = {}  # named by class: one record per class, other names aliases
    for cls_name, cls in classes:
        if cons.named_by_class and id(cls) in by_class:
            by_class[id(cls)].aliases.append(f"{cons.module}.{cls_name}")
            continue
        init_params, _, _ = extract_signature(cls.__init__, "__init__", method=True, hook=None,
                                              owner=cls_name)
        init_names = {p.name for p in init_params}
        for method in cons.methods:
            fn = getattr(cls, method, None)
            # the base's version only raises NotImplementedError: not an API of this class
            if fn is None or fn is getattr(base, method, None) or not callable(fn):
                continue
            params, source, overloads = extract_signature(fn, method, method=True, hook=None,
                                                          owner=cls_name)
            if init_names & {p.name for p in params}:
                # one flat signature for matching needs distinct names (never seen so far)
                notes.append(f"{cls_name}.{method}: a parameter named like a constructor's")
                continue
            keepalive.append(fn)
            if cons.named_by_class:
                # the class is the API (its docstring says what it computes); no owner: the
                # record is matched under its own name (xamt/matching/views.py)
                rec = _record(adapter, patterns, cls, cls_name, cons.module, f"{cons.module}.{cls_name}",
                              f"{cons.module}:{cls_name}.{method}", "constructed", params,
                              source, overloads, [])
                by_class[id(cls)] = rec
            else:
                rec = _record(adapter, patterns, fn, method, cons.module,
                              f"{cons.module}.{cls_name}.{method}",
                              f"{cons.module}:{cls_name}.{method}", "constructed", params, source,
                              overloads, [])
                rec.owner = cls_name
            if not rec.doc:  # an inherited method's docstring says little; the class's does
                rec.doc = getdoc(cls)[:DOC_LIMIT]
            rec.init_params = init_params
            records.append(rec)
            if cons.named_by_class:
                break  # one method: the call (several would need several names)
    return records


def _resolve_namespace(ns: str) -> tuple[Any, str]:
    """The namespace object and the target prefix of its names: ``"numpy.linalg:"`` for a
    module, ``"scipy.stats:norm."`` for an object inside a module."""
    try:
        return importlib.import_module(ns), f"{ns}:"
    except ModuleNotFoundError:
        parent, _, attr = ns.rpartition(".")
        module = importlib.import_module(parent)
        return getattr(module, attr), f"{parent}:{attr}."


def _qualifier(adapter: LibraryAdapter, ns: str) -> str | None:
    for parent in adapter.qualified_parents:
        if ns.startswith(parent + "."):
            return ns.rsplit(".", 1)[1]
    return None


def _compile_status(adapter: LibraryAdapter) -> dict[str, Any]:
    if adapter.compile_ref is None:
        return {"available": False, "why": "no compiled execution mode in this adapter"}
    if adapter.compile_check_ref is None:
        return {"available": True, "why": adapter.compile_label or adapter.compile_ref,
                "ref": adapter.compile_ref, "label": adapter.compile_label}
    try:
        ok, why = resolve_ref(adapter.compile_check_ref)()
    except Exception as exc:
        ok, why = False, f"compile check failed: {exc}"
    return {"available": bool(ok), "why": why, "ref": adapter.compile_ref,
            "label": adapter.compile_label}


def _simple(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _functional_keys(class_name: str) -> list[str]:
    """Names a class's functional form may have: ``MSELoss``→mseloss/mse, ``Conv2d``→conv2d/conv,
    ``BatchNorm2d``→batchnorm, ``ReLU``→relu."""
    s = _simple(class_name)
    keys = [s]
    for suffix in ("loss", "layer"):
        if s.endswith(suffix) and len(s) > len(suffix):
            keys.append(s[: -len(suffix)])
    for k in list(keys):
        stripped = re.sub(r"[123]d$", "", k)
        if stripped != k and stripped:
            keys.append(stripped)
    return list(dict.fromkeys(keys))


def _record(adapter: LibraryAdapter, patterns: DocPatterns, obj: Any, name: str, ns: str,
            qualname: str, target: str, kind: str, params: list[Param], source: str,
            overloads: list[list[Param]], aliases: Sequence[str]) -> ApiRecord:
    """The record of ``obj`` mined as ``qualname``, with what its docstring says."""
    doc = getdoc(obj)
    refs, equiv, alias_of = doc_references(doc, qualname, patterns)
    return ApiRecord(
        library=adapter.name, qualname=qualname, name=name, namespace=ns, kind=kind,
        target=target, params=params, signature_source=source, overloads=overloads[:8],
        doc=doc[:DOC_LIMIT], doc_refs=refs, doc_equiv=equiv, alias_of=alias_of, aliases=list(aliases),
        defined_in=origin_module(obj), deprecated=is_deprecated(doc),
    )
