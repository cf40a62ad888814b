"""Relational APIs inside one library (DeepREL's relations, §2.2–2.4 of the notes).

Kinds (``CandidateGroup.relation``), all value-equivalent unless noted:

* ``alias`` — distinct objects of one library with the same canonical name or a documented
  "Alias for X" (``torch.abs`` / ``torch.absolute``);
* ``namespace_twin`` — the same attribute name in two namespaces (``torch.det`` /
  ``torch.linalg.det``, ``keras.ops.relu`` / ``keras.activations.relu``); one object under two
  names (``tf.add`` / ``tf.math.add``) is a twin with ``same_object=True`` (nothing to test, kept
  as the record of the relation);
* ``function_method`` — a function and the tensor method of the same name (``torch.abs`` /
  ``torch.Tensor.abs``, ``numpy.sum`` / ``numpy.ndarray.sum``);
* ``inplace`` — an out-of-place API and its in-place variant (``torch.Tensor.abs`` /
  ``torch.Tensor.abs_``; ``F.relu`` / ``F.relu(inplace=True)``);
* ``out_variant`` — a function called normally and into a preallocated ``out=``;
* ``functional_module`` — a callable class and its functional form (``torch.nn.ReLU`` /
  ``torch.nn.functional.relu``); status-equivalent only when the class creates weights;
* ``eager_compiled`` — a function run eagerly and under the library's compiler (``jax.jit``,
  ``tf.function(jit_compile=True)``, ``torch.compile``), for members of cross-library groups.

APIs of one library related by what they take rather than by name (``tril`` / ``triu``) are
inferred by :mod:`xamt.matching.inferred`.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

from xamt.catalog import LibraryCatalog
from xamt.libraries.registry import Registry
from xamt.matching.argplan import plan_for, slots_from
from xamt.matching.categories import partition
from xamt.matching.cross import _UnionFind, members_and_slots, pair_confidence
from xamt.matching.data import MatchingData
from xamt.matching.model import ArgSpec, CandidateGroup, Member, band
from xamt.matching.names import snake
from xamt.matching.roles import inputs_of
from xamt.matching.views import ApiView, ViewIndex

__all__ = ["intra_library_groups", "qualify_keys"]


def _group(relation: str, views: list[ApiView], data: MatchingData, *, key: str,
           equivalence: str = "value", call_of: Callable | None = None,
           via_of: Callable | None = None, confidence: float | None = None,
           notes: list[str] | None = None) -> CandidateGroup:
    pivot, slots, members = members_and_slots(views, data, call_of=call_of, via_of=via_of)
    if confidence is None:
        scores = [pair_confidence(a, b, data).confidence
                  for i, a in enumerate(views) for b in views[i + 1:]]
        confidence = sum(scores) / len(scores) if scores else 1.0
    return CandidateGroup(
        key=key, relation=relation, category=pivot.category, canonical=pivot.canonical.name,
        equivalence=equivalence, confidence=confidence,
        band=band(confidence, data.confidence["high"], data.confidence["medium"]),
        slots=slots, members=members, pivot=pivot.qualname, notes=list(notes or []),
        evidence={"incomplete_plans": sum(1 for m in members if not m.plan.complete)},
    )


def _functions(index: ViewIndex, data: MatchingData) -> list[ApiView]:
    return [v for v in index.views if v.kind == "function" and v.inplace_of is None
            and v.category not in data.excluded_categories]


def _aliases_and_twins(index: ViewIndex, data: MatchingData) -> list[CandidateGroup]:
    groups = []
    by_lib: dict[str, list[ApiView]] = defaultdict(list)
    for v in _functions(index, data):
        by_lib[v.library].append(v)
    for lib, views in sorted(by_lib.items()):
        uf = _UnionFind(len(views))
        first: dict[tuple[str, str], int] = {}
        pos = {id(v): i for i, v in enumerate(views)}
        for i, v in enumerate(views):
            k = (v.canonical.name, partition(v.category, data))
            if data.homonym_for(v.qualname, v.canonical.name):
                continue
            if k in first:
                uf.union(first[k], i)
            else:
                first[k] = i
            target = index.resolve(v.record.alias_of, lib) if v.record.alias_of else None
            if target is not None and target.library == lib and id(target) in pos:
                uf.union(pos[id(target)], i)
        comps: dict[int, list[ApiView]] = defaultdict(list)
        for i, v in enumerate(views):
            comps[uf.find(i)].append(v)
        for comp in comps.values():
            if len(comp) < 2:
                continue
            # secondary APIs (tf.raw_ops.AddV2, numpy.add.reduce) join the group of their plain
            # twins without changing its kind or key; tf.abs and tf.raw_ops.Abs have one name
            # in two spellings
            comp.sort(key=lambda v: (v.secondary, v.qualname))
            plain = [v for v in comp if not v.secondary]
            named = plain if len(plain) >= 2 else comp
            same_name = len({snake(v.record.name) for v in named}) == 1
            relation = "namespace_twin" if same_name else "alias"
            groups.append(_group(relation, comp, data, key=f"{relation}:{comp[0].qualname}"))
    # one object under several public names
    for v in index.views:
        if v.kind != "function" or not v.record.aliases:
            continue
        notes = [f"one object, {len(v.record.names)} names: nothing to compare, the relation "
                 f"is recorded"]
        slots = slots_from(v.inputs)
        members = []
        for name in v.record.names:
            ns, _, attr = name.rpartition(".")
            plan, _ = plan_for(v.inputs, v.inputs, data, identity=True)
            members.append(Member(library=v.library, qualname=name, target=f"{ns}:{attr}",
                                  kind="function", call="function", plan=plan,
                                  category=v.category, canonical=v.canonical.name))
        same_ns = len({n.rpartition(".")[0] for n in v.record.names}) == 1
        groups.append(CandidateGroup(
            key=f"same_object:{v.qualname}", relation="alias" if same_ns else "namespace_twin",
            category=v.category, canonical=v.canonical.name, equivalence="value",
            confidence=1.0, band="high", slots=slots, members=members, pivot=v.qualname,
            same_object=True, notes=notes,
        ))
    return groups


def _function_methods(index: ViewIndex, data: MatchingData) -> list[CandidateGroup]:
    functions: dict[tuple[str, str], list[ApiView]] = defaultdict(list)
    for v in _functions(index, data):
        functions[(v.library, v.canonical.name)].append(v)
    groups = []
    for m in index.views:
        if m.kind != "method" or m.inplace_of is not None:
            continue
        cands: list[ApiView] = []
        for ref in m.record.doc_equiv:
            t = index.resolve(ref, m.library)
            if t is not None and t.kind == "function":
                cands.append(t)
        if not cands:
            cands = functions.get((m.library, m.canonical.name), [])
        cands = [c for c in cands if partition(c.category, data) == partition(m.category, data)
                 and not data.homonym_for(c.qualname, m.canonical.name)]
        if not cands:
            continue
        # the function whose own name is the method's name, shortest namespace first
        cands.sort(key=lambda c: (c.record.name != m.record.name, len(c.qualname)))
        f = cands[0]
        groups.append(_group("function_method", [f, m], data,
                             key=f"function_method:{f.qualname}|{m.qualname}"))
    return groups


def _inplace(index: ViewIndex, data: MatchingData) -> list[CandidateGroup]:
    by_name: dict[tuple[str, str | None, str], ApiView] = {}
    for v in index.views:
        if v.inplace_of is None and v.kind in ("function", "method"):
            by_name[(v.library, v.record.owner or v.record.namespace, v.record.name)] = v
    groups = []
    for v in index.views:
        if v.inplace_of is None or v.kind not in ("function", "method"):
            continue
        base = by_name.get((v.library, v.record.owner or v.record.namespace, v.inplace_of))
        if base is None:
            continue
        groups.append(_group("inplace", [base, v], data,
                             key=f"inplace:{base.qualname}|{v.qualname}"))
    # functions with an ``inplace`` flag: the same function, once with inplace=True
    for v in _functions(index, data):
        flag = next((p for p in v.record.params if p.name == "inplace"), None)
        if flag is None:
            continue
        g = _group("inplace", [v], data, key=f"inplace:{v.qualname}|inplace=True")
        twin = Member.from_json(g.members[0].to_json())
        twin.plan.args = [a for a in twin.plan.args if a.param != "inplace"]
        twin.plan.args.append(ArgSpec(slot=None, param="inplace", keyword="inplace", value=True))
        for m in g.members:
            m.plan.args = [a for a in m.plan.args if a.param != "inplace"]
        g.members.append(twin)
        g.slots = [s for s in g.slots if s.name != "inplace"]
        g.notes.append("second member runs with inplace=True")
        groups.append(g)
    return groups


def _out_variants(index: ViewIndex, data: MatchingData, out_refs: dict[str, str]) -> list[CandidateGroup]:
    groups = []
    for v in _functions(index, data):
        via = out_refs.get(v.library)
        if via is None or not any(p.name == "out" for p in v.record.params):
            continue
        if "tensor" not in v.roles and "tensors" not in v.roles:
            continue
        g = _group("out_variant", [v], data, key=f"out_variant:{v.qualname}")
        twin = Member.from_json(g.members[0].to_json())
        twin.call, twin.via = "out", via
        g.members.append(twin)
        g.notes.append(f"second member writes into a preallocated out= through {via}")
        groups.append(g)
    return groups


#: argument roles that switch a module between training and inference behaviour
_MODE_ROLES = frozenset({"training"})


def _roles(inputs: Any) -> set[str]:
    return {getattr(i, "role", None) for i in inputs or ()} - {None}


def _functional_modules(index: ViewIndex, data: MatchingData) -> list[CandidateGroup]:
    weight_params = set(data.relations.get("weight_params", []))
    groups = []
    for c in index.views:
        if c.kind != "class":
            continue
        init_inputs = inputs_of(c.record.init_params, data)
        stateful = any(p.name in weight_params for p in c.record.init_params)
        for fname in c.record.functional_forms:
            f = index.resolve(fname, c.library)  # a class's functional form is its own library's
            if f is None:
                continue
            if _roles(c.inputs) & _MODE_ROLES and not _roles(f.inputs) & _MODE_ROLES:
                # the module's call takes a training flag its functional form lacks: called
                # without it, the module is in inference mode (a Keras Dropout returns its input)
                # while the function always does its work, so by default they differ
                continue
            slots = slots_from(f.inputs)
            f_plan, _ = plan_for(f.inputs, f.inputs, data, identity=True)
            call_plan, _ = plan_for(f.inputs, c.inputs, data)
            used = call_plan.slots()
            init_plan, _ = plan_for(f.inputs, init_inputs, data)
            init_args = []
            for a in init_plan.args:
                if a.slot is None or a.slot in used or f.inputs[a.slot].role in ("tensor", "tensors"):
                    continue
                init_args.append(ArgSpec(slot=a.slot, param=a.param, keyword=a.param,
                                         transform=a.transform, has_default=a.has_default,
                                         default=a.default, similarity=a.similarity))
            call_plan.init_args = init_args
            call_plan.unmatched_required += [
                n for n in init_plan.unmatched_required if n not in {a.param for a in init_args}
            ]
            members = [
                Member(library=f.library, qualname=f.qualname, target=f.record.target,
                       kind="function", call="function", plan=f_plan, category=f.category,
                       canonical=f.canonical.name),
                Member(library=c.library, qualname=c.qualname, target=c.record.target,
                       kind="class", call="module", plan=call_plan, category=f.category,
                       canonical=f.canonical.name),
            ]
            for s in slots:
                s.shared = all(s.index in m.plan.slots() for m in members)
                s.required = any(a.slot == s.index and a.required for m in members
                                 for a in m.plan.args)
            notes = []
            if stateful:
                notes.append("the class creates weights at construction: only status "
                             "equivalence is expected")
            groups.append(CandidateGroup(
                key=f"functional_module:{f.qualname}|{c.qualname}", relation="functional_module",
                category=f.category, canonical=f.canonical.name,
                equivalence="status" if stateful else "value", confidence=0.9 if not stateful else 0.7,
                band="high" if not stateful else "medium", slots=slots, members=members,
                pivot=f.qualname, notes=notes,
                evidence={"incomplete_plans": sum(1 for m in members if not m.plan.complete)},
            ))
    return groups


def _eager_compiled(index: ViewIndex, data: MatchingData, compile_refs: dict[str, str],
                    cross_members: set[str] | None,
                    uncompiled: dict[str, tuple[str, ...]] | None = None) -> list[CandidateGroup]:
    groups = []
    uncompiled = uncompiled or {}
    for v in _functions(index, data):
        via = compile_refs.get(v.library)
        if via is None or (cross_members is not None and v.qualname not in cross_members):
            continue
        if v.record.namespace in uncompiled.get(v.library, ()):
            continue  # the adapter says its compiled run repeats another API's twin
        g = _group("eager_compiled", [v], data, key=f"eager_compiled:{v.qualname}")
        twin = Member.from_json(g.members[0].to_json())
        twin.call, twin.via = "compiled", via
        g.members.append(twin)
        g.notes.append(f"second member runs compiled through {via}")
        groups.append(g)
    return groups


def qualify_keys(groups: list[CandidateGroup]) -> None:
    """Name the library in the key of a relation inside a library whose APIs share their names
    with another's (keras on JAX beside keras on TensorFlow: ``alias:keras.ops.relu|...`` twice).
    Keys of the libraries named like their modules stay as they were (annotations name them).
    Idempotent."""
    for g in groups:
        if g.relation == "cross_library":
            continue
        libraries = {m.library for m in g.members}
        if len(libraries) != 1:
            continue
        library = next(iter(libraries))
        if g.key.endswith(f"@{library}"):
            continue
        if any(m.qualname.split(".")[0] != library for m in g.members):
            g.key = f"{g.key}@{library}"


def intra_library_groups(
    index: ViewIndex,
    data: MatchingData,
    catalogs: dict[str, LibraryCatalog],
    cross_members: set[str] | None,
    registry: Registry | None = None,
) -> list[CandidateGroup]:
    """Every intra-library relation group (see the module docstring)."""
    registry = registry or Registry()
    out_refs: dict[str, str] = {}
    compile_refs: dict[str, str] = {}
    uncompiled: dict[str, tuple[str, ...]] = {}
    for lib, cat in catalogs.items():
        try:
            adapter = registry.get(lib)
        except Exception:
            continue
        uncompiled[lib] = adapter.uncompiled_namespaces
        if adapter.out_call_ref:
            out_refs[lib] = adapter.out_call_ref
        compile_info: dict[str, Any] = cat.info.get("compile") or {}
        if adapter.compile_ref and compile_info.get("available"):
            compile_refs[lib] = adapter.compile_ref
    only_cross = bool(data.relations.get("compiled_for_cross_members_only", True))
    groups: list[CandidateGroup] = []
    groups += _aliases_and_twins(index, data)
    groups += _function_methods(index, data)
    groups += _inplace(index, data)
    groups += _out_variants(index, data, out_refs)
    groups += _functional_modules(index, data)
    groups += _eager_compiled(index, data, compile_refs, cross_members if only_cross else None,
                              uncompiled)
    qualify_keys(groups)
    # keys must be unique: later duplicates get a suffix
    seen: dict[str, int] = {}
    for g in groups:
        if g.key in seen:
            seen[g.key] += 1
            g.key = f"{g.key}#{seen[g.key]}"
        else:
            seen[g.key] = 0
    return groups
