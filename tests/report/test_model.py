import sqlite3

import pytest

from tests.report.conftest import write_catalog
from xamt.errors import StoreCorruptError, StoreVersionError, XamtError
from xamt.findings import FINDINGS_SCHEMA, FindingsStore
from xamt.report.model import (
    EmptyStoreError,
    ReportError,
    UnknownFindingError,
    get_finding,
    load_report_data,
    open_findings,
)
from xamt.store import Store, default_db_path


def test_report_data_of_a_small_campaign(campaign_out):
    out, ids = campaign_out
    data = load_report_data(out)
    assert [cv.campaign.id for cv in data.campaigns] == [1]
    cv = data.campaigns[0]
    assert cv.duration_s == 60.0 and cv.throughput == pytest.approx(10_800 / 60)
    assert len(cv.samples) == 13
    assert sorted(f.id for f in data.findings) == sorted(ids.values())
    # groups: most dispersed first, with their findings counted
    keys = [g.group_key for g in data.groups]
    assert keys == ["maximum/elementwise", "sum/reduction", "gelu/activation"]
    assert {g.group_key: g.findings for g in data.groups} == {
        "maximum/elementwise": 1, "sum/reduction": 2, "gelu/activation": 1}


def test_coverage_counts_fuzzed_apis_and_says_what_is_missing(campaign_out):
    out, _ = campaign_out
    cov = load_report_data(out).coverage
    rows = {r.library: r for r in cov.rows}
    assert sorted(rows) == ["jax", "numpy", "tensorflow", "torch"]
    # numpy.sum, numpy.maximum; torch.sum, torch.maximum, torch.nn.functional.gelu; ...
    assert {lib: r.fuzzed for lib, r in rows.items()} == {
        "numpy": 2, "torch": 3, "tensorflow": 2, "jax": 3}
    assert all(r.mined is None and r.validated is None for r in cov.rows)
    assert "xamt catalog" in cov.notes["mined"] and "validat" in cov.notes["validated"]
    assert "fuzzed" not in cov.notes
    assert rows["torch"].version == "2.13.0"


def test_coverage_reads_the_mined_catalog(campaign_out):
    out, _ = campaign_out
    write_catalog(out, {"numpy": 5, "torch": 7})
    cov = load_report_data(out).coverage
    mined = {r.library: r.mined for r in cov.rows}
    assert mined == {"numpy": 5, "torch": 7, "tensorflow": 0, "jax": 0}
    assert "mined" not in cov.notes


def test_groups_without_members_make_fuzzed_a_lower_bound(campaign_out):
    out, _ = campaign_out
    with Store(default_db_path(out)) as st:
        FindingsStore(st).put_group_stats(1, "abs/elementwise", 1, 3, 0.0, [3] + [0] * 10)
    cov = load_report_data(out).coverage
    assert "1 of 4" in cov.notes["fuzzed"] and "lower bound" in cov.notes["fuzzed"]


def test_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(EmptyStoreError, match="no Xamt store at .*xamt fuzz"):
        load_report_data(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()  # reading never creates a store


def test_store_without_campaigns_is_a_clear_error(tmp_path):
    out = tmp_path / "out"
    with Store(default_db_path(out)):
        pass  # a store another stage made (e.g. the catalog), no findings tables
    with pytest.raises(EmptyStoreError, match="no fuzzing campaign"):
        load_report_data(out)
    with Store(default_db_path(out)) as st:
        FindingsStore(st)  # findings tables, but no campaign in them
    with pytest.raises(EmptyStoreError, match="no fuzzing campaign"):
        load_report_data(out)


def test_incompatible_findings_tables_are_refused(campaign_out):
    out, _ = campaign_out
    with Store(default_db_path(out)) as st:
        st.execute("UPDATE schema_versions SET version=? WHERE component=?",
                   (FINDINGS_SCHEMA.version + 1, FINDINGS_SCHEMA.component))
    with pytest.raises(StoreVersionError, match="another Xamt"):
        load_report_data(out)


def test_incompatible_store_format_and_garbage_are_refused(campaign_out, tmp_path):
    out, _ = campaign_out
    con = sqlite3.connect(default_db_path(out))
    con.execute("UPDATE meta SET value='99' WHERE key='store_format'")
    con.commit()
    con.close()
    with pytest.raises(StoreVersionError, match="store format 99"):
        load_report_data(out)
    junk = tmp_path / "junk"
    junk.mkdir()
    default_db_path(junk).write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreCorruptError):
        load_report_data(junk)


def test_unknown_finding_and_campaign(campaign_out):
    out, ids = campaign_out
    with open_findings(out) as (_, fs):
        assert get_finding(fs, ids["nan"]).outlier_api == "torch.maximum"
        with pytest.raises(UnknownFindingError, match=r"no finding with id 99 .*ids 1–4"):
            get_finding(fs, 99)
    with pytest.raises(ReportError, match="no campaign 5 .*campaigns there: 1"):
        load_report_data(out, campaign_id=5)
    assert issubclass(UnknownFindingError, XamtError)
