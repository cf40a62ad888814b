"""MindSpore adapter: the functional operators of ``mindspore.ops``, the numpy-like
``mindspore.numpy`` (with its ``fft``), the torch-like ``mindspore.mint`` (with its ``linalg``
and ``special``) and the methods of ``mindspore.Tensor``; CPU only, eager (PyNative) mode.

MindSpore 2.10.0's binaries are built against numpy 1.x: under numpy 2 every operator fails
while converting its arguments ("A module that was compiled using NumPy 1.x cannot be run in
NumPy 2"), although the package asks only ``numpy>=1.25``. Xamt pins numpy 2, so the library
lives in a virtual environment of its own (``.venv-mindspore``, made by ``make venv-mindspore``)
and its calls run in a sandbox zygote started from that interpreter
(:class:`~xamt.libraries.base.Runtime`); the catalog is mined there too. Without the venv the
library reports itself not installed and is skipped.

The settings that make the library behave as the fuzzer needs, and why each is there:

- ``MS_DEV_LAUNCH_BLOCKING=1`` (the runtime's environment, read at import): in PyNative mode
  MindSpore queues an operator to a dispatch thread and returns at once, so a kernel's refusal
  (``ops.gather`` with an index out of range) surfaces only when the result is read
  (``asnumpy``), where it would be taken for a failed output conversion. Launch-blocking runs
  every operator synchronously, so the error is the call's. :func:`configure` also calls
  ``mindspore.runtime.launch_blocking()`` (a flag) for a process without the variable (a
  standalone reproducer).
- CPU and PyNative: :func:`configure` sets the device target to ``"CPU"`` and the mode to
  ``PYNATIVE_MODE`` (both flags: no kernel runs and no thread starts), which the zygote calls as
  its warm-up so workers inherit them, and :func:`from_numpy` calls once per process otherwise.
  PyNative is MindSpore's default mode already; it is set so that a user's context cannot turn
  the calls into graph compilations.
- One thread in the zygote: importing MindSpore starts no thread of its own (measured: the one
  thread beside the main one after a bare ``import mindspore`` is numpy's OpenBLAS pool, there
  after ``import numpy`` alone), and the sandbox's thread settings (``OMP_NUM_THREADS=1``,
  ``OPENBLAS_NUM_THREADS=1``, applied to every zygote) keep that one from starting; nothing
  else is needed. MindSpore's own runtime threads start at the first operator, which runs only
  in a forked worker.
- ``GLOG_v=3`` (a default the user may override): MindSpore logs through glog at WARNING level
  by default, a line on stderr for many calls; errors only.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, Runtime

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "configure"]

#: MindSpore holds every numpy dtype Xamt speaks, and bfloat16 (converted through float32)
_DTYPES = {name: name for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "bfloat16", "float32", "float64", "complex64", "complex128")}

#: the modules mined (``mindspore.mint.nn.functional`` is left out: its functions are those of
#: ``mindspore.ops`` under torch's names, and the build's time on two cores is the limit)
_NAMESPACES = ("mindspore.ops", "mindspore.numpy", "mindspore.numpy.fft", "mindspore.mint",
               "mindspore.mint.linalg", "mindspore.mint.special")

#: ``mindspore.Tensor`` methods that move, copy out, serialise, record gradients or touch the
#: parameter/initialiser machinery, rather than compute an array
_METHOD_PLUMBING = frozenset({
    "asnumpy", "numpy", "tolist", "item", "itemset", "assign_value", "assign_value_cpp",
    "convert_bytes_to_tensor", "get_bytes", "data_ptr", "data_sync", "delete_",
    "flush_from_cache", "from_dlpack", "from_numpy", "to_dlpack", "getitem_index_info",
    "setitem_index_info", "init_data", "is_init", "is_pinned", "is_shared", "is_contiguous",
    "move_to", "offload", "offload_file_path", "pin_memory", "register_hook", "remove_hook",
    "requires_grad_", "set_", "set_cast_dtype", "set_const_arg", "set_device_address",
    "set_dtype", "set_init_flag", "set_param_info", "storage", "storage_offset",
    "untyped_storage", "to_coo", "to_csr", "to", "to_", "wait_pipeline", "value", "stride",
    "copy_", "type",
})

#: graph-mode building blocks of ``mindspore.ops`` (primitives over Python tuples, lists,
#: dicts, strings and scalars, control flow, environments, registration decorators), autodiff
#: transforms, sparse-tensor (COO/CSR) operators that take no dense tensor, and the
#: distributed-communication API: not array operations of the eager library
_OPS_EXCLUDED = (
    "J", "SliceGetItem", "add_flags", "array_reduce", "array_to_scalar", "augassign_*",
    "bool_and", "bool_eq", "bool_not", "bool_or", "broadcast_gradient_args", "constexpr",
    "coo_*", "csr_*", "coo2csr", "csr2coo", "custom_info_register", "depend", "dict_getitem",
    "dict_setitem", "distribute", "embed", "env_get", "environ_*", "geswitch", "get_vm_impl_fn",
    "hastype", "hyper_add", "in_dict", "not_in_dict", "is_", "is_not",
    "is_dynamic_sequence_element_unknown", "is_sequence_*", "is_tensor_bool_cond", "isconstant",
    "iter_converter", "kernel", "ms_kernel", "list_*", "make_*", "merge", "mixed_precision_cast",
    "ms_hasnext", "ms_next", "op_info_register", "prim_arg_register", "prim_attr_register",
    "partial", "print_", "recompute_block", "reduced_shape", "ref_to_embed", "row_tensor_*",
    "scalar_*", "shape_mul", "string_concat", "string_eq", "switch", "switch_layer", "tail",
    "tuple_div", "tuple_equal", "tuple_getitem", "tuple_len", "tuple_reversed", "tuple_setitem",
    "typeof", "zip_operation", "tensordump", "move_to", "reshard", "dyn_shape",
    # autodiff
    "grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd", "jacrev", "derivative", "jet",
    "linearize", "get_grad", "stop_gradient", "stop_gradient_",
    # communication (mindspore.ops re-exports mindspore.communication's functional API)
    "all_gather*", "all_reduce", "all_to_all*", "barrier", "batch_isend_irecv", "broadcast",
    "broadcast_object_list", "destroy_process_group", "gather_into_tensor", "gather_object",
    "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "init_process_group", "irecv", "is_available", "is_initialized", "isend",
    "matmul_reduce_scatter", "new_group", "recv", "recv_object_list", "reduce",
    "reduce_scatter*", "scatter_object_list", "scatter_tensor", "send", "send_object_list",
    "set_comm_ops_inplace",
    # Ascend-only fused kernels (no CPU kernel: each would only be refused)
    "flash_attention_score", "fused_infer_attention_score", "incre_flash_attention",
    "prompt_flash_attention", "speed_fusion_attention", "sparse_flash_attention",
    "lightning_indexer", "nsa_*", "moe_*", "ring_attention_update", "rotary_position_embedding",
    "multi_scale_deformable_attn_function",
)

_EXCLUDE = frozenset(
    [f"mindspore.ops.{name}" for name in _OPS_EXCLUDED]
    + [
        # mint: graph-mode registration helpers, an Ascend-only kernel
        "mindspore.mint.constexpr", "mindspore.mint.jit_forbidden_register",
        "mindspore.mint.jit_view_unsupported", "mindspore.mint.npu_gelu",
        # mindspore.numpy: printing and dtype helpers, not array operations
        "mindspore.numpy.array_str", "mindspore.numpy.promote_types",
        "mindspore.numpy.result_type", "mindspore.numpy.isscalar",
    ])

#: set by :func:`configure` in this process (a forked worker inherits it from the zygote)
_configured = False


def configure() -> None:
    """Put MindSpore in eager (PyNative) mode on the CPU with synchronous operator launches
    (idempotent; sets flags only, runs no kernel and starts no thread): the zygote's warm-up."""
    global _configured
    if _configured:
        return
    import mindspore

    mindspore.set_device("CPU")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    mindspore.runtime.launch_blocking()
    _configured = True


def from_numpy(array: Any) -> Any:
    """numpy array → ``mindspore.Tensor`` of the same dtype (a private copy); bfloat16 goes
    through float32, since MindSpore takes only its own numpy bfloat16 type, not ml_dtypes'.
    Configures the process first (see the module docstring)."""
    import mindspore
    import numpy as np

    configure()
    arr = np.array(array, copy=True)
    if arr.dtype.name == "bfloat16":
        return mindspore.Tensor(arr.astype(np.float32)).astype(mindspore.bfloat16)
    return mindspore.Tensor(arr)


def to_numpy(value: Any) -> Any:
    """A ``mindspore.Tensor`` → numpy array, copied (``asnumpy`` shares the tensor's memory, which
    an in-place call would change later); bfloat16 comes back as ml_dtypes.bfloat16 through
    float32; a MindSpore dtype object → its numpy-style name (``"float32"``)."""
    import mindspore
    import numpy as np

    if isinstance(value, mindspore.dtype.Type):
        for name in _DTYPES:
            if value == dtype(name):
                return name
        return str(value)
    if isinstance(value, mindspore.Tensor):
        if value.dtype == mindspore.bfloat16:
            import ml_dtypes

            return value.astype(mindspore.float32).asnumpy().astype(ml_dtypes.bfloat16)
        return np.array(value.asnumpy(), copy=True)
    return np.asarray(value)


def dtype(name: str) -> Any:
    """MindSpore's dtype object for a numpy dtype name (``bool`` is ``mindspore.bool_``)."""
    import mindspore

    return mindspore.bool_ if name == "bool" else getattr(mindspore, name)


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="mindspore",
        import_name="mindspore",
        distributions=("mindspore",),
        namespaces=_NAMESPACES,
        own_modules=("mindspore",),
        from_numpy_ref="xamt.libraries.mindspore:from_numpy",
        to_numpy_ref="xamt.libraries.mindspore:to_numpy",
        dtype_ref="xamt.libraries.mindspore:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("mindspore", "Tensor", _METHOD_PLUMBING),),
        exclude=_EXCLUDE,
        inplace_suffix="_",
        # after numpy, jax, scipy, torch and tensorflow as the pivot of plans and triage's
        # reference: its names are numpy's and torch's, its semantics a reimplementation
        pivot_rank=65,
        environment={"GLOG_v": "3"},
        runtime=Runtime("mindspore", env={"MS_DEV_LAUNCH_BLOCKING": "1"}, venv=".venv-mindspore"),
        zygote_warmup=("xamt.libraries.mindspore:configure",),
        doc_prefixes={"mindspore": "mindspore", "ms": "mindspore", "mnp": "mindspore.numpy",
                      "mint": "mindspore.mint"},
        # no literal forms: a literal script would need configure() before its first call;
        # findings keep the msgpack form, which converts with this module's functions. Its
        # scripts launch operators as workers did
        literal_environment=("MS_DEV_LAUNCH_BLOCKING",),
    )
