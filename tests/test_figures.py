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


def test_a_series_drawn_wholly_under_another_is_found():
    """Issue 55: in multitoken.png a method as accurate as another was drawn under it, unseen; its
    markers lie on its own line, which the hidden-marker check does not count."""
    fig, (ax,) = figures.new()
    ax.plot([0, 1, 2], [40.0, 60.0, 50.0], marker="o", label="independent")
    ax.plot([0, 1, 2], [40.0, 60.0, 50.0], marker="s", label="order")
    ax.plot([0, 1, 2], [40.0, 60.0, 55.0], marker="^", label="confidence")
    assert figures.hidden_lines(ax) == [("independent", "order")]
    assert any("'independent' is drawn wholly under 'order'" in d for d in figures.defects(fig))


def test_the_multitoken_figure_shows_every_method(tmp_path):
    """The rule's script on a table where two methods are equally accurate in every bucket: both
    are seen (set side by side), no defect logged."""
    import runpy
    from types import SimpleNamespace

    from conftest import ROOT

    rows = ["model,kind,prompt_set,method,tokens,facts,micro_exact"]
    for method, accuracy in [("statement", 70.0), ("independent", 40.0), ("order", 40.0)]:
        rows += [f"m,masked,manual,{method},{tokens},5,{accuracy}" for tokens in ["1", "2", "3"]]
    (tmp_path / "accuracy.csv").write_text("\n".join(rows) + "\n")
    snakemake = SimpleNamespace(
        input=SimpleNamespace(accuracy=str(tmp_path / "accuracy.csv")),
        output=SimpleNamespace(png=str(tmp_path / "m.png"), svg=str(tmp_path / "m.svg")),
        params=SimpleNamespace(prompt_set="manual"),
        log=[str(tmp_path / "figure.log")],
    )
    script = ROOT / "workflow/scripts/lpaqa/lpaqa_multitoken_figure.py"
    runpy.run_path(str(script), init_globals={"snakemake": snakemake})
    log = (tmp_path / "figure.log").read_text()
    assert re.search(r"figure m\.png: \d+ texts checked, 0 defects", log), log


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


def test_markers_drawn_over_one_another_are_counted():
    """Issue 39: COMPS's accuracy against parameters drew gpt2's two WUGS-DIST points on one
    another; the check counts hidden markers, not only texts."""
    fig, (ax,) = figures.new(width=4)
    ax.plot([124], [49.4], marker="o", markersize=4)  # one model of a family: a lone point
    ax.plot([125], [49.4], marker="o", markersize=4)  # 124M and 125M: one place on a log scale
    ax.plot([300, 355], [60, 70], marker="s", markersize=4)
    ax.set_xscale("log")
    found = figures.defects(fig)
    assert any(re.fullmatch(r"1 marker drawn over another in '' \(the first at x=124, y=49\.4\)", d) for d in found)
    # apart, or under a hollow or translucent marker, or on a line that shows it: nothing hidden
    fig, (ax,) = figures.new(width=4)
    ax.plot([124], [49.4], marker="o", markersize=4)
    ax.plot([125], [52], marker="o", markersize=4)
    ax.scatter([200], [30], marker="s", facecolors="none", edgecolors="gray", s=16)  # S-TEST's paper points
    ax.scatter([200], [30], marker="^", alpha=0.8, s=16)
    ax.plot([100, 300], [60, 70], marker="o", markersize=4)
    ax.plot([100, 300], [60, 80], marker="o", markersize=4)  # two curves from one point
    ax.set_xscale("log")
    assert figures.defects(fig) == []


def test_dodge_sets_markers_of_one_place_side_by_side():
    fig, (ax,) = figures.new(width=4)
    ax.set_xscale("log")
    ax.set_xlim(50, 500)
    ax.set_ylim(0, 100)
    figures.lay_out(fig)
    points = [(124, 49.4), (125, 49.4), (124, 49.4), (355, 60)]
    xs = figures.dodge(ax, points, 4)
    assert xs[3] == pytest.approx(355) and xs[0] == pytest.approx(124)  # a point alone stays
    assert len({round(x, 6) for x in xs[:3]}) == 3  # the three at one place: apart
    for x, (_, y) in zip(xs, points):
        ax.plot([x], [y], marker="o", markersize=4)
    assert figures.hidden_markers(ax) == []


def test_comps_accuracy_against_parameters_hides_no_marker(tmp_path):
    """The rule's script on the demo's table (tiny-demo-gpt's two WUGS-DIST scores equal, two
    models of 0.2 M parameters): every marker visible, no defect logged."""
    import runpy
    from types import SimpleNamespace

    from conftest import ROOT

    (tmp_path / "families.csv").write_text(
        "family,model,kind,parameters_millions,COMPS-BASE,COMPS-WUGS,WUGS-DIST (before),WUGS-DIST (in between)\n"
        "bert,tiny-demo-bert-small,masked,0.2,84.9,50.6,56.1,48.4\n"
        "bert,tiny-demo-bert,masked,0.5,96.1,51.3,46.5,49.7\n"
        "gpt2,tiny-demo-gpt,causal,0.2,94.8,72.8,49.4,49.4\n"
    )
    (tmp_path / "types.csv").write_text(
        "model,subset,negative_sample_type,pairs,accuracy,subset_name\ntiny-demo-bert,base,taxonomic,96,94.8,COMPS-BASE\n"
    )
    out = {name: str(tmp_path / name) for name in ("a.png", "a.svg", "t.png", "t.svg")}
    snakemake = SimpleNamespace(
        input=SimpleNamespace(families=str(tmp_path / "families.csv"), negative_types=str(tmp_path / "types.csv")),
        output=SimpleNamespace(png=out["a.png"], svg=out["a.svg"], types_png=out["t.png"], types_svg=out["t.svg"]),
        log=[str(tmp_path / "figures.log")],
    )
    runpy.run_path(str(ROOT / "workflow/scripts/comps/comps_figures.py"), init_globals={"snakemake": snakemake})
    log = (tmp_path / "figures.log").read_text()
    assert "figure a.png: " in log and re.search(r"figure a\.png: \d+ texts checked, 0 defects", log), log
