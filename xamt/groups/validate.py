"""Execution validation of one candidate group (a step generator, see :mod:`.schedule`).

1. Members that cannot be called are rejected without running: an incomplete argument plan, a
   needed slot no canonical input can give (a callable), an annotation.
2. Seed variants (:func:`xamt.inputs.seed.variant_inputs`) are run, each member twice on fresh
   conversions (two different results: nondeterministic). On each variant, every pair of members
   of different libraries (any pair, for an intra-library relation) whose outputs agree under
   the validation tolerance is joined in a union-find; each component is then checked as a whole
   (every member against the element-wise median) and members that disagree are dropped. This is
   done for the group's declared normaliser and its fallbacks; the best is kept. The ``base`` and
   ``wide`` variants run in full; later variants first run only the members still unvalidated
   plus one anchor per library, and in full only if that validates someone new.
3. The best variant's components are re-checked on a second input (same shapes, other values):
   an edge survives only if it agrees on both inputs.
4. Validated members' dtypes are probed.

Equivalence: a component whose members agree is ``value``-equivalent. Members that run but
cannot be compared by value (nondeterministic: samplers, uninitialised memory) form a
``status``-equivalent component when two libraries (intra: two members) have them; for
intra-library relations, members that run but differ are status-equivalent too (DeepREL: value
equivalence first, status equivalence second).

Relations inferred from similarity rather than names (``validation.toml [probe]
status_relations``: ``inferred``) must show more: value agreement counts only when some output
changed between the two inputs (agreeing on a size or an all-``True`` mask says nothing about
values), not every member gave its input back unchanged, the members also agree when the
input's arrays of one shape tie (:func:`xamt.inputs.mutate.ties_input`), when they hold NaN
and ±inf (:func:`xamt.inputs.mutate.nonfinite_input`) and beyond the range the seed kept them
in (:func:`xamt.inputs.mutate.out_of_range_inputs`), and every slot reaches every member;
status-equivalent members must succeed or fail alike on deliberately invalid inputs and on
values beyond the seed's range (:func:`xamt.inputs.mutate.status_probes`; NaN out of NaN-free
input counts as a refusal) and accept the same probed dtypes. A cross-library value group's
domain of ranks is probed one rank above its seed, and its axis argument at None
(:meth:`_Validator._rank_domain`).
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Generator

import numpy as np

from xamt.errors import ConfigError
from xamt.groups.agree import Agreement
from xamt.groups.annotations import Annotations, BuildSettings, GroupAnnotation
from xamt.exec.group import ExecItem, GroupExecutor, MemberResult
from xamt.groups.model import MemberInfo, RegisteredGroup
from xamt.exec.normalise import NormalisationRules, leaves, normalise
from xamt.groups.unionfind import UnionFind
from xamt.inputs.materialise import materialise
from xamt.inputs.model import GroupInput
from xamt.inputs.mutate import axis_none_input, nonfinite_input, out_of_range_inputs, status_probes, ties_input
from xamt.inputs.rules import InputRules
from xamt.inputs.seed import needed_slots, seed_plan, variant_inputs
from xamt.inputs.structured import INTEGER_STRUCTURES, split

__all__ = ["Context", "Evaluation", "validate_candidate", "CandidateResult"]

_DEATHS = {"crashed": "crashed", "timeout": "timeout", "oom": "oom"}


@dataclass
class Context:
    """Everything validation reads (shared by all candidates of a build)."""

    rules: InputRules
    norms: NormalisationRules
    annotations: Annotations
    settings: BuildSettings
    executor: GroupExecutor
    versions: dict[str, str] = field(default_factory=dict)
    probe: bool = True


@dataclass
class Evaluation:
    """One variant's outcome for a set of members."""

    input: GroupInput
    members: list[int]
    results: dict[int, MemberResult]
    normalisation: str
    values: dict[int, Any]
    components: list[list[int]]
    status_components: list[list[int]]
    dropped: dict[int, str] = field(default_factory=dict)

    @property
    def validated(self) -> set[int]:
        return {m for c in self.components for m in c} | {m for c in self.status_components for m in c}

    def score(self, order: int) -> tuple:
        value = sum(len(c) for c in self.components)
        status = sum(len(c) for c in self.status_components)
        return (value, status, len(self.input.values), -order)


@dataclass
class CandidateResult:
    """What validation produced for one candidate: registered groups and per-member facts."""

    candidate: str
    groups: list[RegisteredGroup]
    seconds: float = 0.0
    executions: int = 0

    def summary(self) -> dict[str, Any]:
        reasons: dict[str, int] = {}
        for g in self.groups:
            for _, info in g.rejected:
                key = info.reason or info.state
                reasons[key] = reasons.get(key, 0) + 1
        return {
            "groups": [{"key": g.key, "state": g.state, "equivalence": g.equivalence,
                        "members": len(g.members), "libraries": g.libraries} for g in self.groups],
            "reasons": reasons, "seconds": round(self.seconds, 3), "executions": self.executions,
        }


def _substantial(value: Any) -> bool:
    """True when a normalised output has a non-boolean numeric leaf of two or more elements."""
    from xamt.exec.normalise import leaves

    return any(isinstance(leaf, np.ndarray) and leaf.dtype.kind in "iufc" and leaf.size >= 2
               for leaf in leaves(value))


def _finite(value: Any) -> bool:
    """True when every float/complex leaf of a normalised output is finite."""
    from xamt.exec.normalise import leaves

    for leaf in leaves(value):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "fc":
            with np.errstate(all="ignore"):
                if not np.isfinite(leaf).all():
                    return False
    return True


def _shape_signature(value: Any) -> Any:
    """The output's structure with each array leaf replaced by its shape (a status-only group's
    members must return alike-shaped outputs); a non-array leaf is its type name."""
    if isinstance(value, (tuple, list)):
        return tuple(_shape_signature(v) for v in value)
    shape = getattr(value, "shape", None)
    if shape is not None:
        try:
            return tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            pass
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return ()
    return type(value).__name__


def _shape_text(sig: Any) -> str:
    return str(sig) if not isinstance(sig, str) else f"a {sig}"


def _order(dtype: str) -> int:
    from xamt.inputs.arrays import DTYPE_NAMES

    return DTYPE_NAMES.index(dtype) if dtype in DTYPE_NAMES else len(DTYPE_NAMES)


def _is_data_value(value: Any) -> bool:
    if not value.is_array:
        return False
    if value.structure and split(value.structure)[0] in INTEGER_STRUCTURES:
        return False
    return all(r.dtype != "bool" for r in value.all_recipes())


class _Validator:
    def __init__(self, group: Any, ctx: Context):
        self.group = group
        self.ctx = ctx
        self.ann: GroupAnnotation | None = ctx.annotations.get(group.key)
        self.cross = group.relation == "cross_library"
        tol = dict(ctx.settings.tolerance)
        if self.ann and self.ann.tolerance:
            tol.update(self.ann.tolerance)
        self.agreement = Agreement(tol)
        qualnames = [m.qualname for m in group.members]
        norm, fallbacks, why = ctx.norms.for_group(group.canonical, group.category, qualnames)
        if self.ann and self.ann.normalise:
            norm, fallbacks, why = self.ann.normalise, (), f"annotation: {self.ann.reason}"
        self.norm_candidates = list(dict.fromkeys([norm, *fallbacks]))
        self.norm_why = why
        self.info: dict[int, MemberInfo] = {
            i: MemberInfo(m.qualname, m.library, call=m.call) for i, m in enumerate(group.members)}
        self.executions = 0
        self.tried: list[str] = []
        self.differed: dict[int, str] = {}
        self.confirm_input: GroupInput | None = None
        self.probe_names: list[str] = []
        #: per value component: whether its members agree with the axis argument None, and why
        #: (_rank_domain; absent: not probed)
        self.axis_none: dict[tuple[int, ...], tuple[bool, str]] = {}
        #: per value component: (seed rank, probed rank, inside the domain, why) (_rank_domain)
        self.domains: dict[tuple[int, ...], tuple[int, int, bool, str]] = {}
        for note in (self.ann.member_notes if self.ann else []):
            for i, m in enumerate(group.members):
                if m.qualname == note.api and note.action == "note":
                    self.info[i].notes.append(note.reason)

    # -- helpers --------------------------------------------------------------------------------
    def lib(self, i: int) -> str:
        return self.group.members[i].library

    def valid_component(self, members: list[int]) -> bool:
        if self.cross:
            return len({self.lib(i) for i in members}) >= 2
        return len(members) >= 2

    def reject(self, i: int, reason: str, detail: str = "", state: str = "rejected") -> None:
        info = self.info[i]
        info.state, info.reason, info.detail = state, reason, detail[:300]

    def run(self, inp: GroupInput, members: list[int], repeat: int | None = None,
            limit: float | None = None) -> Generator[list, list, dict[int, MemberResult]]:
        repeat = self.ctx.settings.repeat if repeat is None else repeat
        self.executions += len(members)
        runs = yield from self.ctx.executor.run_steps(
            [ExecItem(self.group, inp, members=members, repeat=repeat, normalise="none",
                      limit=limit)])
        return dict(zip(runs[0].members, runs[0].results))

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, inp: GroupInput, results: dict[int, MemberResult]) -> Evaluation:
        ok = [i for i, r in results.items() if r.ok]
        if self.cross and self.group.equivalence == "status":
            return self._evaluate_status_only(inp, results, ok)
        det = [i for i in ok if not results[i].nondeterministic]
        nondet = [i for i in ok if results[i].nondeterministic]
        best: Evaluation | None = None
        for n, norm in enumerate(self.norm_candidates):
            values = {}
            for i in det:
                try:
                    value = normalise(results[i].value, norm)
                except Exception:  # a normaliser that does not fit this output: not comparable
                    continue
                # a fallback must keep a real part of the output: reducing it to a flag or a
                # scalar (cho_factor's `lower`) would make anything agree
                if n > 0 and not _substantial(value):
                    continue
                values[i] = value
            comps, dropped = self._components(list(values), values)
            status = []
            if self.cross:
                # samplers: values are not comparable, running without error is. In a group that
                # matching made status-only (random samplers), once some member is shown
                # nondeterministic the members that ran but matched nobody join it: a seeded
                # sampler of another library is deterministic, yet no more comparable
                if nondet:
                    in_value = {i for c in comps for i in c}
                    loose = set(nondet)
                    if self.group.equivalence == "status":
                        loose |= {i for i in det if i not in in_value}
                    loose = sorted(loose)
                    if len({self.lib(i) for i in loose}) >= 2:
                        status.append(loose)
            else:
                rest = [i for i in ok if not any(i in c for c in comps)]
                if len(rest) >= 2:
                    status.append(rest)
            ev = Evaluation(inp, sorted(results), results, norm, values, comps, status, dropped)
            if best is None or ev.score(0) > best.score(0):
                best = ev
        if best is None:  # norm_candidates is never empty (the declared normaliser is first)
            raise ConfigError(f"{self.group.key}: no normaliser to evaluate with")
        return best

    def _evaluate_status_only(self, inp: GroupInput, results: dict[int, MemberResult],
                              ok: list[int]) -> Evaluation:
        """A cross-library candidate that matching made status-only (samplers, initialisers):
        values are never compared (two samplers agree on nothing, seeded or not, deterministic
        or not), so the members that return on the input form the status component, provided
        they return the same output shape (dtypes may differ: numpy samples float64, jax
        float32). Members whose shape is not the most common one are dropped: they were not
        called alike (a size the member did not take)."""
        shapes = {i: _shape_signature(results[i].value) for i in ok}
        libs_of: dict[Any, set[str]] = {}
        for i, sig in shapes.items():
            libs_of.setdefault(sig, set()).add(self.lib(i))
        status: list[list[int]] = []
        dropped: dict[int, str] = {}
        if libs_of:
            # the shape most libraries return (ties: the first member's)
            order = {sig: n for n, sig in enumerate(dict.fromkeys(shapes[i] for i in sorted(ok)))}
            common = max(libs_of, key=lambda sig: (len(libs_of[sig]), -order[sig]))
            comp = sorted(i for i in ok if shapes[i] == common)
            if self.valid_component(comp):
                status.append(comp)
                for i in ok:
                    if shapes[i] != common:
                        dropped[i] = (f"returned output shape {_shape_text(shapes[i])}, the others "
                                      f"{_shape_text(common)}")
        return Evaluation(inp, sorted(results), results, self.norm_candidates[0], {}, [], status,
                          dropped)

    def _components(self, members: list[int], values: dict[int, Any]) -> tuple[list[list[int]], dict[int, str]]:
        uf = UnionFind(members)
        for a_i, a in enumerate(members):
            for b in members[a_i + 1:]:
                if self.cross and self.lib(a) == self.lib(b):
                    continue
                if uf.find(a) == uf.find(b) and not self.cross:
                    continue
                if self.agreement.pair(values[a], values[b]):
                    uf.union(a, b)
        comps, dropped = [], {}
        for comp in uf.components():
            comp = list(comp)
            if not self.valid_component(comp):
                continue
            # group-level check: every member against the element-wise median
            while True:
                flags = self.agreement.group([values[i] for i in comp])
                if all(flags):
                    break
                keep = [i for i, f in zip(comp, flags) if f]
                for i, f in zip(comp, flags):
                    if not f:
                        dropped[i] = "disagrees with the rest of its component"
                comp = keep
                if not self.valid_component(comp):
                    comp = []
                    break
            if comp:
                comps.append(sorted(comp))
        comps.sort(key=lambda c: (-len(c), c[0]))
        return comps, dropped

    # -- the whole validation ---------------------------------------------------------------------
    def validate(self) -> Generator[list, list, list[RegisteredGroup]]:
        group, ctx = self.group, self.ctx
        if self.ann and self.ann.exclude:
            for i in self.info:
                self.reject(i, "annotated", f"group excluded: {self.ann.reason}")
            return [self._group([], "excluded", None, excluded=True)]
        if getattr(group, "same_object", False):
            for i in self.info:
                self.reject(i, "annotated", "same Python object under two names: nothing to compare",
                            state="pending")
            return [self._group([], "excluded", None, excluded=True,
                                note="same object under several names (not executed)")]
        plan = seed_plan(group, ctx.rules)
        variants = variant_inputs(group, plan)
        candidates = []
        excluded_apis = {n.api: n.reason for n in (self.ann.member_notes if self.ann else [])
                         if n.action == "exclude"}
        for i, m in enumerate(group.members):
            if m.qualname in excluded_apis:
                self.reject(i, "annotated", excluded_apis[m.qualname])
            elif not m.plan.complete:
                self.reject(i, "incomplete_plan", "no slot feeds: " + ", ".join(m.plan.unmatched_required))
            elif needed_slots(m) & set(plan.unsupported):
                self.reject(i, "unsupported_input", "needs a value no canonical input gives "
                            f"(slots {sorted(needed_slots(m) & set(plan.unsupported))})")
            else:
                candidates.append(i)
        if not candidates or not variants:
            return [self._group([], self._no_group_state(), None)]

        # 1. variants. base and wide run in full. Later variants exist to make members callable
        # (domains, ranks, dtypes), not to make them agree: a member that ran on base/wide but
        # disagreed stays out of them (on a degenerate input, such as a vector, an API that
        # ignores its axis would agree by coincidence).
        best: tuple[int, Evaluation] | None = None
        differed: dict[int, str] = {}
        full_runs: list[Evaluation] = []
        status_only = self.cross and group.equivalence == "status"
        compiled = [i for i in candidates if group.members[i].call == "compiled"]
        cheap = [i for i in candidates if i not in compiled]
        if compiled and cheap:
            # a compiled member pays a compilation per input shape: the variant is chosen on the
            # other members (the eager twin), and the compiled ones run on that variant only
            chosen, chosen_ok = variants[0], -1
            for inp in variants:
                self.tried.append(inp.variant + "?")
                results = yield from self.run(inp, cheap)
                n_ok = sum(1 for r in results.values() if r.ok and _finite(r.value))
                if n_ok > chosen_ok:
                    chosen, chosen_ok = inp, n_ok
                if n_ok == len(cheap):
                    break
            variants = [chosen]
        for order, inp in enumerate(variants):
            full = (order < 2 and inp.variant in ("base", "wide")) or best is None
            # (a status-only group compares no values: a member that ran is not one that differed)
            if not full and not differed and full_runs and not status_only:
                for i in candidates:
                    runs_ok = [e for e in full_runs if e.results.get(i) is not None and e.results[i].ok
                               and not e.results[i].nondeterministic]
                    # a NaN/inf output says the input was outside the member's domain: it may
                    # still validate on another variant
                    if runs_ok and not any(i in e.validated for e in full_runs) \
                            and all(_finite(e.results[i].value) for e in runs_ok):
                        differed[i] = "ran on the canonical input but agreed with no member" + (
                            " of another library" if self.cross else "")
                full_runs = []  # computed once
            # a vector is degenerate only for functions that take an axis (a reduction that ignores
            # its axis agrees on it); for 1-d functions (convolve, hankel) it is their domain
            axis_given = any(plan.roles.get(s) == "axis" for s in inp.values)
            pool_members = [i for i in candidates if i not in differed
                            or (inp.variant == "vector" and not axis_given)]
            if not full and best is not None:
                failed = [i for i in pool_members if i not in best[1].validated]
                if not failed:
                    break
                anchors = []
                seen_libs: set[str] = set()
                for comp in best[1].components:
                    for i in comp:
                        if self.lib(i) not in seen_libs:
                            seen_libs.add(self.lib(i))
                            anchors.append(i)
                self.tried.append(inp.variant + "?")
                results = yield from self.run(inp, sorted(set(failed) | set(anchors)))
                ev = self.evaluate(inp, results)
                if not (ev.validated & set(failed)):
                    continue
            self.tried.append(inp.variant)
            results = yield from self.run(inp, pool_members)
            ev = self.evaluate(inp, results)
            if full:
                full_runs.append(ev)
            if best is None or ev.score(order) > best[1].score(best[0]):
                best = (order, ev)
        if best is None:  # the first variant always runs in full
            raise ConfigError(f"{group.key}: no seed variant was run")
        order, ev = best
        self.differed = differed

        # 2. the second input
        components = [list(c) for c in ev.components]
        status_components = [list(c) for c in ev.status_components]
        confirm_detail: dict[int, str] = {}
        confirm_inp = self.confirm_input = self._confirm_input(group, plan, ev.input)
        if components and confirm_inp is not None:
            members = sorted({i for c in components for i in c})
            results2 = yield from self.run(confirm_inp, members, repeat=1)
            values2 = _normalised(results2, ev.normalisation)
            for i, r in results2.items():
                if not r.ok:
                    confirm_detail[i] = f"second input: {r.status} {r.error_type or ''} {(r.error_message or '')[:160]}"
            new_components = []
            for comp in components:
                alive = [i for i in comp if i in values2]
                sub, dropped = self._components(alive, values2)
                for i, why in dropped.items():
                    confirm_detail.setdefault(i, f"second input: {why}")
                kept = {i for c in sub for i in c}
                for i in comp:
                    if i not in kept:
                        confirm_detail.setdefault(i, "second input: differs")
                new_components.extend(sub)
            components = sorted(new_components, key=lambda c: (-len(c), c[0]))
            if group.relation in ctx.settings.status_probe_relations:
                components, demoted = self._value_evidence(components, ev.values, values2,
                                                           (ev.input, confirm_inp))
                components, parted = yield from self._ties(components, ev.input, ev.normalisation)
                demoted += parted
                components, parted = yield from self._ties(components, ev.input, ev.normalisation,
                                                           special=nonfinite_input(ev.input))
                demoted += parted
                # and beyond the range the seed kept values in (shift_right_logical and
                # shift_right_arithmetic agree on non-negative integers only)
                for beyond, _ in out_of_range_inputs(ev.input):
                    components, parted = yield from self._ties(components, ev.input, ev.normalisation,
                                                               special=beyond)
                    demoted += parted
                components, one_sided = self._shared_slots(components)
                demoted += one_sided
                # DeepREL: value equivalence first, status equivalence second -- members that ran
                # on both inputs but agree on neither, or only on outputs the input's values do
                # not change, are candidates for status equivalence
                demoted += [i for i in members if i in values2 and i in confirm_detail
                            and not any(i in c for c in components)]
                if len(demoted) >= 2:
                    for i in demoted:
                        confirm_detail.pop(i, None)
                    status_components = [sorted(set(demoted) | {i for c in status_components
                                                                 for i in c})]

        # 3. pins
        pinned = bool(self.ann and self.ann.pin)
        if pinned and self.ann is not None:
            names = set(self.ann.members)
            chosen = [i for i in candidates if (group.members[i].qualname in names if names
                                                else ev.results.get(i) is not None and ev.results[i].ok)]
            if len(chosen) >= 2:
                components = [sorted(chosen)] + [[i for i in c if i not in chosen] for c in components]
                components = [c for c in components if len(c) >= 2]

        # member facts
        validated_value = {i for c in components for i in c}
        validated_status = {i for c in status_components for i in c} - validated_value
        for i in candidates:
            r = ev.results.get(i)
            if i in validated_value or i in validated_status:
                self.info[i].state = "validated"
                self.info[i].nondeterministic = bool(r and r.nondeterministic)
                self.info[i].seconds = r.duration_s if r else 0.0
                continue
            self._explain(i, r, ev, confirm_detail)

        # 4. dtypes
        if ctx.probe and (validated_value or validated_status):
            yield from self._probe(sorted(validated_value | validated_status), ev.input)

        # 5. status equivalence on invalid inputs and dtypes (the relations validation.toml names)
        if self.group.relation in ctx.settings.status_probe_relations and status_components:
            status_components = yield from self._status_probe(status_components, ev.input)

        # 6. the domain of ranks: one rank above the seed's (cross-library value groups)
        if group.relation == "cross_library" and components:
            yield from self._rank_domain(components, ev.input, ev.normalisation)

        groups = []
        # a candidate matched as status-only (DeepREL's siblings: isposinf/isneginf, argmax/argmin;
        # stateful module forms) stays so: agreeing on ordinary inputs does not make two different
        # functions value-equivalent, and comparing their values makes false findings
        agreed = "status" if group.equivalence == "status" else "value"
        for comp in components:
            groups.append(self._group(comp, "validated", ev, equivalence=agreed, pinned=pinned))
        for comp in status_components:
            comp = [i for i in comp if i not in validated_value]
            if self.valid_component(comp):
                groups.append(self._group(comp, "validated", ev, equivalence="status"))
        if not groups:
            groups.append(self._group([], self._no_group_state(), ev))
        # name the groups: the candidate key, then key#2, key#3...
        for n, g in enumerate(groups):
            g.key = group.key if n == 0 else f"{group.key}#{n + 1}"
        in_groups = {q for g in groups for q in (i.qualname for i in g.member_info)}
        groups[0].rejected = [(group.members[i], self.info[i]) for i in sorted(self.info)
                              if self.info[i].state != "validated" or group.members[i].qualname not in in_groups]
        for g in groups:
            g.evidence["variants_tried"] = list(self.tried)
            g.evidence["executions"] = self.executions
        return groups

    def _no_group_state(self) -> str:
        return "pending" if any(i.state == "pending" for i in self.info.values()) else "rejected"

    def _confirm_input(self, group: Any, plan: Any, inp: GroupInput) -> GroupInput | None:
        for other in variant_inputs(group, plan, seed_offset=1):
            if other.variant == inp.variant:
                return other
        return None

    def _explain(self, i: int, r: MemberResult | None, ev: Evaluation, confirm: dict[int, str]) -> None:
        if i in self.differed and (r is None or i not in ev.members):
            self.reject(i, "differs", self.differed[i])
            return
        if r is None:
            self.reject(i, "pending", "not run", state="pending")
            return
        if r.status in _DEATHS:
            sig = f" ({r.outcome.signal_name})" if r.outcome is not None and r.outcome.signal_name else ""
            self.reject(i, _DEATHS[r.status], f"{r.status}{sig}: {(r.error_message or '')[:200]}")
        elif r.status == "raised":
            self.reject(i, "raised", f"{r.error_type}: {(r.error_message or '').splitlines()[0][:200] if r.error_message else ''}")
        elif r.status == "unserializable":
            self.reject(i, "not_comparable", r.error_message or "")
        elif r.status == "skipped":
            self.reject(i, "plan_error", r.error_message or "")
        elif r.status == "ok":
            if i in confirm:
                self.reject(i, "differs", confirm[i])
                return
            if self.cross and self.group.equivalence == "status":
                # values of a status-only group are never compared (nondeterminism is expected)
                if i in ev.dropped:
                    self.reject(i, "differs", ev.dropped[i])
                else:
                    self.reject(i, "no_partner", "ran, but no member of another library ran "
                                "alike", state="pending")
                return
            if r.nondeterministic:
                self.reject(i, "nondeterministic", "two calls on the same input returned different results")
                return
            others = [j for j, rj in ev.results.items() if rj.ok and j != i
                      and (not self.cross or self.lib(j) != self.lib(i))]
            if not others:
                self.reject(i, "no_partner", "ran, but no member of another library ran to compare with",
                            state="pending")
            elif i not in ev.values:
                self.reject(i, "not_comparable", f"normaliser {ev.normalisation!r} does not apply")
            else:
                self.reject(i, "differs", ev.dropped.get(i, "agrees with no member of another library"
                                                        if self.cross else "agrees with no other member"))
        else:
            self.reject(i, r.status, r.error_message or "")

    def _probe_limit(self, members: list[int]) -> float | None:
        """Seconds a probe's call may take: ``call_factor`` times the members' slowest seed call,
        at least ``call_floor_s`` (validation.toml ``[probe]``); a probe that makes a member
        iterate for minutes then costs seconds, not the full timeout."""
        st = self.ctx.settings
        if st.probe_call_factor <= 0:
            return None
        slowest = max((self.info[i].seconds for i in members), default=0.0)
        return max(st.probe_call_floor_s, st.probe_call_factor * slowest)

    def _value_evidence(self, components: list[list[int]], first: dict[int, Any],
                        second: dict[int, Any], inputs: tuple[GroupInput, GroupInput]
                        ) -> tuple[list[list[int]], list[int]]:
        """Components whose agreement says something about values: some member's output
        changed between the two inputs (same shapes, other values), and not every member
        returned one of its input arrays unchanged on both. Agreeing on an output the values do
        not change (a size, a constant True), or on the input itself (two functions that are
        the identity under their defaults, such as dropouts outside training), is no value
        equivalence; those components' members are returned apart."""
        arrays = [[v for v in materialise(inp).values() if isinstance(v, np.ndarray)] for inp in inputs]
        kept, demoted = [], []
        for comp in components:
            changed = any(i in first and not self.agreement.pair(first[i], second[i]) for i in comp)
            identity = all(any(_same_array(out[i], a) for a in ins)
                           for out, ins in zip((first, second), arrays) for i in comp)
            if changed and not identity:
                kept.append(comp)
            else:
                demoted += comp
        return kept, demoted

    def _shared_slots(self, components: list[list[int]]) -> tuple[list[list[int]], list[int]]:
        """Components whose members all take the same slots. A slot that reaches one member
        only (``hfft``'s ``n``, which ``hfftn`` has no counterpart for; ``lax.cumprod``'s
        ``reverse``) changes one side alone, so agreeing at its one validated value is no value
        equivalence: those components' members are returned apart."""
        def slots(i: int) -> frozenset[int]:
            plan = self.group.members[i].plan
            args = [*getattr(plan, "args", ()), *getattr(plan, "init_args", ())]
            return frozenset(a.slot for a in args if getattr(a, "slot", None) is not None)
        kept, apart = [], []
        for comp in components:
            if len({slots(i) for i in comp}) == 1:
                kept.append(comp)
            else:
                apart += comp
        return kept, apart

    def _ties(self, components: list[list[int]], inp: GroupInput, normalisation: str | None,
              special: GroupInput | None = None
              ) -> Generator[list, list, tuple[list[list[int]], list[int]]]:
        """Components that also agree when the input's arrays of one shape and dtype are equal
        (:func:`~xamt.inputs.mutate.ties_input`): ``x > y`` and ``x >= y`` agree on random
        values and part on ties. Members of a component that parts are returned apart.
        ``special``: another input to agree on instead of the ties input (the non-finite one,
        :func:`~xamt.inputs.mutate.nonfinite_input`, or one beyond the seed's range)."""
        ties = ties_input(inp) if special is None else special
        if not components or ties is None:
            return components, []
        members = sorted({i for c in components for i in c})
        results = yield from self.run(ties, members, repeat=1, limit=self._probe_limit(members))
        values = _normalised(results, normalisation)
        kept, parted = [], []
        for comp in components:
            if all(i in values for i in comp) and all(self.agreement.pair(values[comp[0]], values[i])
                                                      for i in comp[1:]):
                kept.append(comp)
            elif all(not results[i].ok for i in comp if i in results) and len({
                    results[i].status for i in comp if i in results}) == 1:
                kept.append(comp)  # all refuse ties alike: nothing learnt about values
            else:
                parted += comp
        return kept, parted

    def _status_probe(self, components: list[list[int]], inp: GroupInput
                      ) -> Generator[list, list, list[list[int]]]:
        """DeepREL's status equivalence: the members of each status component must succeed or
        fail alike on every probe (:func:`~xamt.inputs.mutate.status_probes`) and accept the same
        probed dtypes. Members off the component's most common status pattern are rejected,
        with the first probe on which they part."""
        probes = status_probes(self.group, inp)
        members = sorted({i for c in components for i in c})
        outcomes: dict[int, list[tuple[str, str]]] = {i: [] for i in members}
        limit = self._probe_limit(members)
        for probe, name in probes:
            results = yield from self.run(probe, members, repeat=1, limit=limit)
            finite = not _holds_nan(materialise(probe).values())
            for i in members:
                r = results.get(i)
                status = "ok" if r is not None and r.ok else (
                    f"{r.status} {r.error_type or ''}".strip() if r is not None else "not run")
                # NaN out of NaN-free input is how scipy and elementwise math refuse a domain
                # (sqrt(-1), weibull_min with c < 0): a refusal, not a success
                if status == "ok" and finite and _holds_nan(leaves(r.value)):
                    status = "NaN"
                outcomes[i].append((name, status))
        for i in members:
            accepted = set(self.info[i].accepted)
            for d in self.ctx.settings.probe_dtypes:
                outcomes[i].append((f"dtype:{d}", "ok" if d in accepted else "refused"))
        self.probe_names = [name for _, name in probes]
        kept = []
        for comp in components:
            pattern = {i: tuple(s == "ok" for _, s in outcomes[i]) for i in comp}
            counts = Counter(pattern.values())
            # the most common pattern; a tie goes to the first member's (the pivot's)
            common = max(counts, key=lambda p: (counts[p], p == pattern[comp[0]]))
            keep = [i for i in comp if pattern[i] == common]
            ref = keep[0]
            for i in comp:
                if pattern[i] == common:
                    continue
                n = next(k for k, (a, b) in enumerate(zip(pattern[i], common)) if a != b)
                probe = outcomes[i][n][0]
                self.reject(i, "status_differs",
                            f"on {probe}: {outcomes[i][n][1]}, {self.group.members[ref].qualname} "
                            f"{outcomes[ref][n][1]}")
            if not self.valid_component(keep):
                for i in keep:
                    others = [j for j in comp if j != i]
                    self.reject(i, "status_differs", "; ".join(
                        f"{self.group.members[j].qualname} {self.info[j].detail}" for j in others))
                continue
            kept.append(keep)
        return kept

    def _rank_domain(self, components: list[list[int]], inp: GroupInput, normalisation: str | None
                     ) -> Generator[list, list, None]:
        """Where members share a convention: each value component is run with its data arrays
        one rank above the seed's (a batch axis in front). Where a member then refuses, or the
        output shapes part (``numpy.outer`` flattens what ``torch.outer`` refuses), the
        component's domain stops at the seed's rank and fuzzing keeps its arrays there
        (``max_rank``). Values that differ at the same shapes stay inside the domain: that may
        be the bug fuzzing is for.

        The axis argument None, which fuzzing gives an axis, is probed on the seed's shapes
        (:func:`~xamt.inputs.mutate.axis_none_input`): where the members that return on it part
        in their output shapes (``numpy.take`` flattens where ``tf.gather`` takes axis 0),
        fuzzing leaves None out (``axis_none``). Members that refuse it do not: their refusal
        is a status difference fuzzing may meet, and the others still compare (the full
        reduction of ``numpy.sum`` and ``torch.sum``, where ``jax.lax.reduce_sum`` refuses
        None)."""
        probe = next((p for p, name in status_probes(self.group, inp) if name == "rank:+1"), None)
        ranks = [np.ndim(v) for v in materialise(inp).values() if isinstance(v, np.ndarray)]
        if not ranks:
            return
        seed_rank = max(ranks)
        none = axis_none_input(self.group, inp)
        for comp in components:
            if probe is not None:
                refused, shapes = yield from self._returns_at(probe, comp, normalisation)
                inside = not refused and shapes <= 1
                why = ("every member returns, at one shape" if inside else
                       f"{', '.join(refused)} refuse{'s' if len(refused) == 1 else ''}" if refused
                       else "output shapes differ")
                self.domains[tuple(comp)] = (seed_rank, seed_rank + 1, inside, why)
            if none is not None:
                refused, shapes = yield from self._returns_at(none, comp, normalisation)
                self.axis_none[tuple(comp)] = (
                    shapes <= 1, "output shapes differ" if shapes > 1 else
                    "the members that return do so at one shape" + (f" ({', '.join(refused)} refuse)" if refused else ""))

    def _returns_at(self, probe: GroupInput, comp: list[int], normalisation: str | None
                    ) -> Generator[list, list, tuple[list[str], int]]:
        """The members of ``comp`` that refuse ``probe`` (qualified names), and how many output
        shapes the others return."""
        results = yield from self.run(probe, comp, repeat=1, limit=self._probe_limit(comp))
        values = _normalised(results, normalisation)
        refused = [self.group.members[i].qualname for i in comp if i not in values]
        return refused, len({repr(_shape_signature(values[i])) for i in comp if i in values})

    def _probe(self, members: list[int], inp: GroupInput) -> Generator[list, list, None]:
        dtypes = list(self.ctx.settings.probe_dtypes)
        if not dtypes:
            return
        try:
            values = materialise(inp)
        except Exception:
            return
        data = [s for s in inp if _is_data_value(inp[s])]
        if not data:
            # nothing to cast (creation functions, literals only): nothing to probe
            for i in members:
                self.info[i].notes.append("dtypes: not probed (no data array in its input)")
            return
        # the seed's own dtype is accepted (validation ran on it)
        seed_dtypes = {r.dtype for s in data for r in inp[s].all_recipes()}
        probe = [d for d in dtypes if d not in seed_dtypes]
        jobs, owners = [], []
        compiled = []
        for i in members:
            if self.group.members[i].call == "compiled":
                compiled.append(i)  # same kernels as its eager twin; the status oracle covers it
                continue
            jobs.append((self.group, i, values, data))
            owners.append(i)
        results = []
        if jobs:
            limits = [self._probe_limit([i]) for i in owners]
            results = yield from self.ctx.executor.probe_steps(jobs, probe, self.ctx.settings.probe_abstract,
                                                               limits)
        eager_accepted: list[set[str]] = []
        for i, res in zip(owners, results):
            info = self.info[i]
            res = dict(res)
            for d in seed_dtypes:
                res[d] = ("ok", None)
            info.dtypes = {d: (s if s == "ok" else f"{s}:{(et or '').rsplit('.', 1)[-1]}")
                           for d, (s, et) in sorted(res.items(), key=lambda kv: _order(kv[0]))}
            info.accepted = [d for d in sorted(res, key=_order) if res[d][0] == "ok"]
            abstract = self.ctx.settings.probe_abstract.get(self.group.members[i].library)
            if abstract:
                info.notes.append(f"dtypes: probed by {abstract}")
            eager_accepted.append(set(info.accepted))
        common = set.intersection(*eager_accepted) if eager_accepted else set()
        for i in compiled:
            self.info[i].accepted = [d for d in sorted(common, key=_order)]
            self.info[i].notes.append("dtypes: those of its eager twin (not probed under compilation)")

    def _group(self, comp: list[int], state: str, ev: Evaluation | None,
               equivalence: str | None = None, pinned: bool = False, excluded: bool = False,
               note: str | None = None) -> RegisteredGroup:
        group = self.group
        annotations = []
        if self.ann:
            if self.ann.note:
                annotations.append(self.ann.note)
            if self.ann.exclude:
                annotations.append(f"excluded: {self.ann.reason}")
            if self.ann.pin:
                annotations.append(f"pinned: {self.ann.reason}")
            for n in self.ann.member_notes:
                annotations.append(f"{n.api}: {n.reason} ({n.action})")
        if note:
            annotations.append(note)
        seeds = []
        if ev is not None:
            seeds.append(ev.input.to_json())
            if comp and self.confirm_input is not None:
                seeds.append(self.confirm_input.to_json())
        evidence: dict[str, Any] = {}
        if ev is not None and comp:
            values = [ev.values[i] for i in comp if i in ev.values]
            if len(values) >= 2:
                d = self.agreement.dispersion(values)
                evidence["dispersion"] = d if np.isfinite(d) else None
            evidence["seconds"] = {group.members[i].qualname: round(ev.results[i].duration_s, 6)
                                   for i in comp if i in ev.results}
        if self.probe_names:
            evidence["status_probes"] = list(self.probe_names)
        max_rank = self.ann.max_rank if self.ann else None
        domain = self.domains.get(tuple(comp))
        if domain is not None:
            seed_rank, probed, inside, why = domain
            evidence["domain"] = {"seed_rank": seed_rank, "probed_rank": probed, "inside": inside,
                                  "why": why}
            if not inside:
                max_rank = seed_rank if max_rank is None else min(max_rank, seed_rank)
        axis_none = self.axis_none.get(tuple(comp))
        if axis_none is not None:
            evidence["axis_none"] = {"inside": axis_none[0], "why": axis_none[1]}
        if "score" in group.evidence:  # an inferred relation's similarity (xamt.matching.inferred)
            evidence["matching"] = {k: group.evidence[k] for k in ("score", "signature", "doc", "ranks")
                                    if k in group.evidence}
        return RegisteredGroup(
            key=group.key, candidate=group.key, relation=group.relation, category=group.category,
            canonical=group.canonical, equivalence=equivalence or group.equivalence, state=state,
            confidence=group.confidence, slots=list(group.slots),
            members=[group.members[i] for i in comp], member_info=[self.info[i] for i in comp],
            normalisation=ev.normalisation if ev is not None else self.norm_candidates[0],
            normalisation_why=self.norm_why,
            tolerance={k: list(v) for k, v in (self.ann.tolerance.items() if self.ann else [])},
            seeds=seeds, variant=ev.input.variant if ev is not None else "", band=group.band,
            pinned=pinned, excluded=excluded, annotations=annotations, evidence=evidence,
            versions=dict(self.ctx.versions), max_rank=max_rank,
            axis_none=None if axis_none is None or axis_none[0] else False,
        )


def validate_candidate(group: Any, ctx: Context) -> Generator[list, list, CandidateResult]:
    """Validate ``group`` (a step generator: yields sandbox task lists, receives outcomes)."""
    start = time.perf_counter()
    v = _Validator(group, ctx)
    groups = yield from v.validate()
    return CandidateResult(group.key, groups, time.perf_counter() - start, v.executions)


def _normalised(results: dict[int, MemberResult], normalisation: str | None) -> dict[int, Any]:
    """The normalised outputs of the members that returned (those the normaliser cannot take
    are left out)."""
    values: dict[int, Any] = {}
    for i, r in results.items():
        if r.ok:
            try:
                values[i] = normalise(r.value, normalisation)
            except Exception:
                pass
    return values


def _holds_nan(values: Any) -> bool:
    """Whether any float or complex array among ``values`` holds NaN."""
    for v in values:
        for a in (v if isinstance(v, list) else [v]):
            if isinstance(a, np.ndarray) and (a.dtype.kind in "fc" or a.dtype.name == "bfloat16"):
                with np.errstate(invalid="ignore"):
                    if np.isnan(a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)).any():
                        return True
    return False


def _same_array(out: Any, arr: np.ndarray) -> bool:
    """Whether a member's output is the input array ``arr`` itself (same shape, dtype and
    values, NaN equal to NaN)."""
    return (isinstance(out, np.ndarray) and out.shape == arr.shape and out.dtype == arr.dtype
            and arr.size > 1 and bool(np.array_equal(out, arr, equal_nan=out.dtype.kind in "fc")))
