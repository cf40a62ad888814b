"""Reviewable decisions about the registry (``registry_annotations.toml``) and build settings
(``validation.toml``).

:func:`load_annotations` returns :class:`Annotations`: per candidate-group key, a
:class:`GroupAnnotation` (exclude, pin, normaliser, tolerance, note, max_rank) and member-level
:class:`MemberAnnotation` s (a known intended difference: exclude that member with the reason, or
keep it and show the note). :func:`load_settings` reads the build settings.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xamt.datafiles import read_toml
from xamt.errors import DataFileError
from xamt.inputs.arrays import DTYPE_NAMES
from xamt.exec.normalise import check_name

__all__ = ["GroupAnnotation", "MemberAnnotation", "Annotations", "load_annotations",
           "BuildSettings", "load_settings"]


@dataclass
class MemberAnnotation:
    api: str
    reason: str
    action: str = "note"

    def to_json(self) -> dict[str, Any]:
        return {"api": self.api, "reason": self.reason, "action": self.action}


@dataclass
class GroupAnnotation:
    key: str
    reason: str = ""
    exclude: bool = False
    pin: bool = False
    members: list[str] = field(default_factory=list)
    normalise: str | None = None
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)
    note: str | None = None
    max_rank: int | None = None
    member_notes: list[MemberAnnotation] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"reason": self.reason}
        for name in ("exclude", "pin"):
            if getattr(self, name):
                data[name] = True
        if self.members:
            data["members"] = list(self.members)
        if self.normalise:
            data["normalise"] = self.normalise
        if self.tolerance:
            data["tolerance"] = {k: list(v) for k, v in self.tolerance.items()}
        if self.note:
            data["note"] = self.note
        if self.max_rank is not None:
            data["max_rank"] = self.max_rank
        if self.member_notes:
            data["member_notes"] = [m.to_json() for m in self.member_notes]
        return data


class Annotations:
    """Annotations by candidate-group key."""

    def __init__(self, groups: dict[str, GroupAnnotation], fingerprint: str = ""):
        self.groups = groups
        self.fingerprint = fingerprint

    def get(self, key: str) -> GroupAnnotation | None:
        """The annotation of ``key``; a relation inside keras on JAX (``...@keras_jax``, see
        :mod:`xamt.matching.engine`) has that of the same relation's plain key, since the
        annotation speaks of the APIs, which the libraries share."""
        found = self.groups.get(key)
        if found is None and "@" in key:
            found = self.groups.get(key.rsplit("@", 1)[0])
        return found


def _tolerance(raw: Any, where: str) -> dict[str, tuple[float, float]]:
    if not isinstance(raw, dict):
        raise DataFileError(f"{where}: tolerance must be a table dtype -> [rtol, atol]")
    out = {}
    for dtype, pair in raw.items():
        if dtype not in DTYPE_NAMES or not (isinstance(pair, list) and len(pair) == 2):
            raise DataFileError(f"{where}: tolerance {dtype} = {pair!r}: need a known dtype and [rtol, atol]")
        out[dtype] = (float(pair[0]), float(pair[1]))
    return out


def load_annotations(path: str | Path | None = None) -> Annotations:
    """Read ``registry_annotations.toml`` (the packaged one by default).

    Raises:
        DataFileError: a malformed entry (unknown key, missing reason, unknown normaliser).
    """
    data, where, text = read_toml("registry_annotations.toml", path)
    unknown = set(data) - {"group", "member"}
    if unknown:
        raise DataFileError(f"{where}: unknown section(s) {sorted(unknown)}; expected [[group]], [[member]]")
    groups: dict[str, GroupAnnotation] = {}
    allowed = {"key", "reason", "exclude", "pin", "members", "normalise", "tolerance", "note", "max_rank"}
    for i, raw in enumerate(data.get("group", [])):
        label = f"{where} [[group]] #{i + 1}"
        extra = set(raw) - allowed
        if extra or "key" not in raw or not raw.get("reason"):
            raise DataFileError(f"{label}: needs 'key' and 'reason'"
                                + (f"; unknown keys {sorted(extra)}" if extra else ""))
        if raw.get("exclude") and raw.get("pin"):
            raise DataFileError(f"{label}: a group cannot be both excluded and pinned")
        ann = groups.setdefault(raw["key"], GroupAnnotation(raw["key"]))
        ann.reason = raw["reason"]
        ann.exclude = bool(raw.get("exclude", False))
        ann.pin = bool(raw.get("pin", False))
        ann.members = list(raw.get("members", []))
        ann.normalise = check_name(raw["normalise"]) if raw.get("normalise") else None
        ann.tolerance = _tolerance(raw["tolerance"], label) if "tolerance" in raw else {}
        ann.note = raw.get("note")
        rank = raw.get("max_rank")
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 0):
            raise DataFileError(f"{label}: max_rank must be a non-negative integer, got {rank!r}")
        ann.max_rank = rank
    for i, raw in enumerate(data.get("member", [])):
        label = f"{where} [[member]] #{i + 1}"
        extra = set(raw) - {"key", "api", "reason", "action"}
        if extra or not all(raw.get(k) for k in ("key", "api", "reason")):
            raise DataFileError(f"{label}: needs 'key', 'api' and 'reason'"
                                + (f"; unknown keys {sorted(extra)}" if extra else ""))
        action = raw.get("action", "note")
        if action not in ("note", "exclude"):
            raise DataFileError(f"{label}: action must be 'note' or 'exclude', got {action!r}")
        ann = groups.setdefault(raw["key"], GroupAnnotation(raw["key"], reason="member annotations"))
        ann.member_notes.append(MemberAnnotation(raw["api"], raw["reason"], action))
    return Annotations(groups, hashlib.blake2b(text.encode(), digest_size=8).hexdigest())


@dataclass
class BuildSettings:
    """``validation.toml``."""

    tolerance: dict[str, tuple[float, float]]
    timeout: float = 10.0
    compiled_timeout: float = 60.0
    repeat: int = 2
    window: int = 96
    probe_dtypes: tuple[str, ...] = ()
    probe_abstract: dict[str, str] = field(default_factory=dict)
    #: relation kinds whose status-equivalent members are also run on deliberately invalid
    #: inputs (:func:`xamt.inputs.mutate.status_probes`), and must succeed or fail alike
    status_probe_relations: tuple[str, ...] = ()
    #: one probed dtype's call may take this many times the member's seed call, and at least
    #: ``probe_call_floor_s`` (0: the execution timeout)
    probe_call_factor: float = 0.0
    probe_call_floor_s: float = 1.0
    environment: dict[str, str] = field(default_factory=dict)
    #: the build's workers only, over :attr:`environment` (``[build_environment]``)
    build_environment: dict[str, str] = field(default_factory=dict)
    fingerprint: str = ""


def load_settings(path: str | Path | None = None) -> BuildSettings:
    """Read ``validation.toml`` (the packaged one by default)."""
    data, where, text = read_toml("validation.toml", path)
    unknown = set(data) - {"tolerance", "execution", "probe", "environment", "build_environment"}
    if unknown:
        raise DataFileError(f"{where}: unknown section(s) {sorted(unknown)}")
    tol = _tolerance(data.get("tolerance", {}), f"{where} [tolerance]")
    ex = data.get("execution", {})
    probe = data.get("probe", {})
    dtypes = tuple(probe.get("dtypes", ()))
    abstract = probe.get("abstract", {})
    status_relations = probe.get("status_relations", [])
    if not isinstance(status_relations, list) or not all(isinstance(r, str) for r in status_relations):
        raise DataFileError(f"{where} [probe]: status_relations must be a list of relation names")
    env = data.get("environment", {})
    build_env = data.get("build_environment", {})
    if not all(isinstance(v, str) for v in [*abstract.values(), *env.values(), *build_env.values()]):
        raise DataFileError(f"{where}: [probe.abstract], [environment] and [build_environment] values "
                            "must be strings")
    bad = [d for d in dtypes if d not in DTYPE_NAMES]
    if bad:
        raise DataFileError(f"{where} [probe]: unknown dtype(s) {bad}")
    try:
        return BuildSettings(tolerance=tol, timeout=float(ex.get("timeout", 10.0)),
                             compiled_timeout=float(ex.get("compiled_timeout", 60.0)),
                             repeat=max(1, int(ex.get("repeat", 2))), window=max(1, int(ex.get("window", 96))),
                             probe_dtypes=dtypes, probe_abstract=dict(abstract),
                             status_probe_relations=tuple(status_relations),
                             probe_call_factor=float(probe.get("call_factor", 0.0)),
                             probe_call_floor_s=float(probe.get("call_floor_s", 1.0)),
                             environment=dict(env), build_environment=dict(build_env),
                             fingerprint=hashlib.blake2b(text.encode(), digest_size=8).hexdigest())
    except (TypeError, ValueError) as exc:
        raise DataFileError(f"{where} [execution]: {exc}") from exc
