"""Rule comps_intervals_figure: accuracy per model and subset with its 95% interval as an error bar,
a group per model, a bar per subset, chance dashed."""

import pandas as pd

from knowprobe import figures
from knowprobe.comps import intervals
from knowprobe.comps.metrics import CHANCE
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.intervals, keep_default_na=False, na_values=[""])
    models, values, errors = intervals.figure_bars(table)
    fig, (ax,) = figures.new(width=min(16.0, max(6.4, 0.25 * len(models) * max(len(values), 1) + 2)), height=3.8)
    figures.grouped_bars(ax, models, values, "accuracy (%)", reference=CHANCE, reference_label="chance", errors=errors)
    ax.get_legend().remove()
    figures.legend_beside(ax)
    ax.set_ylim(0, 105)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("%d models, %d subsets", len(models), len(values))
