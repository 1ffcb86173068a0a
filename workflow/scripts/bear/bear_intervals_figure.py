"""Rule bear_intervals_figure: the BEAR score and each template's accuracy per model with its 95%
interval as an error bar, the random baseline dashed."""

import pandas as pd

from knowprobe import figures
from knowprobe.bear import intervals
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.intervals, keep_default_na=False, na_values=[""])
    baseline = float(pd.read_csv(snakemake.input.accuracy)["random_baseline"].iloc[0])
    models, values, errors = intervals.figure_bars(table)
    fig, (ax,) = figures.new(width=min(16.0, max(6.4, 0.25 * len(models) * max(len(values), 1) + 2)), height=3.8)
    figures.grouped_bars(
        ax, models, values, "accuracy (%)", reference=baseline, reference_label="random baseline", errors=errors
    )
    ax.get_legend().remove()
    figures.legend_beside(ax)
    ax.set_ylim(0, 105)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("%d models, %d measures", len(models), len(values))
