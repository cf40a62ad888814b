import contextlib
import functools

import pytest

from xamt.errors import StoreVersionError
from xamt.findings import (
    DISPERSION_BINS,
    FINDINGS_SCHEMA,
    Campaign,
    Finding,
    FindingClass,
    FindingsStore,
    histogram_of,
)
from xamt.store import Schema, Store


@contextlib.contextmanager
def fresh_findings(path):
    """A findings store at ``path`` holding one campaign: ``(store, campaign id)``."""
    with Store(path) as st:
        fs = FindingsStore(st)
        yield fs, fs.start_campaign(Campaign(libraries={}, budget_s=1, seed=1, workers=1))


def make_finding(cid, **kw):
    base = dict(
        campaign_id=cid, group_key="sum/reduction", relation="cross_library",
        finding_class=FindingClass.SUBNORMAL, outlier_library="tensorflow",
        outlier_api="tensorflow.math.reduce_sum", dtype="float32", signature="float32[2,3]|sub",
        members=[{"library": "numpy", "api": "numpy.sum", "status": "ok"},
                 {"library": "tensorflow", "api": "tensorflow.math.reduce_sum", "status": "ok"}],
        summary={"max_abs_diff": 1e-45},
    )
    base.update(kw)
    return Finding(**base)


def test_campaign_and_findings_round_trip_and_dedup(tmp_path):
    db = tmp_path / "x.db"
    with Store(db) as st:
        fs = FindingsStore(st)
        c = Campaign(libraries={"numpy": "2.4.6"}, budget_s=60, seed=1, workers=2)
        cid = fs.start_campaign(c)
        fid, new = fs.file(make_finding(cid), b"in", b"out")
        assert new
        fid2, new2 = fs.file(make_finding(cid, hits=3), b"in2", b"out2")
        assert (fid2, new2) == (fid, False)
        other, new3 = fs.file(make_finding(cid, signature="float64[4]|nan"), b"i", b"o")
        assert new3 and other != fid
        c.executions, c.iterations, c.status = 100, 50, "done"
        fs.update_campaign(c)
        fs.add_sample(cid, 10, 5, 1, t=1.0)
        fs.put_group_stats(cid, "sum/reduction", 50, 100, 3.5, histogram_of([0, 0.5, 3.5, 1e12]),
                           members=make_finding(cid).members)
        fs.put_group_stats(cid, "abs/elementwise", 1, 3, 0.0, histogram_of([0]))
    # reopened: everything is still there (the fuzzer may have crashed in between)
    with Store(db) as st:
        fs = FindingsStore(st)
        got = fs.finding(fid)
        assert got.hits == 4 and got.finding_class is FindingClass.SUBNORMAL
        assert got.members[1]["api"] == "tensorflow.math.reduce_sum"
        assert fs.evidence(fid) == (b"in", b"out")
        assert fs.campaign().executions == 100 and fs.campaign(cid).status == "done"
        assert len(fs.findings(cid)) == 2 and fs.findings(verified_only=True) == []
        fs.set_reproducer(fid, "findings/1/repro.py", True)
        assert [f.id for f in fs.findings(verified_only=True)] == [fid]
        assert fs.counts_by(cid, "finding_class") == [{"finding_class": "subnormal", "n": 2}]
        assert fs.samples(cid)[0]["executions"] == 10
        no_members, stats = fs.group_stats(cid)  # ordered by group key
        assert sum(stats["histogram"]) == 4 and stats["best_dispersion"] == 3.5
        assert [m["api"] for m in stats["members"]] == ["numpy.sum", "tensorflow.math.reduce_sum"]
        assert no_members["group_key"] == "abs/elementwise" and no_members["members"] is None
        with pytest.raises(ValueError):
            fs.put_group_stats(cid, "g", 1, 1, 0.0, histogram_of([]), members=[{"api": "x"}])
        with pytest.raises(ValueError):
            fs.counts_by(cid, "summary; DROP TABLE findings")


def test_histogram_bins():
    h = histogram_of([0.0, 1e-9, 1.0, 10.0, 1e20])
    assert len(h) == len(DISPERSION_BINS) + 1
    assert h[0] == 2 and h[-1] == 1 and sum(h) == 5


def test_incompatible_findings_tables_are_refused(tmp_path):
    db = tmp_path / "x.db"
    with Store(db) as st:
        FindingsStore(st)
    newer = Schema(FINDINGS_SCHEMA.component, FINDINGS_SCHEMA.version + 1,
                   FINDINGS_SCHEMA.tables, FINDINGS_SCHEMA.statements)
    with Store(db) as st:
        with pytest.raises(StoreVersionError):
            st.ensure(newer)


def test_a_later_hit_counts_and_the_evidence_round_trips(tmp_path):
    import numpy as np

    from xamt.findings import EvidenceDecodeError, decode_evidence_blob, encode_evidence

    with Store(tmp_path / "x.db") as st:
        fs = FindingsStore(st)
        cid = fs.start_campaign(Campaign(libraries={"numpy": "2"}, budget_s=1, seed=1, workers=1))
        inputs, outputs = encode_evidence({"x": np.arange(3.0)}, [{"status": "ok", "value": np.ones(2)}])
        fid, _ = fs.file(make_finding(cid, last_seen=1.0), inputs, outputs)
        fs.add_hit(fid, 42.0)
        got = fs.finding(fid)
        assert (got.hits, got.last_seen) == (2, 42.0)
        back_in, back_out = (decode_evidence_blob(b) for b in fs.evidence(fid))
    assert np.array_equal(back_in["x"], np.arange(3.0)) and back_out[0]["status"] == "ok"
    with pytest.raises(EvidenceDecodeError):
        decode_evidence_blob(b"\xc1")


def test_one_finding_per_root_cause_with_its_groups_and_dtypes_as_occurrences(tmp_path):
    """The same outlier, class and trigger seen in another group and dtype is one finding: the
    group and the dtype become occurrences (the audit found a cause filed per dtype and group)."""
    with Store(tmp_path / "x.db") as st:
        fs = FindingsStore(st)
        cid = fs.start_campaign(Campaign(libraries={"numpy": "2.4.6"}, budget_s=60, seed=1, workers=2))
        fid, new = fs.file(make_finding(cid, signature="subnormal"), b"i", b"o")
        again, new2 = fs.file(make_finding(cid, signature="subnormal", group_key="eager_compiled:x",
                                           dtype="float64"), b"i", b"o")
        same, new3 = fs.file(make_finding(cid, signature="subnormal", group_key="eager_compiled:x",
                                          dtype="float64"), b"i", b"o")
        assert new and not new2 and not new3 and fid == again == same
        occ = fs.occurrences(fid)
        assert [(o["group_key"], o["dtype"], o["hits"]) for o in occ] == [
            ("sum/reduction", "float32", 1), ("eager_compiled:x", "float64", 2)]
        assert fs.finding(fid).hits == 3
        # another trigger, another class or another API is another root cause
        assert fs.file(make_finding(cid, signature="+inf"), b"i", b"o")[1]
        assert fs.file(make_finding(cid, signature="subnormal", finding_class=FindingClass.VALUE),
                       b"i", b"o")[1]
        policy = make_finding(cid, signature="flush-to-zero", finding_class=FindingClass.POLICY)
        assert not policy.is_bug and make_finding(cid).is_bug
        # APIs of one family (a method and its function, one distribution's methods) fold into
        # one finding; the family's other APIs are occurrences
        first, n1 = fs.file(make_finding(cid, outlier_api="torch.lcm", signature="int-extreme",
                                         summary={"family": "torch:lcm"}), b"i", b"o")
        method, n2 = fs.file(make_finding(cid, outlier_api="torch.Tensor.lcm", signature="int-extreme",
                                          group_key="function_method:lcm", summary={"family": "torch:lcm"}),
                             b"i", b"o")
        other, n3 = fs.file(make_finding(cid, outlier_api="torch.gcd", signature="int-extreme",
                                         summary={"family": "torch:gcd"}), b"i", b"o")
        assert n1 and not n2 and n3 and first == method != other
        assert [o["group_key"] for o in fs.occurrences(first)] == ["sum/reduction", "function_method:lcm"]


def test_a_findings_cause_is_its_recorded_cluster_else_its_policy_or_class_and_signature():
    clustered = make_finding(1, summary={"cluster": "nan: keras:keras.ops: nan"})
    assert clustered.cause == "nan: keras:keras.ops: nan"
    # a finding filed before clusters were recorded
    legacy = make_finding(1, finding_class=FindingClass.POLICY, summary={"policy": {"name": "flush-to-zero"}})
    assert legacy.cause == "policy: flush-to-zero"
    assert make_finding(1).cause == "subnormal: float32[2,3]|sub"


def test_a_finding_whose_lineage_is_related_folds_into_the_first(tmp_path):
    """tnp.sort's NaN finding after tf.math.top_k's, with tnp.sort's call running top_k: one
    finding, the second API an occurrence. Another class or signature stays apart."""
    from xamt.triage.dedup import same_cause

    def lin(name, entry, calls):
        return {"kernels": "tensorflow", "name": name, "entry": entry, "calls": calls}

    with Store(tmp_path / "x.db") as st:
        fs = FindingsStore(st)
        cid = fs.start_campaign(Campaign(libraries={}, budget_s=1, seed=1, workers=1))
        top_k = make_finding(cid, finding_class=FindingClass.NAN, signature="nan", group_key="topk",
                             outlier_api="tensorflow.math.top_k",
                             summary={"family": "tensorflow:topk", "lineage": lin("topk", "aa", ["aa"])})
        sort = make_finding(cid, finding_class=FindingClass.NAN, signature="nan", group_key="sort",
                            outlier_api="tensorflow.experimental.numpy.sort",
                            members=[{"library": "tensorflow", "api": "tensorflow.experimental.numpy.sort"}],
                            summary={"family": "tensorflow:sort", "lineage": lin("sort", "cc", ["cc", "aa"])})
        first, _ = fs.file(top_k, b"", b"")
        # without the relation, two findings
        assert fs.file(sort, b"", b"", related=None)[1]
        with Store(tmp_path / "y.db") as st2:
            fs2 = FindingsStore(st2)
            cid2 = fs2.start_campaign(Campaign(libraries={}, budget_s=1, seed=1, workers=1))
            top_k.campaign_id = sort.campaign_id = cid2
            a, _ = fs2.file(top_k, b"", b"", related=same_cause)
            b, new = fs2.file(sort, b"", b"", related=same_cause)
            assert (b, new) == (a, False)
            assert [o["members"] for o in fs2.occurrences(a)][-1] == ["tensorflow.experimental.numpy.sort"]
            other = make_finding(cid2, finding_class=FindingClass.NAN, signature="+inf",
                                 summary={"family": "tensorflow:sort", "lineage": lin("sort", "cc", ["cc", "aa"])})
            assert fs2.file(other, b"", b"", related=same_cause)[1]
            # the other API is listed with the first finding, with its lineage
            assert fs2.finding(a).summary["also"] == [{"api": "tensorflow.experimental.numpy.sort",
                                                       "signature": "nan", "lineage": sort.summary["lineage"]}]
            # a third API related only to the folded one (it calls sort, not top_k) folds too
            sorted_ = make_finding(cid2, finding_class=FindingClass.NAN, signature="nan", group_key="sorted",
                                   outlier_api="tensorflow.experimental.numpy.msort",
                                   summary={"family": "tensorflow:msort",
                                            "lineage": lin("msort", "ee", ["ee", "cc"])})
            assert fs2.file(sorted_, b"", b"", related=same_cause) == (a, False)
            assert [x["api"] for x in fs2.finding(a).summary["also"]][-1] == "tensorflow.experimental.numpy.msort"


def test_a_related_finding_folds_across_akin_triggers(tmp_path):
    """jax's convolution_matrix calls toeplitz: its +inf finding and toeplitz's NaN finding are
    one convolution spreading non-finite values; with ``akin`` they fold, the trigger listed."""
    from xamt.triage.dedup import akin, load_lineage, same_cause

    kin = functools.partial(akin, kin=load_lineage().trigger_kin)
    lin = {"library": "jax", "kernels": "xla", "name": "convolution_matrix", "entry": "cm", "calls": ["cm", "tp"]}
    with fresh_findings(tmp_path / "x.db") as (fs, cid):
        conv = make_finding(cid, finding_class=FindingClass.NAN, signature="+inf",
                            outlier_api="jax.scipy.linalg.convolution_matrix",
                            summary={"family": "jax:convolution_matrix", "lineage": lin})
        toeplitz = make_finding(cid, finding_class=FindingClass.NAN, signature="nan",
                                outlier_api="jax.scipy.linalg.toeplitz",
                                summary={"family": "jax:toeplitz",
                                         "lineage": {**lin, "name": "toeplitz", "entry": "tp", "calls": ["tp"]}})
        first, _ = fs.file(conv, b"", b"", related=same_cause, akin=kin)
        # without kin the triggers differ: two findings
        assert fs.file(toeplitz, b"", b"", related=same_cause)[1]
    with fresh_findings(tmp_path / "y.db") as (fs, cid):
        conv.campaign_id = toeplitz.campaign_id = cid
        first, _ = fs.file(conv, b"", b"", related=same_cause, akin=kin)
        assert fs.file(toeplitz, b"", b"", related=same_cause, akin=kin) == (first, False)
        assert [(a["api"], a["signature"]) for a in fs.finding(first).summary["also"]] == [
            ("jax.scipy.linalg.toeplitz", "nan")]
        # a subnormal is no kin of +inf
        sub = make_finding(cid, finding_class=FindingClass.NAN, signature="subnormal",
                           outlier_api="jax.scipy.linalg.toeplitz", summary=dict(toeplitz.summary))
        assert fs.file(sub, b"", b"", related=same_cause, akin=kin)[1]


def test_a_fold_that_bridges_two_filed_findings_absorbs_the_later_one(tmp_path):
    """tnp.sort's NaN finding, then TensorFlow's compiled approx_top_k blamed against its eager
    form (no majority: either side), filed apart; then top_k, which tnp.sort calls and whose
    qualified form the eager approx_top_k is, folds into tnp.sort and bridges the two: the
    compiled one is absorbed, with its occurrences and hits. A finding it does not relate to
    stays, and the eager approx_top_k folds into the survivor."""
    from xamt.triage.dedup import same_cause

    def lin(name, kernels="tensorflow", **kw):
        return {"library": "tensorflow", "kernels": kernels, "name": name, "entry": None, "calls": [], **kw}

    with fresh_findings(tmp_path / "x.db") as (fs, cid):
        def nan(api, group, lineage, also=None):
            return make_finding(cid, finding_class=FindingClass.NAN, signature="nan", group_key=group,
                                outlier_api=api, hits=2, summary={"family": f"tensorflow:{group}", "lineage": lineage,
                                                                  **({"also": also} if also else {})})
        sort = nan("tensorflow.experimental.numpy.sort", "sort", lin("sort", entry="s", calls=["s", "t"]))
        top_k = nan("tensorflow.math.top_k", "topk", lin("topk", alias="top_k", entry="t", calls=["t"]))
        compiled = nan("tensorflow.approx_top_k [compiled]", "approx_compiled",
                       lin("approx_max_k", "xla", alias="approx_top_k",
                           either=lin("approx_max_k", alias="approx_top_k")))
        other = nan("tensorflow.math.cumsum", "cumsum", lin("cumsum"))
        eager = nan("tensorflow.approx_top_k", "approx", lin("approx_max_k", alias="approx_top_k"))
        first, _ = fs.file(sort, b"", b"", related=same_cause)
        later, new = fs.file(compiled, b"i", b"o", related=same_cause)
        assert new and later > first
        kept, _ = fs.file(other, b"", b"", related=same_cause)
        assert not fs.absorbed
        assert fs.file(top_k, b"", b"", related=same_cause) == (first, False)
        assert fs.absorbed == [(later, first, None)]
        assert fs.finding(later) is None and fs.finding(kept) is not None
        assert fs.file(eager, b"", b"", related=same_cause) == (first, False)
        survivor = fs.finding(first)
        assert survivor.hits == 2 + 2 + 2 + 2
        assert [a["api"] for a in survivor.summary["also"]] == [
            "tensorflow.math.top_k", "tensorflow.approx_top_k [compiled]", "tensorflow.approx_top_k"]
        assert {o["group_key"] for o in fs.occurrences(first)} == {"sort", "topk", "approx", "approx_compiled"}


def test_a_hang_and_a_refusal_of_one_api_fold_across_classes(tmp_path):
    """scipy's poisson.entropy hangs at one huge mu and refuses the next ("arange: cannot compute
    length"): with ``crossed`` the refusal is an occurrence of the hang, its class listed."""
    from xamt.triage.dedup import load_lineage, one_failure

    crossed = functools.partial(one_failure, pairs=load_lineage().one_failure)
    with fresh_findings(tmp_path / "x.db") as (fs, cid):
        api = "scipy.stats.poisson.entropy"
        hang = make_finding(cid, finding_class=FindingClass.CRASH, signature="timeout", outlier_api=api,
                            summary={"family": "scipy:scipy.stats.poisson"})
        refusal = make_finding(cid, finding_class=FindingClass.STATUS, outlier_api=api,
                               signature="ValueError: arange: cannot compute length",
                               summary={"family": "scipy:scipy.stats"})
        first, _ = fs.file(hang, b"", b"")
        # without the rule, two findings
        assert fs.file(refusal, b"", b"")[1]
        # another API's refusal stays apart, with the rule too
        other = make_finding(cid, finding_class=FindingClass.STATUS, outlier_api="scipy.stats.poisson.sf",
                             signature="ValueError: x", summary={"family": "scipy:scipy.stats"})
        assert fs.file(other, b"", b"", crossed=crossed)[1]
    with fresh_findings(tmp_path / "y.db") as (fs, cid):
        hang.campaign_id = refusal.campaign_id = cid
        first, _ = fs.file(hang, b"", b"", crossed=crossed)
        assert fs.file(refusal, b"", b"", crossed=crossed) == (first, False)
        assert fs.finding(first).summary["also"] == [
            {"api": "scipy.stats.poisson.entropy", "signature": "ValueError: arange: cannot compute length",
             "class": "status"}]


def test_a_wrong_integer_and_the_crash_of_a_sibling_fold_across_classes(tmp_path):
    """torch's lcm traps (SIGFPE) at INT_MIN and its gcd, through which lcm is computed, returns
    -1 there: with ``crossed`` and ``related`` the value finding folds into the crash. An
    unrelated API's value at an integer extreme, and the sibling's value of another trigger,
    stay apart."""
    from xamt.triage.dedup import load_lineage, one_failure, same_cause

    lineage = load_lineage()
    crossed = functools.partial(one_failure, pairs=lineage.one_failure)
    related = functools.partial(same_cause, words=lineage.sibling_words)

    def lin(name):
        return {"library": "torch", "kernels": "torch", "name": name, "entry": None, "calls": []}

    def value(api, name, signature="int-extreme"):
        return make_finding(cid, finding_class=FindingClass.VALUE, signature=signature, outlier_api=api,
                            summary={"family": f"torch:{name}", "lineage": lin(name)})

    with fresh_findings(tmp_path / "x.db") as (fs, cid):
        crash = make_finding(cid, finding_class=FindingClass.CRASH, signature="crashed", outlier_api="torch.lcm",
                             summary={"family": "torch:lcm", "lineage": lin("lcm")})
        first, _ = fs.file(crash, b"", b"", related=related, crossed=crossed)
        assert fs.file(value("torch.bitwise_left_shift", "left_shift"), b"", b"",
                       related=related, crossed=crossed)[1]
        assert fs.file(value("torch.gcd", "gcd", "ordinary"), b"", b"", related=related, crossed=crossed)[1]
        # without the lineage relation (another API) the pair stays apart
        assert fs.file(value("torch.gcd", "gcd"), b"", b"", crossed=crossed)[1]
    with fresh_findings(tmp_path / "y.db") as (fs, cid):
        crash.campaign_id = cid
        first, _ = fs.file(crash, b"", b"", related=related, crossed=crossed)
        assert fs.file(value("torch.gcd", "gcd"), b"", b"", related=related, crossed=crossed) == (first, False)
        assert [a["api"] for a in fs.finding(first).summary["also"]] == ["torch.gcd"]
