"""Variance-guided search: which group to fuzz next, and from which parent input.

The comparator's ``dispersion`` of a group on an input (how far apart the members' outputs are,
in units of the tolerance) is the fitness. For every group the search keeps a small corpus of
inputs with their dispersion; the next input of a group is a mutation of a parent drawn with
probability proportional to its dispersion (plus a floor, so zero-dispersion seeds still get
picked). Groups whose best dispersion keeps growing get more of the budget: a group's weight is
``(1 + gain) / cost`` (for all but an exploring share of draws, which pick uniformly), where
``gain`` is a decaying sum of recent improvements of its best
dispersion (capped, so one noisy group cannot starve the rest) and ``cost`` the group's recent
seconds per iteration (a moving average, floored): dividing by the cost gives every group the
same share of *time* rather than of iterations, so a group whose members compile for seconds
(``torch.compile``) does not eat the budget of a thousand cheap ones.

With ``guided=False`` the same code draws groups uniformly and every input is a fresh random
draw from the group's seeds (no corpus), which is the ablation baseline
(``bench/search_ablation.py``).

Nothing here knows what an input is: the caller supplies ``mutate(parent, rng)`` and the
``fresh(rng)`` draw; inputs are opaque objects.

Novelty: the fuzzer wants *distinct* divergences, and an input whose divergence was already found
(same group, class, outlier and input signature) would otherwise keep the top fitness forever and
pull every later mutation back to what is known. So the caller says whether a divergence is new:
a known one enters the corpus at a fraction of its fitness and adds no gain; a new one adds a
novelty bonus to the group's gain, so groups that keep yielding new divergences keep their budget.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Hashable, Sequence, TypeVar

import numpy as np

__all__ = ["Corpus", "GroupState", "Search", "fitness"]

T = TypeVar("T")

#: a dispersion above this counts as "infinite" for the search (NaN/inf pattern disagreement)
FITNESS_CAP = 1e6
#: weight floor of a corpus entry, so zero-dispersion inputs are still drawn sometimes
PARENT_FLOOR = 0.05
#: how fast the memory of past improvements fades per iteration of a group
GAIN_DECAY = 0.97
#: ceiling of a group's gain (its weight is (1 + gain) / cost)
GAIN_CAP = 20.0
#: seconds per iteration below which a group counts as free (and the cost of an unseen group)
COST_FLOOR = 0.002
#: weight of the newest sample in a group's moving-average cost
COST_ALPHA = 0.3
#: share of its fitness that an input keeps in the corpus when its divergence was already found
KNOWN_FACTOR = 0.1
#: gain a group earns for a divergence not seen before
NOVELTY_BONUS = 2.0
#: share of guided draws that pick a group uniformly: weights learnt from a few costly first
#: visits must not starve a group for the rest of the campaign
EXPLORE = 0.3


def fitness(dispersion: float) -> float:
    """Map a dispersion to a bounded, comparable fitness: log1p of the capped value."""
    if dispersion != dispersion:  # NaN: treat as the cap, a disagreement the comparator could not size
        dispersion = FITNESS_CAP
    return math.log1p(min(max(dispersion, 0.0), FITNESS_CAP))


def _numpy_sum(xs: list[float]) -> float:
    """``np.sum`` of a short float64 list, to the bit: numpy adds fewer than 8 in order, and
    up to 128 in eight interleaved partial sums (its pairwise summation's innermost block)."""
    n = len(xs)
    if n < 8:
        acc = 0.0
        for x in xs:
            acc += x
        return acc
    if n > 128:
        return float(np.sum(np.array(xs, dtype=np.float64)))
    r = xs[:8]
    full = n - n % 8
    for i in range(8, full, 8):
        for j in range(8):
            r[j] += xs[i + j]
    acc = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for i in range(full, n):
        acc += xs[i]
    return acc


@dataclass
class Corpus(Generic[T]):
    """A bounded set of inputs with their fitness; keeps the fittest, drops the weakest."""

    capacity: int = 16
    entries: list[tuple[float, T]] = field(default_factory=list)

    def add(self, item: T, fit: float) -> bool:
        """Insert ``item``; returns False if it was not fit enough to enter a full corpus."""
        if len(self.entries) < self.capacity:
            self.entries.append((fit, item))
            return True
        worst = min(range(len(self.entries)), key=lambda i: self.entries[i][0])
        if fit > self.entries[worst][0]:
            self.entries[worst] = (fit, item)
            return True
        return False

    def choose(self, rng: np.random.Generator) -> T:
        """A parent, drawn with probability proportional to fitness plus :data:`PARENT_FLOOR`."""
        if not self.entries:
            raise LookupError("empty corpus")
        # rng.choice(n, p=w / w.sum()) in plain floats: the same draw and the same pick (its
        # cumulative sum, normalised, searched right of one uniform), without the array
        # checks that made it a campaign driver's costliest line
        w = [f + PARENT_FLOOR for f, _ in self.entries]
        total = _numpy_sum(w)
        cdf, acc = [], 0.0
        for x in w:
            acc += x / total
            cdf.append(acc)
        last = cdf[-1]
        cdf = [c / last for c in cdf]
        return self.entries[min(bisect.bisect_right(cdf, rng.random()), len(cdf) - 1)][1]

    @property
    def best(self) -> float:
        return max((f for f, _ in self.entries), default=0.0)

    def __len__(self) -> int:
        return len(self.entries)


@dataclass
class GroupState(Generic[T]):
    """What the search remembers of one group."""

    corpus: Corpus[T]
    iterations: int = 0
    best_dispersion: float = 0.0
    gain: float = 0.0
    retired: bool = False
    cost: float = COST_FLOOR

    @property
    def weight(self) -> float:
        return 0.0 if self.retired else (1.0 + self.gain) / max(self.cost, COST_FLOOR)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _WEIGHT_FIELDS:  # whoever changed it, the search's weight table follows
            watch = self.__dict__.get("_watch")
            if watch is not None:
                watch[0].add(watch[1])


#: the fields :attr:`GroupState.weight` reads
_WEIGHT_FIELDS = frozenset({"gain", "cost", "retired"})


class Search(Generic[T]):
    """Chooses (group, input) pairs and learns from their dispersion.

    Args:
        seeds: group key → the group's seed inputs (at least one per group).
        mutate: ``mutate(group_key, parent, rng) -> child`` (the group's own mutation operators).
        fresh: ``fresh(group_key, rng) -> input`` for the unguided baseline; defaults to a
            mutation of a random seed.
        guided: variance guidance on (default) or off (uniform groups, no corpus).
        seed: the random seed of all choices.
        run_seeds: run the seed inputs themselves first (off when they were already run, e.g.
            by the registry build that validated the groups on them).
    """

    def __init__(
        self,
        seeds: dict[Hashable, list[T]],
        mutate: Callable[[Hashable, T, np.random.Generator], T],
        *,
        fresh: Callable[[Hashable, np.random.Generator], T] | None = None,
        guided: bool = True,
        seed: int = 0,
        corpus_capacity: int = 16,
        run_seeds: bool = True,
    ):
        if not seeds or any(not s for s in seeds.values()):
            raise ValueError("every group needs at least one seed input")
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.guided = guided
        self._mutate = mutate
        self._fresh = fresh
        self.seeds = seeds
        self.groups: dict[Hashable, GroupState[T]] = {}
        for key, items in seeds.items():
            corpus: Corpus[T] = Corpus(capacity=corpus_capacity)
            for it in items:
                corpus.add(it, 0.0)
            self.groups[key] = GroupState(corpus=corpus)
        self._keys = list(self.groups)
        # the groups' weights as one array, refreshed where a state changed (a draw over
        # thousands of groups reads it instead of every state's weight)
        self._pos = {k: i for i, k in enumerate(self._keys)}
        self._weights = np.array([self.groups[k].weight for k in self._keys], dtype=np.float64)
        self._stale: set[Hashable] = set()
        for key, st in self.groups.items():
            object.__setattr__(st, "_watch", (self._stale, key))
        #: id of a key list asked for → (the list, its groups' positions in the weight array); the
        #: schedule alternates between a few lists (each class's open list, the warm ones)
        self._subsets: dict[int, tuple[Sequence[Hashable], np.ndarray]] = {}
        self._pending_seeds: list[tuple[Hashable, T]] = (
            [(k, s) for k, items in seeds.items() for s in items] if run_seeds else [])

    def next_batch(self, n: int) -> list[tuple[Hashable, T]]:
        """Up to ``n`` (group key, input) pairs to run next; the seeds themselves come first."""
        batch: list[tuple[Hashable, T]] = []
        while self._pending_seeds and len(batch) < n:
            batch.append(self._pending_seeds.pop(0))
        if len(batch) >= n:
            return batch
        keys = [k for k in self._keys if not self.groups[k].retired]
        if not keys:
            return batch
        if self.guided:
            w = np.array([self.groups[k].weight for k in keys], dtype=np.float64)
            picks = self.rng.choice(len(keys), size=n - len(batch), p=w / w.sum())
            explore = self.rng.random(len(picks)) < EXPLORE
            picks[explore] = self.rng.integers(0, len(keys), size=int(explore.sum()))
        else:
            picks = self.rng.integers(0, len(keys), size=n - len(batch))
        for i in picks:
            key = keys[int(i)]
            if self.guided:
                parent = self.groups[key].corpus.choose(self.rng)
                batch.append((key, self._mutate(key, parent, self.rng)))
            elif self._fresh is not None:
                batch.append((key, self._fresh(key, self.rng)))
            else:
                seed_items = self.seeds[key]
                parent = seed_items[int(self.rng.integers(len(seed_items)))]
                batch.append((key, self._mutate(key, parent, self.rng)))
        return batch

    def pick(self, keys: Sequence[Hashable], n: int) -> list[Hashable]:
        """``n`` group keys drawn from ``keys`` (with repetition): by weight with an exploring
        uniform share when guided, uniformly otherwise. Retired groups are never drawn."""
        if n <= 0 or not keys:
            return []
        w = self._weights_of(keys)
        live = np.flatnonzero(w > 0.0)  # a live group's weight is positive, a retired one's 0
        if not len(live):
            return []
        if not self.guided:
            return [keys[int(live[i])] for i in self.rng.integers(0, len(live), size=n)]
        picks = self.rng.choice(len(w), size=n, p=w / w.sum())
        explore = self.rng.random(n) < EXPLORE
        picks[explore] = live[self.rng.integers(0, len(live), size=int(explore.sum()))]
        return [keys[int(i)] for i in picks]

    def _weights_of(self, keys: Sequence[Hashable]) -> np.ndarray:
        """The current weights of ``keys`` (the index of each list asked for is kept: callers ask
        for the same few lists again and again)."""
        if self._stale:
            for key in self._stale:
                self._weights[self._pos[key]] = self.groups[key].weight
            self._stale.clear()
        entry = self._subsets.get(id(keys))
        if entry is None or entry[0] is not keys or len(entry[1]) != len(keys):
            if len(self._subsets) >= 16:
                self._subsets.clear()  # lists the schedule replaced: their ids may be reused
            idx = np.fromiter((self._pos[k] for k in keys), dtype=np.intp, count=len(keys))
            entry = self._subsets[id(keys)] = (keys, idx)
        return self._weights[entry[1]]

    def parent(self, key: Hashable, accept: Callable[[T], bool] | None = None,
               rng: np.random.Generator | None = None) -> T | None:
        """The input to derive ``key``'s next one from: a corpus entry drawn by fitness when
        guided, a seed when not. ``accept`` narrows the choice (None when nothing passes);
        ``rng``: the draw's generator (default: the search's own)."""
        rng = self.rng if rng is None else rng
        if not self.guided:
            pool = self.seeds[key]
            if accept is not None:
                pool = [s for s in pool if accept(s)]
            return pool[int(rng.integers(len(pool)))] if pool else None
        corpus = self.groups[key].corpus
        if accept is None:
            return corpus.choose(rng)
        kept = Corpus(capacity=corpus.capacity, entries=[e for e in corpus.entries if accept(e[1])])
        return kept.choose(rng) if kept.entries else None

    def report(self, key: Hashable, item: T, dispersion: float, cost: float | None = None,
               novel: bool | None = None, parent: bool = True) -> None:
        """Feed back the dispersion the group showed on ``item`` (and the seconds it took).

        ``novel``: None when ``item`` showed no divergence, True when it showed one not seen
        before, False when its divergence was already known (see the module docstring).
        ``parent``: False when ``item`` must not be mutated further (its call killed a worker:
        its children would mostly die the same way, each costing a worker and its compiled
        programs, and the death is triaged already); it is counted and adds nothing else.
        """
        st = self.groups[key]
        st.iterations += 1
        if cost is not None and cost == cost:
            st.cost = cost if st.iterations == 1 else (1 - COST_ALPHA) * st.cost + COST_ALPHA * cost
        st.gain *= GAIN_DECAY
        if not parent:
            return
        if not self.guided:
            st.best_dispersion = max(st.best_dispersion, dispersion if dispersion == dispersion else FITNESS_CAP)
            return
        fit = fitness(dispersion)
        if novel is False:  # what this input shows is known: a weak parent, no gain
            st.corpus.add(item, KNOWN_FACTOR * fit)
            return
        improvement = fit - fitness(st.best_dispersion)
        if improvement > 0:
            st.gain += improvement
            st.best_dispersion = dispersion if dispersion == dispersion else FITNESS_CAP
        if novel:
            st.gain += NOVELTY_BONUS
        st.gain = min(GAIN_CAP, st.gain)
        st.corpus.add(item, fit)

    def retire(self, key: Hashable) -> None:
        """Stop drawing a group (e.g. every member failed: nothing left to compare)."""
        self.groups[key].retired = True

    def state(self, key: Hashable) -> GroupState[T]:
        return self.groups[key]

    def summary(self) -> dict[str, Any]:
        """Counters for progress display."""
        return {
            "groups": len(self.groups),
            "retired": sum(g.retired for g in self.groups.values()),
            "iterations": sum(g.iterations for g in self.groups.values()),
        }
