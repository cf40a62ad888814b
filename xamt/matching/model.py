"""The candidate-group data model consumed by validation and fuzzing.

A :class:`CandidateGroup` is a set of APIs expected to agree, as plain data:

* ``key`` — a stable identifier (``x:sum/reduction``, ``function_method:torch.abs``);
* ``relation`` — ``cross_library`` or an intra-library kind: ``alias``, ``namespace_twin``,
  ``function_method``, ``inplace``, ``out_variant``, ``functional_module``, ``eager_compiled``,
  ``inferred`` (two APIs ranked alike by signature and documentation, see
  :mod:`xamt.matching.inferred`);
* ``equivalence`` — ``value`` (equal outputs expected) or ``status`` (both succeed or both fail);
* ``confidence`` (0..1) and its ``band`` (high ≥ 0.85, medium ≥ 0.70, low);
* ``slots`` — the group's canonical inputs (:class:`GroupSlot`: role, whether every member takes
  it, whether the fuzzer must always pass it); a fuzzer draws one value per slot;
* ``members`` — :class:`Member` s: library, qualified name, the API's ``target``
  (``"module:qualname"``), the ``call`` style and an :class:`ArgumentPlan` saying where each slot
  goes in this member's call.

Executing a member: :meth:`Member.task` turns slot values (already converted to the library's
objects) into ``(target, args, kwargs)`` for ``sandbox.Task``; the execution layer
(:mod:`xamt.exec.member`) does the conversion and the call inside a worker. Every class here
round-trips through ``to_json()`` / ``from_json()``.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Sequence

__all__ = [
    "CPU", "device_label", "cpu_twin",
    "ArgSpec", "ArgumentPlan", "Member", "GroupSlot", "CandidateGroup", "CALL_STYLES",
    "RELATIONS", "TRANSFORMS", "band",
]

#: how a member is called: a function; a method on its receiver; a class constructed then called;
#: the function under the library's compiler; the function with a preallocated ``out=``; a class
#: constructed from some arguments whose method then takes the rest (``constructed``:
#: ``Normal(loc, scale).log_prob(value)``); a function filling a tensor the library's helper makes
#: from the first argument, a shape (``fill``: ``torch.nn.init.eye_``)
CALL_STYLES = ("function", "method", "module", "compiled", "out", "constructed", "fill")
RELATIONS = ("cross_library", "alias", "namespace_twin", "function_method", "inplace",
             "out_variant", "functional_module", "eager_compiled", "inferred")
#: value conversions of a slot for a member: numpy array → tensor; list of arrays → list of
#: tensors; numpy dtype name → the library's dtype; a scalar → a 1-tuple (sequences unchanged);
#: a numpy array → tensor, anything else (a Python number) unchanged; an int seed → the library's
#: PRNG key (the adapter's ``prng_key_ref``); None: the value as is
TRANSFORMS = ("tensor", "tensor_list", "dtype", "tuple", "tensor_if_array", "prng_key", None)


def band(confidence: float, high: float = 0.85, medium: float = 0.70) -> str:
    """Xamt++'s confidence band."""
    return "high" if confidence >= high else "medium" if confidence >= medium else "low"


@dataclass
class ArgSpec:
    """Where one value goes in a member's call.

    ``slot`` is the group slot whose value is passed (None: a fixed ``value``); the value goes at
    ``position`` (positional index) or under ``keyword``; ``transform`` converts it (see
    :data:`TRANSFORMS`); ``param`` is the member's parameter name. When ``has_default`` is set
    and the slot is not given, ``default`` is passed instead (defaults made equal across members).
    ``similarity`` is the assignment score of this pairing (0 for overrides and fixed values).
    ``star`` spreads a list value over the positional arguments (``*tensors`` parameters);
    ``required`` marks a parameter the member cannot be called without.
    """

    slot: int | None
    param: str
    position: int | None = None
    keyword: str | None = None
    transform: str | None = None
    value: Any = None
    has_default: bool = False
    default: Any = None
    similarity: float = 0.0
    star: bool = False
    required: bool = False

    def to_json(self) -> dict[str, Any]:
        return {name: _plain(getattr(self, name)) for name in _ARGSPEC_FIELDS}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ArgSpec":
        return cls(**data)


@dataclass
class ArgumentPlan:
    """How the group's slots are passed to one member.

    ``args`` go to the call; for a ``module`` or ``constructed`` member ``init_args`` go to the
    constructor (only keywords). ``unmatched_required`` lists the member's required parameters no slot feeds (the
    plan cannot call the member then: ``complete`` is False). ``source`` is ``assignment``,
    ``override`` or ``assignment+override``; ``score`` the mean similarity of the pairs.
    """

    args: list[ArgSpec] = field(default_factory=list)
    init_args: list[ArgSpec] = field(default_factory=list)
    unmatched_required: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    source: str = "assignment"
    score: float = 0.0
    overload: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.unmatched_required

    def slots(self) -> set[int]:
        """Slots this member accepts."""
        return {a.slot for a in [*self.args, *self.init_args] if a.slot is not None}

    def bind(self, values: dict[int, Any], specs: list[ArgSpec] | None = None
             ) -> tuple[list[Any], dict[str, Any]]:
        """Place slot values: returns ``(args, kwargs)``.

        ``values`` maps slot index → value (already transformed). Slots absent from ``values``
        are skipped, or replaced by the spec's equalised default. A positional gap left by a
        skipped slot turns later positional values into keywords when the parameter allows it;
        otherwise binding fails with ValueError.
        """
        specs = self.args if specs is None else specs
        positional: dict[int, tuple[ArgSpec, Any]] = {}
        kwargs: dict[str, Any] = {}
        for spec in specs:
            if spec.slot is None:
                value = spec.value
            elif spec.slot in values:
                value = values[spec.slot]
            elif spec.has_default:
                value = spec.default
            else:
                continue
            if spec.position is not None:
                positional[spec.position] = (spec, value)
            elif spec.keyword is not None:
                kwargs[spec.keyword] = value
        args: list[Any] = []
        expected = 0  # the next parameter position a positional value may fill
        for pos in sorted(positional):
            spec, value = positional[pos]
            if pos == expected:
                if spec.star:
                    args.extend(value)
                else:
                    args.append(value)
                expected += 1
            elif spec.keyword and not spec.star:
                kwargs[spec.keyword] = value
            else:
                raise ValueError(f"{spec.param}: positional argument {pos} has no value before "
                                 f"it (slots given: {sorted(values)})")
        return args, kwargs

    def to_json(self) -> dict[str, Any]:
        return {
            "args": [a.to_json() for a in self.args],
            "init_args": [a.to_json() for a in self.init_args],
            "unmatched_required": list(self.unmatched_required),
            "dropped": list(self.dropped),
            "source": self.source,
            "score": self.score,
            "overload": self.overload,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ArgumentPlan":
        data = dict(data)
        data["args"] = [ArgSpec.from_json(a) for a in data.get("args", [])]
        data["init_args"] = [ArgSpec.from_json(a) for a in data.get("init_args", [])]
        return cls(**data)


@dataclass
class Member:
    """One API of a group and how to call it.

    ``target`` is the API (``"torch:Tensor.abs"``); ``call`` the style (:data:`CALL_STYLES`);
    ``via`` the ``"module:qualname"`` helper a ``compiled``, ``out`` or ``fill`` call goes through
    (``xamt.libraries.jax:call_compiled``); ``receiver_slot`` the slot whose value is a method's
    receiver. ``device`` places the call on a device of its library (``cuda:0``, ``gpu:0``,
    ``cpu``: see :mod:`xamt.fuzz.devices`); None runs it where the library puts it by default.
    """

    library: str
    qualname: str
    target: str
    kind: str
    call: str
    plan: ArgumentPlan
    receiver_slot: int | None = None
    via: str | None = None
    aliases: list[str] = field(default_factory=list)
    category: str = "generic"
    canonical: str = ""
    device: str | None = None
    #: APIs this member's documentation says it implements (``jax.numpy.lcm``: ``numpy.lcm``);
    #: triage takes such an original as the reference before the API that reimplements it
    implements: list[str] = field(default_factory=list)

    @property
    def method_name(self) -> str:
        return self.target.rsplit(".", 1)[-1].split(":")[-1]

    def task(self, values: dict[int, Any]) -> tuple[str, list[Any], dict[str, Any]]:
        """``(target, args, kwargs)`` of a sandbox task calling this member on slot values.

        Values must already be the library's objects (tensors, dtypes); see
        :mod:`xamt.exec.member` for the in-worker conversion.
        """
        if self.call == "method":
            if self.receiver_slot is None or self.receiver_slot not in values:
                raise ValueError(f"{self.qualname}: the receiver slot has no value")
            args, kwargs = self.plan.bind(values)
            receiver, rest = args[0], args[1:]
            return "xamt.libraries.invoke:call_method", [self.method_name, receiver, *rest], kwargs
        if self.call == "module":
            init_args, init_kwargs = self.plan.bind(values, self.plan.init_args)
            if init_args:
                raise ValueError(f"{self.qualname}: constructor arguments must be keywords")
            args, kwargs = self.plan.bind(values)
            return "xamt.libraries.invoke:call_module", [self.target, init_kwargs, *args], kwargs
        if self.call == "constructed":
            init_args, init_kwargs = self.plan.bind(values, self.plan.init_args)
            if init_args:
                raise ValueError(f"{self.qualname}: constructor arguments must be keywords")
            args, kwargs = self.plan.bind(values)
            return ("xamt.libraries.invoke:call_constructed", [self.target, init_kwargs, *args],
                    kwargs)
        args, kwargs = self.plan.bind(values)
        if self.call in ("compiled", "out", "fill"):
            if not self.via:
                raise ValueError(f"{self.qualname}: a {self.call} call needs a helper (via)")
            return self.via, [self.target, *args], kwargs
        return self.target, args, kwargs

    def to_json(self) -> dict[str, Any]:
        data = {name: self.plan.to_json() if name == "plan" else _plain(getattr(self, name))
                for name in _MEMBER_FIELDS}
        if self.device is None:  # the registry's members (and their ids) predate devices
            del data["device"]
        if not self.implements:  # likewise: members without a declared original stay as they were
            del data["implements"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Member":
        data = dict(data)
        data["plan"] = ArgumentPlan.from_json(data["plan"])
        return cls(**data)


def _plain(value: Any) -> Any:
    """What ``dataclasses.asdict`` makes of a field value that holds no dataclass: scalars as
    they are, anything else a deep copy. (asdict itself walks every value through its generic
    recursion: a campaign's driver spent seconds in it, writing member specs.)"""
    if value is None or type(value) in (str, int, float, bool):
        return value
    return copy.deepcopy(value)


_ARGSPEC_FIELDS = tuple(f.name for f in fields(ArgSpec))
_MEMBER_FIELDS = tuple(f.name for f in fields(Member))


@dataclass
class GroupSlot:
    """One canonical input of a group.

    ``name`` and ``default`` come from the pivot member (the reference API the plans were
    computed against); ``shared`` means every member accepts the slot; ``required`` means the
    fuzzer must always give it (some member requires it, or members' defaults differ).
    """

    index: int
    name: str
    role: str
    type: str | None = None
    required: bool = False
    shared: bool = False
    default: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GroupSlot":
        return cls(**data)


@dataclass
class CandidateGroup:
    """A candidate group (see the module docstring)."""

    key: str
    relation: str
    category: str
    canonical: str
    equivalence: str
    confidence: float
    slots: list[GroupSlot]
    members: list[Member]
    band: str = "low"
    pivot: str = ""
    lossy: bool = False
    same_object: bool = False
    evidence: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def libraries(self) -> list[str]:
        return sorted({m.library for m in self.members})

    @property
    def callable_slots(self) -> list[int]:
        """Slots a fuzzer may give: those every member accepts, plus the required ones."""
        return [s.index for s in self.slots if s.shared or s.required]

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key, "relation": self.relation, "category": self.category,
            "canonical": self.canonical, "equivalence": self.equivalence,
            "confidence": round(self.confidence, 4), "band": self.band, "pivot": self.pivot,
            "lossy": self.lossy, "same_object": self.same_object,
            "libraries": self.libraries,
            "slots": [s.to_json() for s in self.slots],
            "members": [m.to_json() for m in self.members],
            "evidence": self.evidence, "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CandidateGroup":
        return cls(
            key=data["key"], relation=data["relation"], category=data["category"],
            canonical=data["canonical"], equivalence=data["equivalence"],
            confidence=float(data["confidence"]),
            slots=[GroupSlot.from_json(s) for s in data["slots"]],
            members=[Member.from_json(m) for m in data["members"]],
            band=data.get("band", "low"), pivot=data.get("pivot", ""),
            lossy=bool(data.get("lossy", False)), same_object=bool(data.get("same_object", False)),
            evidence=dict(data.get("evidence", {})), notes=list(data.get("notes", [])),
        )


# -- device naming (the CPU-vs-device oracle's twins, xamt/fuzz/devices.py) ----------------

#: the device every other one is compared against
CPU = "cpu"


def device_label(qualname: str, device: str | None) -> str:
    """The name a member placed on ``device`` is shown under (``torch.sum@cuda:0``); CPU and
    default placement keep the plain name."""
    return qualname if device in (None, CPU) else f"{qualname}@{device}"


def cpu_twin(members: Sequence[Any], index: int) -> int | None:
    """Index of the CPU original of the device twin ``members[index]`` (None: not a twin)."""
    m = members[index]
    if m.device in (None, CPU):
        return None
    for i, o in enumerate(members):
        if (o.device == CPU and o.library == m.library and o.target == m.target and o.call == m.call
                and o.via == m.via and o.plan == m.plan):
            return i
    return None
