"""Extract the source of Python functions together with everything they use, as standalone code.

Reproducer scripts must run without Xamt installed, yet they convert arrays, call members and
normalise outputs exactly as the fuzzer did. Rather than keeping a second copy of that code,
:func:`standalone_source` collects the *same* functions' source text and, transitively, the
module-level names they reference: other functions and classes (their source), modules (an
``import`` line), third-party objects (a ``from ... import ...`` line) and module-level
assignments (the assignment's own source, found with :mod:`ast`). The result is one block of
code that can be ``exec``'d in a fresh namespace.

Only what the functions reference is taken; names that a function reads from a module that is
part of Xamt but that cannot be found as source (built at run time) raise :class:`ExtractError`.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import sys
import textwrap
import types
from typing import Any, Callable, Iterable

__all__ = ["ExtractError", "standalone_source"]

#: modules whose objects are copied as source; anything else is imported by the script
OWN_PACKAGES = ("xamt",)


class ExtractError(Exception):
    """A function cannot be turned into standalone source."""


def _is_own(module_name: str | None) -> bool:
    return bool(module_name) and any(
        module_name == p or module_name.startswith(p + ".") for p in OWN_PACKAGES)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _node_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


@functools.lru_cache(maxsize=64)
def _module_ast(module_name: str) -> tuple[ast.Module, str]:
    module = sys.modules[module_name]
    source = inspect.getsource(module)
    return ast.parse(source), source


def _assignment_source(module_name: str, name: str) -> tuple[str, set[str]] | None:
    tree, source = _module_ast(module_name)
    for node in tree.body:
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id == name:
                seg = ast.get_source_segment(source, node)
                value = node.value  # type: ignore[union-attr]
                return seg or "", _node_names(value) if value is not None else set()
    return None


class _Collector:
    def __init__(self) -> None:
        self.imports: dict[str, str] = {}
        self.blocks: list[str] = []
        self.done: set[tuple[str, str]] = set()

    def function(self, fn: Callable[..., Any]) -> None:
        fn = inspect.unwrap(fn)
        key = (fn.__module__, fn.__qualname__)
        if key in self.done:
            return
        self.done.add(key)
        if "<locals>" in fn.__qualname__:
            raise ExtractError(f"{fn.__qualname__} is a closure: extract the function that makes it")
        try:
            src = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError) as exc:
            raise ExtractError(f"no source for {fn.__module__}.{fn.__qualname__}: {exc}") from exc
        # inspect reads the file as it is now, at the line numbers of the code loaded at import:
        # if the file changed since (Xamt edited or upgraded while a campaign runs), that is
        # other code; copying it would make a reproducer that runs something else
        changed = (f"the source of {fn.__module__}.{fn.__qualname__} changed since it was imported: "
                   f"restart the process to extract it")
        try:
            tree = ast.parse(src)
        except SyntaxError as exc:
            raise ExtractError(changed) from exc
        first = tree.body[0] if tree.body else None
        if fn.__name__ != "<lambda>" and (
                not isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                or first.name != fn.__name__):
            raise ExtractError(changed)
        for node in ast.walk(tree):  # an import of Xamt in the body would not run without Xamt
            own = ([node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else
                   [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(_is_own(m) for m in own):
                raise ExtractError(f"{fn.__module__}.{fn.__qualname__} imports {own[0]} in its body: "
                                   f"a standalone script cannot (import it at module level)")
        if isinstance(fn, type):
            names = _node_names(tree)
        else:
            # globals the code reads, plus decorators (functools.lru_cache) of the definition
            names = _code_names(fn.__code__)
            for node in tree.body:
                for deco in getattr(node, "decorator_list", []):
                    names |= _node_names(deco)
        g = getattr(fn, "__globals__", None) or vars(sys.modules[fn.__module__])
        self._globals(fn.__module__, g, names)
        self.blocks.append(src)

    def _globals(self, module_name: str, g: dict[str, Any], names: Iterable[str]) -> None:
        for name in sorted(names):
            if name not in g or name.startswith("__") or (
                    hasattr(builtins, name) and g.get(name) is getattr(builtins, name)):
                continue
            obj = g[name]
            owner = getattr(obj, "__module__", None)
            if isinstance(obj, types.ModuleType):
                self.imports[name] = (f"import {obj.__name__}" if obj.__name__ == name
                                      else f"import {obj.__name__} as {name}")
            elif owner == "typing" or owner == "__future__":
                if owner == "typing":
                    self.imports[name] = f"from typing import {name}"
            elif callable(obj) and (isinstance(obj, type) or inspect.isfunction(inspect.unwrap(obj))):
                if _is_own(owner):
                    self.function(obj)
                    real = inspect.unwrap(obj).__name__
                    if real != name:
                        self.blocks.append(f"{name} = {real}\n")
                else:
                    self._import_object(name, obj)
            elif callable(obj) and not _is_own(owner):
                self._import_object(name, obj)
            else:
                key = (module_name, name)
                if key in self.done:
                    continue
                self.done.add(key)
                found = _assignment_source(module_name, name)
                if found is None:
                    raise ExtractError(f"{module_name}.{name}: no module-level assignment to copy")
                seg, used = found
                self._globals(module_name, g, used)
                self.blocks.append(seg + "\n")

    def _import_object(self, name: str, obj: Any) -> None:
        module = getattr(obj, "__module__", None)
        qual = getattr(obj, "__qualname__", getattr(obj, "__name__", None))
        if not module or not qual or "." in qual:
            raise ExtractError(f"cannot import {name!r} ({obj!r}) in a standalone script")
        self.imports[name] = (f"from {module} import {qual}" if qual == name
                              else f"from {module} import {qual} as {name}")


def standalone_source(*functions: Callable[..., Any]) -> str:
    """Source code defining ``functions`` and everything they reference (see module docstring)."""
    c = _Collector()
    for fn in functions:
        c.function(fn)
    head = "\n".join(["from __future__ import annotations", *sorted(set(c.imports.values()))])
    return head + "\n\n" + "\n\n".join(c.blocks)
