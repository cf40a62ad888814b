"""The API catalog: every public callable of each library, with signature, docs and aliases.

Mining (:func:`mine_library`) imports one library and walks its adapter's namespaces, tensor
classes and callable-class namespaces. It runs in a child process per library
(``python -m xamt.catalog --worker LIB --result FILE``) so heavy imports stay out of the caller and
libraries are isolated from one another; :func:`build_catalog` runs those workers (two at a time
by default), caches each library's records in the store keyed by the library's version and the
miner's fingerprint, and loads them from there on the next run.

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

Signatures come from ``inspect.signature``; where it fails (or hides parameters behind
``**kwargs``) from the docstring's signature line(s); where both fail from the adapter's signature
hook (torch: the ATen schema). ``signature_source`` says which.
"""
from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib
import inspect
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from xamt.errors import LibraryNotInstalledError, MiningError, XamtError
from xamt.libraries.base import LibraryAdapter, resolve_ref
from xamt.libraries.registry import Registry, parse_library_list
from xamt.log import get_logger
from xamt.store import Schema, Store

__all__ = [
    "Param", "ApiRecord", "LibraryCatalog", "CatalogResult", "MINER_VERSION", "CATALOG_SCHEMA",
    "mine_library", "build_catalog", "load_catalog", "parse_signature_text", "miner_fingerprint",
    "doc_body", "doc_signatures",
]

_log = get_logger("catalog")

#: bump when mining rules change: cached catalogs with another version are mined again
MINER_VERSION = 5
#: docstrings are stored up to this length (term similarity reads the start of the docs)
DOC_LIMIT = 2000

CATALOG_SCHEMA = Schema(
    component="catalog",
    version=1,
    tables=("catalog_libraries", "catalog_apis"),
    statements=(
        "CREATE TABLE IF NOT EXISTS catalog_libraries ("
        " library TEXT PRIMARY KEY, version TEXT NOT NULL, fingerprint TEXT NOT NULL,"
        " mined_at REAL NOT NULL, seconds REAL NOT NULL, info TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS catalog_apis ("
        " library TEXT NOT NULL, qualname TEXT NOT NULL, kind TEXT NOT NULL,"
        " data TEXT NOT NULL, PRIMARY KEY (library, qualname))",
    ),
)


# ------------------------------------------------------------------------------------------
# data model
# ------------------------------------------------------------------------------------------
@dataclass
class Param:
    """One parameter of a signature.

    ``kind`` is ``inspect.Parameter``'s kind in snake case (``positional_only``,
    ``positional_or_keyword``, ``var_positional``, ``keyword_only``, ``var_keyword``);
    ``default`` is the default's ``repr`` (None when the parameter is required);
    ``annotation`` the type text when one is known.
    """

    name: str
    kind: str
    default: str | None = None
    required: bool = True
    annotation: str | None = None

    @property
    def is_variadic(self) -> bool:
        return self.kind in ("var_positional", "var_keyword")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Param":
        return cls(**data)


@dataclass
class ApiRecord:
    """One mined API.

    ``qualname`` is the public dotted name (``torch.nn.functional.relu``, ``torch.Tensor.abs``);
    ``target`` the ``"module:qualname"`` reference a sandbox worker resolves
    (``torch.nn.functional:relu``, ``torch:Tensor.abs``); ``namespace`` the mined module;
    ``owner`` the tensor class of a method (the class of a constructed API); ``kind`` is
    ``function``, ``method``, ``class``, ``constructed`` or ``filling`` (a function filling a
    tensor made from its ``shape``).
    For a method, ``receiver`` is True and ``params`` leave the receiver out. For a class,
    ``params`` is the call (``forward``/``call``) signature, ``init_params`` the constructor's,
    and ``functional_forms`` the same library's functions it corresponds to. ``qualifier``
    prefixes the name for matching when the namespace gives it its meaning (``norm`` of
    ``scipy.stats.norm.pdf``).
    """

    library: str
    qualname: str
    name: str
    namespace: str
    kind: str
    target: str
    params: list[Param] = field(default_factory=list)
    signature_source: str = "none"
    overloads: list[list[Param]] = field(default_factory=list)
    owner: str | None = None
    receiver: bool = False
    init_params: list[Param] = field(default_factory=list)
    functional_forms: list[str] = field(default_factory=list)
    doc: str = ""
    doc_refs: list[str] = field(default_factory=list)
    doc_equiv: list[str] = field(default_factory=list)
    alias_of: str | None = None
    aliases: list[str] = field(default_factory=list)
    defined_in: str | None = None
    deprecated: bool = False
    qualifier: str | None = None
    #: for an API mined as an attribute of another (``numpy.add.reduce``): that API's qualname
    sub_api_of: str | None = None

    @property
    def names(self) -> list[str]:
        """The primary qualified name followed by its aliases."""
        return [self.qualname, *self.aliases]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ApiRecord":
        data = dict(data)
        data["params"] = [Param.from_json(p) for p in data.get("params", [])]
        data["init_params"] = [Param.from_json(p) for p in data.get("init_params", [])]
        data["overloads"] = [[Param.from_json(p) for p in ov] for ov in data.get("overloads", [])]
        return cls(**data)


@dataclass
class LibraryCatalog:
    """All records of one library plus what the miner noted (version, devices, compile, notes)."""

    library: str
    version: str
    records: list[ApiRecord]
    info: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    cached: bool = False

    def counts(self) -> dict[str, int]:
        """Records per kind, and the number of extra (alias) names."""
        counts = {"function": 0, "method": 0, "class": 0, "constructed": 0}
        for rec in self.records:
            counts[rec.kind] = counts.get(rec.kind, 0) + 1
        counts["total"] = len(self.records)
        counts["alias_names"] = sum(len(r.aliases) for r in self.records)
        counts["with_signature"] = sum(1 for r in self.records if r.signature_source != "none")
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "library": self.library, "version": self.version, "info": self.info,
            "seconds": self.seconds, "records": [r.to_json() for r in self.records],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LibraryCatalog":
        return cls(
            library=data["library"], version=data["version"],
            records=[ApiRecord.from_json(r) for r in data["records"]],
            info=data.get("info", {}), seconds=float(data.get("seconds", 0.0)),
        )


@dataclass
class CatalogResult:
    """What :func:`build_catalog` returns: mined/cached catalogs and skipped libraries."""

    catalogs: dict[str, LibraryCatalog]
    skipped: dict[str, str]
    seconds: float


# ------------------------------------------------------------------------------------------
# signatures from text
# ------------------------------------------------------------------------------------------
_KIND_NAMES = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def _clean_param_text(text: str) -> str:
    text = re.sub(r"\[,\s*(\w+)\s*\]", r", \1=None", text)  # numpy's "[, signature]"
    text = re.sub(r"\[[^\[\]]*\]", "", text)  # other optional groups: drop
    text = re.sub(r"<[^<>]*>", "None", text)  # <no value>, <class ...>
    text = re.sub(r"\(\s*\w+?\d*\s*,[^()]*\.\.\.\s*\)", "arrays", text)  # (a1, a2, ...)
    text = text.replace("…", "...")
    return text


def parse_signature_text(text: str) -> list[Param] | None:
    """Parse a parameter list such as ``"input, dim, keepdim=False, *, dtype=None"``.

    Returns None when the text is not a Python-like parameter list.
    """
    cleaned = _clean_param_text(text.strip())
    for candidate in (cleaned, re.sub(r":\s*[^,=]+", "", cleaned)):
        try:
            tree = ast.parse(f"def _f({candidate}): pass")
        except SyntaxError:
            continue
        fn = tree.body[0]
        assert isinstance(fn, ast.FunctionDef)
        return _params_from_ast(fn.args)
    return None


def _params_from_ast(args: ast.arguments) -> list[Param]:
    out: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"
        out.append(_ast_param(arg, kind, default))
    if args.vararg is not None:
        out.append(_ast_param(args.vararg, "var_positional", None, variadic=True))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append(_ast_param(arg, "keyword_only", default))
    if args.kwarg is not None:
        out.append(_ast_param(args.kwarg, "var_keyword", None, variadic=True))
    return out


def _ast_param(arg: ast.arg, kind: str, default: ast.expr | None, variadic: bool = False) -> Param:
    annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
    if variadic:
        return Param(arg.arg, kind, None, False, annotation)
    if default is None:
        # Doc signatures often write "out: Optional[Tensor]" for an optional keyword.
        if annotation is not None and annotation.startswith("Optional"):
            return Param(arg.arg, kind, "None", False, annotation)
        return Param(arg.arg, kind, None, True, annotation)
    return Param(arg.arg, kind, ast.unparse(default), False, annotation)


def doc_signatures(doc: str, name: str) -> list[list[Param]]:
    """Signature lines of a docstring: ``name(...)``, ``a.name(...)``, ``linalg.name(...)``,
    possibly wrapped over a few lines; one list per overload. Past the first three lines only
    lines that announce a return (``-> Tensor``) count, so calls in prose are not taken."""
    if not doc:
        return []
    lines = doc.splitlines()
    found: list[list[Param]] = []
    head = re.compile(r"^\s*(?:\.\. function::\s*)?(?:[\w.]+\.)?" + re.escape(name) + r"\(")
    i = 0
    while i < len(lines):
        line = lines[i]
        if head.match(line):
            text = line
            j = i
            while text.count("(") > text.count(")") and j + 1 < len(lines) and j - i < 6:
                j += 1
                text += " " + lines[j].strip()
            start = text.index("(") + 1
            depth, end = 1, None
            for k in range(start, len(text)):
                if text[k] == "(":
                    depth += 1
                elif text[k] == ")":
                    depth -= 1
                    if depth == 0:
                        end = k
                        break
            if end is not None and (i < 3 or text[end + 1:].lstrip().startswith("->")):
                params = parse_signature_text(text[start:end])
                if params is not None:
                    found.append(params)
            i = j + 1
            continue
        i += 1
    return found


def _params_from_inspect(sig: inspect.Signature) -> list[Param]:
    out = []
    for p in sig.parameters.values():
        kind = _KIND_NAMES[p.kind]
        variadic = kind in ("var_positional", "var_keyword")
        if p.default is inspect.Parameter.empty:
            default, required = None, not variadic
        else:
            default, required = _safe_repr(p.default), False
        annotation = None
        if p.annotation is not inspect.Parameter.empty:
            annotation = p.annotation if isinstance(p.annotation, str) else _type_text(p.annotation)
        out.append(Param(p.name, kind, default, required, annotation))
    return out


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _safe_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a default whose repr fails is still a default
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def _named(params: Sequence[Param]) -> int:
    return sum(1 for p in params if not p.is_variadic)


def _richest(overloads: list[list[Param]]) -> list[Param]:
    return max(overloads, key=_named)


def _from_specs(specs: list[tuple]) -> list[Param]:
    return [Param(n, k, d, d is None and k not in ("var_positional", "var_keyword"), t)
            for n, k, d, t in specs]


def _call_hook(hook: Callable[..., Any], obj: Any, name: str, owner: str | None) -> Any:
    try:
        return hook(obj, name, owner)
    except Exception as exc:  # a probe that fails just leaves the signature unknown
        _log.debug("signature hook failed for %s: %s", name, exc)
        return None


def extract_signature(
    obj: Any, name: str, *, method: bool, hook: Callable[..., Any] | None, owner: str | None,
    hook_on_variadic: bool = False,
) -> tuple[list[Param], str, list[list[Param]]]:
    """(params, source, other overloads) of ``obj``; for methods the receiver is left out.

    ``hook_on_variadic`` also consults ``hook`` when inspection shows only ``*args/**kwargs``
    and the docstring has nothing better.
    """
    doc = _getdoc(obj)
    inspected: list[Param] | None = None
    try:
        inspected = _params_from_inspect(inspect.signature(obj))
    except (TypeError, ValueError):
        inspected = None
    if inspected is not None and method and inspected and inspected[0].name in ("self", "a"):
        inspected = inspected[1:]
    doc_overloads = doc_signatures(doc, name)
    if method:
        doc_overloads = [
            ov[1:] if ov and ov[0].name == "self" else ov for ov in doc_overloads
        ]
    if inspected is not None:
        has_var = any(p.is_variadic for p in inspected)
        if has_var and doc_overloads and _named(_richest(doc_overloads)) > _named(inspected):
            best = _richest(doc_overloads)
            return best, "docstring", [o for o in doc_overloads if o is not best]
        if has_var and hook is not None and hook_on_variadic:
            specs = _call_hook(hook, obj, name, owner)
            if specs:
                overloads = [_from_specs(s) for s in specs]
                best = _richest(overloads)
                if _named(best) > _named(inspected):
                    return best, "schema", [o for o in overloads if o is not best]
        return inspected, "inspect", []
    if doc_overloads:
        best = _richest(doc_overloads)
        return best, "docstring", [o for o in doc_overloads if o is not best]
    if hook is not None:
        specs = _call_hook(hook, obj, name, owner)
        if specs:
            overloads = [_from_specs(s) for s in specs]
            best = _richest(overloads)
            return best, "schema", [o for o in overloads if o is not best]
    return [], "none", []


# ------------------------------------------------------------------------------------------
# documentation
# ------------------------------------------------------------------------------------------
def _alternatives(names: Iterable[str]) -> str:
    """``names`` as a regex alternation, longest first; one that never matches when empty."""
    ordered = sorted(names, key=lambda n: (-len(n), n))
    return "|".join(re.escape(n) for n in ordered) if ordered else "(?!)"


@dataclass(frozen=True)
class DocPatterns:
    """The patterns that find API names in docstrings, built from the adapters of a registry
    (:meth:`of`): the prefixes are the libraries' ``doc_prefixes`` (``jnp.cumsum``), the
    possessives their ``doc_possessives`` (``NumPy's `sum```). No library is named here, so a
    new adapter's prefixes are read in every library's documentation."""

    #: prefix -> namespace (``jnp`` -> ``jax.numpy``)
    prefixes: Mapping[str, str]
    #: library name in prose -> namespace (``NumPy`` -> ``numpy``)
    possessives: Mapping[str, str]
    #: any prefixed name (``jnp.cumsum``, not ``x.jnp.cumsum``)
    ref: re.Pattern[str]
    #: a docstring that is only a pointer: "See :func:`torch.sum`" (torch's tensor methods)
    see: re.Pattern[str]
    #: "Alias for :func:`torch.abs`"
    alias: re.Pattern[str]
    #: a declared equivalence: "JAX implementation of numpy.sum", "same as tf.math.add"
    equiv: re.Pattern[str]
    #: "TensorFlow variant of NumPy's `sum`"
    possessive: re.Pattern[str]

    @classmethod
    def of(cls, registry: Registry) -> "DocPatterns":
        """The patterns for the libraries of ``registry``."""
        prefixes, possessives = registry.doc_prefixes(), registry.doc_possessives()
        p = _alternatives(prefixes)
        return cls(
            prefixes=prefixes, possessives=possessives,
            ref=re.compile(r"(?<![\w.])(" + p + r")\.([A-Za-z_][\w.]*[A-Za-z0-9_])"),
            see=re.compile(r"^\s*See\s+(?::\w+:)?`*~?((?:" + p + r")\.[\w.]*\w)"),
            alias=re.compile(
                r"\b(?:an\s+)?alias\s+(?:for|of)\s+(?::\w+:)?`*~?((?:" + p + r")\.[\w.]*\w)",
                re.IGNORECASE),
            equiv=re.compile(
                r"(?:implementation of|variant of|equivalent (?:to|of)|same as|alias (?:for|of)|"
                r"wrapper (?:for|around)|counterpart (?:of|to))\s+(?::\w+:)?`*~?"
                r"((?:" + p + r")\.[\w.]*\w)",
                re.IGNORECASE),
            possessive=re.compile(r"(" + _alternatives(possessives) + r")'s\s+`+(\w+)`+"),
        )

    def qualify(self, dotted: str) -> str:
        """``jnp.cumsum`` -> ``jax.numpy.cumsum``. The alias and equivalence patterns ignore
        case ("Alias for NP.sum"), so a prefix is also looked up case-folded."""
        prefix, _, rest = dotted.partition(".")
        namespace = self.prefixes.get(prefix)
        if namespace is None:
            namespace = next(v for k, v in self.prefixes.items() if k.lower() == prefix.lower())
        return f"{namespace}.{rest}"


@functools.lru_cache(maxsize=1)
def default_doc_patterns() -> DocPatterns:
    """The patterns of the installed adapters (:class:`Registry` discovers them once)."""
    return DocPatterns.of(Registry())


def _getdoc(obj: Any) -> str:
    try:
        doc = inspect.getdoc(obj)
    except Exception:  # objects with exotic __doc__ descriptors
        doc = None
    return doc or ""


def doc_body(doc: str) -> str:
    """The docstring up to its examples (examples mention many unrelated APIs)."""
    cut = len(doc)
    for marker in ("\nExamples", "\nExample:", "\n>>>", "\nExample usage"):
        at = doc.find(marker)
        if at != -1:
            cut = min(cut, at)
    return doc[:cut]


def doc_references(doc: str, own: str,
                   patterns: DocPatterns | None = None) -> tuple[list[str], list[str], str | None]:
    """Names of other APIs a docstring mentions before its examples, the names it declares
    itself equivalent to (``JAX implementation of numpy.sum``, ``TensorFlow variant of NumPy's
    `sum```, ``See torch.sum``), and the target of ``Alias for X``. ``patterns`` default to
    those of the installed adapters."""
    pat = patterns or default_doc_patterns()
    body = doc_body(doc)
    refs: list[str] = []
    for m in pat.ref.finditer(body):
        ref = pat.qualify(m.group(0))
        if ref != own and ref not in refs:
            refs.append(ref)
    equiv: list[str] = []
    head = body[:700]
    for m in pat.equiv.finditer(head):
        ref = pat.qualify(m.group(1))
        if ref != own and ref not in equiv:
            equiv.append(ref)
    # a signature line may come first; look for the pointer in each of the first lines
    for line in head.splitlines()[:6]:
        m = pat.see.match(line)
        if m:
            ref = pat.qualify(m.group(1))
            if ref != own and ref not in equiv:
                equiv.append(ref)
    for m in pat.possessive.finditer(head):
        ref = f"{pat.possessives[m.group(1)]}.{m.group(2)}"
        if ref not in equiv:
            equiv.append(ref)
    alias_of = None
    m = pat.alias.search(head[:400])
    if m:
        alias_of = pat.qualify(m.group(1))
    return refs[:24], equiv[:6], alias_of


def _is_deprecated(doc: str) -> bool:
    head = doc[:400].lower()
    return ".. deprecated::" in head or "deprecated" in head.split("\n\n")[0]


# ------------------------------------------------------------------------------------------
# mining
# ------------------------------------------------------------------------------------------
#: callable objects that are not routines but are APIs (ufuncs, dispatchers, jit wrappers)
_ROUTINE_LIKE_TYPES = frozenset({
    "ufunc", "_ArrayFunctionDispatcher", "PjitFunction", "custom_jvp", "custom_vjp",
    "_Function", "cython_function_or_method", "partial", "vectorize", "_lru_cache_wrapper",
    "OpOverloadPacket",
})


def _is_api_callable(obj: Any) -> bool:
    if inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
        return False
    if inspect.isroutine(obj):
        return True
    return type(obj).__name__ in _ROUTINE_LIKE_TYPES


def _origin_module(obj: Any) -> str | None:
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


def _owned(adapter: LibraryAdapter, obj: Any, foreign: Sequence[Any]) -> bool:
    mod = _origin_module(obj)
    if mod is not None and mod not in ("builtins",):
        return adapter.owns(mod)
    # No module (ufuncs, C builtins): foreign only when it *is* an object of another library.
    return not any(obj is other for other in foreign)


def _public(name: str) -> bool:
    return bool(name) and not name.startswith("_")


def _foreign_objects(adapter: LibraryAdapter, libraries: Registry) -> list[Any]:
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
        found.extend(getattr(module, n) for n in dir(module) if _public(n))
    return found


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


def mine_library(adapter: LibraryAdapter, registry: Registry | None = None) -> LibraryCatalog:
    """Import ``adapter``'s library in this process and mine it (see the module docstring).

    ``registry`` (default: the installed adapters) holds the other libraries, whose
    documentation prefixes are read in docstrings; ``adapter`` takes the place of its namesake.
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
    foreign = _foreign_objects(adapter, libraries)
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
                if not _public(name):
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
                if not _is_api_callable(obj) or not _owned(adapter, obj, foreign):
                    continue
                origins = adapter.namespace_origins.get(ns)
                if origins is not None and _origin_module(obj) not in origins:
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
                params, overloads = _keyword_only(params), [_keyword_only(o) for o in overloads]
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
                if not _public(name) or name in owner.exclude:
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
                params, source, overloads = extract_signature(
                    obj, name, method=True, hook=hook, owner=owner.qualname
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
            for name, obj in _owned_subclasses(adapter, cns.module, cns.base, foreign, notes,
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
            _as_factories(records, factory)
        for fill in adapter.fill_namespaces:
            _as_fillings(records, fill)

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


def _keyword_only(params: list[Param]) -> list[Param]:
    """``params`` of a function that takes keyword arguments only: every named parameter
    ``keyword_only`` (the declaration order is kept)."""
    return [Param(p.name, "keyword_only", p.default, p.required, p.annotation)
            if p.kind in ("positional_only", "positional_or_keyword") else p for p in params]


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


def _owned_subclasses(adapter: LibraryAdapter, module_name: str, base_ref: str,
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
        if not _public(name):
            continue
        try:
            obj = getattr(module, name)
        except Exception:
            continue
        if not inspect.isclass(obj) or obj is base or not issubclass(obj, base):
            continue
        if _owned(adapter, obj, foreign) and not inspect.isabstract(obj):
            out.append((name, obj))
    return out


def _mine_constructed(adapter: LibraryAdapter, patterns: DocPatterns, cons: Any,
                      foreign: Sequence[Any], keepalive: list[Any], notes: list[str]) -> list[ApiRecord]:
    """Records of a constructed namespace (see :class:`~xamt.libraries.base.ConstructedNamespace`):
    ``torch.distributions.Normal.log_prob`` with the method's parameters as ``params`` and the
    constructor's as ``init_params``."""
    records: list[ApiRecord] = []
    classes = _owned_subclasses(adapter, cons.module, cons.base, foreign, notes, "constructed namespace")
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
                rec.doc = _getdoc(cls)[:DOC_LIMIT]
            rec.init_params = init_params
            records.append(rec)
            if cons.named_by_class:
                break  # one method: the call (several would need several names)
    return records


def _as_factories(records: list[ApiRecord], factory: Any) -> None:
    """Turn the function records of a factory namespace (see
    :class:`~xamt.libraries.base.FactoryNamespace`) into ``constructed`` records, in place:
    the function's parameters become the constructor's, the declared call parameters the API's,
    and the target calls the built callable (``module:factory.__call__``)."""
    call_params = [Param(name, kind, default, default is None, annotation)
                   for name, kind, default, annotation in factory.call_params]
    if not call_params:
        return
    call_names = {p.name for p in call_params}
    for rec in records:
        if rec.kind != "function" or rec.namespace != factory.module or rec.sub_api_of:
            continue
        if rec.params and rec.params[0].name == call_params[0].name:
            continue  # already the callable (jax.nn.initializers.zeros(key, shape, dtype))
        rec.kind = "constructed"
        rec.target = f"{rec.target}.__call__"
        rec.init_params = [p for p in rec.params if p.name not in call_names]
        rec.params = list(call_params)
        rec.overloads = []


def _as_fillings(records: list[ApiRecord], fill: Any) -> None:
    """Turn the function records of a fill namespace (see
    :class:`~xamt.libraries.base.FillNamespace`) whose first parameter is the filled tensor into
    ``filling`` records, in place: that parameter becomes a required positional ``shape``."""
    for rec in records:
        if rec.kind != "function" or rec.namespace != fill.module or rec.sub_api_of:
            continue
        if not rec.params or rec.params[0].name != fill.param:
            continue  # not a filling function (torch.nn.init.calculate_gain)
        rec.kind = "filling"
        rec.params = [Param("shape", "positional_only", None, True, "Sequence[int]"),
                      *rec.params[1:]]
        rec.overloads = []


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


def _record(adapter, patterns, obj, name, ns, qualname, target, kind, params, source, overloads,
            aliases):
    doc = _getdoc(obj)
    refs, equiv, alias_of = doc_references(doc, qualname, patterns)
    return ApiRecord(
        library=adapter.name, qualname=qualname, name=name, namespace=ns, kind=kind,
        target=target, params=params, signature_source=source, overloads=overloads[:8],
        doc=doc[:DOC_LIMIT], doc_refs=refs, doc_equiv=equiv, alias_of=alias_of, aliases=list(aliases),
        defined_in=_origin_module(obj), deprecated=_is_deprecated(doc),
    )


# ------------------------------------------------------------------------------------------
# cache and orchestration
# ------------------------------------------------------------------------------------------
def miner_fingerprint(adapter: LibraryAdapter) -> str:
    """Hash of everything that decides what mining yields besides the library version."""
    payload = json.dumps(
        {
            "miner": MINER_VERSION,
            "adapter": adapter.describe(),
            "exclude": sorted(adapter.exclude),
            "methods": [(m.module, m.qualname, sorted(m.exclude)) for m in adapter.method_owners],
            "classes": [(c.module, c.base, c.call_method) for c in adapter.class_namespaces],
            "qualified": list(adapter.qualified_parents),
            "object_members": sorted(adapter.object_members),
            "python": platform.python_version(),
            # only when used, so adapters without these keep their cached catalogs
            **({"origins": {k: list(v) for k, v in sorted(adapter.namespace_origins.items())}}
               if adapter.namespace_origins else {}),
            **({"keyword_only": list(adapter.keyword_only_namespaces)}
               if adapter.keyword_only_namespaces else {}),
            **({"sub_apis": adapter.sub_apis_ref} if adapter.sub_apis_ref else {}),
            **({"constructed": [(c.module, c.base, list(c.methods))
                                + ((True,) if c.named_by_class else ())
                                for c in adapter.constructed_namespaces]}
               if adapter.constructed_namespaces else {}),
            **({"factories": [(f.module, [list(p) for p in f.call_params])
                              for f in adapter.factory_namespaces]}
               if adapter.factory_namespaces else {}),
            **({"fillings": [(f.module, f.param) for f in adapter.fill_namespaces]}
               if adapter.fill_namespaces else {}),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _cached(store: Store, adapter: LibraryAdapter, version: str) -> LibraryCatalog | None:
    rows = store.query(
        "SELECT version, fingerprint, seconds, info FROM catalog_libraries WHERE library=?",
        (adapter.name,),
    )
    if not rows:
        return None
    row = rows[0]
    if row["version"] != version or row["fingerprint"] != miner_fingerprint(adapter):
        return None
    records = [
        ApiRecord.from_json(json.loads(r["data"]))
        for r in store.query(
            "SELECT data FROM catalog_apis WHERE library=? ORDER BY qualname", (adapter.name,)
        )
    ]
    return LibraryCatalog(adapter.name, version, records, json.loads(row["info"]),
                          float(row["seconds"]), cached=True)


def _save(store: Store, adapter: LibraryAdapter, cat: LibraryCatalog) -> None:
    with store.transaction():
        store.execute("DELETE FROM catalog_apis WHERE library=?", (cat.library,))
        store.executemany(
            "INSERT INTO catalog_apis(library, qualname, kind, data) VALUES (?, ?, ?, ?)",
            [(cat.library, r.qualname, r.kind, json.dumps(r.to_json())) for r in cat.records],
        )
        store.execute(
            "INSERT OR REPLACE INTO catalog_libraries"
            "(library, version, fingerprint, mined_at, seconds, info) VALUES (?, ?, ?, ?, ?, ?)",
            (cat.library, cat.version, miner_fingerprint(adapter), time.time(), cat.seconds,
             json.dumps(cat.info)),
        )


def load_catalog(store: Store, libraries: Iterable[str] | None = None) -> dict[str, LibraryCatalog]:
    """Catalogs already in the store (no mining, no version check)."""
    store.ensure(CATALOG_SCHEMA, on_mismatch="recreate")
    wanted = None if libraries is None else set(libraries)
    result = {}
    for row in store.query("SELECT library, version, seconds, info FROM catalog_libraries"):
        lib = row["library"]
        if wanted is not None and lib not in wanted:
            continue
        records = [
            ApiRecord.from_json(json.loads(r["data"]))
            for r in store.query(
                "SELECT data FROM catalog_apis WHERE library=? ORDER BY qualname", (lib,)
            )
        ]
        result[lib] = LibraryCatalog(lib, row["version"], records, json.loads(row["info"]),
                                     float(row["seconds"]), cached=True)
    return result


def _run_worker(adapter: LibraryAdapter, timeout: float) -> LibraryCatalog:
    """Mine one library in a child interpreter and read its JSON result."""
    with tempfile.TemporaryDirectory(prefix="xamt-mine-") as tmp:
        result = Path(tmp) / "catalog.json"
        cmd = [sys.executable, "-m", "xamt.catalog", "--worker", adapter.name,
               "--result", str(result)]
        env = dict(os.environ)
        # The worker only introspects; one thread per library keeps two workers from
        # oversubscribing the cores while they import.
        env.setdefault("OMP_NUM_THREADS", "1")
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as exc:
            raise MiningError(f"mining {adapter.name} took longer than {timeout:.0f} s") from exc
        if proc.returncode != 0 or not result.exists():
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-6:]
            raise MiningError(
                f"mining {adapter.name} failed (exit {proc.returncode}): " + " | ".join(tail)
            )
        return LibraryCatalog.from_json(json.loads(result.read_text()))


def build_catalog(
    store: Store,
    libraries: Sequence[str],
    *,
    registry: Registry | None = None,
    refresh: bool = False,
    jobs: int = 2,
    timeout: float = 600.0,
    in_process: bool = False,
    on_event: Callable[[str, str, Any], None] | None = None,
) -> CatalogResult:
    """Mine (or load from the store) the catalogs of ``libraries``.

    A library that is not installed is skipped with a note. ``on_event(kind, library, payload)``
    reports progress: ``"cached"``, ``"start"``, ``"done"``, ``"skip"``. ``in_process`` mines in
    this process instead of child processes (tests, debugging).
    """
    t0 = time.perf_counter()
    registry = registry or Registry()
    store.ensure(CATALOG_SCHEMA, on_mismatch="recreate")
    emit = on_event or (lambda *_: None)
    catalogs: dict[str, LibraryCatalog] = {}
    skipped: dict[str, str] = {}
    todo: list[LibraryAdapter] = []
    for name in libraries:
        adapter = registry.get(name)
        if not adapter.is_installed():
            skipped[name] = f"{adapter.import_name} is not installed; skipped"
            emit("skip", name, skipped[name])
            continue
        version = adapter.version()
        cat = None if refresh else _cached(store, adapter, version)
        if cat is not None:
            catalogs[name] = cat
            emit("cached", name, cat)
        else:
            todo.append(adapter)

    def work(adapter: LibraryAdapter) -> tuple[LibraryAdapter, LibraryCatalog | Exception]:
        emit("start", adapter.name, None)
        try:
            if in_process:
                return adapter, mine_library(adapter, registry)
            return adapter, _run_worker(adapter, timeout)
        except XamtError as exc:
            return adapter, exc

    if todo:
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
            for adapter, outcome in pool.map(work, todo):
                if isinstance(outcome, Exception):
                    skipped[adapter.name] = str(outcome)
                    emit("skip", adapter.name, str(outcome))
                    continue
                _save(store, adapter, outcome)
                catalogs[adapter.name] = outcome
                emit("done", adapter.name, outcome)
    ordered = {n: catalogs[n] for n in libraries if n in catalogs}
    return CatalogResult(ordered, skipped, time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------
def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Options of ``xamt catalog``."""
    parser.add_argument("--libs", default=None,
                        help="comma-separated libraries (default: all that have an adapter)")
    parser.add_argument("--refresh", action="store_true",
                        help="mine again even when the store has this library version")
    parser.add_argument("--jobs", type=int, default=2, help="libraries mined in parallel")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run_command(args: argparse.Namespace) -> int:
    """``xamt catalog``: mine (or load) the catalogs and print counts per library."""
    from rich.console import Console
    from rich.table import Table

    from xamt.store import default_db_path

    registry = Registry()
    libs = parse_library_list(args.libs, registry)
    err = Console(stderr=True)
    status = err.status("mining…") if err.is_terminal else None

    def on_event(kind: str, lib: str, payload: Any) -> None:
        if kind == "start":
            if status is not None:
                status.update(f"mining {lib}…")
            else:
                err.print(f"mining {lib}…")
        elif kind == "done":
            err.print(f"  {lib} {payload.version}: {len(payload.records)} APIs "
                      f"in {payload.seconds:.1f} s")
        elif kind == "cached":
            err.print(f"  {lib} {payload.version}: {len(payload.records)} APIs (cached)")
        elif kind == "skip":
            err.print(f"  [yellow]{lib}: {payload}[/yellow]")

    with Store(default_db_path(args.out)) as store:
        if status is not None:
            with status:
                result = build_catalog(store, libs, registry=registry, refresh=args.refresh,
                                       jobs=args.jobs, on_event=on_event)
        else:
            result = build_catalog(store, libs, registry=registry, refresh=args.refresh,
                                   jobs=args.jobs, on_event=on_event)
    if args.json:
        print(json.dumps(catalog_summary(result), indent=2))
    else:
        table = Table(title=f"Xamt catalog ({default_db_path(args.out)})")
        for col in ("library", "version", "functions", "methods", "classes", "constructed",
                    "total", "alias names", "with signature", "seconds"):
            table.add_column(col, justify="left" if col in ("library", "version") else "right")
        totals = {"function": 0, "method": 0, "class": 0, "constructed": 0, "total": 0}
        for lib, cat in result.catalogs.items():
            c = cat.counts()
            for k in totals:
                totals[k] += c[k]
            table.add_row(lib, cat.version, str(c["function"]), str(c["method"]),
                          str(c["class"]), str(c["constructed"]), str(c["total"]),
                          str(c["alias_names"]), str(c["with_signature"]),
                          "cached" if cat.cached else f"{cat.seconds:.1f}")
        table.add_row("all", "", str(totals["function"]), str(totals["method"]),
                      str(totals["class"]), str(totals["constructed"]), str(totals["total"]),
                      "", "", f"{result.seconds:.1f}")
        _console().print(table)
        for lib, why in result.skipped.items():
            print(f"skipped {lib}: {why}")
    return 0 if result.catalogs else 1


def _console():
    from rich.console import Console

    # a wide table even when stdout is a pipe (rich would use 80 columns)
    return Console(width=None if sys.stdout.isatty() else 120)


def catalog_summary(result: CatalogResult) -> dict[str, Any]:
    return {
        "libraries": {
            lib: {"version": cat.version, "cached": cat.cached, "seconds": round(cat.seconds, 2),
                  "counts": cat.counts(), "compile": cat.info.get("compile"),
                  "devices": cat.info.get("devices"), "notes": cat.info.get("notes", [])}
            for lib, cat in result.catalogs.items()
        },
        "skipped": result.skipped,
        "seconds": round(result.seconds, 2),
    }


def cli_command():
    """The ``catalog`` subcommand for :mod:`xamt.cli`."""
    from xamt.command import Command

    return Command("catalog", "mine the public APIs of each library into the store",
                   configure_parser, run_command)


def _worker_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xamt.catalog")
    parser.add_argument("--worker", required=True, help="library to mine")
    parser.add_argument("--result", required=True, help="file to write the JSON catalog to")
    ns = parser.parse_args(argv)
    registry = Registry()
    adapter = registry.get(ns.worker)
    if not adapter.is_installed():
        raise LibraryNotInstalledError(f"{adapter.import_name} is not installed")
    cat = mine_library(adapter)
    Path(ns.result).write_text(json.dumps(cat.to_json()))
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main())
