"""Chainer adapter: ``chainer.functions`` (``F``, Chainer's differentiable operators) and the
three ``chainer.Variable`` methods that compute (``mean``, ``reshape``, ``transpose``); CPU only.

Chainer 7.8.1, the last release, needs numpy < 2 (it uses ``numpy.distutils`` and names numpy 1
APIs) while Xamt pins numpy 2, so the library lives in a virtual environment of its own
(``.venv-chainer``, made by ``make venv-chainer``) and its calls run in a sandbox zygote started
from that interpreter (:class:`~xamt.libraries.base.Runtime`); the catalog is mined there too.
Without the venv the library reports itself not installed and is skipped. The venv holds scipy
too: Chainer's special functions (``lgamma``, ``digamma``, ``erfinv``, ``ndtri``, ``zeta`` ...)
compute through ``scipy.special`` on the CPU and raise ImportError without it.

What each setting is there for:

- Arrays: a Chainer array on the CPU is a numpy array; its functions take numpy arrays or
  ``chainer.Variable`` s and return a ``Variable`` (a tuple of them for ``split_axis`` ...).
  :func:`from_numpy` wraps a private copy in a ``Variable`` (``Variable(x).array is x``: without
  the copy an in-place function would write into the caller's array), :func:`to_numpy` takes a
  ``Variable``'s ``.array`` back.
- Dtypes: a ``Variable`` holds any numpy dtype, and the shape functions (``reshape``,
  ``concat``, ``transpose``) move all of them; the maths accept floating dtypes only (a type
  check ``x.dtype.kind == 'f'`` raises ``InvalidType``), which the registry build's probe finds
  per function; nor do they promote mixed dtypes. ``error_kinds.toml`` reads both refusals as
  benign (Chainer's documented rules, not bugs). bfloat16 is left out: numpy 1 has no such
  dtype (it would be ml_dtypes' numpy extension, which Chainer does not know).
- Eager and synchronous: Chainer is define-by-run over numpy on the CPU, so every function runs
  its forward computation inside the call, in the calling thread; an error is the call's. The
  import starts no thread of Chainer's own; the OpenBLAS pool that its import of scipy would
  start (three threads on 2 cores, measured) is kept away by the sandbox's thread settings
  (``OPENBLAS_NUM_THREADS=1`` ..., applied to every zygote): one thread, and the zygote forks
  its workers without a warm-up.
- The runtime's variables pin the configuration Chainer reads from the environment at import,
  whatever the user's environment says: ``CHAINER_TYPE_CHECK=1`` (arguments are checked by the
  call, which raises ``InvalidType``, rather than failing somewhere inside numpy),
  ``CHAINER_DEBUG=0`` (debug mode raises on a NaN in a result: non-finite inputs would be
  refused), ``CHAINER_DTYPE=float32`` (the default dtype of what functions create themselves)
  and ``CHAINER_USE_IDEEP=never`` (numpy kernels, not Intel's iDeep where it is installed).
- ``chainer.config.train`` keeps its default (True): the functional forms take train-mode
  behaviour as torch's functional forms do (``dropout`` drops); such samplers are the
  ``random`` category, compared by status only.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, Runtime, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype"]

#: numpy's dtypes less bfloat16 (see the module docstring); names are numpy's
_DTYPES = same_dtype_names(("bfloat16",))

#: ``chainer.Variable`` methods that manage gradients, the graph, devices or layouts, or print,
#: rather than compute an array (``mean``, ``reshape`` and ``transpose`` are mined)
_METHOD_PLUMBING = frozenset({
    "addgrad", "as_layout", "backward", "cleargrad", "copydata", "debug_print", "from_chx",
    "item", "retain_data", "set_creator", "set_creator_node", "summary", "to_chx", "to_cpu",
    "to_device", "to_gpu", "to_intel64", "unchain", "unchain_backward", "zerograd",
})


def from_numpy(array: Any) -> Any:
    """numpy array -> ``chainer.Variable`` wrapping a private copy of the same dtype."""
    import chainer
    import numpy as np

    return chainer.Variable(np.array(array, copy=True))


def to_numpy(value: Any) -> Any:
    """A ``chainer.Variable`` -> its ``.array`` (a numpy array on the CPU); anything else
    through ``np.asarray``."""
    import numpy as np

    if type(value).__module__.startswith("chainer.") and hasattr(value, "array"):
        return np.asarray(value.array)
    return np.asarray(value)


def dtype(name: str) -> Any:
    """Chainer names dtypes by numpy's (``F.cast(x, numpy.float16)``)."""
    import numpy as np

    return np.dtype(name)


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="chainer",
        import_name="chainer",
        distributions=("chainer",),
        namespaces=("chainer.functions",),
        own_modules=("chainer",),
        from_numpy_ref="xamt.libraries.chainer:from_numpy",
        to_numpy_ref="xamt.libraries.chainer:to_numpy",
        dtype_ref="xamt.libraries.chainer:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("chainer", "Variable", _METHOD_PLUMBING),),
        exclude=frozenset({
            # a device transfer (`dst` is a device), and a memory-saving wrapper that recomputes
            # a function given as its first argument: plumbing, not operations
            "chainer.functions.copy", "chainer.functions.forget",
        }),
        # after the other libraries as the pivot of plans and triage's reference: many names are
        # numpy's, but its semantics are a neural-network library's (floating dtypes only)
        pivot_rank=75,
        runtime=Runtime("chainer", env={
            "CHAINER_TYPE_CHECK": "1", "CHAINER_DEBUG": "0", "CHAINER_DTYPE": "float32",
            "CHAINER_USE_IDEEP": "never"}, venv=".venv-chainer"),
        # not "F": other libraries' documentation gives that name to torch.nn.functional
        doc_prefixes={"chainer": "chainer"},
        # no literal forms: findings keep the msgpack form, converted with this module's
        # functions; a script sets the variables that change results as the workers had them
        literal_environment=("CHAINER_TYPE_CHECK", "CHAINER_DEBUG", "CHAINER_DTYPE"),
    )
