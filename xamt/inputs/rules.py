"""The canonical-input rules (``xamt/data/canonical_inputs.toml``) resolved for one group.

:func:`load_input_rules` reads and checks the data file; :meth:`InputRules.specs_for` merges, for
each slot of a group, the defaults, the slot's role, type and name entries and the group-level
``[[rule]]`` s into one :class:`SlotSpec` (the layering is documented in the data file).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from xamt.datafiles import read_toml
from xamt.errors import DataFileError
from xamt.inputs.arrays import DTYPE_NAMES

__all__ = ["SlotSpec", "InputRules", "load_input_rules", "SPEC_KINDS"]

SPEC_KINDS = ("array", "arrays", "literal", "dtype", "derived", "omit", "unsupported")
_SPEC_KEYS = frozenset({"kind", "dtype", "shape", "low", "high", "log10_scale", "structure", "count",
                        "value", "optional", "alternatives"})
_RULE_KEYS = frozenset({"canonical", "category", "qualname", "roles", "types", "slots", "names"})
_REF = re.compile(r"^([A-Za-z_][A-Za-z_0-9:]*)#(\d+)$")


@dataclass(frozen=True)
class SlotSpec:
    """How a slot's seed value is made (see the data file for the fields)."""

    kind: str = "omit"
    dtype: str = "float32"
    shape: tuple[int, ...] = (3, 4)
    low: float | None = None
    high: float | None = None
    log10_scale: float = 0.0
    structure: str | None = None
    count: int = 2
    value: Any = None
    optional: bool = True
    alternatives: tuple[Any, ...] = ()
    #: where the last override came from (for reports)
    source: str = "defaults"

    def merged(self, entry: Mapping[str, Any], source: str) -> "SlotSpec":
        changes: dict[str, Any] = {"source": source}
        for key, value in entry.items():
            if key == "shape":
                value = tuple(int(v) for v in value)
            elif key == "alternatives":
                value = tuple(value)
            changes[key] = value
        return replace(self, **changes)


@dataclass
class _Rule:
    canonical: re.Pattern[str] | None
    category: str | None
    qualname: re.Pattern[str] | None
    roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    types: dict[str, dict[str, Any]] = field(default_factory=dict)
    slots: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: dict[str, dict[str, Any]] = field(default_factory=dict)
    where: str = ""

    def matches(self, canonical: str, category: str, qualnames: Sequence[str]) -> bool:
        if self.canonical is not None and not self.canonical.search(canonical):
            return False
        if self.category is not None and self.category != category:
            return False
        if self.qualname is not None and not any(self.qualname.search(q) for q in qualnames):
            return False
        return True


class InputRules:
    """The parsed data file. Build with :func:`load_input_rules`."""

    def __init__(self, data: Mapping[str, Any], where: str = "canonical_inputs.toml"):
        self.where = where
        defaults = dict(data.get("defaults", {}))
        self.base_seed = int(defaults.pop("seed", 0))
        _check_spec(defaults, f"{where} [defaults]")
        self.defaults = SlotSpec().merged(defaults, "defaults")
        self.roles = {k: _check_spec(v, f"{where} [roles.{k}]") for k, v in data.get("roles", {}).items()}
        self.types = {k: _check_spec(v, f"{where} [types.{k}]") for k, v in data.get("types", {}).items()}
        self.names = {k: _check_spec(v, f"{where} [names] {k}") for k, v in data.get("names", {}).items()}
        self.rules: list[_Rule] = []
        for i, raw in enumerate(data.get("rule", [])):
            label = f"{where} [[rule]] #{i + 1}"
            extra = set(raw) - _RULE_KEYS
            if extra:
                raise DataFileError(f"{label}: unknown key(s) {sorted(extra)}")
            try:
                rule = _Rule(
                    canonical=re.compile(raw["canonical"]) if "canonical" in raw else None,
                    category=raw.get("category"),
                    qualname=re.compile(raw["qualname"]) if "qualname" in raw else None,
                    roles={k: _check_spec(v, label) for k, v in raw.get("roles", {}).items()},
                    types={k: _check_spec(v, label) for k, v in raw.get("types", {}).items()},
                    slots={k: _check_spec(v, label) for k, v in raw.get("slots", {}).items()},
                    names={k: _check_spec(v, label) for k, v in raw.get("names", {}).items()},
                    where=label,
                )
            except re.error as exc:
                raise DataFileError(f"{label}: bad regular expression: {exc}") from exc
            for ref in rule.slots:
                if not _REF.match(ref):
                    raise DataFileError(f"{label}: slot reference {ref!r} is not '<role>#<n>'")
            self.rules.append(rule)
        self.fingerprint = hashlib.blake2b(repr(sorted(data.items(), key=str)).encode(),
                                           digest_size=8).hexdigest()

    def specs_for(self, slots: Sequence[Any], canonical: str, category: str,
                  qualnames: Sequence[str] = ()) -> dict[int, SlotSpec]:
        """Merged :class:`SlotSpec` per slot index (``slots``: :class:`GroupSlot` s)."""
        ordinal: dict[str, int] = {}
        refs: dict[int, str] = {}
        for slot in sorted(slots, key=lambda s: s.index):
            n = ordinal.get(slot.role, 0)
            ordinal[slot.role] = n + 1
            refs[slot.index] = f"{slot.role}#{n}"
        matching = [r for r in self.rules if r.matches(canonical, category, qualnames)]
        out: dict[int, SlotSpec] = {}
        for slot in slots:
            spec = self.defaults
            role = slot.role
            if role in self.roles:
                spec = spec.merged(self.roles[role], f"roles.{role}")
            elif role.startswith("param:"):
                type_key = slot.type if slot.type in self.types else "unknown"
                if type_key in self.types:
                    spec = spec.merged(self.types[type_key], f"types.{type_key}")
            if slot.name in self.names:
                spec = spec.merged(self.names[slot.name], f"names.{slot.name}")
            type_key = (slot.type if slot.type in self.types else "unknown") if role.startswith("param:") else None
            for rule in matching:
                if role in rule.roles:
                    spec = spec.merged(rule.roles[role], rule.where)
                if type_key is not None and type_key in rule.types:
                    spec = spec.merged(rule.types[type_key], rule.where)
                if refs[slot.index] in rule.slots:
                    spec = spec.merged(rule.slots[refs[slot.index]], rule.where)
                if slot.name in rule.names:
                    spec = spec.merged(rule.names[slot.name], rule.where)
            out[slot.index] = spec
        return out

    @staticmethod
    def resolve_reference(structure: str | None, slots: Sequence[Any]) -> str | None:
        """``"index_into:tensor#0"`` → ``"index_into:<slot index>"``; None when the group has no
        such slot (the structure then cannot apply)."""
        if not structure or ":" not in structure:
            return structure
        name, arg = structure.split(":", 1)
        m = _REF.match(arg)
        if not m:
            return structure
        role, n = m.group(1), int(m.group(2))
        same = sorted((s.index for s in slots if s.role == role))
        if n >= len(same):
            return None
        return f"{name}:{same[n]}"


def _check_spec(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise DataFileError(f"{where}: expected a table, got {entry!r}")
    extra = set(entry) - _SPEC_KEYS
    if extra:
        raise DataFileError(f"{where}: unknown key(s) {sorted(extra)}; allowed: {sorted(_SPEC_KEYS)}")
    kind = entry.get("kind")
    if kind is not None and kind not in SPEC_KINDS:
        raise DataFileError(f"{where}: kind {kind!r} is not one of {SPEC_KINDS}")
    dtype = entry.get("dtype")
    if dtype is not None and dtype not in DTYPE_NAMES:
        raise DataFileError(f"{where}: dtype {dtype!r} is not one of {DTYPE_NAMES}")
    if "shape" in entry and not (isinstance(entry["shape"], list)
                                 and all(isinstance(d, int) and d >= 0 for d in entry["shape"])):
        raise DataFileError(f"{where}: shape must be a list of non-negative integers")
    if "structure" in entry and entry["structure"] is not None:
        from xamt.inputs import structured

        name = structured.split(entry["structure"])[0]
        if name not in structured.ARRAY_STRUCTURES and name not in structured.DERIVED_STRUCTURES:
            raise DataFileError(f"{where}: unknown structure {entry['structure']!r}")
    return dict(entry)


def load_input_rules(path: str | Path | None = None) -> InputRules:
    """Read ``canonical_inputs.toml`` (the packaged one by default).

    Raises:
        DataFileError: the file is missing, not TOML, or an entry is malformed.
    """
    data, where, _ = read_toml("canonical_inputs.toml", path)
    return InputRules(data, where)
