"""PyTorch adapter."""
from __future__ import annotations

import functools
import os
import shutil
from typing import Any

from xamt.libraries.base import (
    ClassNamespace, ConstructedNamespace, FillNamespace, LibraryAdapter, MethodOwner, ParamSpec,
    resolve_ref, same_dtype_names,
)

__all__ = [
    "adapter", "from_numpy", "to_numpy", "dtype", "devices", "place", "device_scope",
    "call_with_out", "call_filling", "call_compiled", "compile_available", "compile_backend",
    "signature_from_schema", "BACKEND_VARIABLE",
]

# torch dtype attribute name -> numpy dtype name
_DTYPES = same_dtype_names()

#: Tensor methods that are autograd/storage/device plumbing or conversions, not operations
_METHOD_PLUMBING = frozenset({
    "backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad",
    "requires_grad_", "cpu", "cuda", "xpu", "ipu", "mtia", "to", "numpy", "tolist", "storage",
    "untyped_storage", "storage_type", "storage_offset", "data_ptr", "const_data_ptr",
    "element_size", "pin_memory", "is_pinned", "share_memory_", "is_shared", "record_stream",
    "get_device", "type", "module_load", "reinforce", "apply_", "map_", "map2_", "as_subclass",
    "dim_order", "is_inference", "to_mkldnn", "new", "set_", "resize_", "resize_as_",
    "detach_", "copy_", "q_per_channel_axis", "q_per_channel_scales", "q_per_channel_zero_points",
    "q_scale", "q_zero_point", "qscheme", "int_repr", "dequantize", "smm", "sspaddmm",
    "is_set_to", "is_distributed", "coalesce", "is_coalesced", "indices", "values",
    "crow_indices", "col_indices", "ccol_indices", "row_indices", "sparse_dim", "dense_dim",
    "sparse_mask", "sparse_resize_", "sparse_resize_and_clear_", "to_sparse", "to_sparse_bsc",
    "to_sparse_bsr", "to_sparse_coo", "to_sparse_csc", "to_sparse_csr", "to_dense",
    "to_padded_tensor", "fix_", "share_memory", "refine_names", "rename", "rename_",
    "align_as", "align_to", "has_names", "is_meta",
})


def from_numpy(array: Any) -> Any:
    """numpy array → CPU tensor (a copy; bfloat16 goes through its int16 bit pattern)."""
    import numpy as np
    import torch

    arr = np.asarray(array)
    if arr.dtype.name == "bfloat16":
        # np.array, not np.ascontiguousarray: the latter makes a 0-d array 1-d
        bits = torch.from_numpy(np.array(arr, copy=True, order="C").view(np.int16))
        return bits.view(torch.bfloat16)
    return torch.from_numpy(np.array(arr, copy=True))


def to_numpy(value: Any) -> Any:
    """Tensor (any device) → numpy array; bfloat16 comes back as ml_dtypes.bfloat16; a
    ``torch.dtype`` → its numpy-style name (``"float32"``)."""
    import numpy as np
    import torch

    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, torch.Tensor):
        t = value.detach().resolve_conj().resolve_neg().cpu()
        if t.dtype == torch.bfloat16:
            import ml_dtypes

            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()
    return np.asarray(value)


def dtype(name: str) -> Any:
    import torch

    return getattr(torch, name)


def devices() -> list[str]:
    import torch

    found = ["cpu"]
    if torch.cuda.is_available():
        found += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    return found


def place(value: Any, device: str) -> Any:
    """A tensor moved onto ``device`` (``cpu``, ``cuda:0``); other values as they are."""
    import torch

    return value.to(device) if isinstance(value, torch.Tensor) else value


def device_scope(device: str) -> Any:
    """``torch.device`` as a context: factory functions inside create tensors on ``device``."""
    import torch

    return torch.device(device)


def call_with_out(target: str, *args: Any, **kwargs: Any) -> Any:
    """Call ``target`` to learn the result's layout, then again into a preallocated ``out=``."""
    import torch

    fn = resolve_ref(target)
    first = fn(*args, **kwargs)
    out = torch.empty_like(first)
    return fn(*args, out=out, **kwargs)


def call_filling(target: str, shape: Any, *args: Any, **kwargs: Any) -> Any:
    """Make a float32 tensor of ``shape`` (zeros: the fill overwrites them) and call ``target``
    on it (``torch.nn.init.kaiming_uniform_(tensor, ...)`` fills it in place and returns it)."""
    import torch

    size = (int(shape),) if isinstance(shape, (int, float)) else tuple(int(s) for s in shape)
    return resolve_ref(target)(torch.zeros(size, dtype=torch.float32), *args, **kwargs)


@functools.cache
def _persistent_precompiled_headers() -> None:
    """Keep Inductor's precompiled C++ headers in its cache folder when one is configured.

    Inductor places them under the temporary folder current when it is first imported; a sandbox
    worker's temporary folder is emptied after every task, so each compilation would rebuild the
    150 MB header. With ``TORCHINDUCTOR_CACHE_DIR`` set they live (and are reused) there.
    """
    import os

    if not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return
    try:  # private module layout: without it, headers are rebuilt per task (slower, not wrong)
        from torch._inductor import codecache
        from torch._inductor.runtime.cache_dir_utils import cache_dir
    except ImportError:
        return
    headers = os.path.join(cache_dir(), "precompiled_headers")
    if hasattr(codecache, "_HEADER_DIR"):
        codecache._HEADER_DIR = headers
        codecache._HEADER_LOCK_DIR = os.path.join(headers, "locks")


def warm_compiler() -> None:
    """The zygote's warm-up (``zygote_warmup``): import ``torch.compile``'s Dynamo and Inductor
    and let Inductor pick the CPU's vector instruction set, which it probes by compiling a test
    program and loading it in a subprocess, then remembers per process. Done once here, a
    fresh worker's first ``torch.compile`` takes 0.4 s instead of 3 s (warm disk cache,
    measured on this project's 2-core machine). It starts no thread and runs no torch op."""
    import importlib

    for name in ("torch._dynamo", "torch._functorch.aot_autograd", "torch._inductor.compile_fx",
                 "torch._inductor.codecache"):
        importlib.import_module(name)
    try:  # private module: without it, each worker probes in its first compilation (slower, not wrong)
        from torch._inductor.cpu_vec_isa import pick_vec_isa
    except ImportError:
        return
    _persistent_precompiled_headers()
    pick_vec_isa()


BACKEND_VARIABLE = "XAMT_TORCH_COMPILE_BACKEND"


def compile_backend() -> str:
    """The ``torch.compile`` backend of this process: ``inductor`` (the default; what a campaign
    tests), or ``aot_eager``, set by ``validation.toml``'s ``[build_environment]`` for the
    registry build's workers: Dynamo captures the graph and AOTAutograd traces it as with
    Inductor, and the traced ATen graph runs eagerly, without Inductor's C++ code generation
    and compiler runs (seconds of CPU per API, dtype and shape)."""
    value = os.environ.get(BACKEND_VARIABLE, "inductor")
    if value not in ("inductor", "aot_eager"):
        raise ValueError(f"{BACKEND_VARIABLE} must be 'inductor' or 'aot_eager', not {value!r}")
    return value


#: signatures (shapes, dtypes, constants) dynamo may compile per target in one process
_RECOMPILE_LIMIT = 1 << 16


@functools.lru_cache(maxsize=256)
def _compiled(target: str) -> Any:
    import torch

    _persistent_precompiled_headers()
    fn = resolve_ref(target)

    def call(*a: Any, **k: Any) -> Any:
        return fn(*a, **k)

    # torch.compile keys its cache on the code object, and every closure made here shares one:
    # after 8 targets dynamo would hit its recompile limit and silently run eager. A code object
    # of its own per target keeps each compiled.
    call.__code__ = call.__code__.replace(co_name=f"xamt_compiled_{len(target)}_{abs(hash(target))}")
    # dynamo also stops compiling a code object after recompile_limit (8) signatures and then
    # runs it eagerly without a word: from a target's 9th shape or dtype in a worker, an
    # eager-vs-compiled group compared eager with eager. How many signatures compile is the
    # campaign's schedule's business (the compiled share of time), not this limit's
    config = torch._dynamo.config
    config.recompile_limit = max(config.recompile_limit, _RECOMPILE_LIMIT)
    config.accumulated_recompile_limit = max(config.accumulated_recompile_limit, _RECOMPILE_LIMIT)
    return torch.compile(call, dynamic=False, backend=compile_backend())


def call_compiled(target: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``target`` through ``torch.compile`` (inductor on CPU, or :func:`compile_backend`)."""
    return _compiled(target)(*args, **kwargs)


_CLOCK = [0, 0.0]  # entries of Dynamo's compile-time list counted so far, and their sum


def compile_seconds() -> float:
    """The adapter's ``compile_clock_ref``: seconds this process has spent in ``torch.compile``'s
    compilations (Dynamo's own per-frame count, Inductor's code generation or cache loads
    inside), read from ``torch._dynamo.utils`` once Dynamo is loaded (never imported here)."""
    import sys

    utils = sys.modules.get("torch._dynamo.utils")
    times = getattr(utils, "compilation_time_metrics", {}).get("_compile.compile_inner") if utils else None
    if times is None:  # private API: without it, no compile time is counted (not wrong, less known)
        return _CLOCK[1]
    if len(times) < _CLOCK[0]:  # reset by torch._dynamo.reset()
        _CLOCK[0] = 0
    _CLOCK[1] += float(sum(times[_CLOCK[0]:]))
    _CLOCK[0] = len(times)
    return _CLOCK[1]


def compile_available() -> tuple[bool, str]:
    """Whether ``torch.compile`` can run here: dynamo supported and a C compiler for inductor."""
    import torch

    try:
        supported = bool(torch._dynamo.is_dynamo_supported())
    except Exception as exc:  # private API: a missing or failing probe means "unknown → no"
        return False, f"torch._dynamo check failed: {exc}"
    if not supported:
        return False, "torch._dynamo is not supported on this Python"
    if not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")):
        return False, "no C compiler for inductor"
    return True, "torch.compile (inductor, CPU)"


def signature_from_schema(obj: Any, name: str, owner: str | None) -> list[list[ParamSpec]] | None:
    """Signatures of a builtin from its ATen schema (``torch.ops.aten.<name>``).

    Python bindings name the first tensor ``input`` where the schema says ``self``; for tensor
    methods ``self`` is the receiver and is left out (the catalog adds the receiver itself).
    ``*_out`` overloads are dropped: the ``out=`` keyword shows up in the plain overloads' Python
    form and the out variant is a relation of its own.
    """
    import torch

    op_name = getattr(obj, "__name__", None) or name
    packet = getattr(torch.ops.aten, op_name, None)
    if packet is None:
        return None
    try:
        overload_names = packet.overloads()
    except Exception:  # some packets refuse to list overloads; no schema then
        return None
    result: list[list[ParamSpec]] = []
    for ov in overload_names:
        if ov == "out" or ov.endswith("_out"):
            continue
        try:
            schema = getattr(packet, ov)._schema
        except Exception:
            continue
        params: list[ParamSpec] = []
        for arg in schema.arguments:
            arg_name = arg.name
            if arg_name == "self":
                if owner is not None:
                    continue
                arg_name = "input"
            kind = "keyword_only" if arg.kwarg_only else "positional_or_keyword"
            default = repr(arg.default_value) if arg.has_default_value() else None
            params.append((arg_name, kind, default, str(arg.type)))
        result.append(params)
    return result or None


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="torch",
        import_name="torch",
        distributions=("torch",),
        namespaces=(
            "torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft",
            "torch.nn.init", "torch.signal.windows", "torch.masked",
        ),
        own_modules=("torch",),
        from_numpy_ref="xamt.libraries.torch:from_numpy",
        zygote_warmup=("xamt.libraries.torch:warm_compiler",),
        to_numpy_ref="xamt.libraries.torch:to_numpy",
        dtype_ref="xamt.libraries.torch:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("torch", "Tensor", _METHOD_PLUMBING),),
        class_namespaces=(ClassNamespace("torch.nn", "torch.nn:Module", "forward"),),
        # Normal(loc, scale).log_prob(value): matched with scipy.stats / jax.scipy.stats
        # distribution methods through xamt/data/distributions.toml; rsample(sample_shape) draws
        # variates (a sampler, matched with scipy's rvs for the classes distributions.toml
        # lists; `sample` is mostly Distribution's own, which calls rsample, so not a method of
        # the class); mean/variance properties are not mined
        constructed_namespaces=(ConstructedNamespace(
            "torch.distributions", "torch.distributions:Distribution",
            ("log_prob", "cdf", "icdf", "entropy", "rsample"),
        ),),
        # torch.nn.init.kaiming_uniform_(tensor, ...) fills the tensor it is given: called from a
        # shape (call_filling makes the tensor), it meets jax/keras initializers
        fill_namespaces=(FillNamespace("torch.nn.init", "tensor"),),
        fill_call_ref="xamt.libraries.torch:call_filling",
        literal_array="torch.from_numpy({})", literal_dtype="torch.{}", literal_imports=("import torch",),
        # the un-suffixed torch.nn.init names are deprecated wrappers (*args, **kwargs) of the
        # filling functions ("This method is now deprecated in favor of torch.nn.init.normal_")
        exclude=frozenset(f"torch.nn.init.{n}" for n in (
            "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal",
            "orthogonal", "sparse", "uniform", "xavier_normal", "xavier_uniform")),
        pivot_rank=20,
        doc_prefixes={"torch": "torch"},
        compile_ref="xamt.libraries.torch:call_compiled",
        compile_label="torch.compile",
        compile_check_ref="xamt.libraries.torch:compile_available",
        compile_clock_ref="xamt.libraries.torch:compile_seconds",
        out_call_ref="xamt.libraries.torch:call_with_out",
        inplace_suffix="_",
        signature_hook_ref="xamt.libraries.torch:signature_from_schema",
        devices_ref="xamt.libraries.torch:devices",
        placement_ref="xamt.libraries.torch:place",
        device_scope_ref="xamt.libraries.torch:device_scope",
    )
