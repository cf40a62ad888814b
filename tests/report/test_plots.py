from xamt.findings import DISPERSION_BINS
from xamt.report import plots
from xamt.report.model import GroupView


def group(i: int, spread: int) -> GroupView:
    hist = [0] * (len(DISPERSION_BINS) + 1)
    hist[spread % len(hist)] = 10 + i
    return GroupView(f"g{i:03d}", 1, 10 + i, float(spread), hist, None)


def test_dispersion_plot_keeps_the_most_dispersed_groups():
    groups = sorted((group(i, i) for i in range(plots.MAX_GROUP_ROWS + 5)),
                    key=lambda g: -g.best_dispersion)
    svg, note = plots.dispersion_per_group(groups)
    assert svg.startswith("<svg") and "<?xml" not in svg
    assert note == f"the {plots.MAX_GROUP_ROWS} most dispersed of {plots.MAX_GROUP_ROWS + 5} groups"
    assert "g034" in svg and "g004" not in svg  # labels stay text in the SVG
    assert plots.dispersion_per_group([GroupView("empty", 0, 0, 0.0, [0] * 11, None)]) == (None, None)


def test_plots_without_data_are_none():
    assert plots.findings_by_class_library([]) is None
    assert plots.progress_over_time([]) is None
