"""The report in a real browser: headless Chromium renders it, runs its script and opens a page.

Needs a ``chromium`` binary (Debian's package; ``make test`` installs it where it can). Driven
through Chromium's own command line (``--dump-dom`` after the page's script ran, ``--screenshot``),
so no browser-automation package is needed. Screenshots are saved under the test's tmp folder.
"""
from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.report.conftest import write_small_campaign
from xamt.report.html import build_report

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
                 if p), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium binary found: install Debian's `chromium` package "
           "(`make chromium`, which `make test` runs, does it where it can)")

# The network is closed on test machines: without these Chromium stalls on start-up calls home.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--virtual-time-budget=5000"]


def chromium(tmp: Path, *args: str) -> str:
    """Run headless Chromium with a fresh profile; return its stdout."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


class Dom(HTMLParser):
    """The few things the test reads from a DOM dump: elements by id, rows, links, text."""

    def __init__(self, html: str):
        super().__init__()
        self.by_id: dict[str, dict[str, str | None]] = {}
        self.rows: list[dict[str, str | None]] = []  # <tr> of the findings table
        self.links: list[str] = []
        self.svg_in: list[str] = []  # ids of the figures holding an <svg>
        self.texts: dict[str, str] = {}
        self._figure: str | None = None
        self._text_of: str | None = None
        self._row: dict[str, str | None] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.by_id[a["id"]] = a
        if tag == "figure":
            self._figure = a.get("id")
        if tag == "svg" and self._figure:
            self.svg_in.append(self._figure)
        if tag == "tr" and "data-class" in a:
            self._row = {**a, "id": None}
            self.rows.append(self._row)
        if tag == "a" and self._row is not None and self._row["id"] is None:
            self.links.append(a["href"])
            self._text_of = "row"
        if tag == "h1" and a.get("id"):
            self._text_of = a["id"]

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None
        if tag == "tr":
            self._row = None
        if tag in ("a", "h1"):
            self._text_of = None

    def handle_data(self, data):
        if self._text_of == "row" and self._row is not None and self._row["id"] is None:
            self._row["id"] = data.strip()
        elif self._text_of:
            self.texts[self._text_of] = self.texts.get(self._text_of, "") + data


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser") / "xamt-out"
    ids = write_small_campaign(out)
    return build_report(out), ids


def test_report_in_headless_chromium(report, tmp_path):
    index, ids = report
    url = index.resolve().as_uri()

    # the index: the findings table with its rows, the script ran, the plots are drawn
    dom = Dom(chromium(tmp_path, "--dump-dom", url))
    table = dom.by_id["findings-table"]
    assert table.get("data-ready") == "true", "the table script did not run"
    assert table.get("data-shown") == "4" and len(dom.rows) == 4
    assert not any("hidden" in r for r in dom.rows)
    assert {"plot-classes", "plot-progress", "plot-dispersion"} <= set(dom.svg_in)

    # filtering and sorting, driven by the URL fragment the script reads
    dom = Dom(chromium(tmp_path, "--dump-dom", url + "#status=unverified&sort=hits:desc"))
    assert dom.by_id["findings-table"].get("data-shown") == "3"
    visible = [r["id"] for r in dom.rows if "hidden" not in r]
    assert visible[0] == str(ids["nan"])  # 3 hits: first when sorted by hits, descending
    assert [r["id"] for r in dom.rows if "hidden" in r] == [str(ids["value"])]  # verified

    # a finding page, opened through the index's link to it
    link = Dom(chromium(tmp_path, "--dump-dom", url)).links[0]
    page_url = (index.parent / link).resolve().as_uri()
    page = Dom(chromium(tmp_path, "--dump-dom", page_url))
    assert page.texts["finding-title"].split()[:2] == ["Finding", str(ids["value"])]
    assert {"input", "outputs", "comparator", "reproducer"} <= set(page.by_id)

    # screenshots, for people to look at
    shots = tmp_path / "screenshots"
    shots.mkdir()
    for name, target in (("index.png", url), ("finding.png", page_url)):
        chromium(tmp_path, "--window-size=1400,1800", f"--screenshot={shots / name}", target)
        data = (shots / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, name
    print(f"screenshots in {shots}")
