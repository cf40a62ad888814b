"""The CPU-vs-device oracle: which devices a campaign runs on, and the device twins of members.

A library that runs on more than the CPU (torch on ``cuda:0``, jax on ``gpu:0``, tensorflow on
``gpu:0``) must compute the same values there. The campaign checks it without a code path of its
own: when it starts, each group gets a *device twin* of every member whose library supports an
extra device — the same API and argument plan with ``Member.device`` set and the device in its
name (``torch.sum@cuda:0``) — and the original is pinned to ``cpu`` (a GPU build of TensorFlow
or JAX would otherwise run it on the GPU as well). From then on a twin is a member like any
other: the comparator and the oracles judge it, triage names it as the outlier, the reproducer
places its inputs on the device. A CPU-vs-GPU disagreement of one API is thus a finding whose
outlier is ``<api>@<device>``.

Which devices exist is asked of each adapter's ``devices`` hook **inside a sandbox worker**
(:func:`probe_devices`): the hooks import the library and may initialise its GPU runtime, which
the fuzzer's parent process must never do (its workers are forked from a zygote).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from xamt.errors import ConfigError
from xamt.log import get_logger
from xamt.matching.model import CPU, cpu_twin, device_label

__all__ = ["DevicePlan", "parse_devices", "probe_devices", "discover", "resolve",
           "with_device_twins", "device_label", "cpu_twin", "PROBE_DEVICES", "CPU"]

_log = get_logger("fuzz.devices")

PROBE_DEVICES = "xamt.fuzz.devices:probe_devices"




def parse_devices(text: str | Sequence[str] | None) -> str | tuple[str, ...]:
    """``--devices``: ``"auto"`` (every device found), ``"cpu"`` (no device oracle) or a list
    such as ``"cpu,cuda:0"`` (``cpu`` is always included: it is what the others are compared
    against)."""
    if text is None:
        return "auto"
    items = [t.strip().lower() for t in (text.split(",") if isinstance(text, str) else text)]
    items = [t for t in items if t]
    if not items:
        raise ConfigError("--devices names no device (use auto, cpu or a list like cpu,cuda:0)")
    if items == ["auto"]:
        return "auto"
    if "auto" in items:
        raise ConfigError("--devices: 'auto' cannot be combined with other devices")
    for t in items:
        kind, sep, index = t.partition(":")
        if not kind or not kind.replace("_", "").isalnum() or (sep and not index.isdigit()):
            raise ConfigError(f"--devices: {t!r} is not a device name (cpu, cuda:0, gpu:1, ...)")
    return tuple(dict.fromkeys([CPU, *items]))


# ---------------------------------------------------------------------------------- worker side
def probe_devices(hooks: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Worker entry point: ``hooks`` are ``[library, devices_ref]`` pairs (ref None: CPU only).

    Returns per library the list of its devices, or the text of the error its hook raised
    (a broken GPU runtime must not end the campaign: that library then runs on the CPU only).
    """
    from xamt.libraries.base import resolve_ref

    found: dict[str, Any] = {}
    for library, ref in hooks:
        if not ref:
            found[library] = [CPU]
            continue
        try:
            found[library] = [str(d) for d in resolve_ref(ref)()]
        except Exception as exc:  # the library's own failure, reported by name
            found[library] = f"{type(exc).__name__}: {exc}"
    return found


# ---------------------------------------------------------------------------------- parent side
def discover(pool: Any, adapters: Mapping[str, Any], timeout: float = 120.0) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Devices of each adapter's library, asked in one sandbox task (see :func:`probe_devices`).

    Returns ``(found, problems)``: library → devices (``cpu`` at least), library → why its
    probe failed (that library counts as CPU only).
    """
    from sandbox import Task

    hooks = [[name, a.devices_ref] for name, a in adapters.items()]
    outcome = pool.run([Task(PROBE_DEVICES, args=(hooks,), timeout=timeout)])[0]
    found: dict[str, list[str]] = {}
    problems: dict[str, str] = {}
    if outcome.status != "ok" or not isinstance(outcome.value, dict):
        why = f"device probe {outcome.status}: {outcome.error_type or ''} {outcome.error_message or outcome.summary()}".strip()
        _log.warning("%s; every library runs on the CPU only", why)
        return {name: [CPU] for name in adapters}, {name: why for name in adapters}
    for name in adapters:
        got = outcome.value.get(name, [CPU])
        if isinstance(got, str):
            problems[name] = got
            _log.warning("%s: devices hook failed (%s); it runs on the CPU only", name, got)
            got = [CPU]
        found[name] = list(dict.fromkeys([CPU, *got]))
    return found, problems


@dataclass
class DevicePlan:
    """Which extra devices each library's members also run on in a campaign.

    ``requested``: ``"auto"``, ``"cpu"`` or the ``--devices`` list; ``found``: library → the
    devices its hook reported (empty when not asked); ``extra``: library → the devices other
    than ``cpu`` its members get twins on; ``notes``: why a found device is not used.
    """

    requested: str | tuple[str, ...] = "auto"
    found: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def active(self) -> bool:
        """True when some library runs on a device besides the CPU (the oracle runs)."""
        return any(self.extra.values())

    def describe(self) -> str:
        """One line for the campaign log and summary."""
        if self.active:
            on = "; ".join(f"{lib} on cpu + {', '.join(devs)}" for lib, devs in sorted(self.extra.items()) if devs)
            return f"device oracle: on ({on})"
        if self.requested == CPU or self.requested == (CPU,):
            return "device oracle: skipped (--devices cpu)"
        return "device oracle: skipped (no device other than the CPU found" + (
            f"; {'; '.join(self.notes)}" if self.notes else "") + ")"

    def to_json(self) -> dict[str, Any]:
        return {"requested": self.requested if isinstance(self.requested, str) else list(self.requested),
                "found": self.found, "extra": self.extra, "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DevicePlan":
        req = data.get("requested", "auto")
        return cls(requested=req if isinstance(req, str) else tuple(req),
                   found={k: list(v) for k, v in data.get("found", {}).items()},
                   extra={k: list(v) for k, v in data.get("extra", {}).items()},
                   notes=list(data.get("notes", [])))


def resolve(requested: str | tuple[str, ...], found: Mapping[str, Sequence[str]],
            adapters: Mapping[str, Any], problems: Mapping[str, str] | None = None) -> DevicePlan:
    """The :class:`DevicePlan` for ``requested`` devices given what each library ``found``.

    A listed device no library has is a :class:`~xamt.errors.ConfigError` (a typo must not
    quietly turn the oracle off); a device whose adapter has no placement hook is noted, unused.
    """
    plan = DevicePlan(requested=requested, found={k: list(v) for k, v in found.items()})
    plan.notes += [f"{lib}: {why}" for lib, why in sorted((problems or {}).items())]
    if requested == CPU or requested == (CPU,):
        return plan
    if not isinstance(requested, str):
        known = {d for devs in found.values() for d in devs}
        missing = [d for d in requested if d not in known]
        if missing:
            have = "; ".join(f"{lib}: {', '.join(devs)}" for lib, devs in sorted(found.items()))
            raise ConfigError(f"--devices {','.join(missing)}: no library has it here ({have})")
    for lib, devs in sorted(found.items()):
        for d in devs:
            if d == CPU or (requested != "auto" and d not in requested):
                continue
            if not adapters[lib].runs_on(d):
                plan.notes.append(f"{lib} reports {d} but its adapter cannot place calls there")
                continue
            plan.extra.setdefault(lib, []).append(d)
    return plan


def with_device_twins(group: Any, plan: DevicePlan) -> Any:
    """``group`` with a device twin of each member whose library has extra devices in ``plan``
    (appended after the original members, so CPU members come first as references), and those
    originals pinned to ``cpu``. The group itself when no member gets a twin."""
    members = list(group.members)
    infos = list(group.member_info)
    twins, twin_infos = [], []
    for i, (m, info) in enumerate(zip(group.members, group.member_info)):
        extra = plan.extra.get(m.library) or []
        if not extra or m.device not in (None, CPU):
            continue
        members[i] = dataclasses.replace(m, device=CPU)
        for d in extra:
            name = device_label(m.qualname, d)
            twins.append(dataclasses.replace(m, device=d, qualname=name))
            twin_infos.append(dataclasses.replace(info, qualname=name, dtypes=dict(info.dtypes),
                                                  accepted=list(info.accepted), notes=list(info.notes)))
    if not twins:
        return group
    return dataclasses.replace(group, members=members + twins, member_info=infos + twin_infos)
