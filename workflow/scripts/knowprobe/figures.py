"""Figures for every study, in one style: matplotlib, written as PNG (shown in the HTML report)
and SVG (for papers), with no time stamps inside, so that the same results give the same bytes.

Rules declare a figure with ``figure(stem, caption, category, ...)`` in ``workflow/rules/common.smk``,
which gives the two outputs with the report entry; scripts draw on :func:`new` and write with
:func:`save`.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
import numpy as np  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from .io import atomic_path  # noqa: E402

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "svg.hashsalt": "knowprobe",  # stable element ids in SVG
}
log = logging.getLogger(__name__)
COLORS = ["#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"]  # Paul Tol's bright


def new(panels: int = 1, width: float = 6.4, height: float = 3.2, rows: int = 1, **subplots):
    """A figure with ``panels`` axes in knowprobe's style: side by side, or ``rows`` rows of
    ``panels / rows`` (``height`` is then each row's)."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(rows, panels // rows, figsize=(width, height * rows), squeeze=False, **subplots)
    return fig, list(axes.flat)


def legend_beside(ax, **legend) -> None:
    """The legend to the right of the axes, where it covers no data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), **{"fontsize": 7, **legend})


def texts(fig) -> list:
    """The texts a reader sees once the figure is drawn: titles, axis labels, the tick labels of
    the ticks in view (matplotlib keeps others, undrawn), legend entries and titles, annotations."""
    found = [*fig.texts, *(text for legend in fig.legends for text in [*legend.get_texts(), legend.get_title()])]
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            found += [
                label for tick in axis._update_ticks() for label in (tick.label1, tick.label2) if label.get_visible()
            ]
        if (legend := ax.get_legend()) is not None:
            found += [*legend.get_texts(), legend.get_title()]
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def outline(text, renderer) -> np.ndarray:
    """The four corners of a text's box as drawn, turned with the text (its window extent is the
    upright box around the turned one, which overlaps its neighbours' where the texts do not)."""
    box = text.get_window_extent(renderer)
    angle = np.deg2rad(text.get_rotation())
    if angle % (np.pi / 2) == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    # the upright box's centre is the turned box's; its size solves the two projections
    c, s = abs(np.cos(angle)), abs(np.sin(angle))
    width, height = np.linalg.solve([[c, s], [s, c]], [box.width, box.height]) if abs(c - s) > 1e-3 else (box.width, 0)
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [width / 2, height / 2]
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return corners @ turn.T + [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]


def polygons_overlap(a: np.ndarray, b: np.ndarray, gap: float = 2.0) -> bool:
    """Whether two convex polygons come closer than ``gap`` pixels (separating axes): texts that
    touch read as one ("P103P17")."""
    for polygon in (a, b):
        for i in range(len(polygon)):
            edge = polygon[(i + 1) % len(polygon)] - polygon[i]
            normal = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) or 1)
            pa, pb = a @ normal, b @ normal
            if max(pa.min(), pb.min()) - min(pa.max(), pb.max()) >= gap:
                return False
    return True


def data_boxes(ax) -> list:
    """Display-space boxes of what an axes plots: each line's points, each bar, each scatter point."""
    boxes = []
    for line in ax.get_lines():
        if line.get_label().startswith("_") and line.get_linestyle() in ("--", ":"):
            continue  # a reference line (chance, a paper's number) may pass under a legend
        points = ax.transData.transform(np.column_stack(line.get_data()).astype(float))
        boxes += [Bbox.from_extents(x - 2, y - 2, x + 2, y + 2) for x, y in points if np.isfinite([x, y]).all()]
    for patch in ax.patches:
        if isinstance(patch, matplotlib.patches.Rectangle) and patch.get_height() > 0:
            boxes.append(patch.get_window_extent())
    for collection in ax.collections:
        offsets = collection.get_offsets()
        if len(offsets):
            points = ax.transData.transform(np.asarray(offsets, dtype=float))
            boxes += [Bbox.from_extents(x - 2, y - 2, x + 2, y + 2) for x, y in points if np.isfinite([x, y]).all()]
    return boxes


def markers(ax) -> list[tuple[float, float, float, int, bool, bool]]:
    """Each marker the axes draw (points of lines drawn with a marker, scatter points): its centre
    and width in display pixels, the index of its artist, whether a line of its artist passes
    through it (a line of two points or more), and whether it covers what lies under it (filled
    and opaque: a hollow or translucent marker lets the one under it show)."""
    from matplotlib.colors import to_rgba_array

    dpi_scale = ax.figure.dpi / 72  # marker sizes are in points
    found = []
    for index, line in enumerate(ax.get_lines()):
        if line.get_marker() in (None, "None", "none", "", " ") or not line.get_visible():
            continue
        points = ax.transData.transform(np.column_stack(line.get_data()).astype(float))
        width = line.get_markersize() * dpi_scale
        lined = line.get_linestyle() not in ("None", "none", "", " ") and len(points) > 1
        face = line.get_markerfacecolor()
        opaque = (line.get_alpha() in (None, 1)) and not (isinstance(face, str) and face.lower() == "none")
        found += [(x, y, width, index, lined, opaque) for x, y in points if np.isfinite([x, y]).all()]
    for index, collection in enumerate(ax.collections, start=len(ax.get_lines())):
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        sizes = getattr(collection, "get_sizes", lambda: [])()
        if not len(offsets) or not len(sizes):
            continue
        points = collection.get_offset_transform().transform(offsets)
        widths = np.sqrt(np.resize(np.asarray(sizes, float), len(points))) * dpi_scale  # sizes: points squared
        faces = to_rgba_array(collection.get_facecolors()) if len(collection.get_facecolors()) else np.zeros((1, 4))
        opaque = collection.get_alpha() in (None, 1) and bool((faces[:, 3] == 1).all())
        found += [(x, y, w, index, False, opaque) for (x, y), w in zip(points, widths) if np.isfinite([x, y]).all()]
    return found


def hidden_markers(ax) -> list[tuple[float, float]]:
    """Markers of one series hidden by another's: a marker that no line of its own series passes
    through, under a filled, opaque marker of another series whose width covers its centre (closer
    than half the wider one's width). Each as the data point of the hidden one. A series' own
    markers (a box plot's outliers at one value) and points on lines (the line shows them) are not
    counted."""
    points = markers(ax)
    hidden = []
    for a, b in itertools.combinations(points, 2):
        (x0, y0, w0, artist0, lined0, opaque0), (x1, y1, w1, artist1, lined1, opaque1) = a, b
        if artist0 == artist1 or np.hypot(x1 - x0, y1 - y0) >= max(w0, w1) / 2:
            continue
        for (x, y, lined), covering in [((x0, y0, lined0), opaque1), ((x1, y1, lined1), opaque0)]:
            if covering and not lined:
                hidden.append(tuple(ax.transData.inverted().transform((x, y))))
                break
    return hidden


def hidden_lines(ax) -> list[tuple[str, str]]:
    """Series drawn wholly under another: two labelled lines of the axes with the same points (in display
    space, within half a pixel), each pair as (the one under, the one over it; drawn later). Its
    markers lie on its own line, which ``hidden_markers`` does not count, yet nothing of it shows."""
    # series a reader tells apart: labelled lines (a box plot's whiskers and caps, unlabelled, meet
    # where a box has no spread)
    drawn = [line for line in ax.get_lines() if len(line.get_xydata()) and not line.get_label().startswith("_")]
    shapes = [ax.transData.transform(line.get_xydata()) for line in drawn]
    hidden = []
    for (i, a), (j, b) in itertools.combinations(enumerate(shapes), 2):
        if a.shape == b.shape and np.allclose(a, b, atol=0.5):
            under, over = (
                (drawn[i], drawn[j]) if drawn[i].get_zorder() <= drawn[j].get_zorder() else (drawn[j], drawn[i])
            )
            hidden.append((under.get_label(), over.get_label()))
    return hidden


def dodge(ax, points: Sequence[tuple[float, float]], width: float) -> list[float]:
    """The x of each data point, moved sideways where needed so that no two markers of ``width``
    points lie over one another: a point that would sit on one placed before it moves right, then
    left, by one marker's width at a time (in display space, so on any scale). The axes' limits
    and layout must be final (set them, and lay the figure out, first)."""
    step = width * ax.figure.dpi / 72 * 1.05
    display = ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2))
    placed: list[tuple[float, float]] = []
    out = []
    for x, y in display:
        shifts = (sign * k * step for k in itertools.count() for sign in ((1,) if k == 0 else (1, -1)))
        for shift in shifts:  # 0, +1, -1, +2, -2, ... markers' widths: ends, as the points are finite
            if all(np.hypot(x + shift - px, y - py) >= step for px, py in placed):
                break
        placed.append((x + shift, y))
        out.append(float(ax.transData.inverted().transform((x + shift, y))[0]))
    return out


def defects(fig) -> list[str]:
    """What a reader would see as broken once the figure is drawn: a text that leaves the canvas,
    two texts that overlap (tick labels run together, a title over its neighbour's), a legend over
    plotted data, markers drawn over one another (a point hidden), a series drawn wholly under
    another with the same points. Each as one line naming the texts or series, or the count of
    hidden markers and the first one's place."""
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    canvas = Bbox.from_bounds(0, 0, *fig.canvas.get_width_height())
    found = []
    shapes = [(t, outline(t, renderer)) for t in texts(fig)]
    for text, corners in shapes:
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        if x0 < canvas.x0 - 1 or y0 < canvas.y0 - 1 or x1 > canvas.x1 + 1 or y1 > canvas.y1 + 1:
            found.append(f"text {text.get_text()!r} leaves the canvas")
    for (a, corners_a), (b, corners_b) in itertools.combinations(shapes, 2):
        if polygons_overlap(corners_a, corners_b):
            found.append(f"texts {a.get_text()!r} and {b.get_text()!r} overlap")
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        frame = legend.get_window_extent(renderer)
        if any(frame.overlaps(box) for box in data_boxes(ax)):
            found.append(f"the legend of {ax.get_title()!r} covers plotted data")
    for ax in fig.axes:
        hidden = hidden_markers(ax)
        if hidden:
            x, y = hidden[0]
            count = f"{len(hidden)} markers drawn over others" if len(hidden) > 1 else "1 marker drawn over another"
            found.append(f"{count} in {ax.get_title()!r} (the first at x={x:g}, y={y:g})")
        for under, over in hidden_lines(ax):
            found.append(f"the series {under!r} is drawn wholly under {over!r} in {ax.get_title()!r}")
    return found


def lay_out(fig) -> None:
    """The figure's layout as :func:`save` makes it, for drawing what depends on display space
    (:func:`dodge`) before saving."""
    with plt.rc_context(STYLE):
        fig.tight_layout()


def save(fig, png: str | os.PathLike, svg: str | os.PathLike) -> None:
    """Write both files atomically, without dates or software versions in their metadata. Any
    defect a reader would see (:func:`defects`) is logged as a warning naming the file; the tests
    hold the demo's figures to none."""
    with plt.rc_context(STYLE):
        fig.tight_layout()
        found = defects(fig)
        for defect in found:
            log.warning("figure %s: %s", Path(png).name, defect)
        log.info("figure %s: %d texts checked, %d defects", Path(png).name, len(texts(fig)), len(found))
        with atomic_path(png) as tmp:
            fig.savefig(tmp, format="png", metadata={"Software": None})
        with atomic_path(svg) as tmp:
            fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


def grouped_bars(
    ax,
    categories: Sequence[str],
    groups: dict[str, Sequence[float]],
    ylabel: str,
    reference: float | None = None,
    reference_label: str | None = None,
    errors: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None,
) -> None:
    """One cluster of bars per category, one bar per group (e.g. relations × methods); an
    optional horizontal reference line (chance, a paper's number); ``errors`` (a group's interval
    bounds, low and high per category; NaN: none) drawn as error bars."""
    x = np.arange(len(categories))
    width = 0.8 / max(1, len(groups))
    for i, (label, values) in enumerate(groups.items()):
        at = x + (i - (len(groups) - 1) / 2) * width
        ax.bar(at, values, width, label=label, color=COLORS[i % len(COLORS)])
        if errors and label in errors:
            low, high = (np.asarray(bound, dtype=float) for bound in errors[label])
            values = np.asarray(values, dtype=float)
            shown = np.isfinite(low) & np.isfinite(high)
            spread = np.stack([values - low, high - values])[:, shown]
            ax.errorbar(at[shown], values[shown], yerr=spread, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.8, linestyle="--", label=reference_label)
    # long or many labels are turned so that they never run into each other
    turn = 90 if len(categories) > 8 else 30 if max(map(len, categories), default=0) > 6 else 0
    # (turned labels end at their tick: centred on it, a label turned upright would cross the axis)
    ax.set_xticks(
        x,
        categories,
        rotation=turn,
        ha="right" if turn else "center",
        va="center" if turn == 90 else "top",
        rotation_mode="anchor",
    )
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def lines(ax, series: dict[str, tuple[Sequence[float], Sequence[float]]]) -> None:
    """One line with point markers per ``label: (x, y)``; with more series than colours, the
    colours come back dashed with square markers, so no two lines look alike. Series with the same
    points are one line labelled "A = B" (drawn apart, the last would hide the others)."""
    merged: dict[tuple, list[str]] = {}
    for label, (x, y) in series.items():
        merged.setdefault((tuple(np.asarray(x, float)), tuple(np.round(np.asarray(y, float), 9))), []).append(label)
    series = {" = ".join(labels): (x, y) for (x, y), labels in merged.items()}
    for i, (label, (x, y)) in enumerate(series.items()):
        again = i >= len(COLORS)
        ax.plot(
            x,
            y,
            marker="s" if again else "o",
            linestyle="--" if again else "-",
            markersize=3,
            color=COLORS[i % len(COLORS)],
            label=label,
        )


def boxes(ax, groups: Sequence[Sequence[float]], labels: Sequence[str]) -> None:
    """Box plots side by side: the median as a line, the mean as a triangle."""
    ax.boxplot(
        groups,
        tick_labels=labels,
        showmeans=True,
        medianprops={"color": "green"},
        meanprops={"marker": "^", "markerfacecolor": "green", "markeredgecolor": "green"},
    )
