"""Rule stest_intervals_figure: p_r averaged over relations with its 95% interval as an error bar,
a panel per measure, a group per model and mode, a bar per prompting method."""

import pandas as pd

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.stest import intervals

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.intervals, keep_default_na=False, na_values=[""])
    measures = list(dict.fromkeys(table["measure"]))
    widest = max(table.groupby("measure")[["model", "mode"]].apply(lambda r: len(r.drop_duplicates())))
    fig, axes = figures.new(panels=len(measures), rows=len(measures), width=max(6.4, 0.8 * widest + 2))
    for ax, measure in zip(axes, measures):
        categories, values, errors = intervals.figure_bars(table, measure)
        figures.grouped_bars(
            ax, categories, values, "p_r (%)", reference=50, reference_label="no preference", errors=errors
        )
        ax.get_legend().remove()
        figures.legend_beside(ax)
        ax.set_title(measure, fontsize=8)
        ax.set_ylim(0, 100)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("%d measures, %d rows", len(measures), len(table))
