"""Relations inferred inside each library (DeepREL): candidates by signature and documentation
similarity, on the real catalogs of numpy, scipy, torch and jax."""
from collections import Counter

import pytest

from xamt.matching.inferred import eligible, rank_pairs, signature_similarity
from xamt.matching.views import build_views


@pytest.fixture(scope="module")
def inferred(result):
    return [g for g in result.groups if g.relation == "inferred"]


@pytest.fixture(scope="module")
def index(catalogs, data):
    return build_views(catalogs, data)


def _pair(g):
    return frozenset(m.qualname for m in g.members)


def test_candidates_carry_their_score_and_rank(inferred, data):
    assert len(inferred) > 1000
    k = int(data.inferred["top_k"])
    for g in inferred:
        assert len(g.members) == 2 and g.members[0].library == g.members[1].library
        ev = g.evidence
        assert ev["score"] == g.confidence >= data.inferred["min_score"]
        assert ev["signature"] >= data.inferred["min_signature"]
        assert ev["doc"] >= data.inferred["min_doc"]
        assert any(1 <= r <= k for r in ev["ranks"]), g.key
        assert f"score {ev['score']:.3f}" in g.notes[0]
    assert Counter(g.members[0].library for g in inferred).keys() >= {"numpy", "scipy", "torch", "jax"}


def test_required_inputs_map_in_both_directions(inferred, result):
    """Pairs whose required inputs do not map were rejected at matching, and counted."""
    for g in inferred:
        assert all(m.plan.complete for m in g.members), g.key
    stats = result.stats["inferred"]
    assert stats["unmapped_rejected"] > 0 and stats["candidates"] == len(inferred)
    assert stats["unmapped_examples"]


def test_pairs_related_by_name_are_not_inferred(inferred, result):
    named = set()
    for g in result.groups:
        if g.relation == "inferred":
            continue
        by_lib = {}
        for m in g.members:
            by_lib.setdefault(m.library, []).append(m.qualname)
        for names in by_lib.values():
            named |= {frozenset((a, b)) for a in names for b in names if a != b}
    assert not [g.key for g in inferred if _pair(g) in named]
    # an alias and a namespace twin: never inferred
    pairs = {_pair(g) for g in inferred}
    assert frozenset(("torch.abs", "torch.absolute")) not in pairs
    assert frozenset(("torch.det", "torch.linalg.det")) not in pairs


def test_known_siblings_rank_high(index, data):
    torch = [v for v in index.views if v.library == "torch" and eligible(v, data)]
    pairs, _ = rank_pairs(torch, data)
    found = {frozenset((p.a, p.b)): p for p in pairs}
    for a, b in [("torch.tril", "torch.triu"), ("torch.argmax", "torch.argmin"),
                 ("torch.cummax", "torch.cummin")]:
        p = found[frozenset((a, b))]
        assert min(r for r in p.ranks if r) <= 3, (a, b, p)
        assert p.signature >= 0.8


def test_ranking_is_deterministic_and_skips_what_it_is_told(index, data):
    numpy = [v for v in index.views if v.library == "numpy" and eligible(v, data)]
    first, _ = rank_pairs(numpy, data)
    again, _ = rank_pairs(list(reversed(numpy)), data)
    assert first == again
    skip = {frozenset(("numpy.tril", "numpy.triu"))}
    pairs, skipped = rank_pairs(numpy, data, skip)
    assert skipped >= 1 and frozenset(("numpy.tril", "numpy.triu")) not in {frozenset((p.a, p.b)) for p in pairs}


def test_signature_similarity_bounds(index, data):
    by_name = {v.qualname: v for v in index.views}
    same = signature_similarity(by_name["numpy.tril"], by_name["numpy.triu"], data)
    other = signature_similarity(by_name["numpy.tril"], by_name["numpy.linalg.solve"], data)
    assert 0.9 <= same <= 1.0 and 0.0 <= other < same


def test_a_ufuncs_inputs_are_compared_under_its_documented_names(index, data, inferred):
    """scipy.special.yn(x1, x2) is documented as yn(n, x), n an integer order: no tensor of
    xlogy(x, y) feeds it, so the two are never paired however alike x1, x2 look."""
    from xamt.matching.inferred import named_inputs

    by_name = {v.qualname: v for v in index.views}
    yn = named_inputs(by_name["scipy.special.yn"], data)
    assert [(i.name, i.role) for i in yn if i.required] == [("n", "count"), ("x", "tensor")]
    assert [i.name for i in by_name["scipy.special.yn"].inputs if i.required] == ["x1", "x2"]
    assert named_inputs(by_name["numpy.tril"], data) == by_name["numpy.tril"].inputs
    pairs = {_pair(g) for g in inferred}
    assert frozenset(("scipy.special.xlogy", "scipy.special.yn")) not in pairs
    assert frozenset(("scipy.special.xlog1py", "scipy.special.xlogy")) in pairs


def test_pairs_stay_within_one_category(inferred, index):
    by_name = {v.qualname: v for v in index.views}
    for g in inferred:
        a, b = (by_name[m.qualname] for m in g.members)
        assert a.category == b.category, g.key
