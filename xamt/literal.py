"""Literal reproducers: a few lines a maintainer can paste, with the input written out.

A finding whose minimised input holds at most :data:`MAX_ELEMENTS` elements gets a ``repro.py``
that needs neither Xamt nor a data file: its arrays are written as ``np.array([...],
dtype=...)``, and it calls the outlier and one reference directly through the libraries' public
APIs (the adapters' ``literal_*`` forms: ``torch.from_numpy(x0)``, ``jax.jit(...)``). The call
itself is the execution layer's description of the member (:func:`xamt.repro.call_text`), so it
calls the API exactly as the sandbox did. The script prints what each side returns and exits 1
when the divergence reproduces, 0 when it does not.

:func:`render` returns None when a finding cannot be written so: too many elements, a dtype with
no literal (bfloat16), a member on a device, a call through ``out=`` or a fill helper, an output
normalisation without a literal form (:data:`xamt.exec.normalise.LITERAL_FORMS`), or a library
without literal forms. Then the finding keeps the msgpack form
(:mod:`xamt.repro`); either form is replayed in a fresh process before filing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from xamt.exec.member import Hooks, PreparedMember
from xamt.exec.normalise import LITERAL_FORMS
from xamt.repro import _Code, _args_code, call_text

__all__ = ["LiteralCall", "render", "render_or_why", "MAX_ELEMENTS", "MAX_LINES"]

#: the most input elements a literal reproducer writes out
MAX_ELEMENTS = 256
#: the most lines a literal reproducer may have; a longer one keeps the msgpack form
MAX_LINES = 30
#: dtypes numpy writes and reads back exactly by name
_LITERAL_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                   "float16", "float32", "float64", "complex64", "complex128"}


class NotLiteral(Exception):
    """The finding has no literal form (why in the message)."""


@dataclass
class LiteralCall:
    """One call of a literal reproducer: its label, the member, its adapter, its slot values."""

    label: str
    member: Any
    adapter: Any
    values: Mapping[int, Any]


def _number(x: Any) -> str:
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, complex):
        return f"complex({_number(x.real)}, {_number(x.imag)})"
    if isinstance(x, float):
        if math.isnan(x):
            return "np.nan"
        if math.isinf(x):
            return "np.inf" if x > 0 else "-np.inf"
        return repr(x)
    return repr(x)


def _nested(x: Any) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(_nested(v) for v in x) + "]"
    return _number(x)


def array_literal(a: np.ndarray) -> str:
    """``a`` as source that builds the same array, bit for bit (NaN payloads aside)."""
    name = a.dtype.name
    if name not in _LITERAL_DTYPES:
        raise NotLiteral(f"no literal for dtype {name}")
    if a.size == 0:
        return f"np.zeros({a.shape!r}, dtype=np.{name})"
    return f"np.array({_nested(a.tolist())}, dtype=np.{name})"


def _value_literal(v: Any) -> str:
    """A slot value that is no array, as source (Python numbers exactly; NaN and inf by name)."""
    if v is None or isinstance(v, (bool, int, str)):
        return repr(v)
    if isinstance(v, (float, complex)):
        return _number(v)
    if isinstance(v, np.dtype):
        return f"np.dtype({v.name!r})"
    if isinstance(v, np.generic):
        return _number(v.item())
    if isinstance(v, (list, tuple)) and all(not isinstance(x, np.ndarray) for x in v):
        inner = ", ".join(_value_literal(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    raise NotLiteral(f"no literal for a {type(v).__name__}")


class _Names:
    """Variables for the input arrays (``x0``, ``x1``...), shared by every call of a script:
    one array object, one variable."""

    def __init__(self) -> None:
        self.by_id: dict[int, str] = {}
        self.arrays: list[tuple[str, np.ndarray]] = []
        self.lines: list[str] = []
        self.elements = 0

    def of(self, a: np.ndarray) -> str:
        name = self.by_id.get(id(a))
        if name is not None:
            return name
        # a float64 reference's input is an earlier array upcast: say so, not its values again
        for other, b in self.arrays:
            if (a.dtype.kind in "fc" and a.dtype.itemsize > b.dtype.itemsize and a.shape == b.shape
                    and b.dtype.kind in "fc" and np.array_equal(b.astype(a.dtype), a, equal_nan=True)):
                name = self.by_id[id(a)] = f"{other}.astype(np.{a.dtype.name})"
                return name
        name = self.by_id[id(a)] = f"x{len(self.arrays)}"
        self.arrays.append((name, a))
        self.lines.append(f"{name} = {array_literal(a)}")
        self.elements += a.size
        if self.elements > MAX_ELEMENTS:
            raise NotLiteral(f"more than {MAX_ELEMENTS} input elements")
        return name


def _call(call: LiteralCall, names: _Names, imports: set[str]) -> str:
    member, adapter, values = call.member, call.adapter, call.values
    if member.device not in (None, "cpu"):
        raise NotLiteral("a member on a device")
    if not adapter.literal_array:
        raise NotLiteral(f"{adapter.name} has no literal forms")
    imports.update(adapter.literal_imports)

    def fmt(template: str | None, arg: Any, what: str) -> _Code:
        if not template:
            raise NotLiteral(f"{adapter.name} has no literal {what}")
        return _Code(template.format(arg))

    made: set[str] = set()  # the code of every converted input array

    def array(a: np.ndarray) -> _Code:
        code = fmt(adapter.literal_array, names.of(a), "array")
        made.add(str(code))
        return code

    def is_array(v: Any) -> bool:
        if isinstance(v, (list, tuple)) and any(is_array(x) for x in v):
            raise NotLiteral("a list of arrays into a compiled call")
        return isinstance(v, _Code) and str(v) in made

    hooks = Hooks(from_numpy=array,
                  dtype=(lambda n: fmt(adapter.literal_dtype, n, "dtype")) if adapter.dtype_ref else None,
                  prng_key=(lambda seed: fmt(adapter.literal_prng_key, int(seed), "PRNG key"))
                  if adapter.prng_key_ref else None)
    prep = PreparedMember(member, hooks)
    sources: dict[int, str] = {}
    for slot, v in values.items():
        if isinstance(v, np.ndarray):
            sources[slot] = names.of(v)
        elif isinstance(v, list) and v and all(isinstance(a, np.ndarray) for a in v):
            sources[slot] = "[" + ", ".join(names.of(a) for a in v) + "]"
        else:
            sources[slot] = _value_literal(v)

    def own(target: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        if member.call != "compiled" or not adapter.literal_compile:
            raise NotLiteral(f"a {member.call} call through {target}")
        fn, *rest = args  # (the API's "module:qualname", then its arguments)
        module, _, qual = str(fn).partition(":")
        imports.add(f"import {module}")
        # array arguments are the compiled function's parameters; the rest are constants, as
        # the fuzzer traced them (xamt.libraries._compile)
        params = [f"a{i}" for i, a in enumerate(rest) if is_array(a)]
        it = iter(params)
        inner = [(_Code(next(it)) if is_array(a) else a) for a in rest]
        kw_params = {k: f"k_{k}" for k, v in kwargs.items() if is_array(v)}
        inner_kw = {k: (_Code(kw_params[k]) if k in kw_params else v) for k, v in kwargs.items()}
        lam = (f"lambda {', '.join([*params, *kw_params.values()])}: "
               f"{module}.{qual}({_args_code(inner, inner_kw)})")
        compiled = adapter.literal_compile.format(lam)
        outer = [a for a in rest if is_array(a)] + [kwargs[k] for k in kw_params]
        return f"({compiled})({_args_code(outer, {})})"

    return call_text(prep, values, sources, imports, own)


_RUN = '''
def run(call):  # the outputs as numpy arrays, or the exception raised
    try: out = call()
    except NameError: raise  # a mistake of this script's, never the library's answer
    except Exception as exc: return exc
    return [np.asarray(a) for a in (out if isinstance(out, (tuple, list)) else [out])]
'''

#: the last lines, per kind of finding: ``differs`` says whether it reproduces
_VERDICT = {
    "value": ("differs = not isinstance(got, Exception) and not isinstance(want, Exception) and ("
              "len(got) != len(want) or any(a.shape != b.shape or not np.allclose("
              "a.astype(np.complex128), b.astype(np.complex128), rtol={rtol!r}, atol={atol!r}, "
              "equal_nan=True) for a, b in zip(got, want)))"),
    "status": "differs = isinstance(got, Exception) != isinstance(want, Exception)",
    "internal": "differs = isinstance(got, Exception) and type(got).__name__ == {error!r}",
}


def render(title: str, outlier: LiteralCall, reference: LiteralCall | None, *, expect: str,
           rtol: float = 1e-5, atol: float = 1e-8, error_type: str | None = None,
           hang_limit: float | None = None, normalisation: str | None = None) -> str | None:
    """The literal reproducer's text, or None when this finding has none (see the module
    docstring; :func:`render_or_why` says why). ``expect``: ``value``, ``status`` (one side
    raises, the other returns), ``internal`` (the outlier raises ``error_type``) or ``crash``
    (the outlier's call kills the process, or hangs past ``hang_limit`` seconds)."""
    return render_or_why(title, outlier, reference, expect=expect, rtol=rtol, atol=atol,
                         error_type=error_type, hang_limit=hang_limit, normalisation=normalisation)[0]


def render_or_why(title: str, outlier: LiteralCall, reference: LiteralCall | None, *, expect: str,
                  rtol: float = 1e-5, atol: float = 1e-8, error_type: str | None = None,
                  hang_limit: float | None = None, normalisation: str | None = None
                  ) -> tuple[str | None, str]:
    """:func:`render`'s text and ``""``, or None and why there is no literal form (a finding
    keeps the reason, so a msgpack reproducer says why it is one)."""
    if expect != "crash" and reference is None:
        return None, "no reference member to call"
    norm = "v"
    for name in (normalisation or "none").split("|"):
        form = LITERAL_FORMS.get(name)
        if form is None:
            return None, f"no literal form of the output normalisation {name!r}"
        norm = form.format(v=norm)
    names, imports = _Names(), {"import sys", "import numpy as np"}
    try:
        got = _call(outlier, names, imports)
        want = _call(reference, names, imports) if reference is not None else None
    except NotLiteral as exc:
        return None, str(exc)
    except Exception as exc:  # a member the plan cannot bind without the glue: keep the msgpack form
        return None, f"the call cannot be written out: {type(exc).__name__}: {exc}"[:200]
    env = {}
    for call in (outlier, reference):
        if call is not None:
            env.update(call.adapter.script_environment())
    lines = [f'"""{title}', 'Exit status: 1 = the divergence reproduces, 0 = it does not."""']
    if env:  # as the fuzzer's workers had it, whatever the caller's environment says
        lines += ["import os", f"os.environ.update({dict(sorted(env.items()))!r})"]
    lines += ["import sys", "import numpy as np"]
    modules = sorted(i.split()[1] for i in imports if i not in ("import sys", "import numpy as np"))
    # importing a submodule binds its package: `import jax` goes where `import jax.numpy` is
    modules = [m for m in modules if not any(o.startswith(m + ".") for o in modules)]
    if modules:
        lines.append("import " + ", ".join(modules))
    lines += names.lines
    if expect == "crash":
        if hang_limit:
            lines += ["import signal", "", f"signal.alarm({int(math.ceil(hang_limit))})  "
                      "# a hang: SIGALRM ends the script"]
        lines += [f"print({outlier.label!r}, 'runs; the process dies (or hangs) in it', flush=True)",
                  got, "print('NOT REPRODUCED')", "sys.exit(0)"]
    else:
        verdict = _VERDICT.get(expect)
        if verdict is None:
            return None, f"no literal verdict for a {expect!r} finding"
        call = (lambda code: f"run(lambda: {code})") if norm == "v" else (lambda code: f"norm(run(lambda: {code}))")
        lines += ["", _RUN.strip("\n")]
        if norm != "v":  # the group's output normalisation, as the fuzzer compared
            lines.append(f"def norm(v): return v if isinstance(v, Exception) else {norm}")
        lines += ["", f"got = {call(got)}", f"want = {call(want)}",
                  f"print({outlier.label + ':'!r}, got)", f"print({reference.label + ':'!r}, want)",
                  verdict.format(rtol=rtol, atol=atol, error=(error_type or "").split(".")[-1]),
                  'print("REPRODUCED" if differs else "NOT REPRODUCED")',
                  "sys.exit(1 if differs else 0)"]
    text = "\n".join(lines) + "\n"
    if text.count("\n") > MAX_LINES:
        return None, f"{text.count(chr(10))} lines, more than {MAX_LINES}"
    return text, ""
