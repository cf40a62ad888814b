"""Fuzzing mutations of a group input, per slot role.

:func:`mutate` returns a new :class:`~xamt.inputs.model.GroupInput` and the name of what it did.
Arrays change through :func:`xamt.inputs.arrays.mutate` (rescale, boundary and non-finite
injection, reshape, redtype, reseed); a reshape or redtype usually moves every data array that
shared the shape (dtype) together, so binary and matrix operations stay callable, and literal axes
follow the new rank. Literals change by role: axes (negative, ``None``, tuples), flags flip,
small integers for counts and ``k``, special floats for scalars, dtype arguments within the
allowed dtypes. With probability ``p_invalid`` the mutation is deliberately invalid (an axis out
of range, a dtype the members do not accept, out-of-range indices, mismatched shapes, a negative
count) so the status oracle sees refusals too.

:func:`revalue` is the other kind of change, the one most iterations make: new values at the
same shapes, dtypes and arguments, with special values by a named regime (ordinary, boundary,
non-finite, the dtype's edge values), so compiled programs are reused.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from xamt.inputs import arrays as fv
from xamt.inputs.model import GroupInput, SlotValue
from xamt.inputs.seed import fit_axis
from xamt.inputs.seed import is_data_slot as _is_data
from xamt.inputs.structured import split

__all__ = ["mutate", "revalue", "status_probes", "ties_input", "out_of_range_inputs", "nonfinite_input",
           "axis_none_input", "MUTATION_OPS", "INVALID_OPS"]

#: array operators (from :mod:`xamt.inputs.arrays`) and literal operators
MUTATION_OPS = tuple(fv.MUTATIONS) + ("axis", "flag", "integer", "scalar", "dtype_arg", "shape_arg")
INVALID_OPS = ("invalid:axis", "invalid:dtype", "invalid:index", "invalid:shape", "invalid:count")

_BOOL_ROLES = frozenset({"keepdim", "training", "flag", "sort_order", "stability", "sorted_flag"})
_INT_ROLES = frozenset({"index", "count", "num_classes", "correction", "start", "stop", "step",
                        "kernel", "stride", "dilation", "groups", "seed", "prng_key"})
_FLOAT_ROLES = frozenset({"scalar", "bound", "probability", "initial"})
_SCALARS = (0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 1e-3, 1e3, -1e3, 1e-30, 3.0e38)
_PROBABILITIES = (0.0, 0.1, 0.5, 0.9, 1.0)
_SMALL_INTS = (0, 1, 2, 3, 4, 5)
_RANK_TRIES = 16


def _role(group: Any, slot: int) -> str:
    for s in group.slots:
        if s.index == slot:
            return s.role
    return ""


def _rank(inp: GroupInput) -> int | None:
    for slot in inp:
        v = inp[slot]
        if _is_data(v):
            return len(v.all_recipes()[0].shape)
    return None


def _refit_axes(group: Any, inp: GroupInput) -> GroupInput:
    rank = _rank(inp)
    if rank is None:
        return inp
    out = inp
    for slot in inp:
        v = inp[slot]
        if v.kind == "literal" and _role(group, slot) == "axis":
            out = out.replace(slot, SlotValue.literal(fit_axis(v.value, rank)))
    return out


def _new_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63 - 1))


def _square_shape(rng: np.random.Generator) -> tuple[int, ...]:
    n = int(rng.integers(1, 6))
    batch = fv.draw_shape(rng, max_rank=1, p_empty=0.0)
    return tuple(batch) + (n, n)


def _broadcastable(shape: tuple[int, ...], rng: np.random.Generator) -> tuple[int, ...]:
    """A shape that broadcasts against ``shape``: some leading axes dropped, some sizes set to 1."""
    dims = list(shape[int(rng.integers(0, len(shape) + 1)):]) if shape else []
    return tuple(1 if rng.random() < 0.3 else d for d in dims)


def _array_op(group: Any, inp: GroupInput, rng: np.random.Generator,
              dtypes: Sequence[str] | None) -> tuple[GroupInput, str]:
    arrays = [s for s in inp if inp[s].is_array]
    data = [s for s in arrays if _is_data(inp[s])]
    op = fv.MUTATIONS[int(rng.integers(len(fv.MUTATIONS)))]
    if op == "redtype" and not data:
        op = "reseed"
    coordinated = op in ("reshape", "redtype") and len(data) > 1 and rng.random() < 0.85
    if op == "reshape" and len(data) > 1 and not coordinated:
        # one data array takes a shape that broadcasts against the others' (still a valid call)
        slot = data[int(rng.integers(len(data)))]
        others = [inp[s].all_recipes()[0].shape for s in data if s != slot]
        v = inp[slot]
        new_shape = _broadcastable(others[0], rng)
        recipes = tuple(dataclasses.replace(r, shape=new_shape, seed=_new_seed(rng)) for r in v.all_recipes())
        return inp.replace(slot, v.with_recipes(recipes)), f"{_role(group, slot) or 'slot'}:broadcast"
    if coordinated:
        if op == "reshape":
            shapes = [inp[s].all_recipes()[0].shape for s in data]
            square = any(len(sh) >= 2 and sh[-1] == sh[-2] for sh in shapes)
            new_shape = _square_shape(rng) if square else fv.draw_shape(rng)
            out = inp
            for s in data:
                v = inp[s]
                recipes = tuple(dataclasses.replace(r, shape=new_shape, seed=_new_seed(rng))
                                for r in v.all_recipes())
                out = out.replace(s, v.with_recipes(recipes))
            return (_refit_axes(group, out) if rng.random() < 0.9 else out), "all:reshape"
        choices = list(dtypes or fv.DTYPE_NAMES)
        new_dtype = str(choices[int(rng.integers(len(choices)))])
        out = inp
        for s in data:
            v = inp[s]
            recipes = tuple(dataclasses.replace(r, dtype=new_dtype, seed=_new_seed(rng))
                            for r in v.all_recipes())
            out = out.replace(s, v.with_recipes(recipes))
        return out, "all:redtype"
    pool = data if op == "redtype" else arrays
    slot = pool[int(rng.integers(len(pool)))]
    v = inp[slot]
    if op in ("boundary", "nonfinite") and v.structure:
        # what a structure promises (sorted bins, an SPD matrix), special values would break, as
        # revalue's regimes know: jnp.digitize's bins [-inf, -inf, 0.68, inf, nan] were filed
        op = "reseed"
    recipes = list(v.all_recipes())
    i = int(rng.integers(len(recipes)))
    square = (v.structure is not None and split(v.structure)[0] in
              ("spd", "well_conditioned", "lower_triangular", "upper_triangular"))
    new, name = fv.mutate(recipes[i], rng, dtypes=tuple(dtypes) if dtypes else None, op=op)
    if name == "reshape" and square:
        new = dataclasses.replace(new, shape=_square_shape(rng))
    if name == "redtype" and not _is_data(v):
        new = dataclasses.replace(new, dtype=recipes[i].dtype)
    recipes[i] = new
    out = inp.replace(slot, v.with_recipes(tuple(recipes)))
    if name == "reshape" and _is_data(v) and rng.random() < 0.9:
        out = _refit_axes(group, out)
    return out, f"{_role(group, slot) or 'slot'}:{name}"


def _literal_op(group: Any, inp: GroupInput, slot: int, rng: np.random.Generator,
                dtypes: Sequence[str] | None) -> tuple[GroupInput, str] | None:
    v = inp[slot]
    role = _role(group, slot)
    if v.kind == "dtype":
        choices = list(dtypes or fv.DTYPE_NAMES)
        return inp.replace(slot, SlotValue.dtype(str(choices[int(rng.integers(len(choices)))]))), "dtype_arg"
    if v.kind != "literal":
        return None
    value = v.value
    if role == "axis":
        rank = _rank(inp) or 1
        # None (every axis, or a library's own default axis) only where validation saw the
        # members agree on it (``axis_none``: numpy.take flattens, tf.gather takes axis 0)
        options: list[Any] = list(range(-rank, rank)) + ([None] if getattr(group, "axis_none", None) is not False else [])
        if rank >= 2:
            a, b = rng.choice(rank, size=2, replace=False)
            options.append([int(a), int(b)])
        new = options[int(rng.integers(len(options)))]
        return inp.replace(slot, SlotValue.literal(new)), "axis"
    if isinstance(value, bool) or role in _BOOL_ROLES:
        return inp.replace(slot, SlotValue.literal(not bool(value))), "flag"
    # a float in a slot named like a shape is a distribution's shape parameter (numpy.random.gamma's
    # `shape` k), not a sample shape: it mutates as a scalar
    if ((role == "shape" and not isinstance(value, float))
            or (isinstance(value, list) and all(isinstance(d, int) for d in value))):
        shape = list(fv.draw_shape(rng, min_rank=1, max_rank=3))
        return inp.replace(slot, SlotValue.literal(shape)), "shape_arg"
    if isinstance(value, int) or role in _INT_ROLES:
        return inp.replace(slot, SlotValue.literal(int(rng.choice(_SMALL_INTS)))), "integer"
    if isinstance(value, float) or role in _FLOAT_ROLES:
        pool = _PROBABILITIES if role == "probability" else _SCALARS
        return inp.replace(slot, SlotValue.literal(float(rng.choice(pool)))), "scalar"
    return None  # strings, modes, None: left as validated


def _invalid_options(group: Any, inp: GroupInput, dtypes: Sequence[str] | None) -> list[str]:
    """The invalid operators that apply to ``inp`` (``invalid:dtype`` needs the accepted
    ``dtypes``)."""
    options = []
    if any(inp[s].kind == "literal" and _role(group, s) == "axis" for s in inp):
        options.append("invalid:axis")
    data = [s for s in inp if _is_data(inp[s])]
    if data and dtypes is not None and any(d not in dtypes for d in fv.DTYPE_NAMES):
        options.append("invalid:dtype")
    if any(inp[s].structure and split(inp[s].structure)[0] == "index_into" for s in inp):
        options.append("invalid:index")
    if len(data) > 1:
        options.append("invalid:shape")
    if _int_slots(group, inp):
        options.append("invalid:count")
    return options


def _int_slots(group: Any, inp: GroupInput) -> list[int]:
    return [s for s in inp if inp[s].kind == "literal" and _role(group, s) in ("count", "index")
            and isinstance(inp[s].value, int) and not isinstance(inp[s].value, bool)]


def _redtype(inp: GroupInput, slots: Sequence[int], dtype: str) -> GroupInput:
    out = inp
    for s in slots:
        v = inp[s]
        out = out.replace(s, v.with_recipes(tuple(dataclasses.replace(r, dtype=dtype)
                                                  for r in v.all_recipes())))
    return out


def _reshape(inp: GroupInput, slot: int, shape: tuple[int, ...]) -> GroupInput:
    v = inp[slot]
    return inp.replace(slot, v.with_recipes(tuple(dataclasses.replace(r, shape=shape)
                                                  for r in v.all_recipes())))


def _apply_invalid(group: Any, inp: GroupInput, op: str, rng: np.random.Generator,
                   dtypes: Sequence[str] | None) -> GroupInput:
    data = [s for s in inp if _is_data(inp[s])]
    if op == "invalid:axis":
        rank = _rank(inp) or 1
        axis_slots = [s for s in inp if inp[s].kind == "literal" and _role(group, s) == "axis"]
        slot = axis_slots[int(rng.integers(len(axis_slots)))]
        return inp.replace(slot, SlotValue.literal(int(rng.choice([rank, -rank - 1, rank + 3]))))
    if op == "invalid:dtype":
        unsupported = [d for d in fv.DTYPE_NAMES if dtypes is not None and d not in dtypes]
        return _redtype(inp, data, str(unsupported[int(rng.integers(len(unsupported)))]))
    if op == "invalid:index":
        index_slots = [s for s in inp
                       if inp[s].structure and split(inp[s].structure)[0] == "index_into"]
        slot = index_slots[int(rng.integers(len(index_slots)))]
        v = inp[slot]
        target = split(v.structure)[1]  # type: ignore[arg-type]
        return inp.replace(slot, dataclasses.replace(v, structure=f"index_out_of:{target}"))
    if op == "invalid:shape":
        slot = data[int(rng.integers(len(data)))]
        old = inp[slot].all_recipes()[0].shape
        return _reshape(inp, slot, tuple(d + 1 for d in old) if old else (2,))
    slots = _int_slots(group, inp)
    slot = slots[int(rng.integers(len(slots)))]
    return inp.replace(slot, SlotValue.literal(int(rng.choice([-1, -3]))))


def _invalid(group: Any, inp: GroupInput, rng: np.random.Generator,
             dtypes: Sequence[str] | None) -> tuple[GroupInput, str] | None:
    options = _invalid_options(group, inp, dtypes)
    if not options:
        return None
    op = options[int(rng.integers(len(options)))]
    return _apply_invalid(group, inp, op, rng, dtypes), op


def axis_none_input(group: Any, inp: GroupInput) -> GroupInput | None:
    """``inp`` with its axis argument None (the value fuzzing may give it), or None where it
    has no axis argument, holds None already or its arrays are 0-d or 1-d (every meaning of
    None is the one axis there)."""
    axis_slot = next((s for s in inp if inp[s].kind == "literal" and _role(group, s) == "axis"), None)
    if axis_slot is None or inp[axis_slot].value is None or (_rank(inp) or 0) < 2:
        return None
    return inp.replace(axis_slot, SlotValue.literal(None))


def status_probes(group: Any, inp: GroupInput, seed: int = 0) -> list[tuple[GroupInput, str]]:
    """Inputs for checking status equivalence (DeepREL): every invalid operator that applies
    to ``inp`` once (dtypes aside: the registry build's dtype probe covers them); its data arrays
    as 0-d arrays, as vectors and with a batch axis in front; two axes for its axis; a Python
    number for its second data array; its dtype argument at each of :data:`PROBE_DTYPE_ARGS`.
    Each comes with its name; the list is the same for the same ``seed``."""
    rng = np.random.default_rng(seed)
    probes = [(_apply_invalid(group, inp, op, rng, None), op)
              for op in _invalid_options(group, inp, None)]
    data = [s for s in inp if _is_data(inp[s])]
    shapes = {s: inp[s].all_recipes()[0].shape for s in data}
    # other ranks: APIs that take the same inputs take (or refuse) scalars, vectors and batches
    # alike (a matrix inverse and a companion matrix part on vectors)
    for name, reshape in (("rank:0", lambda sh: ()), ("rank:1", lambda sh: (max(1, int(np.prod(sh))),)),
                          ("rank:+1", lambda sh: (2, *sh))):
        if any(reshape(sh) != sh for sh in shapes.values()):
            out = inp
            for s in data:
                out = _reshape(out, s, reshape(shapes[s]))
            probes.append((out, name))
    # several axes at once (one API documents an int, the other an int or a tuple)
    axis_slot = next((s for s in inp if inp[s].kind == "literal" and _role(group, s) == "axis"), None)
    if axis_slot is not None and (_rank(inp) or 0) >= 2:
        probes.append((inp.replace(axis_slot, SlotValue.literal([0, 1])), "axis:tuple"))
    # a Python number where an array went (one API documents "Tensor or Number", the other
    # Tensor only), and dtype arguments of other kinds (a float-only dtype against an int one)
    if len(data) > 1:
        probes.append((inp.replace(data[1], SlotValue.literal(1.5)), "scalar"))
        # the second array's shape changed along one axis: APIs that take the same two arrays
        # pair their axes alike (a dot product contracts the second-to-last axis of the second,
        # an inner product its last; a stack needs equal shapes, a vertical stack equal trailing
        # axes only)
        second = shapes[data[1]]
        if len(second) >= 2 and second[-1] != second[-2]:
            probes.append((_reshape(inp, data[1], (*second[:-2], second[-1], second[-2])), "shape2:transposed"))
        if len(second) >= 1:
            probes.append((_reshape(inp, data[1], (second[0] + 1, *second[1:])), "shape2:first+1"))
    # sequences of arrays (a stack's tensors): the second array one longer along its first or
    # its last axis (a vertical stack needs equal trailing axes, a depth stack equal leading
    # ones, a column stack equal first ones)
    seq = next((s for s in data if inp[s].kind == "arrays" and len(inp[s].all_recipes()) >= 2
                and not inp[s].structure), None)
    if seq is not None:
        recipes = inp[seq].all_recipes()
        sh = tuple(recipes[1].shape)
        for name, new_shape in (("seq2:first+1", (sh[0] + 1, *sh[1:]) if sh else None),
                                ("seq2:last+1", (*sh[:-1], sh[-1] + 1) if len(sh) >= 2 else None)):
            if new_shape is not None:
                changed = (recipes[0], dataclasses.replace(recipes[1], shape=new_shape), *recipes[2:])
                probes.append((inp.replace(seq, inp[seq].with_recipes(changed)), name))
    # the dtype argument at dtypes of other kinds, also where the seed left it at its default
    # (a bool-only logical_not against a conjugate that has no bool loop)
    dtype_slot = next((s for s in inp if inp[s].kind == "dtype"
                       or (_role(group, s) == "dtype" and inp[s].kind == "literal" and inp[s].value is None)),
                      None)
    if dtype_slot is not None:
        probes += [(inp.replace(dtype_slot, SlotValue.dtype(d)), f"dtype_arg:{d}")
                   for d in PROBE_DTYPE_ARGS if inp[dtype_slot].value != d]
    # values outside the range the seed kept them in: APIs that take the same inputs share a
    # domain (asin's [-1, 1] against sin's reals; a gamma shape must be >= 0, a logistic
    # location need not; a probability in (0, 1] against a noncentrality)
    probes += out_of_range_inputs(inp)
    return probes


def out_of_range_inputs(inp: GroupInput) -> list[tuple[GroupInput, str]]:
    """Probes with values beyond the range the seed kept its data arrays in: below ``low``
    (``values:below``: from ``low - 4`` to ``low - 0.25``) and above ``high``
    (``values:above``); non-negative float arguments become negative in the ``below`` probe.
    Arrays drawn without bounds hold negative and large values already and are left as they
    are; so are structured arrays (an SPD matrix, a probability vector)."""
    out = []
    for name, bound in (("values:below", "low"), ("values:above", "high")):
        probe = inp
        for s in inp:
            v = inp[s]
            if _is_data(v) and not v.structure:
                recipes = tuple(
                    dataclasses.replace(r, **_beyond(bound, getattr(r, bound), r.dtype),
                                        boundary_rate=0.0, nonfinite_rate=0.0, edges=False)
                    if getattr(r, bound) is not None
                    and r.dtype.startswith(("float", "int", "complex", "bfloat", "uint"))
                    and not (bound == "low" and r.dtype.startswith("uint") and getattr(r, bound) <= 0)
                    else r for r in v.all_recipes())
                if recipes != v.all_recipes():
                    probe = probe.replace(s, v.with_recipes(recipes))
            elif (bound == "low" and v.kind == "literal" and isinstance(v.value, float)
                  and v.value >= 0):
                probe = probe.replace(s, SlotValue.literal(-abs(v.value) - 0.5))
        if probe is not inp:
            out.append((probe, name))
    return out


def _beyond(bound: str, edge: float, dtype: str) -> dict[str, float]:
    """``low``/``high`` of a draw just beyond one edge of a seed's range (a whole step for
    integers, whose draws round the bounds)."""
    step = 1.0 if dtype.startswith(("int", "uint")) else 0.25
    if bound == "low":
        return {"low": edge - 4.0, "high": edge - step}
    return {"low": edge + step, "high": edge + 4.0}


def nonfinite_input(inp: GroupInput) -> GroupInput | None:
    """``inp`` with half the elements of its float data arrays NaN or ±inf, or None when it
    has no float data array. Two functions equal on finite values can part on NaN and inf
    (``multiply_no_nan`` against ``multiply``, ``nancumprod`` against ``cumprod``)."""
    out = inp
    for s in inp:
        v = inp[s]
        if not _is_data(v) or v.structure:
            continue
        recipes = tuple(dataclasses.replace(r, nonfinite_rate=0.5)
                        if r.dtype.startswith(("float", "complex", "bfloat")) else r
                        for r in v.all_recipes())
        if recipes != v.all_recipes():
            out = out.replace(s, v.with_recipes(recipes))
    return out if out is not inp else None


def ties_input(inp: GroupInput) -> GroupInput | None:
    """``inp`` with every data array equal to the first one of its shape and dtype (elements
    tie across arguments), or None when no two data arrays share a shape and dtype. APIs that
    agree on random values can part on ties (``x > y`` against ``x >= y``)."""
    first: dict[tuple, int] = {}
    out = inp
    for s in inp:
        v = inp[s]
        if not _is_data(v) or v.structure or len(v.all_recipes()) != 1:
            continue
        r = v.all_recipes()[0]
        key = (tuple(r.shape), r.dtype)
        if key in first:
            out = out.replace(s, inp[first[key]])
        else:
            first[key] = s
    return out if out is not inp else None


#: the dtypes a status probe passes as a dtype argument
PROBE_DTYPE_ARGS = ("bool", "int32", "complex64")


def mutate(group: Any, inp: GroupInput, rng: np.random.Generator, *,
           dtypes: Sequence[str] | None = None, p_invalid: float = 0.05) -> tuple[GroupInput, str]:
    """A mutated copy of ``inp`` and the operator's name.

    ``group`` supplies slot roles (a candidate or registered group); ``dtypes`` are the dtypes
    array mutations draw from (those the members accept); with probability ``p_invalid`` an
    invalid mutation is made on purpose (its name starts with ``invalid:``). A group's
    ``max_rank`` (a registry annotation) bounds the rank of the data arrays it returns.
    """
    if not inp.values:
        return inp, "none"
    max_rank = getattr(group, "max_rank", None)
    if max_rank is None:
        return _mutate(group, inp, rng, dtypes, p_invalid)
    # a group whose members share a convention only up to some rank (torch's class axis 1 is the
    # last axis only for 1-d and 2-d logits): draws past it are drawn again
    for _ in range(_RANK_TRIES):
        out, op = _mutate(group, inp, rng, dtypes, p_invalid)
        if all(len(r.shape) <= max_rank for s in out if out[s].is_array for r in out[s].all_recipes()):
            return out, op
    return inp, "none"


def _mutate(group: Any, inp: GroupInput, rng: np.random.Generator, dtypes: Sequence[str] | None,
            p_invalid: float) -> tuple[GroupInput, str]:
    if p_invalid > 0 and rng.random() < p_invalid:
        made = _invalid(group, inp, rng, dtypes)
        if made is not None:
            return made
    arrays = [s for s in inp if inp[s].is_array]
    literals = [s for s in inp if inp[s].kind in ("literal", "dtype")]
    # arrays carry most of the behaviour: three in four mutations touch one
    if arrays and (not literals or rng.random() < 0.75):
        return _array_op(group, inp, rng, dtypes)
    order = list(literals)
    rng.shuffle(order)
    for slot in order:
        made = _literal_op(group, inp, slot, rng, dtypes)
        if made is not None:
            return made
    if arrays:
        return _array_op(group, inp, rng, dtypes)
    return inp, "none"


def revalue(group: Any, inp: GroupInput, rng: np.random.Generator, regime: str,
            regimes: Mapping[str, Mapping[str, Any]], *, max_log10_scale: float = 30.0
            ) -> tuple[GroupInput, str]:
    """A copy of ``inp`` with new values and the same shapes, dtypes and arguments: what a
    compiled program already specialised on stays, so the call reuses it.

    ``regime`` names an entry of ``regimes`` (``xamt/data/fuzzing.toml``), which sets the special
    values of the data arrays (the fields it does not name are reset): ``rescale`` (powers of ten
    to step the magnitude by), ``edges``, ``boundary_rate``, ``nonfinite_rate`` (rates to draw
    from). Arrays with a required structure and non-data arrays (indices, masks) only get a new
    seed. Returns the input and ``"values:<regime>"``.
    """
    spec = regimes[regime]
    out = inp
    for slot in inp:
        v = inp[slot]
        if not v.is_array:
            continue
        special = _is_data(v) and not v.structure
        recipes = []
        for r in v.all_recipes():
            if not special:
                recipes.append(dataclasses.replace(r, seed=_new_seed(rng)))
                continue
            scale = r.log10_scale
            if spec.get("rescale"):
                scale += float(rng.choice(spec["rescale"]))
            scale = float(min(max_log10_scale, max(-max_log10_scale, scale)))
            recipes.append(dataclasses.replace(
                r, seed=_new_seed(rng), log10_scale=scale, edges=bool(spec.get("edges", False)),
                boundary_rate=float(rng.choice(spec["boundary_rate"])) if spec.get("boundary_rate") else 0.0,
                nonfinite_rate=float(rng.choice(spec["nonfinite_rate"])) if spec.get("nonfinite_rate") else 0.0))
        out = out.replace(slot, v.with_recipes(tuple(recipes)))
    return out, f"values:{regime}"
