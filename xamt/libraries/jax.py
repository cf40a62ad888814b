"""JAX adapter (``jax.numpy``, ``jax.lax``, ``jax.nn``, ``jax.random``, ``jax.scipy``, ``jax.Array``)."""
from __future__ import annotations

import functools
from typing import Any

from xamt.libraries._compile import compiled_call
from xamt.libraries.base import (FactoryNamespace, LibraryAdapter, MethodOwner, resolve_ref,
                                 same_dtype_names)

__all__ = ["adapter", "from_numpy", "to_numpy", "full_width", "dtype", "prng_key", "devices", "place", "device_scope", "probe_call",
           "call_compiled", "ufunc_methods"]

_DTYPES = same_dtype_names()

#: jax.Array methods about placement and buffers, not computation
_METHOD_PLUMBING = frozenset({
    "addressable_data", "copy_to_host_async", "to_device", "block_until_ready", "delete",
    "devices", "is_deleted", "on_device_size_in_bytes", "unsafe_buffer_pointer",
    "is_fully_addressable", "is_fully_replicated", "tolist", "tobytes", "item",
})


#: jax.scipy.stats distribution modules (pdf, logpdf, cdf, ... functions each)
_STATS_DISTRIBUTIONS = (
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy",
)


def from_numpy(array: Any) -> Any:
    import jax.numpy as jnp

    return jnp.asarray(array)


def to_numpy(value: Any) -> Any:
    import numpy as np

    return np.asarray(value)


def full_width() -> Any:
    """The adapter's ``wide_ref``: a context in which float64 inputs stay float64 (JAX
    computes in 32 bits unless ``jax_enable_x64`` is set)."""
    import jax

    return jax.enable_x64(True)


def dtype(name: str) -> Any:
    import jax.numpy as jnp

    return jnp.dtype(name)


def prng_key(seed: int) -> Any:
    """The PRNG key every ``jax.random`` sampler takes, from an int seed.

    The raw ``uint32[2]`` key of ``jax.random.PRNGKey`` (accepted by every ``jax.random``
    function, like the typed keys of ``jax.random.key``): what ``split`` and ``fold_in`` return
    then converts to numpy and has the shape of TensorFlow's ``[2]`` seeds.
    """
    import jax

    return jax.random.PRNGKey(int(seed))


def devices() -> list[str]:
    import jax

    found = ["cpu"]
    for platform in ("gpu", "tpu"):
        try:
            found += [f"{platform}:{d.id}" for d in jax.devices(platform)]
        except RuntimeError:  # jax raises when the platform has no backend here
            pass
    return found


def _device(name: str) -> Any:
    """The ``jax.Device`` a devices-hook name (``cpu``, ``gpu:0``: platform and device id) means."""
    import jax

    platform, _, index = name.partition(":")
    found = jax.devices(platform)
    if not index:
        return found[0]
    for d in found:
        if d.id == int(index):
            return d
    raise ValueError(f"jax has no device {name!r} here (it has {[f'{platform}:{d.id}' for d in found]})")


def place(value: Any, device: str) -> Any:
    """An array committed to ``device`` (``cpu``, ``gpu:0``); other values as they are."""
    import jax

    return jax.device_put(value, _device(device)) if isinstance(value, jax.Array) else value


def device_scope(device: str) -> Any:
    """``jax.default_device``: arrays the API creates itself land on ``device`` too."""
    import jax

    return jax.default_device(_device(device))


def _is_array(value: Any) -> bool:
    import jax
    import numpy as np

    return isinstance(value, (jax.Array, np.ndarray))


@functools.lru_cache(maxsize=256)
def _resolve(target: str) -> Any:
    return resolve_ref(target)


def call_compiled(target: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``target`` under ``jax.jit``; only array arguments are traced, the rest are constants."""
    import jax

    return compiled_call(target, _resolve(target), jax.jit, args, kwargs, _is_array)


#: JAX's own compile events (tracing to a jaxpr, lowering to MLIR, XLA's compile or a persistent
#: cache read): their durations are its compile clock
_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
                   "/jax/core/compile/jaxpr_to_mlir_module_duration",
                   "/jax/core/compile/backend_compile_duration")
_COMPILE_S: list[float] = []


def compile_seconds() -> float:
    """The adapter's ``compile_clock_ref``: seconds this process has spent compiling, eager
    operations included (JAX compiles each one per shape and dtype), from ``jax.monitoring``.
    The first read starts the count (a listener added then; there is no way to remove one)."""
    if not _COMPILE_S:
        import jax

        _COMPILE_S.append(0.0)

        def listen(event: str, seconds: float, **_: Any) -> None:
            if event in _COMPILE_EVENTS:
                _COMPILE_S[0] += seconds

        jax.monitoring.register_event_duration_secs_listener(listen)
    return _COMPILE_S[0]


def probe_call(fn: Any, *args: Any) -> Any:
    """The dtype probe's evaluator (``validation.toml [probe.abstract]``, see
    :func:`xamt.exec.probe.abstract_call`), for JAX and Keras on JAX: the call traced with
    ``jax.eval_shape``, which compiles nothing; where the trace raises, the call is run, and
    its verdict stands. A trace refuses what is no dtype refusal: functions whose output shape
    depends on the values (``nonzero``, ``unique``, ``argwhere``), and outputs that are not arrays
    (``keras.ops.dtype``). In an eighteen-library build 30 JAX members had dtypes refused by a
    tracer error, and 17 Keras-on-JAX members, traced, every probed dtype."""
    import jax

    try:
        return jax.eval_shape(fn, *args)
    except Exception:
        return fn(*args)


def trace_python(fn: Any, args: Any, kwargs: Any) -> Any:
    """Run ``fn``'s Python on abstract values without compiling or executing it (the footprint
    evaluator of ``triage.toml`` [lineage.trace]): ``jax.eval_shape`` with jit disabled, so that
    every jitted function's body runs again instead of being served from its trace cache."""
    import jax

    with jax.disable_jit():
        return jax.eval_shape(fn, args, kwargs)


def ufunc_methods(obj: Any) -> list[str]:
    """The sub-APIs of a mined jax object: a binary ``jax.numpy.ufunc``'s ``reduce``,
    ``accumulate``, ``outer`` and ``reduceat`` (numpy's ufunc methods; ``at`` is an update)."""
    import jax.numpy as jnp

    from xamt.libraries.numpy import UFUNC_METHODS

    if isinstance(obj, jnp.ufunc) and obj.nin == 2 and obj.nout == 1:
        return [m for m in UFUNC_METHODS if hasattr(obj, m)]
    return []


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="jax",
        import_name="jax",
        distributions=("jax",),
        namespaces=(
            "jax.numpy", "jax.numpy.fft", "jax.numpy.linalg", "jax.nn", "jax.nn.initializers",
            "jax.lax", "jax.random", "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.signal",
            "jax.scipy.stats", "jax.scipy.fft", "jax.scipy.ndimage", "jax.scipy.integrate",
            "jax.image", "jax.ops", "jax.lax.linalg", "jax.scipy.cluster.vq",
            *(f"jax.scipy.stats.{d}" for d in _STATS_DISTRIBUTIONS),
        ),
        qualified_parents=("jax.scipy.stats",),
        # jax.nn.initializers.he_normal(in_axis=...) builds init(key, shape, dtype): called as
        # he_normal(**config)(key, shape, dtype) (zeros/ones are such init functions themselves)
        factory_namespaces=(FactoryNamespace("jax.nn.initializers", (
            ("key", "positional_or_keyword", None, "Array"),
            ("shape", "positional_or_keyword", None, "Sequence[int]"),
            ("dtype", "positional_or_keyword", "None", "DTypeLike | None"),
        )),),
        own_modules=("jax", "jaxlib"),
        from_numpy_ref="xamt.libraries.jax:from_numpy",
        to_numpy_ref="xamt.libraries.jax:to_numpy",
        dtype_ref="xamt.libraries.jax:dtype",
        prng_key_ref="xamt.libraries.jax:prng_key",
        wide_ref="xamt.libraries.jax:full_width",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("jax", "Array", _METHOD_PLUMBING),),
        pivot_rank=5,
        # eager operations run XLA programs too (one per operation): one vote with jit's
        kernels="xla",
        doc_prefixes={"jax": "jax", "jnp": "jax.numpy", "lax": "jax.lax"},
        compile_ref="xamt.libraries.jax:call_compiled",
        literal_array="jax.numpy.asarray({})", literal_dtype="jax.numpy.dtype('{}')",
        literal_compile="jax.jit({})", literal_prng_key="jax.random.PRNGKey({})",
        literal_imports=("import jax", "import jax.numpy"),
        compile_label="jax.jit",
        compile_clock_ref="xamt.libraries.jax:compile_seconds",
        # on a GPU, XLA would preallocate 75% of device memory in the first worker; every
        # sandbox worker is a process of its own (a user's own setting wins)
        environment={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
        devices_ref="xamt.libraries.jax:devices",
        placement_ref="xamt.libraries.jax:place",
        device_scope_ref="xamt.libraries.jax:device_scope",
        sub_apis_ref="xamt.libraries.jax:ufunc_methods",
    )
