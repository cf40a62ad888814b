"""What Xamt needs to know about one library: the :class:`LibraryAdapter` description.

An adapter is a plain description plus a few hooks. It never imports its library when the adapter
module is imported; hooks that need the library import it lazily. Functions a worker process must
call (tensor conversion, compiled execution, ``out=`` calls) are named by ``"module:qualname"``
references to small functions in the adapter's own module, so a sandbox worker can import them.

Adding a library means adding one module ``xamt/libraries/<name>.py`` that defines
``adapter() -> LibraryAdapter`` (the registry discovers it) and, where needed, data entries.
"""
from __future__ import annotations

import fnmatch
import functools
import importlib
import importlib.metadata
import importlib.util
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Runtime", "MethodOwner", "ClassNamespace", "ConstructedNamespace", "FactoryNamespace",
           "FillNamespace", "LibraryAdapter", "ParamSpec", "DTYPE_NAMES", "same_dtype_names"]

#: numpy dtype names Xamt speaks; an adapter maps its own dtype names onto these.
DTYPE_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
)

def same_dtype_names(exclude: tuple[str, ...] = ()) -> dict[str, str]:
    """The dtype table of a library whose dtype names are numpy's (all but ``exclude``)."""
    return {name: name for name in DTYPE_NAMES if name not in exclude}


#: A parameter as a signature fallback reports it:
#: (name, kind, default repr or None when required, type text or None).
ParamSpec = tuple[str, str, "str | None", "str | None"]


@dataclass(frozen=True)
class Runtime:
    """Where a library's calls run when it cannot share the main sandbox zygote: an interpreter
    or environment of its own (a :class:`sandbox.PoolSet` pool named ``name``).

    Keras on JAX needs ``KERAS_BACKEND=jax`` at import, where keras on TensorFlow, in the main
    zygote, needs ``tensorflow``; MXNet needs numpy < 2. ``env`` is set in that runtime's
    processes whatever the user's environment says (it defines the library), unlike the
    adapter's ``environment`` defaults. ``venv`` is a virtual environment folder relative to the
    project root (made by the Makefile); None: this interpreter.
    """

    name: str
    env: Mapping[str, str] = field(default_factory=dict)
    venv: str | None = None

    def python(self) -> str:
        """The interpreter of this runtime (this one when it has no venv)."""
        import sys

        if self.venv is None:
            return sys.executable
        return os.path.join(project_root(), self.venv, "bin", "python")

    def child_environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The environment of a process started in this runtime from ``base``: this runtime's
        variables over it and, for a venv, the project root first on ``PYTHONPATH``, since that
        interpreter imports Xamt's modules (catalog miner, sandbox worker) from this checkout
        rather than from an installation of its own."""
        env = {**base, **self.env}
        if self.venv is not None:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (project_root(), env.get("PYTHONPATH")) if p)
        return env


def project_root() -> str:
    """The folder holding the ``xamt`` package (where the Makefile makes extra venvs)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass(frozen=True)
class MethodOwner:
    """A tensor class whose public methods are mined as APIs (``torch:Tensor``)."""

    module: str
    qualname: str
    #: method names that are runtime plumbing rather than operations (not mined)
    exclude: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ClassNamespace:
    """A module whose callable classes (layers, modules, losses) are mined.

    Only subclasses of ``base`` (a ``"module:qualname"`` reference) that have a functional form
    in the same library are kept (see :mod:`xamt.catalog.mining`). ``call_method`` names the method
    holding the call signature (``forward`` for torch modules, ``call`` for keras layers).
    """

    module: str
    base: str
    call_method: str


@dataclass(frozen=True)
class ConstructedNamespace:
    """A module whose classes are constructed from parameters and then asked to compute
    (``torch.distributions.Normal(loc, scale).log_prob(value)``).

    Every concrete subclass of ``base`` (a ``"module:qualname"`` reference) in ``module`` yields
    one API per name in ``methods`` that the class overrides (``base``'s own versions only raise
    NotImplementedError). Such an API is called in the ``constructed`` style: the constructor
    takes the parameters the record lists as ``init_params``, the method the rest.
    """

    module: str
    base: str
    methods: tuple[str, ...]
    #: the class *is* the API, called through its one method (a keras initializer:
    #: ``HeNormal(seed=1)(shape, dtype)`` through ``__call__``): the record is named after the
    #: class (``keras.initializers.HeNormal``, matched as ``he_normal``), not ``Class.method``
    named_by_class: bool = False


@dataclass(frozen=True)
class FactoryNamespace:
    """A module whose functions build the callable that computes (``jax.nn.initializers.
    he_normal(in_axis=-2)`` returns ``init(key, shape, dtype)``).

    Each such function is mined as a ``constructed`` API named after the function: its own
    parameters are the constructor's (``init_params``), ``call_params`` (the returned callable's
    signature, which inspection cannot see before the factory runs) are the call's. A factory
    parameter named like a call parameter (``dtype``: the default of the call's) is left to the
    call. A function of the module whose first parameter is already the call's first
    (``jax.nn.initializers.zeros(key, shape, dtype)``) is a ready callable and stays a function.
    """

    module: str
    call_params: tuple[ParamSpec, ...]


@dataclass(frozen=True)
class FillNamespace:
    """A module whose functions fill a tensor they are given, in place, and return it
    (``torch.nn.init.kaiming_uniform_(tensor, a=0)``).

    Each function whose first parameter is ``param`` is mined as a ``filling`` API: that
    parameter becomes a positional ``shape``, and the call goes through the adapter's
    ``fill_call_ref``, which makes a float tensor of that shape and hands it to the function.
    The API then computes an array from a shape, as another library's initializer does; its
    in-place suffix names no in-place variant of another API (it is matched under the name
    without it).
    """

    module: str
    param: str = "tensor"


@dataclass(frozen=True)
class LibraryAdapter:
    """Description of one library (see the module docstring).

    Attributes whose names end in ``_ref`` are ``"module:qualname"`` references.
    """

    name: str
    import_name: str
    distributions: tuple[str, ...]
    namespaces: tuple[str, ...]
    own_modules: tuple[str, ...]
    from_numpy_ref: str
    to_numpy_ref: str
    dtypes: Mapping[str, str]
    method_owners: tuple[MethodOwner, ...] = ()
    class_namespaces: tuple[ClassNamespace, ...] = ()
    #: modules whose classes' methods are mined as constructed APIs (torch.distributions)
    constructed_namespaces: tuple[ConstructedNamespace, ...] = ()
    #: modules whose functions are factories of the computing callable (jax.nn.initializers)
    factory_namespaces: tuple[FactoryNamespace, ...] = ()
    #: modules whose functions fill a tensor passed in (torch.nn.init), called from a shape
    fill_namespaces: tuple[FillNamespace, ...] = ()
    #: type names of callable instances the namespaces hold that are APIs, beside routines
    #: (PyTensor's elementwise operators are ``Elemwise`` objects: ``pytensor.tensor.exp``)
    routine_types: frozenset[str] = frozenset()
    #: public names never mined: a ``qualname``, a prefix ending in ``.`` (``numpy.testing.``),
    #: or a glob pattern with ``*`` (``tensorflow.raw_ops.*Grad``)
    exclude: frozenset[str] = frozenset()
    #: namespace -> modules its callables must be defined in to be mined (``tf.raw_ops`` holds
    #: every op: only those of the computation modules, not datasets, queues or variables)
    namespace_origins: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: namespaces whose functions accept keyword arguments only (``tf.raw_ops.Abs(x=t)``; a
    #: positional call raises): their parameters are recorded keyword-only, so plans bind them
    #: by keyword
    keyword_only_namespaces: tuple[str, ...] = ()
    #: namespaces whose functions get no ``eager_compiled`` twin: their compiled run is the one
    #: of another API's twin (``tf.raw_ops.Abs`` under ``tf.function`` runs ``tf.abs``'s kernel)
    uncompiled_namespaces: tuple[str, ...] = ()
    #: ``sub_apis(obj) -> list[str]``: attribute names of a mined function that are APIs of
    #: their own (a numpy ufunc's ``reduce``, ``accumulate``, ``outer``), mined as
    #: ``<function>.<name>`` and matched under ``<function>_<name>`` (``add_reduce``)
    sub_apis_ref: str | None = None
    #: environment variables set (if not already set) before the library is imported
    environment: Mapping[str, str] = field(default_factory=dict)
    #: a zygote of its own (another interpreter, or settings that clash with the main zygote's
    #: libraries); None: the main zygote. Its ``env`` is applied over ``environment``
    runtime: Runtime | None = None
    #: ``"module:function"`` s the sandbox's zygote calls after importing the library, so that
    #: every worker inherits their work instead of paying it in its first task (a compiler's own
    #: imports, a probe of the CPU). They must start no thread (:func:`sandbox.preload.run_warmups`)
    zygote_warmup: tuple[str, ...] = ()
    #: preference as the pivot of an argument plan (lower first); the numpy-like reference first
    pivot_rank: int = 50
    #: the implementation the library's calls compute with, where it is another library's
    #: (dask and array-api-strict compute through numpy, Keras through its backend): members
    #: sharing one cast one vote on a divergence's reference. None: its own (the library's name)
    kernels: str | None = None
    #: the same for its compiled calls (``jax.jit`` and ``tf.function(jit_compile=True)`` both
    #: run XLA, whose CPU backend flushes subnormals); None: as ``kernels``
    compiled_kernels: str | None = None
    #: ``compile_ref(target, *args, **kwargs)`` runs the API compiled (jit); None: no compiler
    compile_ref: str | None = None
    #: what the compiled execution is called, for reports (``jax.jit``)
    compile_label: str | None = None
    #: ``compile_check_ref() -> (available, why)``: whether compilation runs here (imports the
    #: library; called while mining); None with a compile_ref: assumed available
    compile_check_ref: str | None = None
    #: ``compile_clock_ref() -> float``: the seconds this process has spent compiling so far, as
    #: the library counts them (tracing, lowering and code generation, or loading the result
    #: from a compile cache). None: the library compiles nothing or cannot say. It must be cheap
    #: (it is read around every call) and must not import the library's compiler
    compile_clock_ref: str | None = None
    #: ``out_call_ref(target, *args, **kwargs)`` calls the API with a preallocated ``out=``
    out_call_ref: str | None = None
    #: ``finish(result) -> result``: computes a lazy result (a dask graph) inside the call, so
    #: that what the computation raises is the API's error and its time the call's; None: the
    #: library computes eagerly
    finish_ref: str | None = None
    #: ``wide_ref() -> context manager`` under which the library computes a float64 input in
    #: float64 (JAX's ``enable_x64``); None: it always does. Triage's float64 experiments run the
    #: outlier under it: without it JAX truncates float64 inputs to float32 and every such
    #: experiment repeats the float32 result
    wide_ref: str | None = None
    #: ``fill_call_ref(target, shape, *args, **kwargs)`` makes a float tensor of ``shape`` and
    #: calls the API on it first (the ``fill`` call style of a :class:`FillNamespace`'s APIs)
    fill_call_ref: str | None = None
    #: method names ending with this suffix are in-place variants (``abs_``); None: no convention
    inplace_suffix: str | None = None
    #: ``dtype_ref(name)`` returns the library's dtype object for a numpy dtype name
    dtype_ref: str | None = None
    #: ``prng_key_ref(seed)`` returns the library's PRNG key for an int seed (``jax.random.
    #: PRNGKey``): the value of the ``prng_key`` transform (a functional sampler's ``key``)
    prng_key_ref: str | None = None
    #: ``signature_hook(obj, name, owner) -> list[list[ParamSpec]] | None``: signatures when
    #: inspection and the docstring both fail (a probe); None: no such source
    signature_hook_ref: str | None = None
    #: also ask the signature hook when inspection only shows ``*args/**kwargs``
    signature_hook_on_variadic: bool = False
    #: namespaces whose child namespaces qualify their API names for matching: the API
    #: ``scipy.stats.norm.pdf`` is matched as ``norm_pdf``, not ``pdf``
    qualified_parents: tuple[str, ...] = ()
    #: names mined from a namespace that is an object rather than a module
    #: (``scipy.stats.norm`` is a distribution instance: only its ``pdf``, ``cdf``, ...)
    object_members: frozenset[str] = frozenset()
    #: the short names documentation (any library's) gives this library's namespaces, mapped to
    #: the namespace each stands for (``{"jnp": "jax.numpy", "lax": "jax.lax"}``): the catalog
    #: reads ``jnp.cumsum`` in a docstring as a reference to ``jax.numpy.cumsum``
    doc_prefixes: Mapping[str, str] = field(default_factory=dict)
    #: names prose gives this library before a quoted API name, mapped to the namespace meant
    #: (``{"NumPy": "numpy"}``: "TensorFlow variant of NumPy's `sum`" declares ``numpy.sum``)
    doc_possessives: Mapping[str, str] = field(default_factory=dict)
    #: other libraries re-export this library's top-level objects (numpy's ufuncs): mining
    #: another library, an object of its namespaces that carries no module of its own and *is*
    #: one of these is this library's, not the mined one's (:mod:`xamt.catalog.ownership`)
    reexported_by_others: bool = False
    #: ``devices_hook() -> list[str]``; default: ``["cpu"]``. Imports the library (and may
    #: initialise its GPU runtime): call it in a sandbox worker, never in the fuzzer's parent
    devices_ref: str | None = None
    #: ``place(value, device) -> value``: the converted library object (a tensor made by
    #: ``from_numpy``) moved onto ``device`` (one of the devices hook's names); None: the
    #: library runs on the CPU only
    placement_ref: str | None = None
    #: ``device_scope(device) -> context manager``: a member placed on ``device`` is called
    #: inside it, so what the API creates itself (factories, constants) lands there too
    device_scope_ref: str | None = None
    #: ``version_tag_hook() -> str``: appended to the version (e.g. the keras backend)
    version_tag_ref: str | None = None
    #: literal reproducers (:mod:`xamt.literal`): the library's array from a numpy expression
    #: (``"torch.from_numpy({})"``), a dtype from its name (``"torch.{}"``), a function compiled
    #: as the fuzzer's ``compile_ref`` compiles it (``"jax.jit({})"``), a PRNG key from an int
    #: seed, and the imports these need. No ``literal_array``: findings keep the msgpack form
    literal_array: str | None = None
    literal_dtype: str | None = None
    literal_compile: str | None = None
    literal_prng_key: str | None = None
    literal_imports: tuple[str, ...] = ()
    #: the ``environment`` keys that change results, set by a literal reproducer (the others,
    #: such as log levels, are left out of its few lines)
    literal_environment: tuple[str, ...] = ()

    # -- environment ------------------------------------------------------------------------
    def is_installed(self) -> bool:
        """True when the library can be found (it is not imported), in its runtime's
        interpreter when that is another one."""
        if self.runtime is not None and self.runtime.venv is not None:
            return _venv_versions(self.runtime.python(), self.import_name, self.distributions) is not None
        try:
            return importlib.util.find_spec(self.import_name) is not None
        except (ImportError, ValueError):
            return False

    def prepare_environment(self) -> dict[str, str]:
        """Set this adapter's environment variables unless the user set them, and its runtime's
        whatever is set; return them."""
        applied = {}
        for key, value in self.environment.items():
            applied[key] = os.environ.setdefault(key, value)
        if self.runtime is not None:
            os.environ.update(self.runtime.env)
            applied.update(self.runtime.env)
        return applied

    def worker_environment(self) -> dict[str, str]:
        """The variables a sandbox zygote running this library needs: the user's value or the
        adapter's default of each ``environment`` key, then the runtime's own."""
        env = {key: os.environ.get(key, value) for key, value in self.environment.items()}
        if self.runtime is not None:
            env.update(self.runtime.env)
        return env

    def script_environment(self) -> dict[str, str]:
        """What a reproducer script sets before it imports the library: the variables of
        :meth:`worker_environment` named by ``literal_environment`` (those that change results),
        with the values the fuzzer's workers ran under."""
        return {k: v for k, v in self.worker_environment().items() if k in self.literal_environment}

    def version(self) -> str:
        """Installed version from the package metadata (no import), plus the version tag."""
        base = None
        if self.runtime is not None and self.runtime.venv is not None:
            base = _venv_versions(self.runtime.python(), self.import_name, self.distributions)
        for dist in self.distributions if base is None else ():
            try:
                base = importlib.metadata.version(dist)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
        if base is None:
            base = "unknown"
        if self.version_tag_ref:
            tag = resolve_ref(self.version_tag_ref)()
            if tag:
                return f"{base}+{tag}"
        return base

    def import_module(self) -> Any:
        """Import the library (after :meth:`prepare_environment`)."""
        self.prepare_environment()
        return importlib.import_module(self.import_name)

    def devices(self) -> list[str]:
        """Devices this library can run on here (imports the library)."""
        if self.devices_ref:
            return list(resolve_ref(self.devices_ref)())
        return ["cpu"]

    def runs_on(self, device: str) -> bool:
        """True when members can be placed on ``device`` by this adapter's hooks (``cpu``
        always: it needs no placement)."""
        return device == "cpu" or self.placement_ref is not None

    def signature_hook(self) -> Callable[..., Any] | None:
        return resolve_ref(self.signature_hook_ref) if self.signature_hook_ref else None

    def is_excluded(self, qualname: str) -> bool:
        """True when ``qualname`` is on this adapter's do-not-mine list."""
        if qualname in self.exclude:
            return True
        return any((p.endswith(".") and qualname.startswith(p))
                   or ("*" in p and fnmatch.fnmatchcase(qualname, p)) for p in self.exclude)

    def owns(self, module_name: str | None) -> bool:
        """True when an object's ``__module__`` belongs to this library."""
        if not module_name:
            return False
        return any(module_name == p or module_name.startswith(p + ".") for p in self.own_modules)

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary (for ``xamt catalog --json`` and reports)."""
        return {
            "name": self.name,
            "namespaces": list(self.namespaces),
            "method_owners": [f"{m.module}:{m.qualname}" for m in self.method_owners],
            "class_namespaces": [c.module for c in self.class_namespaces],
            "from_numpy": self.from_numpy_ref,
            "to_numpy": self.to_numpy_ref,
            "compile": self.compile_ref,
            "out_call": self.out_call_ref,
            "dtypes": dict(self.dtypes),
        }


_VENV_PROBE = """
import importlib.metadata, importlib.util, sys
if importlib.util.find_spec(sys.argv[1]) is None:
    sys.exit(3)
for dist in sys.argv[2:]:
    try:
        print(importlib.metadata.version(dist)); break
    except importlib.metadata.PackageNotFoundError:
        pass
else:
    print("unknown")
"""


@functools.lru_cache(maxsize=None)
def _venv_versions(python: str, import_name: str, distributions: tuple[str, ...]) -> str | None:
    """The version of a library installed in another interpreter (None: it is not there). One
    short child process per library and interpreter, remembered: asked while planning only."""
    import subprocess

    if not os.access(python, os.X_OK):
        return None
    try:
        proc = subprocess.run([python, "-I", "-c", _VENV_PROBE, import_name, *distributions],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or "unknown" if proc.returncode == 0 else None


def resolve_ref(ref: str) -> Any:
    """Resolve a ``"module:qualname"`` reference (``qualname`` may be dotted)."""
    module_name, sep, qualname = ref.partition(":")
    if not sep or not module_name or not qualname:
        raise ValueError(f"not a 'module:qualname' reference: {ref!r}")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj
