"""Relations inferred inside each library, as DeepREL does (§2.2–2.4 of the notes).

Name-based relations (:mod:`xamt.matching.relations`) find aliases, twins and variants. DeepREL
also pairs APIs of one library that take alike inputs under different names
(``adaptive_avg_pool3d`` / ``adaptive_max_pool3d``, ``tril_indices`` / ``triu_indices``). For
every API of a library it ranks the others by

* **signature similarity**: the argument planner's optimal one-to-one assignment of their inputs
  (:func:`~xamt.matching.argplan.plan_for`), the matched pairs' similarity summed and divided by
  the most a pair can score times the longer signature's length;
* **documentation similarity**: TF-IDF cosine of the docstrings before their examples
  (scikit-learn, fitted on the library's own docstrings, so a word common in that library weighs
  little);

combined with the weights of ``matching.toml [inferred]``. Only APIs of one category are paired
(a comparison and an elementwise maximum are different kinds of computation). Scoring the assignment for every pair
of a library is quadratic in Python, so each API's ``shortlist`` best peers by a cheap cosine
(signature tokens and documentation) are scored exactly, and the ``top_k`` best of those are
kept, pooled over both directions. Pairs already related by name (sharing any candidate group,
or a canonical name) are skipped. A kept pair whose required inputs do not map in both
directions is rejected here, counted, and never guessed.

Each kept pair is a candidate group of relation ``inferred``, carrying its score. The registry
build decides by execution whether it is ``value``-equivalent (equal outputs), ``status``-
equivalent (both succeed or both fail on every input tried, deliberately invalid ones included)
or neither (rejected, with the reason).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any, Iterable

import numpy as np

from xamt.catalog import doc_body, doc_signatures
from xamt.log import get_logger
from xamt.matching.argplan import plan_for
from xamt.matching.cross import members_and_slots, plans_compatible
from xamt.matching.data import MatchingData
from xamt.matching.model import CandidateGroup, band
from xamt.matching.names import snake
from xamt.matching.roles import Input, inputs_of
from xamt.matching.views import ApiView, ViewIndex

__all__ = ["InferredStats", "ScoredPair", "eligible", "named_inputs", "rank_pairs",
           "signature_similarity", "inferred_groups"]

_log = get_logger("matching.inferred")

#: the most one input pair scores in :func:`~xamt.matching.argplan.similarity` (name, role, type,
#: position, 1 each)
_PAIR_MAX = 4.0
#: unmapped pairs named in the statistics
_EXAMPLES = 20
#: docstring characters read (the summary and the parameters; long tails add noise)
_DOC_CHARS = 2000


@dataclass(frozen=True)
class ScoredPair:
    """One inferred candidate: two APIs of one library and how alike they are."""

    a: str
    b: str
    score: float
    signature: float
    doc: float
    #: each API's rank of the other (1 = its most similar peer; 0 = not in its top k)
    ranks: tuple[int, int]


@dataclass
class InferredStats:
    """How the inferred candidates came about (``match`` stores it with its statistics)."""

    apis: dict[str, int] = field(default_factory=dict)
    ranked_pairs: int = 0
    related_skipped: int = 0
    unmapped_rejected: int = 0
    candidates: int = 0
    seconds: float = 0.0
    #: the first few pairs rejected because their required inputs do not map
    unmapped_examples: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "seconds": round(self.seconds, 2)}


def eligible(v: ApiView, data: MatchingData) -> bool:
    """APIs inference ranks: plain functions with a known signature of at least one input
    (methods repeat their functions; in-place and secondary forms repeat their plain ones)."""
    return (v.kind == "function" and v.inplace_of is None and not v.secondary
            and v.category not in data.excluded_categories and v.arity is not None
            and bool(v.inputs) and not v.record.deprecated)


_GENERIC_NAME = re.compile(r"x\d+$")


def named_inputs(v: ApiView, data: MatchingData) -> list[Input]:
    """The inputs inference compares. A ufunc's inspected signature names its required inputs
    ``x1, x2, …`` (positional-only: the names say nothing); its docstring's signature line
    names them (``yn(n, x)``), and those names give roles (an integer order is no tensor), so
    they are compared instead. Calls still follow the inspected signature."""
    required = [i for i in v.inputs if i.required]
    if not required or not all(i.kind == "positional_only" and _GENERIC_NAME.match(i.name)
                               for i in required):
        return v.inputs
    for params in doc_signatures(v.record.doc, v.record.name):
        inputs = inputs_of(params, data, category=v.category)
        if sum(1 for i in inputs if i.required) == len(required):
            return inputs
    return v.inputs


def _maps(a: list[Input], b: list[Input], data: MatchingData) -> bool:
    """Every required input of each side is fed by one of the other's (DeepREL's rule)."""
    return plan_for(a, b, data)[0].complete and plan_for(b, a, data)[0].complete


def _signature_tokens(v: ApiView, data: MatchingData) -> list[str]:
    tokens = []
    for i in named_inputs(v, data):
        tokens += [f"r:{i.role}", f"n:{snake(i.name) or i.name}"]
        if i.required:
            tokens.append(f"q:{i.role}")
    return tokens


def _cosines(texts: list[Any], **options: Any) -> np.ndarray:
    """Pairwise TF-IDF cosine of ``texts`` (dense; zero rows for empty texts)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        x = TfidfVectorizer(**options).fit_transform(texts)
    except ValueError:  # an empty vocabulary: nothing is alike
        return np.zeros((len(texts), len(texts)))
    return (x @ x.T).toarray()


def signature_similarity(a: ApiView, b: ApiView, data: MatchingData) -> float:
    """DeepREL's signature similarity: the optimal assignment's summed pair similarity over the
    most the longer signature could score (0..1)."""
    a_in, b_in = named_inputs(a, data), named_inputs(b, data)
    plan, _ = plan_for(a_in, b_in, data)
    matched = sum(s.similarity for s in plan.args if s.slot is not None)
    return matched / (_PAIR_MAX * max(len(a_in), len(b_in), 1))


def rank_pairs(views: list[ApiView], data: MatchingData,
               skip: set[frozenset[str]] | None = None) -> tuple[list[ScoredPair], int]:
    """The inferred pairs of one library's ``views``: every API's ``top_k`` peers by combined
    score, pooled over both directions; pairs in ``skip`` are left out. Returns the pairs (best
    first) and how many were skipped."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    conf = data.inferred
    views = sorted(views, key=lambda v: v.qualname)  # the result does not depend on the order
    n = len(views)
    if n < 2:
        return [], 0
    skip = skip or set()
    stop = sorted(ENGLISH_STOP_WORDS | data.stopwords)
    docs = _cosines([doc_body(v.record.doc)[:_DOC_CHARS] for v in views], sublinear_tf=True,
                    stop_words=stop, token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9_]{2,}\b")
    sigs = _cosines([_signature_tokens(v, data) for v in views], analyzer=lambda tokens: tokens)
    w_sig, w_doc = conf["w_signature"], conf["w_doc"]
    cheap = w_sig * sigs + w_doc * docs
    np.fill_diagonal(cheap, -1.0)
    # the same object under two names, or one canonical name: a name-based relation's business;
    # two kinds of computation (a comparison and an elementwise maximum, a reduction and a
    # transpose) are no relation however alike their signatures
    canon = np.array([v.canonical.name for v in views])
    target = np.array([v.record.target for v in views])
    category = np.array([v.category for v in views])
    cheap[canon[:, None] == canon[None, :]] = -1.0
    cheap[target[:, None] == target[None, :]] = -1.0
    cheap[category[:, None] != category[None, :]] = -1.0
    shortlist = min(int(conf["shortlist"]), n - 1)
    top_k = int(conf["top_k"])
    exact: dict[tuple[int, int], float] = {}
    kept: dict[tuple[int, int], tuple[float, float, float]] = {}  # (score, signature, doc)
    ranks: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    skipped: set[tuple[int, int]] = set()
    for i, a in enumerate(views):
        peers = np.argpartition(-cheap[i], shortlist - 1)[:shortlist]
        scored = []
        for j in peers:
            j = int(j)
            if cheap[i, j] < 0:
                continue
            key = (min(i, j), max(i, j))
            if frozenset((a.qualname, views[j].qualname)) in skip:
                skipped.add(key)
                continue
            if key not in exact:
                lo, hi = views[key[0]], views[key[1]]
                exact[key] = signature_similarity(lo, hi, data)
            sig = exact[key]
            score = w_sig * sig + w_doc * float(docs[i, j])
            if (score >= conf["min_score"] and sig >= conf["min_signature"]
                    and docs[i, j] >= conf["min_doc"]):
                scored.append((score, j, sig))
        scored.sort(key=lambda t: (-t[0], views[t[1]].qualname))
        for rank, (score, j, sig) in enumerate(scored[:top_k], start=1):
            key = (min(i, j), max(i, j))
            ranks[key][0 if i == key[0] else 1] = rank
            kept[key] = (round(score, 4), round(sig, 4), round(float(docs[i, j]), 4))
    pairs = [ScoredPair(views[k[0]].qualname, views[k[1]].qualname, *kept[k],
                        (ranks[k][0], ranks[k][1])) for k in kept]
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    return pairs, len(skipped)


def _related(groups: Iterable[CandidateGroup]) -> set[frozenset[str]]:
    """Pairs of APIs of one library already in one candidate group."""
    return {frozenset((a.qualname, b.qualname)) for g in groups
            for a, b in combinations(g.members, 2)
            if a.library == b.library and a.qualname != b.qualname}


def inferred_groups(index: ViewIndex, data: MatchingData,
                    existing: Iterable[CandidateGroup]) -> tuple[list[CandidateGroup], InferredStats]:
    """Candidate groups of relation ``inferred`` for every library of ``index`` (see the module
    docstring); ``existing`` are the name-based groups whose pairs are skipped."""
    import time

    t0 = time.perf_counter()
    stats = InferredStats()
    related = _related(existing)
    by_lib: dict[str, list[ApiView]] = defaultdict(list)
    for v in index.views:
        if eligible(v, data):
            by_lib[v.library].append(v)
    groups: list[CandidateGroup] = []
    for lib in sorted(by_lib):
        views = by_lib[lib]
        # per library: keras on JAX and on TensorFlow share every name
        by_name = {v.qualname: v for v in views}
        stats.apis[lib] = len(views)
        pairs, skipped = rank_pairs(views, data, related)
        stats.related_skipped += skipped
        stats.ranked_pairs += len(pairs)
        for p in pairs:
            va, vb = by_name[p.a], by_name[p.b]
            if not (plans_compatible(va, vb, data)
                    and _maps(named_inputs(va, data), named_inputs(vb, data), data)):
                stats.unmapped_rejected += 1
                if len(stats.unmapped_examples) < _EXAMPLES:
                    stats.unmapped_examples.append(f"{p.a} | {p.b}")
                continue
            groups.append(_group(va, vb, p, data))
    stats.candidates = len(groups)
    stats.seconds = time.perf_counter() - t0
    _log.info("inferred %d candidate pairs over %s APIs in %.1f s (%d rejected: required inputs "
              "do not map)", stats.candidates, stats.apis, stats.seconds, stats.unmapped_rejected)
    return groups, stats


def _group(va: ApiView, vb: ApiView, p: ScoredPair, data: MatchingData) -> CandidateGroup:
    pivot, slots, members = members_and_slots([va, vb], data)
    return CandidateGroup(
        key=f"inferred:{p.a}|{p.b}", relation="inferred", category=pivot.category,
        canonical=pivot.canonical.name, equivalence="value", confidence=p.score,
        band=band(p.score, data.confidence["high"], data.confidence["medium"]),
        slots=slots, members=members, pivot=pivot.qualname,
        notes=[f"inferred: score {p.score:.3f} (signature {p.signature:.3f}, documentation "
               f"{p.doc:.3f}); ranks {p.ranks[0]} and {p.ranks[1]} among each other's peers"],
        evidence={"score": p.score, "signature": p.signature, "doc": p.doc,
                  "ranks": list(p.ranks),
                  "incomplete_plans": sum(1 for m in members if not m.plan.complete)},
    )
