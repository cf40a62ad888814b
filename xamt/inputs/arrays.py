"""Array values for fuzzing: ordinary, boundary and non-finite, by dtype, regenerable from a recipe.

An :class:`ArrayRecipe` is a small, JSON-able description (seed, dtype, shape, magnitude and
injection rates); :meth:`ArrayRecipe.build` turns it into exactly the same array every time, so
the store only records recipes and any input can be regenerated bit for bit. Mutation operators
return new recipes, never edit arrays in place.

Boundary values follow the usual suspects of numerical bugs: ±0, the smallest subnormal, the
smallest normal, ±1, machine epsilon, the largest finite value, integer extremes of each width.
They are derived from ``numpy.finfo`` / ``iinfo`` (and ``ml_dtypes.finfo`` for bfloat16), not
typed in by hand.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from xamt.libraries.base import DTYPE_NAMES

__all__ = [
    "DTYPE_NAMES",
    "ArrayRecipe",
    "boundary_values",
    "nonfinite_values",
    "numpy_dtype",
    "draw_shape",
    "mutate",
    "SHAPES",
]



@functools.cache
def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype for one of :data:`DTYPE_NAMES` (bfloat16 comes from ml_dtypes)."""
    if name == "bfloat16":
        import ml_dtypes  # lazy: only needed when bfloat16 is drawn

        return np.dtype(ml_dtypes.bfloat16)
    if name not in DTYPE_NAMES:
        raise ValueError(f"unknown dtype name {name!r}; expected one of {', '.join(DTYPE_NAMES)}")
    return np.dtype(name)


def _finfo(dt: np.dtype) -> Any:
    if dt.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(dt)
    return np.finfo(dt)


@functools.cache
def boundary_values(name: str) -> np.ndarray:
    """Finite boundary values of dtype ``name`` as a 1-d array of that dtype (no duplicates)."""
    dt = numpy_dtype(name)
    if dt.kind == "b":
        return np.array([False, True], dtype=dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = {0, 1, 2, info.max, info.max - 1, info.min}
        if dt.kind == "i":
            vals |= {-1, info.min + 1}
        return np.array(sorted(vals), dtype=dt)
    if dt.kind == "c":
        real = boundary_values("float32" if dt.itemsize == 8 else "float64")
        picks = [complex(r, 0.0) for r in real] + [complex(0.0, r) for r in real]
        picks += [complex(1.0, 1.0), complex(-1.0, 1.0), complex(real.max(), real.max())]
        return np.array(picks, dtype=dt)
    fi = _finfo(dt)
    tiny = float(fi.smallest_normal)
    sub = float(fi.smallest_subnormal)
    big = float(fi.max)
    eps = float(fi.eps)
    vals = [0.0, -0.0, sub, -sub, tiny, -tiny, 1.0, -1.0, eps, 1.0 + eps, 0.5, -0.5, big, -big]
    return np.array(vals, dtype=np.float64).astype(dt)


@functools.cache
def nonfinite_values(name: str) -> np.ndarray:
    """NaN and ±inf in dtype ``name`` (complex: each part and mixtures); empty for ints/bool."""
    dt = numpy_dtype(name)
    if dt.kind in "biu":
        return np.zeros(0, dtype=dt)
    nan, inf = float("nan"), float("inf")
    if dt.kind == "c":
        return np.array(
            [complex(nan, 0), complex(0, nan), complex(inf, 0), complex(-inf, 0),
             complex(0, inf), complex(inf, nan)],
            dtype=dt,
        )
    return np.array([nan, inf, -inf], dtype=np.float64).astype(dt)


#: the shapes fuzzing draws from: every rank 0-4, empty and size-1 dimensions, a few sizes. A
#: fixed vocabulary rather than free sizes because compiling libraries (JAX, XLA, TF graphs)
#: compile once per shape: a small vocabulary keeps their caches warm, so a campaign spends its
#: time running operations rather than compiling them; values, dtypes and ranks still vary.
SHAPES: tuple[tuple[int, ...], ...] = (
    (), (0,), (1,), (3,), (5,), (8,),
    (2, 3), (1, 4), (3, 1), (0, 3), (4, 4),
    (2, 3, 4), (2, 1, 3), (3, 0, 2),
    (2, 2, 1, 3), (1, 2, 3, 2),
)


def draw_shape(
    rng: np.random.Generator,
    *,
    max_rank: int = 4,
    max_dim: int = 8,
    p_empty: float = 0.05,
    p_one: float = 0.15,
    min_rank: int = 0,
) -> tuple[int, ...]:
    """A shape from :data:`SHAPES` of rank ``min_rank..max_rank`` with no dimension above
    ``max_dim``; ``p_empty`` is the chance of an empty shape (0: never), ``p_one`` of one with
    a size-1 dimension."""
    pool = [s for s in SHAPES if min_rank <= len(s) <= max_rank and all(d <= max_dim for d in s)]
    if not pool:
        raise ValueError(f"no shape of rank {min_rank}..{max_rank} with dimensions <= {max_dim}")
    empty = [s for s in pool if 0 in s]
    ones = [s for s in pool if 1 in s and 0 not in s]
    rest = [s for s in pool if s not in empty and s not in ones] or pool
    u = rng.random()
    if empty and u < p_empty:
        choice = empty
    elif ones and u < p_empty + p_one:
        choice = ones
    else:
        choice = rest
    return choice[int(rng.integers(len(choice)))]


@dataclass(frozen=True)
class ArrayRecipe:
    """Everything needed to regenerate one array exactly.

    Attributes:
        seed: seed of the PCG64 generator that draws the values.
        dtype: one of :data:`DTYPE_NAMES`.
        shape: the array's shape.
        log10_scale: magnitude of ordinary values, as a power of ten.
        boundary_rate: fraction of elements replaced by boundary values.
        nonfinite_rate: fraction of elements replaced by NaN/±inf (floats and complex only).
        low: optional lower bound of ordinary values (domain-restricted roles, e.g. positive).
        high: optional upper bound of ordinary values.
        edges: the first elements are the dtype's boundary values in order, from an offset the
            seed chooses (every boundary value is met within a few draws, as Xamt++'s edge
            state does at fixed rates, which random injection at small sizes rarely manages).
    """

    seed: int
    dtype: str = "float32"
    shape: tuple[int, ...] = (2, 3)
    log10_scale: float = 0.0
    boundary_rate: float = 0.0
    nonfinite_rate: float = 0.0
    low: float | None = None
    high: float | None = None
    edges: bool = False

    def build(self) -> np.ndarray:
        """The array this recipe describes (same recipe, same bits)."""
        dt = numpy_dtype(self.dtype)
        rng = np.random.Generator(np.random.PCG64(self.seed))
        size = math.prod(self.shape)
        flat = self._ordinary(rng, dt, size)
        if size and self.edges:
            pool = boundary_values(self.dtype)
            n = min(size, pool.size)
            start = self.seed % pool.size
            flat[:n] = np.roll(pool, -start)[:n]
        if size:
            self._inject(rng, flat, boundary_values(self.dtype), self.boundary_rate)
            self._inject(rng, flat, nonfinite_values(self.dtype), self.nonfinite_rate)
        return flat.reshape(self.shape)

    def _ordinary(self, rng: np.random.Generator, dt: np.dtype, size: int) -> np.ndarray:
        scale = 10.0 ** self.log10_scale
        if dt.kind == "b":
            return rng.random(size) < 0.5
        if dt.kind in "iu":
            info = np.iinfo(dt)
            bound = int(min(scale * 10, 2**62))
            lo = max(-bound if self.low is None else int(self.low), int(info.min))
            hi = min(bound if self.high is None else int(self.high), int(info.max))
            draw_dt = np.int64 if dt.kind == "i" else np.uint64
            return rng.integers(lo, max(hi, lo), size=size, endpoint=True, dtype=draw_dt).astype(dt)
        if self.low is not None or self.high is not None:
            lo = -scale if self.low is None else self.low
            hi = scale if self.high is None else self.high
            vals = rng.uniform(lo, hi, size=size)
        else:
            vals = rng.standard_normal(size) * scale
        if dt.kind == "c":
            imag = rng.standard_normal(size) * scale
            return (vals + 1j * imag).astype(dt)
        if dt.itemsize >= vals.dtype.itemsize:
            return vals.astype(dt)  # float64 holds every draw: nothing can overflow
        with np.errstate(over="ignore"):  # a narrower float overflows to inf, as meant
            return vals.astype(dt)

    @staticmethod
    def _inject(rng: np.random.Generator, flat: np.ndarray, pool: np.ndarray, rate: float) -> None:
        if rate <= 0 or pool.size == 0:
            return
        hit = rng.random(flat.size) < rate
        n = int(hit.sum())
        if n:
            flat[hit] = pool[rng.integers(0, pool.size, size=n)]

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (shape as a list)."""
        # by hand, not dataclasses.asdict: its deep copies were most of a campaign checkpoint's
        # time (every field is an immutable scalar or a tuple of ints)
        d = {name: getattr(self, name) for name in _RECIPE_FIELDS}
        d["shape"] = list(self.shape)
        if not self.edges:
            del d["edges"]  # recipes written before the field existed keep their JSON (and hash)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ArrayRecipe":
        """Inverse of :meth:`to_json`."""
        d = dict(d)
        d["shape"] = tuple(d["shape"])
        return cls(**d)


_RECIPE_FIELDS = tuple(f.name for f in dataclasses.fields(ArrayRecipe))

#: mutation operator names, in the order :func:`mutate` draws from.
MUTATIONS: tuple[str, ...] = ("rescale", "boundary", "nonfinite", "reshape", "redtype", "reseed")


def mutate(
    recipe: ArrayRecipe,
    rng: np.random.Generator,
    *,
    dtypes: tuple[str, ...] | None = None,
    op: str | None = None,
    max_rank: int = 4,
) -> tuple[ArrayRecipe, str]:
    """A mutated copy of ``recipe`` and the name of the operator applied.

    ``dtypes`` limits dtype changes (e.g. to those every member of a group accepts); ``op`` forces
    one operator (otherwise uniform over :data:`MUTATIONS`).
    """
    op = op or MUTATIONS[int(rng.integers(len(MUTATIONS)))]
    new_seed = int(rng.integers(0, 2**63 - 1))
    if op == "rescale":
        step = float(rng.choice([-8, -4, -2, -1, 1, 2, 4, 8]))
        return dataclasses.replace(recipe, seed=new_seed, log10_scale=recipe.log10_scale + step), op
    if op == "boundary":
        rate = float(rng.choice([0.1, 0.25, 0.5, 1.0]))
        return dataclasses.replace(recipe, seed=new_seed, boundary_rate=rate), op
    if op == "nonfinite":
        rate = float(rng.choice([0.05, 0.2, 0.5]))
        return dataclasses.replace(recipe, seed=new_seed, nonfinite_rate=rate), op
    if op == "reshape":
        return dataclasses.replace(recipe, seed=new_seed, shape=draw_shape(rng, max_rank=max_rank)), op
    if op == "redtype":
        choices = dtypes or DTYPE_NAMES
        return dataclasses.replace(recipe, seed=new_seed, dtype=str(rng.choice(list(choices)))), op
    if op == "reseed":
        return dataclasses.replace(recipe, seed=new_seed), op
    raise ValueError(f"unknown mutation operator {op!r}; expected one of {', '.join(MUTATIONS)}")
