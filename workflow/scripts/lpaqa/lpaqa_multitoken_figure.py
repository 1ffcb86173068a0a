"""Rule lpaqa_multitoken_figure: accuracy on the multi-token facts against the gold object's token
count, a line per method, a panel per model (micro exact match, test facts, the first configured
prompt set's Top-1 prompts)."""

import pandas as pd
from matplotlib.lines import Line2D

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.lpaqa.multitoken_tables import BUCKETS

MARKER_SIZE = 4  # points

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.accuracy, dtype={"tokens": str})
    table = table[(table["prompt_set"] == snakemake.params.prompt_set) & table["tokens"].isin(BUCKETS)]
    models = list(dict.fromkeys(table["model"]))
    fig, axes = figures.new(panels=max(1, len(models)), width=3.2 * max(1, len(models)), height=3.0, sharey=True)
    positions = {name: i for i, name in enumerate(BUCKETS)}
    # one colour and marker per method across the panels (masked and causal models ask different ones)
    methods = list(dict.fromkeys(table["method"]))
    style = {m: (figures.COLORS[i % len(figures.COLORS)], "os^vDx"[i % 6]) for i, m in enumerate(methods)}
    series = {}  # per panel: (method, bucket positions, accuracies)
    for ax, model in zip(axes, models):
        rows = table[(table["model"] == model) & (table["facts"] > 0)]
        series[model] = [
            (method, list(part["tokens"].map(positions)), list(part["micro_exact"]))
            for method, part in rows.groupby("method", sort=False)
        ]
        ax.set_xticks(range(len(BUCKETS)), BUCKETS)
        ax.set_xlim(-0.5, len(BUCKETS) - 0.5)
        ax.set_title(f"{model} ({rows['kind'].iat[0]})" if len(rows) else model)
        ax.set_xlabel("gold object's tokens")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel(f"accuracy (%, micro, {snakemake.params.prompt_set} Top-1)")
    shown = {method for panel in series.values() for method, *_ in panel}
    handles = [
        Line2D([], [], color=style[m][0], marker=style[m][1], markersize=MARKER_SIZE, label=m)
        for m in methods
        if m in shown
    ]
    figures.legend_beside(axes[-1], handles=handles)
    # methods as accurate as each other (the demo's independent and order decoding) drew one line
    # wholly over the other: their markers are set side by side, the figure laid out first
    figures.lay_out(fig)
    for ax, model in zip(axes, models):
        points = [(x, y) for _, xs, ys in series[model] for x, y in zip(xs, ys)]
        dodged = iter(figures.dodge(ax, points, MARKER_SIZE))
        for method, xs, ys in series[model]:
            color, marker = style[method]
            ax.plot([next(dodged) for _ in xs], ys, marker=marker, markersize=MARKER_SIZE, color=color, label=method)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("figure of %d models", len(models))
