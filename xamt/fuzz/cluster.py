"""The campaign's executor on a Ray cluster (``xamt fuzz --ray``).

The engine (:mod:`xamt.fuzz.engine`) talks to an executor through ``submit``/``wait``;
:class:`RayExecutor` is that executor over :class:`~xamt.exec.cluster.Shards`: one actor per node,
each with its own sandbox pool and group executor, every group held by one actor while it lives.
A group travels to its actor with its iterations (pickled once) until a result shows the actor
holds it; from then on an iteration sends only its input and limits. It comes back as a
:class:`~xamt.exec.group.GroupRun` without its group. (A ``ray.put`` per group cost a fifth of
the driver's time, and the actor's ``ray.get`` of it stalled every job of the actor.)

The search, the schedule, the budget, triage and the store stay on the driver
(:mod:`xamt.fuzz.campaign`); see the README's "Campaigns on a cluster" for why.
"""
from __future__ import annotations

import dataclasses
import pickle
from typing import Any, Hashable, Mapping

from xamt.exec.cluster import Shards
from xamt.exec.group import ExecItem, GroupRun

__all__ = ["CampaignJobs", "RayExecutor"]


class CampaignJobs:
    """A group-iteration as an actor's job: payload ``(item without its group, pickled group or
    None)``; the actor keeps each group it was sent."""

    def __init__(self, adapters: Mapping[str, Any], timeout: float):
        self.adapters = dict(adapters)
        self.timeout = float(timeout)
        self._gx: Any = None
        self._groups: dict[Hashable, Any] = {}
        self._where = ""

    def __getstate__(self) -> dict[str, Any]:
        return {"adapters": self.adapters, "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["adapters"], state["timeout"])

    def setup(self, pool: Any, where: str) -> None:
        from xamt.exec.group import GroupExecutor

        # deaths are not confirmed in fuzzing (triage runs every candidate again), as locally
        self._gx = GroupExecutor(pool, self.adapters, timeout=self.timeout, confirm_deaths=False)
        self._where = where

    def steps(self, payload: tuple[ExecItem, bytes | None]) -> Any:
        item, blob = payload
        key = item.tag
        group = self._groups.get(key)
        if group is None:
            if blob is None:  # the driver sends a group until a result of it came back
                raise RuntimeError(f"group {key!r} arrived without its definition")
            group = self._groups[key] = pickle.loads(blob)
        runs = yield from self._gx.run_steps([dataclasses.replace(item, group=group)])
        return runs[0]

    def trim(self, run: GroupRun) -> GroupRun:
        # workers are named by node too: process ids of two nodes may coincide
        return dataclasses.replace(run, item=None,
                                   workers=tuple((self._where, p) for p in run.workers),
                                   killed=tuple((self._where, p) for p in run.killed))


class RayExecutor:
    """The engine's executor on :class:`~xamt.exec.cluster.Shards` (see the module docstring)."""

    def __init__(self, shards: Shards):
        self.shards = shards
        shards.on_moved = self._moved
        self._items: dict[int, ExecItem] = {}
        #: pickled groups not yet known to be held by their actor
        self._blobs: dict[Hashable, bytes] = {}
        #: (actor, group) pairs a result has shown
        self._held: set[tuple[str, Hashable]] = set()
        #: group-iterations finished, by node
        self.by_node: dict[str, int] = {}

    def submit(self, token: int, item: ExecItem) -> None:
        key = item.group.key
        actor = self.shards.actor_for(key)
        blob = None
        if (actor.where, key) not in self._held:
            blob = self._blobs.get(key)
            if blob is None:
                blob = self._blobs[key] = pickle.dumps(item.group, protocol=pickle.HIGHEST_PROTOCOL)
        self._items[token] = item
        self.shards.start(token, key, (dataclasses.replace(item, group=None, tag=key), blob), actor)

    def submit_many(self, pairs: list[tuple[int, ExecItem]]) -> None:
        """``submit`` for each ``(token, item)`` (each goes to the actor holding its group)."""
        for token, item in pairs:
            self.submit(token, item)

    def _moved(self, token: int, key: Hashable, payload: Any) -> Any:
        """A lost actor's job, on its way to another actor: it carries its group again."""
        item, _ = payload
        return item, pickle.dumps(self._items[token].group, protocol=pickle.HIGHEST_PROTOCOL)

    def wait(self, timeout: float) -> list[tuple[int, GroupRun]]:
        out = []
        for token, run, where in self.shards.wait(timeout):
            self.by_node[where] = self.by_node.get(where, 0) + 1
            item = self._items.pop(token)
            self._held.add((where, item.group.key))
            self._blobs.pop(item.group.key, None)  # pickled again if the group moves
            out.append((token, dataclasses.replace(run, item=item)))
        return out

    def __len__(self) -> int:
        return len(self.shards)
