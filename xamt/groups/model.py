"""The registry's data model: what the build decided about each group, as reviewable data.

A :class:`RegisteredGroup` is a candidate group (:class:`~xamt.matching.model.CandidateGroup`)
after execution: ``members`` holds only its validated members (what the fuzzer runs), with their
accepted dtypes in ``member_info``; ``rejected`` keeps every other member with its state and
reason; ``seeds`` are the inputs it was validated on (JSON of
:class:`~xamt.inputs.model.GroupInput`), ``normalisation`` the output normaliser it was
validated with, ``equivalence`` what was shown (``value``: equal outputs; ``status``: both run,
values not comparable or different). Everything round-trips through ``to_json`` /
``from_json``; :func:`load_registry` reads the stored registry for the fuzzer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from xamt.matching.model import GroupSlot, Member
from xamt.store import Schema, Store

__all__ = ["MemberInfo", "RegisteredGroup", "load_registry", "REGISTRY_SCHEMA", "STATES",
           "MEMBER_STATES", "REASONS", "registry_versions"]

#: states of a registered group
STATES = ("validated", "rejected", "pending", "excluded")
#: states of a member
MEMBER_STATES = ("validated", "rejected", "pending")
#: rejection reasons of a member (counted in the build's figures)
REASONS = (
    "raised", "crashed", "timeout", "oom", "differs", "not_comparable", "nondeterministic",
    "incomplete_plan", "unsupported_input", "plan_error", "annotated", "no_partner",
)


@dataclass
class MemberInfo:
    """What the build learnt about one member.

    ``dtypes`` maps each probed dtype to ``ok`` or the failure (``raised:TypeError``,
    ``crashed``); ``accepted`` lists the dtypes it runs with (the fuzzer draws from these and
    tries the others on purpose for the status oracle). ``reason``/``detail`` explain a
    rejection; ``notes`` hold annotations.
    """

    qualname: str
    library: str
    state: str = "pending"
    reason: str | None = None
    detail: str = ""
    accepted: list[str] = field(default_factory=list)
    dtypes: dict[str, str] = field(default_factory=dict)
    nondeterministic: bool = False
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    call: str = "function"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"qualname": self.qualname, "library": self.library, "call": self.call,
                                "state": self.state}
        if self.reason:
            data["reason"] = self.reason
        if self.detail:
            data["detail"] = self.detail
        if self.accepted:
            data["accepted"] = list(self.accepted)
        if self.dtypes:
            data["dtypes"] = dict(self.dtypes)
        if self.nondeterministic:
            data["nondeterministic"] = True
        if self.seconds:
            data["seconds"] = round(self.seconds, 6)
        if self.notes:
            data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "MemberInfo":
        return cls(qualname=data["qualname"], library=data["library"], state=data.get("state", "pending"),
                   reason=data.get("reason"), detail=data.get("detail", ""),
                   accepted=list(data.get("accepted", [])), dtypes=dict(data.get("dtypes", {})),
                   nondeterministic=bool(data.get("nondeterministic", False)),
                   seconds=float(data.get("seconds", 0.0)), notes=list(data.get("notes", [])),
                   call=data.get("call", "function"))


@dataclass
class RegisteredGroup:
    """One group of the registry (see the module docstring).

    ``key`` is the candidate's key, with ``#2``, ``#3``... for further components of the same
    candidate; ``candidate`` is the candidate key. ``member_info[i]`` describes ``members[i]``;
    ``rejected`` pairs each non-validated member with its info.
    """

    key: str
    candidate: str
    relation: str
    category: str
    canonical: str
    equivalence: str
    state: str
    confidence: float
    slots: list[GroupSlot]
    members: list[Member]
    member_info: list[MemberInfo]
    rejected: list[tuple[Member, MemberInfo]] = field(default_factory=list)
    normalisation: str = "none"
    normalisation_why: str = ""
    tolerance: dict[str, list[float]] = field(default_factory=dict)
    seeds: list[dict[str, Any]] = field(default_factory=list)
    variant: str = ""
    band: str = "low"
    pinned: bool = False
    excluded: bool = False
    annotations: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    #: the highest rank fuzzing gives the data arrays (a convention only low ranks share)
    max_rank: int | None = None
    #: False: the members part at the axis argument None (numpy.take flattens, tf.gather takes
    #: axis 0), which fuzzing then never gives; None: not parted (or not probed)
    axis_none: bool | None = None

    # -- views ---------------------------------------------------------------------------------
    @property
    def libraries(self) -> list[str]:
        return sorted({m.library for m in self.members})

    @property
    def cross_library(self) -> bool:
        return self.relation == "cross_library"

    def accepted_dtypes(self, index: int) -> list[str]:
        """dtypes member ``index`` accepts."""
        return list(self.member_info[index].accepted)

    def common_dtypes(self) -> list[str]:
        """dtypes every member accepts (the fuzzer's ordinary draws)."""
        sets = [set(i.accepted) for i in self.member_info if i.accepted]
        if not sets:
            return []
        common = set.intersection(*sets)
        order = [d for i in self.member_info for d in i.accepted]
        return [d for d in dict.fromkeys(order) if d in common]

    def any_dtypes(self) -> list[str]:
        """dtypes at least one member accepts."""
        return list(dict.fromkeys(d for i in self.member_info for d in i.accepted))

    def seed_inputs(self) -> list[Any]:
        """The seeds as :class:`~xamt.inputs.model.GroupInput` s."""
        from xamt.inputs.model import GroupInput

        return [GroupInput.from_json(s) for s in self.seeds]

    # -- JSON ------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key, "candidate": self.candidate, "relation": self.relation,
            "category": self.category, "canonical": self.canonical, "equivalence": self.equivalence,
            "state": self.state, "confidence": round(float(self.confidence), 4), "band": self.band,
            "libraries": self.libraries,
            "slots": [s.to_json() for s in self.slots],
            "members": [m.to_json() for m in self.members],
            "member_info": [i.to_json() for i in self.member_info],
            "rejected": [{"member": m.to_json(), "info": i.to_json()} for m, i in self.rejected],
            "normalisation": self.normalisation, "normalisation_why": self.normalisation_why,
            "tolerance": self.tolerance, "seeds": self.seeds, "variant": self.variant,
            "pinned": self.pinned, "excluded": self.excluded, "annotations": list(self.annotations),
            "evidence": self.evidence, "versions": dict(self.versions),
            **({"max_rank": self.max_rank} if self.max_rank is not None else {}),
            **({"axis_none": self.axis_none} if self.axis_none is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RegisteredGroup":
        return cls(
            key=data["key"], candidate=data["candidate"], relation=data["relation"],
            category=data["category"], canonical=data["canonical"], equivalence=data["equivalence"],
            state=data["state"], confidence=float(data["confidence"]),
            slots=[GroupSlot.from_json(s) for s in data["slots"]],
            members=[Member.from_json(m) for m in data["members"]],
            member_info=[MemberInfo.from_json(i) for i in data["member_info"]],
            rejected=[(Member.from_json(r["member"]), MemberInfo.from_json(r["info"]))
                      for r in data.get("rejected", [])],
            normalisation=data.get("normalisation", "none"),
            normalisation_why=data.get("normalisation_why", ""),
            tolerance=dict(data.get("tolerance", {})), seeds=list(data.get("seeds", [])),
            variant=data.get("variant", ""), band=data.get("band", "low"),
            pinned=bool(data.get("pinned", False)), excluded=bool(data.get("excluded", False)),
            annotations=list(data.get("annotations", [])), evidence=dict(data.get("evidence", {})),
            versions=dict(data.get("versions", {})), max_rank=data.get("max_rank"),
            axis_none=data.get("axis_none"),
        )


# ============================================================================== persistence

REGISTRY_SCHEMA = Schema(
    component="groups",
    version=1,
    tables=("registry", "registry_builds", "registry_info"),
    statements=(
        "CREATE TABLE IF NOT EXISTS registry ("
        " key TEXT NOT NULL, versions TEXT NOT NULL, candidate TEXT NOT NULL, relation TEXT NOT NULL,"
        " state TEXT NOT NULL, equivalence TEXT NOT NULL, libraries TEXT NOT NULL,"
        " n_members INTEGER NOT NULL, confidence REAL NOT NULL, data TEXT NOT NULL,"
        " PRIMARY KEY (key, versions))",
        "CREATE INDEX IF NOT EXISTS registry_candidate ON registry(candidate, versions)",
        "CREATE INDEX IF NOT EXISTS registry_state ON registry(versions, state, relation)",
        # one row per candidate group built: resuming skips candidates whose fingerprint matches
        "CREATE TABLE IF NOT EXISTS registry_builds ("
        " candidate TEXT NOT NULL, versions TEXT NOT NULL, fingerprint TEXT NOT NULL,"
        " seconds REAL NOT NULL, summary TEXT NOT NULL, PRIMARY KEY (candidate, versions))",
        "CREATE TABLE IF NOT EXISTS registry_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
)


def registry_versions(store: Store) -> str | None:
    """The library-versions key of the latest build in ``store`` (None: no build yet)."""
    store.ensure(REGISTRY_SCHEMA)
    rows = store.query("SELECT value FROM registry_info WHERE key='versions'")
    return rows[0]["value"] if rows else None


def load_registry(store: Store, *, states: Sequence[str] | None = ("validated",),
                  relations: Iterable[str] | None = None, versions: str | None = None,
                  cross_only: bool = False) -> list[RegisteredGroup]:
    """The registered groups of the latest build (or of ``versions``), for the fuzzer.

    ``states``: which group states to return (None: all); ``relations``: relation kinds
    (``cross_library``, ``alias``, ...; None: all); ``cross_only``: shorthand for
    ``relations=("cross_library",)``.
    """
    store.ensure(REGISTRY_SCHEMA)
    versions = versions or registry_versions(store)
    if versions is None:
        return []
    sql = "SELECT data FROM registry WHERE versions=?"
    params: list[Any] = [versions]
    if states is not None:
        sql += f" AND state IN ({','.join('?' * len(states))})"
        params += list(states)
    rels = ("cross_library",) if cross_only else (tuple(relations) if relations is not None else None)
    if rels is not None:
        sql += f" AND relation IN ({','.join('?' * len(rels))})"
        params += list(rels)
    sql += " ORDER BY key"
    return [RegisteredGroup.from_json(json.loads(r["data"])) for r in store.query(sql, params)]
