"""A small union-find (disjoint sets) over hashable items."""
from __future__ import annotations

from typing import Hashable, Iterable

__all__ = ["UnionFind"]


class UnionFind:
    """Disjoint sets with path halving and union by size."""

    def __init__(self, items: Iterable[Hashable] = ()):
        self._parent: dict[Hashable, Hashable] = {}
        self._size: dict[Hashable, int] = {}
        for item in items:
            self.add(item)

    def add(self, item: Hashable) -> None:
        if item not in self._parent:
            self._parent[item] = item
            self._size[item] = 1

    def find(self, item: Hashable) -> Hashable:
        self.add(item)
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def union(self, a: Hashable, b: Hashable) -> bool:
        """Join the sets of ``a`` and ``b``; False if they were already one."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size[rb]
        return True

    def components(self) -> list[list[Hashable]]:
        """The sets, each in insertion order, largest first (ties: first inserted first)."""
        groups: dict[Hashable, list[Hashable]] = {}
        for item in self._parent:
            groups.setdefault(self.find(item), []).append(item)
        order = {item: i for i, item in enumerate(self._parent)}
        return sorted(groups.values(), key=lambda g: (-len(g), order[g[0]]))
