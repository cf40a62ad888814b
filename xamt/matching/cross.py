"""Cross-library candidate groups (Xamt++'s role-aware alias-category grouping, §1.7).

1. Every eligible API (functions, tensor methods and constructed APIs such as
   ``torch.distributions.Normal.log_prob``; not in-place variants, not classes, not in an
   excluded category) joins the *loose group* of each of its canonical names within its
   category partition (a hard category, or ``core`` for the soft ones), unless the homonym
   blacklist removes it from that name.
2. Loose groups spanning two or more libraries are split into connected components of the
   role-compatible relation over cross-library pairs: an edge when the pair confidence reaches
   ``edge_confidence``, or the role Jaccard ``edge_role``, or (a role list empty) the arity
   similarity ``edge_arity``. Components spanning two or more libraries are candidate groups.
3. Group confidence is the mean pair confidence over its cross-library pairs; groups under
   ``min_confidence`` are dropped. Each member gets an argument plan against the pivot (the
   member of the most reference-like library, see :mod:`xamt.matching.argplan`).
"""
from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable

from xamt.matching.argplan import best_plan, compatible_roles, plan_for, slots_from
from xamt.matching.categories import partition
from xamt.matching.data import MatchingData
from xamt.matching.model import ArgumentPlan, CandidateGroup, Member, band
from xamt.matching.views import ApiView, ViewIndex

__all__ = ["PairScore", "pair_confidence", "cross_library_groups", "members_and_slots"]


@dataclass(frozen=True)
class PairScore:
    confidence: float
    name: float
    category: float
    role: float
    arity: float
    doc: float


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _arity(a: int | None, b: int | None, unknown: float) -> float:
    if a is None or b is None:
        return unknown
    if a == 0 and b == 0:
        return 1.0
    return 1.0 - abs(a - b) / max(a, b, 1)


def _declares(a: ApiView, b: ApiView) -> bool:
    names = set(b.record.names)
    return any(ref in names for ref in a.record.doc_equiv)


def pair_confidence(a: ApiView, b: ApiView, data: MatchingData, same_name: bool = True) -> PairScore:
    """Xamt++'s pair confidence plus a bonus for a documented equivalence."""
    c = data.confidence
    name = 1.0 if same_name else 0.0
    if a.category == b.category:
        category = 1.0
    elif partition(a.category, data) == partition(b.category, data):
        category = c["soft_category_credit"]
    else:
        category = 0.0
    # Roles and arity of the *required* inputs: optional extras (numpy's where=, dtype=) say
    # little about whether two APIs compute the same thing.
    role = _jaccard(a.core_roles, b.core_roles)
    if not a.core_roles or not b.core_roles:
        role = max(role, c["empty_role_floor"])
    arity = _arity(a.core_arity, b.core_arity, c["unknown_arity"])
    base = c["w_name"] * name + c["w_category"] * category + c["w_role"] * role + c["w_arity"] * arity
    doc_j = _jaccard(a.terms, b.terms) if a.terms and b.terms else 0.0
    doc = min(c["doc_bonus_max"], max(0.0, doc_j - c["doc_bonus_offset"]) * c["doc_bonus_scale"])
    if _declares(a, b) or _declares(b, a):
        doc += c["doc_equiv_bonus"]
    return PairScore(min(1.0, base + doc), name, category, role, arity, doc)


def plans_compatible(a: ApiView, b: ApiView, data: MatchingData,
                     canonical: str | None = None) -> bool:
    """DeepREL's acceptance rule: the optimal argument assignment leaves no required input of
    either API unmatched, in both directions (over each API's overloads).

    A constructed API named by a data file (distributions.toml) has its plan given there, in
    one direction only (its parameters onto the other's): that plan must be complete.
    ``canonical`` (the loose group's name) selects the overrides scoped to it.
    """
    if b.qualname in data.constructed_names:
        a, b = b, a
    if a.qualname in data.constructed_names:
        plan, _ = best_plan(b.inputs, a.candidate_inputs(), data, data.overrides_for(a.qualname, canonical))
        return plan.complete
    ab, _ = best_plan(a.inputs, b.candidate_inputs(), data, data.overrides_for(b.qualname, canonical))
    if not ab.complete:
        return False
    ba, _ = best_plan(b.inputs, a.candidate_inputs(), data, data.overrides_for(a.qualname, canonical))
    return ba.complete


def _eligible(v: ApiView, data: MatchingData) -> bool:
    return (v.kind in ("function", "method", "constructed", "filling") and v.inplace_of is None
            and v.category not in data.excluded_categories)


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _pivot_order(v: ApiView) -> tuple:
    # plain APIs before secondary ones (numpy.sum before numpy.add.reduce, tf.abs before
    # tf.raw_ops.Abs, whatever the library); then the reference-like library; functions before
    # methods; then the fuller signature
    return (v.secondary, v.pivot_rank, v.kind != "function", v.record.deprecated,
            -len(v.inputs), v.qualname)


def _default_call(v: ApiView) -> str:
    if v.kind == "constructed":
        return "constructed"
    if v.kind == "filling":
        return "fill"  # through the adapter's fill helper (ApiView.via)
    return "method" if v.record.receiver else "function"


def constructed_plan(plan: ArgumentPlan, init_names: set[str]) -> ArgumentPlan:
    """Split a constructed API's flat plan: the constructor's parameters go to ``init_args``
    (keywords), the method's stay in ``args``. Arrays reach either as the library's tensors
    and numbers as numbers (``tensor_if_array``) where the role asks no other conversion."""
    args, init_args = [], []
    for spec in plan.args:
        spec = dataclasses.replace(spec, transform=spec.transform or "tensor_if_array")
        if spec.param in init_names:
            init_args.append(dataclasses.replace(spec, position=None, keyword=spec.param,
                                                 star=False))
        else:
            args.append(spec)
    return dataclasses.replace(plan, args=args, init_args=init_args)


def members_and_slots(views: list[ApiView], data: MatchingData, *, call_of=None, via_of=None,
                      canonical: str | None = None):
    """Pivot, slots and planned members for a set of views (shared by intra-library relations).

    ``canonical`` is the cross-library group's name: overrides scoped to it apply (intra-library
    relations pass none).

    ``call_of(view)`` and ``via_of(view)`` choose each member's call style and helper; the
    default calls functions as functions and methods on their receiver. ``canonical`` (a
    cross-library group's name) also applies the plan overrides scoped to it.
    """
    ordered = sorted(views, key=_pivot_order)
    pivot = ordered[0]
    pivot_inputs = pivot.inputs
    slots = slots_from(pivot_inputs)
    members: list[Member] = []
    mismatch_all: dict[int, bool] = {}
    as_tensor: set[int] = set()  # slots some member takes as a tensor under a compatible role
    for v in ordered:
        overrides = data.overrides_for(v.qualname, canonical)
        if v is pivot:
            plan, mismatch = plan_for(pivot_inputs, v.inputs, data, overrides, identity=True)
        else:
            plan, mismatch = best_plan(pivot_inputs, v.candidate_inputs(), data, overrides)
            inputs = {i.name: i for i in v.candidate_inputs()[plan.overload or 0]}
            for a in plan.args:
                inp = inputs.get(a.param)
                if (a.slot is not None and inp is not None and inp.role == "tensor"
                        and compatible_roles(pivot_inputs[a.slot].role, "tensor", data)):
                    as_tensor.add(a.slot)
        mismatch_all.update(mismatch)
        call = call_of(v) if call_of else _default_call(v)
        if v.kind == "constructed":
            plan = constructed_plan(plan, {p.name for p in v.record.init_params})
        receiver_slot = None
        if v.record.receiver:
            receiver_slot = next((a.slot for a in plan.args if a.position == 0 and a.param == "self"),
                                 None)
        members.append(Member(
            library=v.library, qualname=v.qualname, target=v.record.target, kind=v.kind,
            call=call, plan=plan, receiver_slot=receiver_slot,
            via=via_of(v) if via_of else v.via, aliases=list(v.record.aliases),
            category=v.category, canonical=v.canonical.name, implements=list(v.record.doc_equiv),
        ))
    for slot in slots:
        if slot.index in as_tensor:
            # the pivot's scalar-like input (jax ndtri's `p`) is another member's tensor
            # (torch's `input`): seed it with an array, which every member takes
            slot.role = "tensor"
        taking = [m for m in members if slot.index in m.plan.slots()]
        slot.shared = len(taking) == len(members)
        slot.required = bool(
            any(a.slot == slot.index and a.required
                for m in members for a in [*m.plan.args, *m.plan.init_args])
            or mismatch_all.get(slot.index)
        )
    return pivot, slots, members


def cross_library_groups(index: ViewIndex, data: MatchingData) -> tuple[list[CandidateGroup], dict]:
    """Candidate groups across libraries, and statistics about how they were formed."""
    loose: dict[tuple[str, str], list[ApiView]] = defaultdict(list)
    homonym_hits: list[tuple[str, str, str]] = []
    for v in index.views:
        if not _eligible(v, data):
            continue
        for canon in v.canonicals():
            h = data.homonym_for(v.qualname, canon.name)
            if h is not None:
                homonym_hits.append((v.qualname, canon.name, h.reason))
                continue
            loose[(canon.name, partition(v.category, data))].append(v)

    g = data.grouping
    groups: list[CandidateGroup] = []
    n_loose_multi = 0
    for (canonical, part), members in sorted(loose.items()):
        members = list({id(v): v for v in members}.values())
        if len({v.library for v in members}) < 2:
            continue
        n_loose_multi += 1
        uf = _UnionFind(len(members))
        scores: dict[tuple[int, int], float] = {}
        for i, j in combinations(range(len(members)), 2):
            a, b = members[i], members[j]
            if a.library == b.library:
                continue
            s = pair_confidence(a, b, data)
            scores[(i, j)] = s.confidence
            empty = not a.core_roles or not b.core_roles
            if (s.confidence >= g["edge_confidence"] or s.role >= g["edge_role"]
                    or (empty and s.arity >= g["edge_arity"]) or plans_compatible(a, b, data, canonical)):
                uf.union(i, j)
        comps: dict[int, list[int]] = defaultdict(list)
        for i in range(len(members)):
            comps[uf.find(i)].append(i)
        parts = [c for c in comps.values() if len({members[i].library for i in c}) >= 2]
        parts.sort(key=lambda c: -len(c))
        for n, comp in enumerate(parts):
            comp_views = [members[i] for i in comp]
            pair_conf = [scores[(i, j)] for i, j in combinations(sorted(comp), 2) if (i, j) in scores]
            confidence = sum(pair_conf) / len(pair_conf) if pair_conf else 0.0
            if confidence < g["min_confidence"]:
                continue
            # the group's category is its plain members' (a raw op's namespace says nothing)
            categories = (Counter(v.category for v in comp_views if not v.secondary)
                          or Counter(v.category for v in comp_views))
            category = categories.most_common(1)[0][0]
            pivot, slots, planned = members_and_slots(comp_views, data, canonical=canonical)
            key = f"x:{canonical}/{category}" + (f"#{n}" if len(parts) > 1 else "")
            lossy = any(c.lossy for v in comp_views for c in v.canonicals() if c.name == canonical)
            groups.append(CandidateGroup(
                key=key, relation="cross_library", category=category, canonical=canonical,
                equivalence=("status" if category in data.status_only_categories
                             and canonical not in data.deterministic_names.get(category, ())
                             else "value"),
                confidence=confidence,
                band=band(confidence, data.confidence["high"], data.confidence["medium"]),
                slots=slots, members=planned, pivot=pivot.qualname, lossy=lossy,
                evidence={"pairs": len(pair_conf), "loose_size": len(members),
                          "incomplete_plans": sum(1 for m in planned if not m.plan.complete)},
            ))
    stats = {"loose_groups_multi_library": n_loose_multi, "homonym_removals": len(homonym_hits),
             "homonyms": homonym_hits}
    return groups, stats


def covered(groups: Iterable[CandidateGroup]) -> set[tuple[str, str]]:
    """(library, qualname) of every member of the groups."""
    return {(m.library, m.qualname) for g in groups for m in g.members}
