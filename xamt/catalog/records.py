"""The catalog's data model: :class:`Param`, :class:`ApiRecord` (one mined API),
:class:`LibraryCatalog` (one library's records) and :class:`CatalogResult` (what
:func:`~xamt.catalog.build.build_catalog` returns). Plain dataclasses with a JSON form, the form
the store and the mining worker's result file hold."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Param", "ApiRecord", "LibraryCatalog", "CatalogResult"]


@dataclass
class Param:
    """One parameter of a signature.

    ``kind`` is ``inspect.Parameter``'s kind in snake case (``positional_only``,
    ``positional_or_keyword``, ``var_positional``, ``keyword_only``, ``var_keyword``);
    ``default`` is the default's ``repr`` (None when the parameter is required);
    ``annotation`` the type text when one is known.
    """

    name: str
    kind: str
    default: str | None = None
    required: bool = True
    annotation: str | None = None

    @property
    def is_variadic(self) -> bool:
        return self.kind in ("var_positional", "var_keyword")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Param":
        return cls(**data)


@dataclass
class ApiRecord:
    """One mined API.

    ``qualname`` is the public dotted name (``torch.nn.functional.relu``, ``torch.Tensor.abs``);
    ``target`` the ``"module:qualname"`` reference a sandbox worker resolves
    (``torch.nn.functional:relu``, ``torch:Tensor.abs``); ``namespace`` the mined module;
    ``owner`` the tensor class of a method (the class of a constructed API); ``kind`` is
    ``function``, ``method``, ``class``, ``constructed`` or ``filling`` (a function filling a
    tensor made from its ``shape``).
    For a method, ``receiver`` is True and ``params`` leave the receiver out. For a class,
    ``params`` is the call (``forward``/``call``) signature, ``init_params`` the constructor's,
    and ``functional_forms`` the same library's functions it corresponds to. ``qualifier``
    prefixes the name for matching when the namespace gives it its meaning (``norm`` of
    ``scipy.stats.norm.pdf``).
    """

    library: str
    qualname: str
    name: str
    namespace: str
    kind: str
    target: str
    params: list[Param] = field(default_factory=list)
    signature_source: str = "none"
    overloads: list[list[Param]] = field(default_factory=list)
    owner: str | None = None
    receiver: bool = False
    init_params: list[Param] = field(default_factory=list)
    functional_forms: list[str] = field(default_factory=list)
    doc: str = ""
    doc_refs: list[str] = field(default_factory=list)
    doc_equiv: list[str] = field(default_factory=list)
    alias_of: str | None = None
    aliases: list[str] = field(default_factory=list)
    defined_in: str | None = None
    deprecated: bool = False
    qualifier: str | None = None
    #: for an API mined as an attribute of another (``numpy.add.reduce``): that API's qualname
    sub_api_of: str | None = None

    @property
    def names(self) -> list[str]:
        """The primary qualified name followed by its aliases."""
        return [self.qualname, *self.aliases]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ApiRecord":
        data = dict(data)
        data["params"] = [Param.from_json(p) for p in data.get("params", [])]
        data["init_params"] = [Param.from_json(p) for p in data.get("init_params", [])]
        data["overloads"] = [[Param.from_json(p) for p in ov] for ov in data.get("overloads", [])]
        return cls(**data)


@dataclass
class LibraryCatalog:
    """All records of one library plus what the miner noted (version, devices, compile, notes)."""

    library: str
    version: str
    records: list[ApiRecord]
    info: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    cached: bool = False

    def counts(self) -> dict[str, int]:
        """Records per kind, and the number of extra (alias) names."""
        counts = {"function": 0, "method": 0, "class": 0, "constructed": 0}
        for rec in self.records:
            counts[rec.kind] = counts.get(rec.kind, 0) + 1
        counts["total"] = len(self.records)
        counts["alias_names"] = sum(len(r.aliases) for r in self.records)
        counts["with_signature"] = sum(1 for r in self.records if r.signature_source != "none")
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "library": self.library, "version": self.version, "info": self.info,
            "seconds": self.seconds, "records": [r.to_json() for r in self.records],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LibraryCatalog":
        return cls(
            library=data["library"], version=data["version"],
            records=[ApiRecord.from_json(r) for r in data["records"]],
            info=data.get("info", {}), seconds=float(data.get("seconds", 0.0)),
        )


@dataclass
class CatalogResult:
    """What :func:`build_catalog` returns: mined/cached catalogs and skipped libraries."""

    catalogs: dict[str, LibraryCatalog]
    skipped: dict[str, str]
    seconds: float
