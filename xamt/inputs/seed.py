"""Seed inputs of a group: the canonical ordinary input, and a few variants for validation.

:func:`seed_plan` works out, from the members' argument plans and the canonical-input rules,
which slots a call needs (some member cannot be called without them), which may be given
(accepted by most members; the "wide" variant gives them), which cannot be given at all
(``unsupported``: a callable), and the :class:`~xamt.inputs.rules.SlotSpec` of each slot.

:func:`seed_inputs` returns a registered group's recorded seeds (the variant that validated), or
for a candidate group the variants in the order validation tries them:

``base``      the needed slots only (members use their own defaults for the rest)
``wide``      base plus the optional slots most members accept
``alt<i>``    the wide (else base) input with the i-th listed alternative literal of each slot
              that has one (an axis given as a tuple)
``positive``  data arrays drawn from [0.5, 2] (domains of logs, roots)
``square``    data arrays of shape (4, 4) (matrix functions)
``vector``    data arrays of shape (6,) (1-d only functions)
``integer``   data arrays of int64 in [-5, 5] (bitwise, counting functions)
``boolean``   data arrays of bool (logical reductions)
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from xamt.inputs.arrays import ArrayRecipe
from xamt.inputs.model import GroupInput, SlotValue
from xamt.inputs.rules import InputRules, SlotSpec, load_input_rules
from xamt.inputs.structured import INTEGER_STRUCTURES, split

__all__ = ["SeedPlan", "seed_plan", "seed_inputs", "variant_inputs", "VARIANTS", "needed_slots", "is_data_slot"]

VARIANTS = ("base", "wide", "alt1", "alt2", "positive", "square", "vector", "integer", "boolean")
_AXIS_ROLES = frozenset({"axis"})
#: seed offset per slot so two tensors of a binary op differ
_SLOT_STRIDE = 7919


@dataclass
class SeedPlan:
    """What the seeds of one group are made of (see the module docstring)."""

    specs: dict[int, SlotSpec]
    needed: list[int]
    optional: list[int]
    unsupported: list[int]
    base_seed: int
    roles: dict[int, str] = field(default_factory=dict)

    @property
    def callable(self) -> bool:
        """False when some needed slot cannot be given (the group cannot be called at all)."""
        return not self.unsupported


def needed_slots(member: Any) -> set[int]:
    """Slots ``member`` cannot be called without (a required parameter without a default)."""
    out = {a.slot for a in member.plan.args + member.plan.init_args
           if a.slot is not None and a.required and not a.has_default}
    if member.receiver_slot is not None:
        out.add(member.receiver_slot)
    return out


def _default_literal(text: str | None) -> tuple[bool, Any]:
    if text is None or text in ("<no value>", "None", ""):
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False, None


def seed_plan(group: Any, rules: InputRules | None = None) -> SeedPlan:
    """The :class:`SeedPlan` of a candidate or registered group."""
    rules = rules or load_input_rules()
    qualnames = [m.qualname for m in group.members]
    specs = rules.specs_for(group.slots, group.canonical, group.category, qualnames)
    members = [m for m in group.members if m.plan.complete]
    needed: set[int] = set()
    accepted: dict[int, int] = {}
    for m in members:
        needed |= needed_slots(m)
        for s in m.plan.slots():
            accepted[s] = accepted.get(s, 0) + 1
    optional = []
    by_index = {s.index: s for s in group.slots}
    for index, count in sorted(accepted.items()):
        spec = specs.get(index)
        if index in needed or spec is None:
            continue
        if spec.kind in ("omit", "unsupported") or not spec.optional:
            continue
        if count * 2 > len(members):
            optional.append(index)
    unsupported = []
    for index in sorted(needed):
        spec = specs.get(index)
        if spec is None:
            continue
        if spec.kind == "unsupported":
            unsupported.append(index)
        elif spec.kind == "omit" and spec.value is None:
            ok, value = _default_literal(by_index[index].default if index in by_index else None)
            if ok:
                specs[index] = replace(spec, kind="literal", value=value, source="slot default")
            else:
                unsupported.append(index)
    return SeedPlan(specs=specs, needed=sorted(needed), optional=optional, unsupported=unsupported,
                    base_seed=rules.base_seed, roles={s.index: s.role for s in group.slots})


def _slot_value(index: int, spec: SlotSpec, plan: SeedPlan, slots: Sequence[Any],
                seed_offset: int) -> SlotValue | None:
    kind = spec.kind
    if kind == "omit":
        kind = "literal"  # only reached for a needed slot: give the spec's value
    structure = InputRules.resolve_reference(spec.structure, slots) if spec.structure else None
    if spec.structure and structure is None and kind == "derived":
        return None
    seed = plan.base_seed + _SLOT_STRIDE * (index + 1) + seed_offset
    if kind in ("array", "arrays"):
        recipe = ArrayRecipe(seed=seed, dtype=spec.dtype, shape=tuple(spec.shape),
                             log10_scale=spec.log10_scale, low=spec.low, high=spec.high)
        if kind == "array":
            return SlotValue.array(recipe, structure)
        recipes = [replace(recipe, seed=seed + 31 * i) for i in range(max(1, spec.count))]
        return SlotValue.arrays(recipes, structure)
    if kind == "literal":
        return SlotValue.literal(_jsonable(spec.value))
    if kind == "dtype":
        return SlotValue.dtype(spec.value or "float32")
    if kind == "derived":
        return SlotValue.derived(structure)  # type: ignore[arg-type]
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def is_data_slot(value: SlotValue) -> bool:
    """An array slot holding ordinary data (not indices, classes or a boolean mask)."""
    if not value.is_array:
        return False
    if value.structure and split(value.structure)[0] in INTEGER_STRUCTURES:
        return False
    return all(r.dtype != "bool" for r in value.all_recipes())


def _fit_axes(values: dict[int, SlotValue], plan: SeedPlan) -> dict[int, SlotValue]:
    """Keep literal axes within the rank of the first data array (cross-slot constraint)."""
    rank = None
    for slot in sorted(values):
        v = values[slot]
        if is_data_slot(v):
            rank = len(v.all_recipes()[0].shape)
            break
    if rank is None:
        return values
    out = dict(values)
    for slot, v in values.items():
        if plan.roles.get(slot) not in _AXIS_ROLES or v.kind != "literal":
            continue
        out[slot] = SlotValue.literal(fit_axis(v.value, rank))
    return out


def fit_axis(value: Any, rank: int) -> Any:
    """An axis (int, list of ints or None) brought within ``rank`` (the largest valid axis)."""
    if rank <= 0:
        return value if value is None else (0 if isinstance(value, int) else [])
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if -rank <= value < rank else rank - 1
    if isinstance(value, list):
        fitted = []
        for v in value:
            f = fit_axis(v, rank)
            if f not in fitted:
                fitted.append(f)
        return fitted
    return value


def _build(plan: SeedPlan, slots: Sequence[Any], chosen: Sequence[int], variant: str,
           specs: dict[int, SlotSpec] | None = None, seed_offset: int = 0) -> GroupInput:
    specs = specs or plan.specs
    values: dict[int, SlotValue] = {}
    for index in chosen:
        value = _slot_value(index, specs[index], plan, slots, seed_offset)
        if value is not None:
            values[index] = value
    # a structure referring to a slot the input does not give falls back to plain data
    for index, value in list(values.items()):
        dep = value.depends_on()
        if dep is not None and dep not in values:
            if value.kind == "derived":
                del values[index]
            else:
                values[index] = replace(value, structure=None)
    return GroupInput(_fit_axes(values, plan), variant)


def _data_slots(plan: SeedPlan, chosen: Sequence[int], *, masks: bool = False) -> list[int]:
    """Array slots holding ordinary data (``masks``: boolean masks too, which follow the data's
    shape); index and class arrays are left out."""
    out = []
    for index in chosen:
        spec = plan.specs[index]
        if spec.kind not in ("array", "arrays"):
            continue
        if spec.structure and split(spec.structure)[0] in INTEGER_STRUCTURES:
            continue
        if spec.dtype == "bool" and not masks:
            continue
        out.append(index)
    return out


def variant_inputs(group: Any, plan: SeedPlan | None = None, *, rules: InputRules | None = None,
                   seed_offset: int = 0) -> list[GroupInput]:
    """The seed variants of a candidate group, in the order validation tries them.

    ``seed_offset`` shifts every recipe seed (same shapes, other values): validation's second,
    independent input.
    """
    plan = plan or seed_plan(group, rules)
    slots = group.slots
    base = list(plan.needed)
    wide = sorted(set(base) | set(plan.optional))
    out = [_build(plan, slots, base, "base", seed_offset=seed_offset)]
    if wide != base:
        out.append(_build(plan, slots, wide, "wide", seed_offset=seed_offset))
    start = wide
    for i in (0, 1):
        alt_specs = dict(plan.specs)
        changed = False
        for index in start:
            spec = plan.specs[index]
            if len(spec.alternatives) > i and spec.kind == "literal":
                alt_specs[index] = replace(spec, value=spec.alternatives[i])
                changed = True
        if changed:
            out.append(_build(plan, slots, start, f"alt{i + 1}", alt_specs, seed_offset))
    data = _data_slots(plan, base)
    shaped = _data_slots(plan, base, masks=True)
    if data:
        for name, change in (
            ("positive", {"low": 0.5, "high": 2.0}),
            ("square", {"shape": (4, 4)}),
            ("vector", {"shape": (6,)}),
            ("integer", {"dtype": "int64", "low": -5, "high": 5}),
            ("boolean", {"dtype": "bool"}),
        ):
            var_specs = dict(plan.specs)
            changed = False
            for index in (shaped if "shape" in change else data):
                spec = plan.specs[index]
                new = replace(spec, **change)
                if new != spec:
                    var_specs[index] = new
                    changed = True
            if changed:
                out.append(_build(plan, slots, base, name, var_specs, seed_offset))
    # the same input twice is one variant
    seen, unique = set(), []
    for inp in out:
        sig = inp.signature()
        if sig not in seen:
            seen.add(sig)
            unique.append(inp)
    return unique


def seed_inputs(group: Any, *, rules: InputRules | None = None) -> list[GroupInput]:
    """The canonical ordinary input(s) of ``group``.

    A registered group (:class:`xamt.groups.model.RegisteredGroup`) returns the seed(s) it was
    validated with; a candidate group returns its variants (the first is the canonical one).
    """
    recorded = getattr(group, "seeds", None)
    if recorded:
        return [s if isinstance(s, GroupInput) else GroupInput.from_json(s) for s in recorded]
    return variant_inputs(group, rules=rules)
