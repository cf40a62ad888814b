"""Argument plans by optimal assignment (DeepREL's argument matching, §2.4 of the notes).

The group's slots are the pivot member's inputs. For every other member, the similarity of slot
``i`` and member input ``j`` is the sum of

* name similarity — normalised Levenshtein similarity of the snake-cased names (rapidfuzz);
* role — 1 for the same role (0.5 when both are plain ``param:`` roles), ``compatible_credit``
  for two roles of one ``[compatible]`` family of ``roles.toml`` (a ``scalar`` q meets a
  ``probability`` p), and a pair of two other *different known* roles is forbidden (``dim`` may
  meet ``axis``, never ``keepdims``); without a shared role the names must be at least
  ``min_name_without_role`` alike, or the inputs both required at the same position with one
  of them positional-only (a compatible pair is also allowed when both inputs are required);
* type — 1 for the same type class, 0.5 when one is unknown or they are numeric neighbours;
* position — ``1 - |i - j| / max(n_i, n_j)`` for two positional inputs;

and :func:`scipy.optimize.linear_sum_assignment` minimises ``cost_base - similarity``. Pairs below
``min_similarity`` stay unmatched. Data overrides (``argument_plans.toml``) then force, drop or
add arguments, and defaults that differ from the pivot's are made equal (``correction=0``).
"""
from __future__ import annotations

from typing import Any, Sequence

from xamt.matching.data import MatchingData, PlanOverride
from xamt.matching.model import ArgSpec, ArgumentPlan, GroupSlot
from xamt.matching.names import snake
from xamt.matching.roles import NO_LITERAL, Input, literal

__all__ = ["slots_from", "plan_for", "similarity", "best_plan", "compatible_roles"]

_FORBIDDEN = 1e6
_NUMERIC = {"int", "float", "bool"}


def _known(role: str) -> bool:
    return not role.startswith("param:")


_COMPATIBLE_CREDIT = 0.25


def _role_score(a: str, b: str, data: MatchingData | None = None) -> float | None:
    """Role credit, or None when the pair is forbidden."""
    if a == b:
        return 0.5 if not _known(a) else 1.0
    if {a, b} == {"tensor", "tensors"}:
        return 0.3
    if data is not None and b in data.role_compatible.get(a, ()):
        return float(data.assignment.get("compatible_credit", _COMPATIBLE_CREDIT))
    if _known(a) and _known(b):
        return None
    return 0.0


def compatible_roles(a: str, b: str, data: MatchingData) -> bool:
    """Two different roles of one ``[compatible]`` family (``roles.toml``)."""
    return a != b and b in data.role_compatible.get(a, ())


def _type_score(a: str | None, b: str | None) -> float:
    if a is None or b is None:
        return 0.5
    if a == b:
        return 1.0
    if {a, b} <= _NUMERIC or {a, b} == {"int", "sequence"}:
        return 0.5
    return 0.0


def similarity(slot: Input, cand: Input, n_slot: int, n_cand: int, data: MatchingData) -> float | None:
    """DeepREL-style similarity of a slot (pivot input) and a member input; None: forbidden."""
    from rapidfuzz.distance import Levenshtein

    role = _role_score(slot.role, cand.role, data)
    if role is None and data.assignment.get("forbid_role_mismatch", True):
        return None
    if slot.role != cand.role and (slot.role in data.role_fixed or cand.role in data.role_fixed):
        return None  # a PRNG key pairs only with a PRNG key (never with numpy's first `loc`)
    name = Levenshtein.normalized_similarity(snake(slot.name) or slot.name,
                                             snake(cand.name) or cand.name)
    first = slot.position == 0 and cand.position == 0
    alike = name >= float(data.assignment.get("min_name_without_role", 0.5))
    # two required inputs in the same place, one of them positional-only (its name is no part of
    # the API: scipy's ufuncs call theirs x1, x2 …, and boxcox(x1, x2) is jax's boxcox(x, lmbda))
    same_place = (slot.required and cand.required and slot.position is not None
                  and slot.position == cand.position
                  and "positional_only" in (slot.kind, cand.kind))
    if not role and not first and not alike and not same_place:
        return None  # no shared role: only names that look alike (or two inputs in one place) pair
    if (compatible_roles(slot.role, cand.role, data) and not first and not alike
            and not (slot.required and cand.required)):
        return None  # a compatible pair of two optional extras (alpha vs. weight): not evidence
    total = name + (role or 0.0) + _type_score(slot.type, cand.type)
    if slot.position is not None and cand.position is not None:
        total += 1.0 - abs(slot.position - cand.position) / max(n_slot, n_cand, 1)
    return total


def slots_from(pivot: Sequence[Input]) -> list[GroupSlot]:
    """The group's slots: one per pivot input."""
    return [
        GroupSlot(index=i, name=inp.name, role=inp.role, type=inp.type,
                  required=inp.required, default=inp.default)
        for i, inp in enumerate(pivot)
    ]


def _resolve_slot(ref: str, pivot: Sequence[Input]) -> int | None:
    """``"role#n"`` (n-th pivot input of that role) or a pivot parameter name → slot index."""
    if "#" in ref:
        role, _, nth = ref.partition("#")
        seen = -1
        for i, inp in enumerate(pivot):
            if inp.role == role:
                seen += 1
                if seen == int(nth):
                    return i
        return None
    for i, inp in enumerate(pivot):
        if inp.name == ref:
            return i
    return None


def _spec(slot: int | None, inp: Input, transform: str | None, sim: float) -> ArgSpec:
    if inp.receiver:
        return ArgSpec(slot=slot, param=inp.name, position=0, transform=transform, similarity=sim)
    if inp.kind == "var_positional":
        return ArgSpec(slot=slot, param=inp.name, position=inp.position, transform=transform,
                       similarity=sim, star=True)
    if inp.kind == "positional_only":
        return ArgSpec(slot=slot, param=inp.name, position=inp.position, transform=transform,
                       similarity=sim)
    if inp.kind == "positional_or_keyword" and inp.required:
        return ArgSpec(slot=slot, param=inp.name, position=inp.position, keyword=inp.name,
                       transform=transform, similarity=sim)
    return ArgSpec(slot=slot, param=inp.name, keyword=inp.name, transform=transform,
                   similarity=sim)


def _fixed_transform(value: Any) -> str | None:
    """A fixed list (``axis = [-2, -1]`` in a data file) is passed as a tuple: plans travel as
    JSON, which has no tuples, and ``numpy.linalg.norm`` takes its axes only as one."""
    return "tuple" if isinstance(value, (list, tuple)) else None


def _fixed_spec(inp: Input, role: str, data: MatchingData) -> ArgSpec:
    """A member input given ``role``'s fixed value (roles.toml [fixed]) with the role's
    transform, where the input sits in the call (positionally when it is required)."""
    spec = _spec(None, inp, data.role_transforms.get(role), 0.0)
    spec.value = data.role_fixed[role]
    spec.required = inp.required
    return spec


def plan_for(
    pivot: Sequence[Input],
    member: Sequence[Input],
    data: MatchingData,
    overrides: Sequence[PlanOverride] = (),
    *,
    identity: bool = False,
) -> tuple[ArgumentPlan, dict[int, bool]]:
    """Plan of one member against the pivot's inputs.

    Returns the plan and, per slot, whether the pivot's and the member's defaults disagree in a
    way no equalised default can fix (so the fuzzer must always give that slot).
    ``identity`` maps the pivot onto itself (the pivot's own plan).
    """
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    transforms = data.role_transforms
    n_s, n_m = len(pivot), len(member)
    pairs: dict[int, tuple[int, float]] = {}  # member input -> (slot, similarity)
    if identity:
        pairs = {j: (j, 4.0) for j in range(n_m)}
    elif n_s and n_m:
        base = float(data.assignment.get("cost_base", 5.0))
        cost = np.full((n_s, n_m), _FORBIDDEN)
        sims = np.zeros((n_s, n_m))
        for i, s in enumerate(pivot):
            for j, c in enumerate(member):
                sim = similarity(s, c, n_s, n_m, data)
                if sim is not None:
                    cost[i, j] = base - sim
                    sims[i, j] = sim
        rows, cols = linear_sum_assignment(cost)
        floor = float(data.assignment.get("min_similarity", 1.0))
        for i, j in zip(rows, cols):
            if cost[i, j] < _FORBIDDEN and sims[i, j] >= floor:
                pairs[int(j)] = (int(i), float(sims[i, j]))

    source = "assignment"
    dropped: list[str] = []
    notes: list[str] = []
    extra: list[ArgSpec] = []
    defaults: dict[str, Any] = {}
    for ov in overrides:
        source = "assignment+override"
        if ov.reason:
            notes.append(ov.reason)
        for param, ref in ov.map.items():
            j = next((k for k, inp in enumerate(member) if inp.name == param), None)
            slot = _resolve_slot(ref, pivot)
            if j is None or slot is None:
                notes.append(f"override map {param}->{ref} does not apply")
                continue
            for k in [k for k, (s, _) in pairs.items() if s == slot]:
                del pairs[k]
            pairs[j] = (slot, 0.0)
        for param in ov.drop:
            for k, inp in enumerate(member):
                if inp.name == param:
                    pairs.pop(k, None)
                    dropped.append(param)
        defaults.update(ov.defaults)
        for kw, value in ov.fixed.items():
            j = next((k for k, inp in enumerate(member) if inp.name == kw), None)
            if j is None:
                extra.append(ArgSpec(slot=None, param=kw, keyword=kw, value=value,
                                     transform=_fixed_transform(value)))
                continue
            # the member's own parameter: no slot feeds it any more (a fixed order n=0 is not the
            # group's n), and it is passed where the member takes it (positionally if required)
            pairs.pop(j, None)
            spec = _spec(None, member[j], _fixed_transform(value), 0.0)
            spec.value, spec.required = value, member[j].required
            extra.append(spec)
        for kw, dtype_name in ov.fixed_dtype.items():
            extra.append(ArgSpec(slot=None, param=kw, keyword=kw, value=dtype_name,
                                 transform="dtype"))
        # a parameter the plan fixes is fed by no slot (fixed values above; fixed dtypes here, in
        # the pivot's own plan too: its slot then feeds no member, and the group never needs an
        # input for it)
        for kw in ov.fixed_dtype:
            for k, inp in enumerate(member):
                if inp.name == kw:
                    pairs.pop(k, None)
        for param, role in ov.fixed_as.items():
            j = next((k for k, inp in enumerate(member) if inp.name == param), None)
            if j is None or role not in data.role_fixed:
                notes.append(f"override fixed_as {param}->{role} does not apply")
                continue
            pairs.pop(j, None)
            extra.append(_fixed_spec(member[j], role, data))

    specs: list[ArgSpec] = []
    mismatch: dict[int, bool] = {}
    for j, (slot, sim) in sorted(pairs.items(), key=lambda kv: kv[1][0]):
        inp, piv = member[j], pivot[slot]
        transform = transforms.get(piv.role)
        if transform is None and inp.type:
            transform = data.type_transforms.get(piv.role, {}).get(inp.type)
        spec = _spec(slot, inp, transform, sim)
        spec.required = inp.required
        if inp.name in defaults:
            spec.has_default, spec.default = True, defaults.pop(inp.name)
            spec.required = False
        elif not identity and inp.default != piv.default and not inp.receiver:
            pv, mv = literal(piv.default), literal(inp.default)
            if pv is NO_LITERAL or mv is NO_LITERAL or pv == mv:
                pass  # unknown defaults (numpy's <no value>) or equal ones: nothing to do
            elif pv is not None and not inp.required:
                spec.has_default, spec.default = True, pv  # make the member's default the pivot's
                spec.required = False
            elif not piv.required and not inp.required:
                mismatch[slot] = True  # pivot None vs a member's value: the fuzzer must choose
        specs.append(spec)
    for kw, value in defaults.items():  # override defaults no slot feeds: always pass them
        specs.append(ArgSpec(slot=None, param=kw, keyword=kw, value=value))
    specs.extend(extra)
    matched = set(pairs)
    fixed_names = {s.param for s in specs if s.slot is None}
    # a required parameter of a role with a fixed value (a PRNG key) that no slot feeds is given
    # that value: the plan stays complete
    for k, inp in enumerate(member):
        if (inp.required and k not in matched and inp.name not in fixed_names
                and inp.role in data.role_fixed):
            specs.append(_fixed_spec(inp, inp.role, data))
            fixed_names.add(inp.name)
    unmatched = [inp.name for k, inp in enumerate(member)
                 if inp.required and k not in matched and inp.name not in fixed_names]
    score = sum(sim for _, sim in pairs.values()) / max(len(pairs), 1)
    plan = ArgumentPlan(args=specs, unmatched_required=unmatched, dropped=dropped,
                        source=source if overrides else "assignment", score=round(score, 3),
                        notes=notes)
    return plan, mismatch


def best_plan(
    pivot: Sequence[Input],
    candidates: Sequence[Sequence[Input]],
    data: MatchingData,
    overrides: Sequence[PlanOverride] = (),
) -> tuple[ArgumentPlan, dict[int, bool]]:
    """The best plan over a member's overloads: complete plans first, then mapped slots, score."""
    best = None
    for k, inputs in enumerate(candidates):
        plan, mismatch = plan_for(pivot, inputs, data, overrides)
        plan.overload = k
        rank = (plan.complete, len(plan.slots()), plan.score)
        if best is None or rank > best[0]:
            best = (rank, plan, mismatch)
    assert best is not None
    return best[1], best[2]
