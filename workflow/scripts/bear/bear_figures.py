"""Rule bear_figures: the BEAR score (mean ± standard error over templates) against parameter count,
a colour per model family joined by a line, masked LMs as circles and causal LMs as triangles, the
leaderboard's number as a hollow marker where it lists the model, and the random baseline dashed."""

import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from knowprobe import figures
from knowprobe.io import rule_logging

MARKERS = {"masked": "o", "causal": "^"}

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.accuracy)
    table["millions"] = table["parameters"] / 1e6
    fig, (ax,) = figures.new(width=7.2, height=3.8)
    colors = {f: figures.COLORS[i % len(figures.COLORS)] for i, f in enumerate(dict.fromkeys(table["family"]))}
    for (family, kind), rows in table.groupby(["family", "kind"], sort=False):
        rows = rows.sort_values("millions")
        ax.errorbar(
            rows["millions"],
            rows["mean"],
            yerr=rows["sem"].fillna(0),
            marker=MARKERS[kind],
            color=colors[family],
            markersize=5,
            capsize=2,
        )
        board = rows.dropna(subset=["leaderboard_mean"])
        if len(board):
            ax.plot(board["millions"], board["leaderboard_mean"], MARKERS[kind], mfc="none", color=colors[family])
    baseline = float(table["random_baseline"].iloc[0])
    handles = [Line2D([], [], color=c, label=f) for f, c in colors.items()]
    handles += [Line2D([], [], color="grey", marker=m, linestyle="none", label=k) for k, m in MARKERS.items()]
    if table["leaderboard_mean"].notna().any():
        handles.append(Line2D([], [], color="grey", marker="o", mfc="none", linestyle="none", label="leaderboard"))
    handles.append(ax.axhline(baseline, color="black", linewidth=0.8, linestyle="--", label="random baseline"))
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("parameters (millions, log scale)")
    ax.set_ylabel("BEAR accuracy (%)")
    ax.set_ylim(0, 105)
    ax.set_yticks(range(0, 101, 20))
    figures.legend_beside(ax, handles=handles)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("figure of %d models in %d families", len(table), len(colors))
