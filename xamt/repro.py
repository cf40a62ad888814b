"""Reproducers: one standalone Python script per finding, plus its exact inputs, and their replay.

A reproducer folder holds ``repro.py`` and ``inputs.msgpack``. The script needs numpy, msgpack
and the libraries involved — not Xamt: the glue it needs (each library's numpy conversion, its
compiled, ``out=`` or fill call helper, the output normalisation) is copied into the script by
:mod:`xamt.standalone` from the very functions the fuzzer ran, and every member call is written
out as the literal library call (``torch.sum(G_torch.from_numpy(V[0]), dim=1)``). That call is
the execution layer's own (:mod:`xamt.exec.member`): the renderer has it prepare, convert and
bind the member with hooks that return code instead of values, and prints the ``(target, args,
kwargs)`` it describes, so a script calls a member exactly as the sandbox worker does.

A member placed on a device (``torch.sum@cuda:0``, see :mod:`xamt.fuzz.devices`) gets its
inputs placed there with its adapter's ``place`` hook and runs inside its ``device_scope``; the
script first asks the adapter's ``devices`` hook whether this machine has that device.

The script prints each member's result and ends with exit status **1 when the divergence
reproduces**, 0 when it does not, and 3 when it could not run (a missing library, or a device
this machine does not have). A crash
finding reproduces when the script itself dies from the same signal or runs past its timeout.
:func:`verify` runs a script in a fresh process and reports whether it reproduced.
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import msgpack
import numpy as np

from xamt.libraries.base import resolve_ref
from xamt.exec.member import Hooks, PreparedMember, hook_refs
from xamt.standalone import OWN_PACKAGES, standalone_source

__all__ = ["ReproSpec", "render", "write", "spec_inputs", "verify", "judge_replay", "replay_env", "call_text",
           "VerifyResult", "encode_inputs",
           "decode_inputs", "REPRODUCED", "NOT_REPRODUCED", "CANNOT_RUN"]

REPRODUCED, NOT_REPRODUCED, CANNOT_RUN = 1, 0, 3

_INVOKE = "xamt.libraries.invoke"


# ---------------------------------------------------------------------------------- inputs
def _enc(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        return {"k": "array", "dtype": a.dtype.name, "shape": list(a.shape), "data": a.tobytes()}
    if isinstance(value, np.dtype):
        return {"k": "dtype", "name": value.name}
    if isinstance(value, np.generic):
        return _enc(np.asarray(value))
    if isinstance(value, list):
        return {"k": "list", "items": [_enc(v) for v in value]}
    if isinstance(value, tuple):
        return {"k": "tuple", "items": [_enc(v) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"k": "literal", "value": value}
    raise TypeError(f"cannot write an input of type {type(value).__name__} to a reproducer")


def encode_inputs(values: Mapping[int, Any]) -> bytes:
    """``inputs.msgpack`` content: plain msgpack maps (no extension types), bit-exact arrays."""
    return msgpack.packb({str(k): _enc(v) for k, v in values.items()}, use_bin_type=True)


# The same decoder is pasted into every script (kept here once, as source, and tested).
_DECODER = '''
def _dec(e):
    k = e["k"]
    if k == "array":
        name = e["dtype"]
        if name == "bfloat16":
            import ml_dtypes
            dt = np.dtype(ml_dtypes.bfloat16)
        else:
            dt = np.dtype(name)
        return np.frombuffer(e["data"], dtype=dt).reshape(e["shape"]).copy()
    if k == "dtype":
        if e["name"] == "bfloat16":
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(e["name"])
    if k == "list":
        return [_dec(v) for v in e["items"]]
    if k == "tuple":
        return tuple(_dec(v) for v in e["items"])
    return e["value"]


def load_inputs(path):
    with open(path, "rb") as f:
        raw = msgpack.unpackb(f.read(), raw=False)
    return {int(k): _dec(v) for k, v in raw.items()}
'''


def decode_inputs(blob: bytes) -> dict[int, Any]:
    """Inverse of :func:`encode_inputs` (the decoder the scripts use)."""
    ns: dict[str, Any] = {"np": np, "msgpack": msgpack}
    exec(_DECODER, ns)
    raw = msgpack.unpackb(blob, raw=False)
    return {int(k): ns["_dec"](v) for k, v in raw.items()}


# ---------------------------------------------------------------------------------- rendering
class _Code(str):
    """Source text that ``repr`` leaves as is (so it can sit inside args/kwargs containers)."""

    def __repr__(self) -> str:
        return str(self)


@dataclass
class ReproSpec:
    """What a reproducer runs and what it checks.

    ``calls``: one per member to run, ``(label, member, adapter, values)``; ``values`` are the
    materialised slot values that member gets (the float64 reference run gets upcast ones).
    ``expect``: ``value`` (the ``outlier`` call differs from the ``reference`` call beyond
    ``rtol``/``atol``), ``status`` (``outlier`` raises while ``reference`` returns, or the
    reverse), ``internal`` (``outlier`` raises ``error_type``), ``crash`` (the process dies:
    the crashing call runs last). ``hang_limit``: for a timeout finding, the seconds after which
    the script ends itself with SIGALRM while the last call still runs (a hang reproduces as a
    death by SIGALRM, not as a script that never returns).
    """

    title: str
    header: str
    calls: list[tuple[str, Any, Any, dict[int, Any]]]
    normalisation: str | None
    expect: str
    outlier: int
    reference: int | None = None
    rtol: float = 1e-5
    atol: float = 1e-8
    error_type: str | None = None
    hang_limit: float | None = None
    #: where no member that could be the reference can share the outlier's process (it lives in
    #: another interpreter: MXNet or Chainer in a venv of their own, numpy 1.x there), what the
    #: reference did as the fuzzer recorded it: ``(label, status, value, error_type)``, status
    #: ``ok`` (``value`` its normalised output) or ``raised``. The script compares the outlier's
    #: fresh result with it, and says so
    recorded: tuple[str, str, Any, str | None] | None = None


def _ref_name(ref: str) -> str:
    """The name a glue function is found under in its ``G_<library>`` namespace."""
    return ref.split(":", 1)[1]


def _code_of(value: Any) -> str:
    """``repr`` that Python reads back: ``float('inf')``, not ``inf`` (a float argument of a
    plan, such as ``p=inf``, written as ``repr`` gives is a NameError in the script)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if type(value) is list:
        return "[" + ", ".join(_code_of(v) for v in value) + "]"
    if type(value) is tuple:
        return "(" + ", ".join(_code_of(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if type(value) is dict:
        return "{" + ", ".join(f"{_code_of(k)}: {_code_of(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _args_code(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    parts = [_code_of(a) for a in args] + [f"{k}={_code_of(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _ref_expr(ref: str, imports: set[str]) -> str:
    module, _, qual = ref.partition(":")
    imports.add(f"import {module}")
    return f"{module}.{qual}"


def _array_sources(values: Mapping[int, Any], var: str) -> dict[int, str]:
    """id of each input array → the script's expression for it (``V[0]``, ``V[2][1]``)."""
    out: dict[int, str] = {}
    for slot, value in values.items():
        if isinstance(value, np.ndarray):
            out[id(value)] = f"{var}[{slot}]"
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, np.ndarray):
                    out[id(item)] = f"{var}[{slot}][{i}]"
    return out


def _code_hooks(refs: Mapping[str, Any], values: Mapping[int, Any], var: str, glue: str) -> Hooks:
    """Hooks that write the code of each conversion the worker's hooks make (the functions live
    in the script's ``G_<library>`` namespace under their own names)."""
    arrays = _array_sources(values, var)

    def fn(key: str) -> str:
        return _glue_fn(glue, refs[key])

    def hook(key: str, write: Any) -> Any:  # only the hooks the worker gets
        return write if refs.get(key) else None

    return Hooks(
        from_numpy=lambda a: _Code(f"{fn('from')}({arrays[id(a)]})"),
        dtype=hook("dtype", lambda name: _Code(f"{fn('dtype')}({name!r})")),
        prng_key=hook("prng_key", lambda seed: _Code(f"{fn('prng_key')}({seed!r})")),
        place=hook("place", lambda x, device: _Code(f"{fn('place')}({x}, {device!r})")),
        scope=hook("scope", lambda device: None),  # written around the call (_on_device)
        device=refs.get("device"))


def _source(value: Any, original: Any, source: str) -> Any:
    """A slot value the conversion left as it was: literal when ``repr`` writes it back
    exactly, else read from the inputs file (floats keep their bits, NaN included)."""
    if value is original:
        return value if value is None or isinstance(value, (bool, int, str)) else _Code(source)
    if type(value) is tuple and len(value) == 1 and value[0] is original:  # wrapped in a 1-tuple
        return (_source(original, original, source),)
    return value


def _call_code(member: Any, adapter: Any, values: Mapping[int, Any], var: str, glue: str,
               imports: set[str], glue_fns: set[str]) -> str:
    """The literal library call of ``member`` on slot values ``var[...]``.

    The call is the execution layer's own description (:mod:`xamt.exec.member`: the same hooks,
    fixed-argument and slot conversion and binding the worker runs), made with hooks that
    return code instead of converting; only the printing of the description is done here.
    """
    refs = hook_refs(member, adapter)
    glue_fns |= {ref for key, ref in refs.items() if key != "device" and ref}
    prep = PreparedMember(member, _code_hooks(refs, values, var, glue))
    sources = {s: f"{var}[{s}]" for s in values}

    def own(target: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        glue_fns.add(target)  # a helper of Xamt's (a compiled, out= or fill call): copied as glue
        return f"{_glue_fn(glue, target)}({_args_code(args, kwargs)})"

    code = call_text(prep, values, sources, imports, own)
    if prep.hooks.scope is not None:
        # the call runs in the library's device scope, as in the sandbox worker
        code = f"_on_device({_glue_fn(glue, refs['scope'])}, {prep.hooks.device!r}, lambda: {code})"
    return code


def call_text(prep: PreparedMember, values: Mapping[int, Any], sources: Mapping[int, str],
              imports: set[str], own: Any) -> str:
    """The code of ``prep``'s call on slot ``values``: converted by its (code-writing) hooks,
    bound by its plan, and printed as the library call it is. ``sources``: the expression of
    each slot's value where the conversion leaves it as it was; ``own(target, args, kwargs)``:
    the code for a call through one of Xamt's helpers (compiled, ``out=``, fill)."""
    converted = {s: _source(v, values[s], sources[s]) for s, v in prep.convert(values).items()}
    target, args, kwargs = prep.bind(converted)
    if target == f"{_INVOKE}:call_method":
        method, receiver, *rest = args
        return f"{receiver!r}.{method}({_args_code(rest, kwargs)})"
    if target == f"{_INVOKE}:call_module":
        cls_ref, init_kwargs, *rest = args
        return f"{_ref_expr(cls_ref, imports)}({_args_code((), init_kwargs)})({_args_code(rest, kwargs)})"
    if target == f"{_INVOKE}:call_constructed":
        ref, init_kwargs, *rest = args
        cls_ref, _, method = ref.rpartition(".")
        return (f"{_ref_expr(cls_ref, imports)}({_args_code((), init_kwargs)})"
                f".{method}({_args_code(rest, kwargs)})")
    if _is_own(target):
        return own(target, args, kwargs)
    return f"{_ref_expr(target, imports)}({_args_code(args, kwargs)})"


def _is_own(ref: str) -> bool:
    """Whether ``ref`` names a function of Xamt's (which a script cannot import)."""
    module = ref.partition(":")[0]
    return any(module == p or module.startswith(p + ".") for p in OWN_PACKAGES)


def _glue_fn(glue: str, ref: str) -> str:
    """The script's expression for the glue function ``ref`` (``G_torch.from_numpy``)."""
    return f"{glue}.{_ref_name(ref)}"


def render(spec: ReproSpec) -> str:
    """The reproducer script's text for ``spec``."""
    from xamt.exec.member import normalised_output

    imports: set[str] = set()
    glue_of: dict[str, tuple[str, set[str]]] = {}
    call_lines = []
    env: dict[str, str] = {}
    for _, _, adapter, _ in spec.calls:
        env.update(adapter.script_environment())
    needs: dict[tuple[str, str], str] = {}  # (library, device) -> glue name of its devices hook
    for label, member, adapter, values in spec.calls:
        # every library involved is imported up front: a missing one means "cannot run" (3)
        imports.add(f"import {adapter.import_name}")
        glue_name, fns = glue_of.setdefault(adapter.name, (f"G_{adapter.name}", set()))
        i = input_sets(spec).index(id(values))
        var = f"V{i}" if i else "V"
        code = _call_code(member, adapter, values, var, glue_name, imports, fns)
        call_lines.append((label, adapter.name, glue_name, var, code))
        if member.device not in (None, "cpu") and adapter.devices_ref:
            fns.add(adapter.devices_ref)
            needs[(adapter.name, member.device)] = f"{glue_name}.{_ref_name(adapter.devices_ref)}"
    glue_blocks = []
    for lib, (glue_name, fns) in sorted(glue_of.items()):
        src = standalone_source(*[resolve_ref(r) for r in sorted(fns)])
        glue_blocks.append(f"# --- {lib}: conversion and call helpers, as the fuzzer ran them ---\n"
                           f"{glue_name} = _glue({src!r})\n")
    norm_src = standalone_source(normalised_output)
    lines = [
        "#!/usr/bin/env python3",
        '"""' + spec.title.replace('"""', "'''") + "\n\n" + spec.header.replace('"""', "'''").rstrip()
        + "\n\nExit status: 1 = the divergence reproduces, 0 = it does not, 3 = cannot run.\n"
        + '"""',
        "import os", "import signal", "import sys", "import traceback", "import types", "",
        *([f"os.environ.update({dict(sorted(env.items()))!r})  # as the fuzzer's workers ran", ""]
          if env else []),
        "import msgpack", "import numpy as np", "",
        "try:",
        *[f"    {imp}" for imp in sorted(imports)],
        "except ImportError as exc:",
        "    print(f'cannot run: {exc}')",
        "    sys.exit(3)",
        "",
        "# The calls, in the order they run. V is the input (slot -> value, from inputs.msgpack);",
        "# G_<library> holds that library's numpy conversion, as the fuzzer ran it (defined below).",
        "CALLS = [",
    ]
    for label, lib, glue_name, var, code in call_lines:
        lines.append(f"    ({label!r}, lambda: {glue_name}, lambda: {code}),")
    lines += [
        "]",
        f"NORMALISE = {spec.normalisation!r}  # how outputs are reduced before comparing",
        f"EXPECT, OUTLIER, REFERENCE = {spec.expect!r}, {spec.outlier!r}, {spec.reference!r}",
        f"RTOL, ATOL, ERROR_TYPE = {spec.rtol!r}, {spec.atol!r}, {spec.error_type!r}",
        f"HANG_LIMIT = {None if spec.hang_limit is None else int(max(1, -(-spec.hang_limit // 1)))!r}"
        "  # seconds the last call may run before SIGALRM ends the script (a hang finding)",
        "",
        "# ---------------------------------------------------------------- machinery (generated)",
        "",
        "def _cannot_run(kind, value, tb):",
        "    traceback.print_exception(kind, value, tb)",
        "    print('cannot run: the script itself failed', flush=True)",
        "    sys.stderr.flush()",
        "    os._exit(3)",
        "",
        "",
        "sys.excepthook = _cannot_run  # exit status 1 means 'reproduced', never 'crashed'",
        "",
        "",
        "def _on_device(scope, device, call):",
        "    with scope(device):",
        "        return call()",
        "",
        _DECODER.strip(), "",
        "",
        "def _glue(source):",
        "    ns = {}",
        "    exec(compile(source, '<glue>', 'exec'), ns)",
        "    return types.SimpleNamespace(**{k: v for k, v in ns.items() if not k.startswith('__')})",
        "",
        "",
        f"N = _glue({norm_src!r})",
        *glue_blocks,
        *_device_check(needs),
        "HERE = os.path.dirname(os.path.abspath(__file__))",
        "V = load_inputs(os.path.join(HERE, 'inputs.msgpack'))",
    ]
    for i in range(1, len(input_sets(spec))):
        lines.append(f"V{i} = load_inputs(os.path.join(HERE, 'inputs{i}.msgpack'))")
    if spec.recorded is not None:
        label, status, _, etype = spec.recorded
        n = len(input_sets(spec))
        value = f"load_inputs(os.path.join(HERE, 'inputs{n}.msgpack'))[0]" if status == "ok" else "None"
        lines += ["# the reference cannot run in this process (another interpreter): what it did, as the",
                  "# fuzzer recorded it",
                  f"RECORDED = ({status!r}, {value}, {etype!r})",
                  f"RECORDED_LABEL = {label!r}"]
    else:
        lines += ["RECORDED = RECORDED_LABEL = None"]
    lines += ["", textwrap.dedent(_RUNNER).strip(), ""]
    return "\n".join(lines)


def _device_check(needs: Mapping[tuple[str, str], str]) -> list[str]:
    """Script lines that stop with "cannot run" (3) when this machine lacks a device a call
    needs: a replay elsewhere must not read as "does not reproduce"."""
    if not needs:
        return []
    lines = ["# devices the calls need: without one this script cannot run here"]
    for (lib, device), hook in sorted(needs.items()):
        lines += [
            f"_have = [str(d) for d in {hook}()]",
            f"if {device!r} not in _have:",
            f"    print(f\"cannot run here: {lib} has no device {device} on this machine (it has: {{', '.join(_have)}})\")",
            "    sys.exit(3)",
        ]
    return lines + [""]


_RUNNER = '''
def show(value):
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)} {np.array2string(value, threshold=50, precision=9)}"
    return repr(value)


def differs(a, b):
    """True when output a differs from b beyond RTOL/ATOL (NaN equals NaN, shapes must match)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
            return True
        return any(differs(x, y) for x, y in zip(a, b))
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return a != b
    if a.shape != b.shape:
        return True
    x = a.astype(np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64)
    y = b.astype(x.dtype)
    return not np.isclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True).all()


results = []
print("inputs:")
for slot, value in V.items():
    print(f"  slot {slot}: {show(value)}")
for i, (label, glue, call) in enumerate(CALLS):
    if EXPECT == "crash" and HANG_LIMIT and i == len(CALLS) - 1:
        # the default SIGALRM action ends the process even while a C call holds the interpreter
        print(f"{label}: expected to hang; SIGALRM ends this script after {HANG_LIMIT} s", flush=True)
        signal.alarm(HANG_LIMIT)
    try:
        out = N.normalised_output(call(), glue().to_numpy, NORMALISE)
        results.append(("ok", out, None))
        print(f"{label}: {show(out)}")
    except NameError:  # the script's own mistake, never the library's answer: cannot run
        raise
    except Exception as exc:
        name = type(exc).__module__ + "." + type(exc).__qualname__
        results.append(("raised", None, name))
        print(f"{label}: raised {type(exc).__name__}: {str(exc)[:500]}")

o = results[OUTLIER]
r = results[REFERENCE] if REFERENCE is not None else RECORDED
if REFERENCE is None and RECORDED is not None:
    print(f"{RECORDED_LABEL}: " + (show(RECORDED[1]) if RECORDED[0] == "ok" else f"raised {RECORDED[2]}"))
if EXPECT == "value":
    reproduced = o[0] == "ok" and r is not None and r[0] == "ok" and differs(o[1], r[1])
elif EXPECT == "status":
    reproduced = r is not None and (o[0] == "ok") != (r[0] == "ok")
elif EXPECT == "internal":
    reproduced = o[0] == "raised" and (ERROR_TYPE is None or o[2].endswith(ERROR_TYPE.split(".")[-1]))
else:  # crash: the process should not get here
    reproduced = False
print("REPRODUCED" if reproduced else "NOT REPRODUCED")
sys.exit(1 if reproduced else 0)
'''


def input_sets(spec: ReproSpec) -> list[int]:
    """Distinct value sets of the calls (by identity), in first-use order: file i holds set i."""
    return list(dict.fromkeys(id(values) for _, _, _, values in spec.calls))


def spec_inputs(spec: ReproSpec) -> list[Mapping[int, Any]]:
    """The value sets :func:`write` must store for ``spec``, in file order (a recorded
    reference's output last)."""
    by_id = {id(values): values for _, _, _, values in spec.calls}
    out: list[Mapping[int, Any]] = [by_id[i] for i in input_sets(spec)]
    if spec.recorded is not None and spec.recorded[1] == "ok":
        out.append({0: spec.recorded[2]})
    return out


def write(folder: str | Path, script: str, inputs: Sequence[Mapping[int, Any]]) -> Path:
    """Write ``repro.py`` and its input files (``inputs.msgpack``, ``inputs1.msgpack``...);
    ``inputs`` in the order :func:`spec_inputs` gives."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for i, values in enumerate(inputs):
        (folder / ("inputs.msgpack" if i == 0 else f"inputs{i}.msgpack")).write_bytes(encode_inputs(values))
    path = folder / "repro.py"
    path.write_text(script, encoding="utf-8")
    path.chmod(0o755)
    return path


@dataclass
class VerifyResult:
    """What replaying a reproducer in a fresh process showed."""

    reproduced: bool
    returncode: int | None
    timed_out: bool
    seconds: float
    output_tail: str


def replay_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a reproducer is replayed in: ours, with single-threaded libraries (the
    conditions the sandbox workers ran under) and faulthandler on."""
    full_env = dict(os.environ)
    full_env.update({"OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2",
                     "PYTHONFAULTHANDLER": "1"})
    full_env.update(env or {})
    return full_env


def judge_replay(expect: str, rc: int | None, timed_out: bool, stdout: bytes, stderr: bytes,
                 seconds: float, crash_signal: int | None = None) -> VerifyResult:
    """The verdict on one replay of a script (its exit status, or a timeout, and its output)."""
    tail = (stdout + stderr)[-4000:].decode("utf-8", "replace")
    if timed_out:
        return VerifyResult(expect == "crash" and crash_signal == 0, None, True, seconds, tail)
    assert rc is not None
    if expect == "crash":
        died = rc < 0 and (crash_signal in (None, 0) or -rc == crash_signal)
        if crash_signal is None and rc < 0 and -rc in (signal.SIGKILL,):
            died = True
        return VerifyResult(bool(died), rc, False, seconds, tail)
    # exit status 1 alone is not enough (a script Python cannot even compile exits 1 too):
    # the script's own verdict line must say so
    reproduced = rc == REPRODUCED and "\nREPRODUCED" in "\n" + stdout.decode("utf-8", "replace")
    return VerifyResult(reproduced, rc, False, seconds, tail)


#: data bytes a fresh interpreter's imports may take on top of a replay's ``memory_limit``
#: (the limit is set on the process as a whole, before it imported anything)
IMPORT_ALLOWANCE = 2 << 30


def verify(script: str | Path, *, expect: str, timeout: float = 120.0,
           env: Mapping[str, str] | None = None, crash_signal: int | None = None,
           python: str | None = None, memory_limit: int | None = None) -> VerifyResult:
    """Run ``script`` with this interpreter (or ``python``: the outlier's runtime's, a venv's) in
    a fresh process and judge the result.

    For ``expect="crash"`` the script reproduces when it dies from ``crash_signal`` (any signal
    when None), or runs past ``timeout`` when ``crash_signal`` is 0 (a timeout finding).
    ``memory_limit``: the process's data size may not pass it plus :data:`IMPORT_ALLOWANCE`
    (``RLIMIT_DATA``, set as it starts): a reproducer runs outside the sandbox, and one that
    asked for 2^31 bins held 16 GiB of a 24 GiB machine during a campaign.
    (:class:`xamt.replay.ReplayServer` does the same without paying the libraries' import.)
    """
    # absolute: the script runs with its own folder as the working directory, where a path
    # relative to ours (``xamt-out/findings/...``, as `make fuzz` gives) would not be found
    script = Path(script).resolve()
    start = time.monotonic()
    # the command is exactly ``python repro.py``; the limit is put on the child from outside
    # (a preexec_fn would run Python in a fork of a threaded process)
    with subprocess.Popen([python or sys.executable, str(script)], cwd=script.parent, env=replay_env(env),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        if memory_limit is not None:
            _limit_data(proc.pid, memory_limit + IMPORT_ALLOWANCE)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            return judge_replay(expect, None, True, stdout or b"", stderr or b"",
                                time.monotonic() - start, crash_signal)
    return judge_replay(expect, proc.returncode, False, stdout, stderr, time.monotonic() - start, crash_signal)


def _limit_data(pid: int, limit: int) -> None:
    import resource

    try:
        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))
    except (OSError, ValueError):  # gone already, or a platform without prlimit: unlimited
        pass
