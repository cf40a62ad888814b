"""Hand-made candidate groups and a fake library adapter for the registry tests."""
from __future__ import annotations

from typing import Any, Sequence

from xamt.libraries.base import LibraryAdapter
from xamt.matching.model import ArgSpec, ArgumentPlan, CandidateGroup, GroupSlot, Member


def member(library: str, qualname: str, target: str, args: Sequence[tuple], *, call: str = "function",
           receiver_slot: int | None = None, via: str | None = None,
           unmatched: Sequence[str] = ()) -> Member:
    """``args``: (slot, param, position, keyword, required[, default]) per argument."""
    specs = []
    for a in args:
        slot, param, position, keyword, required = a[:5]
        spec = ArgSpec(slot=slot, param=param, position=position, keyword=keyword, required=required,
                       transform="tensor" if param in ("x", "a", "input", "self", "y", "other") else None)
        if len(a) > 5:
            spec.has_default, spec.default = True, a[5]
        specs.append(spec)
    return Member(library=library, qualname=qualname, target=target, kind=call, call=call,
                  plan=ArgumentPlan(args=specs, unmatched_required=list(unmatched)),
                  receiver_slot=receiver_slot, via=via)


def group(key: str, members: Sequence[Member], slots: Sequence[tuple], *, relation: str = "cross_library",
          canonical: str | None = None, category: str = "generic", equivalence: str = "value") -> CandidateGroup:
    """``slots``: (index, name, role[, type]) per slot."""
    return CandidateGroup(
        key=key, relation=relation, category=category, canonical=canonical or key.split(":")[-1].split("/")[0],
        equivalence=equivalence, confidence=0.9,
        slots=[GroupSlot(index=s[0], name=s[1], role=s[2], type=s[3] if len(s) > 3 else None,
                         shared=True, required=True) for s in slots],
        members=list(members), band="high")


def unary(key: str, pairs: Sequence[tuple[str, str, str]], **kw: Any) -> CandidateGroup:
    """A one-tensor group: (library, qualname, target) per member."""
    return group(key, [member(lib, q, t, [(0, "x", 0, None, True)]) for lib, q, t in pairs],
                 [(0, "x", "tensor")], **kw)


def fake_adapter(name: str = "crashy") -> LibraryAdapter:
    """An adapter whose 'library' is numpy (so it is installed) under another name."""
    return LibraryAdapter(
        name=name, import_name="numpy", distributions=("numpy",), namespaces=(), own_modules=(),
        from_numpy_ref="xamt.libraries.numpy:from_numpy", to_numpy_ref="xamt.libraries.numpy:to_numpy",
        dtypes={}, dtype_ref="xamt.libraries.numpy:dtype")
