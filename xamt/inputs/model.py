"""The input of one group execution: one value per callable slot, as regenerable data.

A :class:`GroupInput` maps slot indices to :class:`SlotValue` s. Nothing in it is an array: array
slots hold :class:`~xamt.inputs.arrays.ArrayRecipe` s (regenerated bit for bit by
:func:`materialise`), optionally post-processed by a named *structure* (an SPD matrix, a
probability vector, indices valid for another slot; see :mod:`xamt.inputs.structured`); literal
slots (axes, flags, counts, shapes) hold JSON values; dtype slots hold a dtype name. So an input
round-trips through JSON (:meth:`GroupInput.to_json`), which is how the store records it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping

from xamt.errors import ConfigError
from xamt.inputs.arrays import ArrayRecipe

__all__ = ["SlotValue", "GroupInput", "KINDS"]

#: kinds of slot values: an array; a list of arrays; a JSON literal; a dtype name; a literal
#: computed from other slots at materialisation (``structure`` says how, e.g. ``reshape_of:0``)
KINDS = ("array", "arrays", "literal", "dtype", "derived")


@dataclass(frozen=True)
class SlotValue:
    """One slot's value (see the module docstring). Build with the class methods."""

    kind: str
    recipe: ArrayRecipe | None = None
    recipes: tuple[ArrayRecipe, ...] = ()
    structure: str | None = None
    value: Any = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown slot value kind {self.kind!r}; expected one of {KINDS}")
        if self.kind == "array" and self.recipe is None:
            raise ConfigError("an array slot value needs a recipe")
        if self.kind == "derived" and not self.structure:
            raise ConfigError("a derived slot value needs a structure")

    # -- constructors ------------------------------------------------------------------------
    @classmethod
    def array(cls, recipe: ArrayRecipe, structure: str | None = None) -> "SlotValue":
        return cls("array", recipe=recipe, structure=structure)

    @classmethod
    def arrays(cls, recipes: list[ArrayRecipe] | tuple[ArrayRecipe, ...],
               structure: str | None = None) -> "SlotValue":
        return cls("arrays", recipes=tuple(recipes), structure=structure)

    @classmethod
    def literal(cls, value: Any) -> "SlotValue":
        return cls("literal", value=value)

    @classmethod
    def dtype(cls, name: str) -> "SlotValue":
        return cls("dtype", value=str(name))

    @classmethod
    def derived(cls, structure: str) -> "SlotValue":
        return cls("derived", structure=structure)

    # -- helpers -----------------------------------------------------------------------------
    @property
    def is_array(self) -> bool:
        return self.kind in ("array", "arrays")

    def all_recipes(self) -> tuple[ArrayRecipe, ...]:
        if self.kind == "array":
            return (self.recipe,)  # type: ignore[return-value]
        return self.recipes

    def with_recipes(self, recipes: tuple[ArrayRecipe, ...]) -> "SlotValue":
        """The same value with its recipe(s) replaced (same count)."""
        if self.kind == "array":
            return replace(self, recipe=recipes[0])
        return replace(self, recipes=tuple(recipes))

    def depends_on(self) -> int | None:
        """The slot this value's structure reads (``index_into:3`` → 3), if any."""
        if self.structure and ":" in self.structure:
            arg = self.structure.split(":", 1)[1]
            if arg.lstrip("-").isdigit():
                return int(arg)
        return None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.kind == "array":
            data["recipe"] = self.recipe.to_json()  # type: ignore[union-attr]
        elif self.kind == "arrays":
            data["recipes"] = [r.to_json() for r in self.recipes]
        elif self.kind in ("literal", "dtype"):
            data["value"] = self.value
        if self.structure:
            data["structure"] = self.structure
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SlotValue":
        kind = data.get("kind")
        if kind == "array":
            return cls.array(ArrayRecipe.from_json(data["recipe"]), data.get("structure"))
        if kind == "arrays":
            return cls.arrays([ArrayRecipe.from_json(r) for r in data["recipes"]], data.get("structure"))
        if kind == "literal":
            return cls.literal(data.get("value"))
        if kind == "dtype":
            return cls.dtype(data["value"])
        if kind == "derived":
            return cls.derived(data["structure"])
        raise ConfigError(f"unknown slot value kind {kind!r} in {dict(data)!r}")


@dataclass(frozen=True)
class GroupInput:
    """Slot index → :class:`SlotValue` for one execution of a group. ``variant`` names the seed
    variant it descends from (for reports); it is not part of the input's identity."""

    values: Mapping[int, SlotValue] = field(default_factory=dict)
    variant: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", dict(sorted((int(k), v) for k, v in self.values.items())))

    def __iter__(self) -> Iterator[int]:
        return iter(self.values)

    def __getitem__(self, slot: int) -> SlotValue:
        return self.values[slot]

    def __contains__(self, slot: object) -> bool:
        return slot in self.values

    def slots(self) -> list[int]:
        return list(self.values)

    def replace(self, slot: int, value: SlotValue | None) -> "GroupInput":
        """A copy with ``slot`` set to ``value`` (None: removed)."""
        values = dict(self.values)
        if value is None:
            values.pop(slot, None)
        else:
            values[slot] = value
        return GroupInput(values, self.variant)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"slots": {str(k): v.to_json() for k, v in self.values.items()}}
        if self.variant:
            data["variant"] = self.variant
        return data

    def json_form(self) -> dict[str, Any]:
        """:meth:`to_json`, computed once and kept (inputs are immutable). Read-only: the
        same dict is returned every time (a campaign's checkpoints write every corpus entry
        of each group they touched, most of them unchanged since the last)."""
        cached = self.__dict__.get("_json")
        if cached is None:
            cached = self.to_json()
            object.__setattr__(self, "_json", cached)
        return cached

    def json_text(self) -> str:
        """``json.dumps`` of :meth:`json_form`, computed once and kept: a campaign checkpoint
        writes each corpus entry of every group it touched as this text."""
        cached = self.__dict__.get("_json_text")
        if cached is None:
            cached = json.dumps(self.json_form())
            object.__setattr__(self, "_json_text", cached)
        return cached

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "GroupInput":
        slots = data.get("slots", {})
        return cls({int(k): SlotValue.from_json(v) for k, v in slots.items()}, data.get("variant", ""))

    def compile_signature(self) -> str:
        """What a compiler specialises a call on: each array's shape, dtype and structure and
        each literal and dtype argument, without the values (seeds, magnitudes, special-value
        rates). Two inputs with the same signature reuse one compiled program."""
        cached = self.__dict__.get("_compile_signature")
        if cached is not None:  # asked for every proposal and result of a campaign
            return cached
        parts = []
        for slot, v in self.values.items():
            if v.is_array:
                parts.append((slot, v.structure, [(list(r.shape), r.dtype) for r in v.all_recipes()]))
            else:
                parts.append((slot, v.kind, v.structure, v.value))
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
        object.__setattr__(self, "_compile_signature", text)  # inputs are immutable: safe to keep
        return text

    def signature(self) -> str:
        """A short stable hash of the input's content (variant excluded), for de-duplication."""
        text = json.dumps(self.to_json()["slots"], sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
