import re

import pytest

from tests.report.conftest import REPRO, write_small_campaign
from xamt.findings import FindingsStore
from xamt.report.html import build_report
from xamt.report.model import EmptyStoreError
from xamt.store import Store, default_db_path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "xamt-out"
    ids = write_small_campaign(out)
    return out, ids, build_report(out)


def test_report_folder_is_complete(built):
    out, ids, index = built
    assert index == out / "report" / "index.html"
    names = sorted(p.relative_to(index.parent).as_posix() for p in index.parent.rglob("*")
                   if p.is_file())
    assert names == [".xamt-report", "assets/report.css", "assets/report.js", "findings/1.html",
                     "findings/1.repro.py", "findings/2.html", "findings/3.html",
                     "findings/4.html", "index.html"]
    assert (index.parent / "findings" / "1.repro.py").read_text() == REPRO


def test_report_needs_no_network(built):
    _, _, index = built
    for page in index.parent.rglob("*.html"):
        html = page.read_text()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), page
        for ref in re.findall(r"""(?:src|href)="([^"#]+)""", html):
            if ref.startswith("data:"):  # matplotlib embeds heat-map images in the SVG
                continue
            assert (page.parent / ref).exists(), f"{page.name} links to missing {ref}"
    assert "url(" not in (index.parent / "assets" / "report.css").read_text()


def test_index_has_summary_coverage_table_and_plots(built):
    _, ids, index = built
    html = index.read_text()
    assert html.count("<svg") == 3  # class × library, over time, dispersion
    table = html[html.index('id="findings-table"'):html.index("</table>", html.index('id="findings-table"'))]
    assert table.count('<tr data-class=') == 4
    assert '<tr data-class="crash" data-library="jax" data-group="gelu/activation" data-status="unverified">' in table
    assert 'href="findings/1.html"' in table
    assert "10,800" in html and "180.0 exec/s" in html and "torch <small>2.13.0</small>" in html
    assert "n/a" in html and "`xamt groups build` has not run" in html
    # filter choices come with their counts
    assert '<option value="sum/reduction">sum/reduction (2)</option>' in html


def test_finding_page_shows_outputs_side_by_side_with_differences(built):
    _, ids, index = built
    html = (index.parent / "findings" / f"{ids['value']}.html").read_text()
    assert html.count('class="member') == 4 and html.count('class="member outlier"') == 1
    # only the outlier's differing element is red; the others are outlined at that index
    assert html.count('class="differs focus"') == 1
    assert '<td class="differs focus">12.5</td>' in html
    assert html.count('<td class=" focus">11.0</td>') == 3
    assert "max_abs_diff" in html and "import tensorflow as tf" in html
    assert "xamt findings export 1 --format issue" in html
    crash = (index.parent / "findings" / f"{ids['crash']}.html").read_text()
    assert "worker died with SIGSEGV" in crash and "no reproducer was written" in crash
    # a finding that others folded into names them
    nan = (index.parent / "findings" / f"{ids['nan']}.html").read_text()
    assert "same cause also in" in nan and "<code>torch.fmax</code> (+inf)" in nan
    assert "<code>torch.maximum</code> (status: RuntimeError: x)" in nan
    assert "same cause also in" not in crash


def test_rebuild_replaces_the_old_report(tmp_path):
    out = tmp_path / "out"
    write_small_campaign(out)
    index = build_report(out)
    stale = index.parent / "findings" / "99.html"
    stale.write_text("old")
    with Store(default_db_path(out)) as st:
        st.execute("DELETE FROM finding_evidence WHERE finding_id=4")
        st.execute("DELETE FROM finding_occurrences WHERE finding_id=4")
        st.execute("DELETE FROM findings WHERE id=4")
    build_report(out)
    assert not stale.exists() and not (index.parent / "findings" / "4.html").exists()
    assert (index.parent / "findings" / "3.html").exists()
    assert not list(tmp_path.glob("out/.report*"))


def test_failed_build_keeps_the_previous_report(tmp_path):
    out = tmp_path / "out"
    with Store(default_db_path(out)) as st:
        FindingsStore(st)
    with pytest.raises(EmptyStoreError):
        build_report(out)
    assert not (out / "report").exists() and not list(out.glob(".report*"))


def test_a_campaign_without_findings_or_samples(tmp_path):
    from xamt.findings import Campaign

    out = tmp_path / "out"
    with Store(default_db_path(out)) as st:
        FindingsStore(st).start_campaign(Campaign({"numpy": "2.4.6"}, 10, 1, 1))
    html = build_report(out).read_text()
    assert 'id="no-findings"' in html and "<svg" not in html
    assert "recorded no samples" in html and "recorded no per-group statistics" in html


def test_dest_that_holds_other_files_is_refused(tmp_path):
    from xamt.report.model import ReportError

    out = tmp_path / "out"
    write_small_campaign(out)
    precious = tmp_path / "docs"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(ReportError, match="not an Xamt report folder"):
        build_report(out, dest=precious)
    assert (precious / "notes.txt").read_text() == "keep me"
    assert build_report(out, dest=tmp_path / "new").parent == (tmp_path / "new").resolve()


def test_coverage_counts_apis_of_validated_groups(tmp_path):
    from tests.fuzz.test_campaign import GROUPS, make_store
    from xamt.report.model import _validated_counts

    make_store(tmp_path)
    notes = {}
    with Store(tmp_path / "xamt.db") as st:
        counts = _validated_counts(st, notes)
    apis = {m.qualname for g in GROUPS for m in g.members}
    assert counts == {"numpy": len(apis)} and notes == {}
