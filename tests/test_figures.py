"""knowprobe.figures: the checks that keep a figure readable (no text over another or off the
canvas, no legend over data), on figures made to fail them and on every figure of the demo."""

from __future__ import annotations

import re

import pytest

from knowprobe import figures


def test_a_clean_figure_has_no_defects():
    fig, (ax,) = figures.new()
    figures.grouped_bars(ax, ["P17", "P19", "P103"], {"Majority": [10, 20, 30], "Man": [40, 50, 60]}, "P@1 (%)")
    figures.legend_beside(ax)
    fig.tight_layout()
    assert figures.defects(fig) == []


def test_tick_labels_that_run_together_are_found():
    fig, (ax,) = figures.new(width=1.6)  # six labels in an inch: "P103P17"
    ax.set_xticks(range(6), ["P103", "P17", "P19", "P30", "P36", "P37"])
    fig.tight_layout()
    assert any(re.fullmatch(r"texts 'P\d+' and 'P\d+' overlap", d) for d in figures.defects(fig))


def test_turned_labels_are_measured_as_drawn_not_by_their_upright_box():
    fig, (ax,) = figures.new(width=2)
    labels = ["date_of_birth", "place_of_birth", "place_of_death"]
    ax.set_xticks(range(3), labels, rotation=30, ha="right", rotation_mode="anchor")
    fig.tight_layout()
    assert figures.defects(fig) == []
    first, second = (label.get_window_extent() for label in ax.get_xticklabels()[:2])
    assert first.overlaps(second)  # their upright boxes overlap; the texts do not
    ax.set_xticks(range(3), labels, rotation=5, ha="right", rotation_mode="anchor")
    assert any("overlap" in d for d in figures.defects(fig))


def test_a_title_off_the_canvas_and_a_legend_over_lines_are_found():
    fig, (ax,) = figures.new(width=3)
    figures.lines(ax, {"Mine": ([1, 2, 3], [50, 60, 70]), "Mine+Man": ([1, 2, 3], [55, 65, 75])})
    ax.legend(loc="center")
    fig.tight_layout()
    ax.set_title("a title much too long for a figure three inches wide, as a long model name makes")
    found = figures.defects(fig)
    assert "the legend of 'a title much too long" in " ".join(found) and any("leaves the canvas" in d for d in found)


def test_identical_series_are_one_line_that_says_so():
    fig, (ax,) = figures.new()
    figures.lines(
        ax, {"Mine": ([1, 2], [3.0, 4.0]), "Mine (middle-word)": ([1, 2], [3.0, 4.0]), "Man": ([1, 2], [5, 6])}
    )
    assert [line.get_label() for line in ax.get_lines()] == ["Mine = Mine (middle-word)", "Man"]


@pytest.mark.workflow
def test_every_figure_of_the_demo_is_free_of_defects(demo):
    """Issue 28: clipped titles, tick labels run together, a legend over the Top-K curves, a point
    cut at 100%. ``figures.save`` checks each figure as it is drawn from the demo's data and logs
    what it found."""
    checked = {}
    for log in (demo / "logs").rglob("*.log"):
        for name, count in re.findall(r"figure (\S+\.png): \d+ texts checked, (\d+) defects", log.read_text()):
            checked[name] = int(count)
    pngs = {path.name for path in (demo / "results").rglob("figures/*.png")}
    assert pngs and set(checked) == pngs, pngs ^ set(checked)
    assert checked == dict.fromkeys(pngs, 0), [
        line
        for log in (demo / "logs").rglob("*.log")
        for line in log.read_text().splitlines()
        if "WARNING figure" in line
    ]
