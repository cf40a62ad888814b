"""Signatures of mined objects: from ``inspect.signature``; where it fails (or hides parameters
behind ``**kwargs``) from the docstring's signature line(s); where both fail from the adapter's
signature hook (torch: the ATen schema). :func:`extract_signature` says which source it used."""
from __future__ import annotations

import ast
import inspect
import re
from typing import Any, Callable, Sequence

from xamt.catalog.docs import getdoc
from xamt.catalog.records import Param
from xamt.log import get_logger

__all__ = ["parse_signature_text", "doc_signatures", "extract_signature"]

_log = get_logger("catalog")


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
    hook_on_variadic: bool = False, bound_function: bool = False,
) -> tuple[list[Param], str, list[list[Param]]]:
    """(params, source, other overloads) of ``obj``; for methods the receiver is left out.

    ``hook_on_variadic`` also consults ``hook`` when inspection shows only ``*args/**kwargs``
    and the docstring has nothing better. ``bound_function``: ``obj`` is a plain function its
    class binds as a method, so its first positional parameter is the receiver whatever its
    name (a library's function set on its tensor class: ``paddle.Tensor.abs`` is
    ``abs(x, name=None)``).
    """
    doc = getdoc(obj)
    inspected: list[Param] | None = None
    try:
        inspected = _params_from_inspect(inspect.signature(obj))
    except (TypeError, ValueError):
        inspected = None
    if inspected is not None and method and inspected and (
            inspected[0].name in ("self", "a")
            or (bound_function and inspected[0].kind in ("positional_only", "positional_or_keyword"))):
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
