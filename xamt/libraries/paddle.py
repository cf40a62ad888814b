"""PaddlePaddle adapter: ``paddle`` (dynamic-graph, "eager" mode, its default), with
``paddle.linalg``, ``paddle.fft``, ``paddle.nn.functional``, ``paddle.special`` and the
``paddle.Tensor`` methods; CPU only.

PaddlePaddle 3.3.1 pins ``opt_einsum==3.3.0`` where Xamt has jax's 3.4.0, and it ships native
libraries of its own (Intel's OpenMP runtime, MKL, oneDNN, OpenVINO) and installs fatal-signal
handlers at import: it lives in a virtual environment of its own (``.venv-paddle``, made by
``make venv-paddle``, the CPU wheel) and its calls run in a sandbox zygote started from that
interpreter (:class:`~xamt.libraries.base.Runtime`); the catalog is mined there too. Without
the venv the library reports itself not installed and is skipped.

What makes it behave as the fuzzer needs:

- Synchronous, in the calling thread: dynamic-graph mode on the CPU runs each operator when it
  is called, and an argument check (PHI's ``InferMeta``) raises from the call itself
  (``ValueError: (InvalidArgument) ...``), not when the result is read. Nothing is switched: the
  default mode is kept, and no static graph (``paddle.enable_static``) is ever built.
- One thread: with the sandbox's ``OMP_NUM_THREADS=1`` (applied to every zygote) importing paddle
  starts no thread (without it, a second thread), so the zygote forks its workers. Paddle's
  signal handler prints its report and the process still dies of the signal, so a crash is
  attributed as a crash.
- Its ``FLAGS_*`` variables, read at import, are pinned in the runtime's environment where a
  user's value would change what is compared: ``FLAGS_check_nan_inf=0`` (paddle's default; set,
  every operator producing a NaN or an infinity raises ``PreconditionNotMet``, which would read
  as a refusal numpy does not make) and ``FLAGS_call_stack_level=1`` (the default; at 2 an error
  message starts with a C++ traceback instead of its ``(InvalidArgument) ...`` summary line, the
  line status findings are de-duplicated by). ``FLAGS_use_onednn=0`` and its older name
  ``FLAGS_use_mkldnn=0`` (both read, both off by default) keep paddle's own CPU kernels rather
  than oneDNN's, another implementation of many of them.
- Conversions: numpy's ``uint16`` is paddle's ``bfloat16`` storage type (``paddle.to_tensor`` of a
  ``uint16`` array makes a ``bfloat16`` tensor, ``paddle.uint16`` prints as ``paddle.bfloat16``),
  so a bfloat16 array crosses as its uint16 bit pattern and a real ``uint16`` array is refused
  (paddle has no such tensor); ``uint32``/``uint64`` arrays do not convert either. A sparse
  result is made dense before ``numpy()``, which crashes the process on a sparse tensor.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, Runtime, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype"]

#: what ``paddle.to_tensor`` makes from a numpy array of each dtype (names are numpy's): no
#: unsigned type wider than 8 bits (see the module docstring)
_DTYPES = same_dtype_names(("uint16", "uint32", "uint64"))

#: the modules mined
_NAMESPACES = ("paddle", "paddle.linalg", "paddle.fft", "paddle.nn.functional", "paddle.special")

#: ``paddle.Tensor`` methods that move, copy out, serialise, record gradients, inspect storage or
#: sparse layout, or switch modes, rather than compute an array
_METHOD_PLUMBING = frozenset({
    "numpy", "tolist", "item", "cpu", "cuda", "pin_memory", "to", "backward", "clear_grad",
    "clear_gradient", "gradient", "register_hook", "retain_grads", "detach", "detach_",
    "set_value", "value", "get_tensor", "get_map_tensor", "get_selected_rows", "data_ptr",
    "element_size", "is_dense", "is_dist", "is_sparse", "is_sparse_coo", "is_sparse_csr",
    "is_selected_rows", "is_same_shape", "is_contiguous", "to_dense", "to_sparse_coo",
    "to_sparse_csr", "indices", "values", "crows", "cols", "rows", "coalesce", "is_coalesced",
    "nnz", "dense_dim", "sparse_dim", "get_strides", "strides", "stride", "offset", "copy_",
    "apply", "apply_", "set_string_list", "set_vocab", "reconstruct_from_", "data", "dim",
    "ndimension", "get_device", "is_leaf", "is_cuda", "requires_grad_", "__dlpack__",
    "__dlpack_device__", "type", "block", "itemsize", "place", "stop_gradient", "persistable",
    "process_mesh", "placements", "create_parameter", "create_tensor", "set_", "set_tensor",
    "resize_",
})


#: ``paddle.Tensor`` methods set from functions whose first parameter is a sequence (of tensors,
#: or a shape): a tensor receiver is not what they take (``concat(x: Sequence[Tensor])``)
_METHOD_SEQUENCE_RECEIVER = frozenset({
    "block_diag", "broadcast_shape", "broadcast_shapes", "broadcast_tensors", "concat",
    "multi_dot", "multiplex", "stack",
})


def from_numpy(array: Any) -> Any:
    """numpy array → a ``paddle.Tensor`` on the CPU, a copy of the same dtype; bfloat16 goes
    through its uint16 bit pattern (paddle's own storage convention), a ``uint16`` array raises
    (paddle would read it as bfloat16)."""
    import numpy as np
    import paddle

    arr = np.asarray(array)
    if arr.dtype.name == "bfloat16":
        # a C-ordered copy (ascontiguousarray would make a 0-d array 1-d) viewed as its bits
        return paddle.to_tensor(np.array(arr, order="C").view(np.uint16), place=paddle.CPUPlace())
    if arr.dtype == np.uint16:
        raise TypeError("paddle has no uint16 tensor: to_tensor reads a uint16 array as bfloat16")
    # to_tensor copies the data (a tensor never aliases the caller's array)
    return paddle.to_tensor(arr, place=paddle.CPUPlace())


def to_numpy(value: Any) -> Any:
    """A ``paddle.Tensor`` → numpy (a sparse one made dense first; bfloat16 comes back as
    ``ml_dtypes.bfloat16``); a ``paddle.dtype`` → its numpy-style name (``"float32"``); anything
    else through ``np.asarray``."""
    import numpy as np
    import paddle

    if isinstance(value, paddle.dtype):
        return str(value).replace("paddle.", "")
    if isinstance(value, paddle.Tensor):
        if value.is_sparse():  # numpy() of a sparse tensor dies with SIGSEGV (paddle 3.3.1)
            value = value.to_dense()
        if value.dtype == paddle.bfloat16:
            import ml_dtypes

            return value.numpy().view(ml_dtypes.bfloat16)
        return value.numpy()
    return np.asarray(value)


def dtype(name: str) -> Any:
    """Paddle's dtype object for a numpy dtype name (``paddle.float32``)."""
    import paddle

    return getattr(paddle, name)


def adapter() -> LibraryAdapter:
    """The PaddlePaddle adapter (see the module docstring)."""
    return LibraryAdapter(
        name="paddle",
        import_name="paddle",
        distributions=("paddlepaddle",),
        namespaces=_NAMESPACES,
        own_modules=("paddle",),
        from_numpy_ref="xamt.libraries.paddle:from_numpy",
        to_numpy_ref="xamt.libraries.paddle:to_numpy",
        dtype_ref="xamt.libraries.paddle:dtype",
        dtypes=_DTYPES,
        method_owners=(
            MethodOwner("paddle", "Tensor", _METHOD_PLUMBING | _METHOD_SEQUENCE_RECEIVER),),
        inplace_suffix="_",
        exclude=frozenset({
            # modes, devices, flags, seeds and generator states, defaults, printing
            "paddle.enable_static", "paddle.disable_static", "paddle.in_dynamic_mode",
            "paddle.set_device", "paddle.get_device", "paddle.device_guard",
            "paddle.set_flags", "paddle.get_flags", "paddle.seed", "paddle.get_rng_state",
            "paddle.set_rng_state", "paddle.get_cuda_rng_state", "paddle.set_cuda_rng_state",
            "paddle.set_default_dtype", "paddle.get_default_dtype", "paddle.set_printoptions",
            "paddle.is_compiled_with_*", "paddle.disable_signal_handler",
            "paddle.enable_compat", "paddle.disable_compat", "paddle.use_compat_guard",
            "paddle.set_default_device", "paddle.get_default_device", "paddle.get_device_module",
            "paddle.get_cudnn_version", "paddle.manual_seed", "paddle.autocast",
            "paddle.is_autocast_enabled", "paddle.get_autocast_dtype",
            # autograd and gradient switches, parameters, models, summaries, IO
            "paddle.grad", "paddle.no_grad", "paddle.enable_grad", "paddle.set_grad_enabled",
            "paddle.is_grad_enabled", "paddle.create_parameter", "paddle.summary",
            "paddle.flops", "paddle.save", "paddle.load", "paddle.batch", "paddle.async_save",
            "paddle.clear_async_save_task_queue",
            "paddle.from_dlpack", "paddle.to_dlpack", "paddle.check_shape",
            # conversions out of and into other types: from_numpy refuses a Tensor, tolist
            # returns Python lists (its Tensor method is plumbing above)
            "paddle.from_numpy", "paddle.tolist",
            # the Tensor and PIR patching helpers the top level re-exports
            "paddle.monkey_patch_*", "paddle.new_init", "paddle.original_init",
            "paddle.tensor",
            # paddle.fft's module-level helpers (its __all__ leaves them out): the transforms'
            # kernels by kind (c2c, r2c, c2r) and argument checks
            "paddle.fft.fft_c2c", "paddle.fft.fft_c2r", "paddle.fft.fft_r2c",
            "paddle.fft.fftn_c2c", "paddle.fft.fftn_c2r", "paddle.fft.fftn_r2c",
            "paddle.fft.check_variable_and_dtype", "paddle.fft.in_dynamic_or_pir_mode",
            "paddle.fft.param_two_alias",
            # fused kernels built for GPUs only: the CPU wheel registers no kernel for them
            # ("(NotFound) The kernel `moe_permute` is not registered"; v3 asks a CUDA-only
            # flag); flash_attn_qkvpacked has a CPU kernel and stays. And the attention
            # backend's context manager
            "paddle.linalg.fp8_fp8_half_gemm_fused", "paddle.nn.functional.flashmask_attention",
            "paddle.nn.functional.flash_attn_varlen_qkvpacked",
            "paddle.nn.functional.flash_attention_v3_varlen",
            "paddle.nn.functional.sparse_attention", "paddle.nn.functional.moe_permute",
            "paddle.nn.functional.moe_unpermute", "paddle.nn.functional.sdp_kernel",
        }),
        # after the other libraries as the pivot of plans and triage's reference: a
        # reimplementation whose names mix numpy's and torch's
        pivot_rank=65,
        runtime=Runtime("paddle", env={
            "FLAGS_check_nan_inf": "0", "FLAGS_call_stack_level": "1", "FLAGS_use_onednn": "0",
            "FLAGS_use_mkldnn": "0",
        }, venv=".venv-paddle"),
        doc_prefixes={"paddle": "paddle"},
        literal_array="paddle.to_tensor({})", literal_dtype="paddle.{}",
        literal_imports=("import paddle",),
        # a literal script sets the flags that change results as the workers had them
        literal_environment=("FLAGS_check_nan_inf", "FLAGS_use_onednn", "FLAGS_use_mkldnn"),
    )
