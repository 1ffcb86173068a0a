"""Figures for every study, in one style: matplotlib, written as PNG (shown in the HTML report)
and SVG (for papers), with no time stamps inside, so that the same results give the same bytes.

Rules declare a figure with ``figure(stem, caption, category, ...)`` in ``workflow/rules/common.smk``,
which gives the two outputs with the report entry; scripts draw on :func:`new` and write with
:func:`save`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
import numpy as np  # noqa: E402

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
COLORS = ["#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"]  # Paul Tol's bright


def new(panels: int = 1, width: float = 6.4, height: float = 3.2, **subplots):
    """A figure with ``panels`` axes side by side, in knowprobe's style."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, panels, figsize=(width, height), squeeze=False, **subplots)
    return fig, list(axes[0])


def save(fig, png: str | os.PathLike, svg: str | os.PathLike) -> None:
    """Write both files atomically, without dates or software versions in their metadata."""
    with plt.rc_context(STYLE):
        fig.tight_layout()
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
) -> None:
    """One cluster of bars per category, one bar per group (e.g. relations × methods); an
    optional horizontal reference line (chance, a paper's number)."""
    x = np.arange(len(categories))
    width = 0.8 / max(1, len(groups))
    for i, (label, values) in enumerate(groups.items()):
        ax.bar(x + (i - (len(groups) - 1) / 2) * width, values, width, label=label, color=COLORS[i % len(COLORS)])
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.8, linestyle="--", label=reference_label)
    # long or many labels are turned so that they never run into each other
    turn = 90 if len(categories) > 8 else 30 if max(map(len, categories), default=0) > 6 else 0
    ax.set_xticks(x, categories, rotation=turn, ha="right" if turn == 30 else "center", rotation_mode="anchor")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def lines(ax, series: dict[str, tuple[Sequence[float], Sequence[float]]]) -> None:
    """One line with point markers per ``label: (x, y)``; with more series than colours, the
    colours come back dashed with square markers, so no two lines look alike."""
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
