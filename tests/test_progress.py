"""The one progress display (xamt/progress.py): plain lines off a terminal, never silent long."""
import io

from xamt.progress import Progress


def test_plain_lines_come_at_most_every_interval_and_when_forced():
    out = io.StringIO()
    p = Progress(True, total=100, unit="s", log_every=3600, stream=out)
    p.update(1, "first")           # the first update always prints
    for i in range(50):
        p.update(i, "busy")        # within the interval: nothing
    p.update(99, "last", force=True)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].endswith("first") and "99/100s" in lines[1] and "ETA" in lines[1]
    p.close()


def test_disabled_progress_prints_nothing_and_a_total_of_none_has_no_bar():
    out = io.StringIO()
    Progress(False, total=10, stream=out).update(5, "x", force=True)
    assert out.getvalue() == ""
    p = Progress(True, total=None, unit=" groups", stream=out)
    p.update(7, "current a")
    assert out.getvalue().strip() == "7 groups  current a"
