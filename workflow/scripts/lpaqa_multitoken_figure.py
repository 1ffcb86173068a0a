"""Rule lpaqa_multitoken_figure: accuracy on the multi-token facts against the gold object's token
count, a line per method, a panel per model (micro exact match, test facts, the first configured
prompt set's Top-1 prompts)."""

import pandas as pd

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.lpaqa.multitoken_tables import BUCKETS

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.accuracy, dtype={"tokens": str})
    table = table[(table["prompt_set"] == snakemake.params.prompt_set) & table["tokens"].isin(BUCKETS)]
    models = list(dict.fromkeys(table["model"]))
    fig, axes = figures.new(panels=max(1, len(models)), width=3.2 * max(1, len(models)), height=3.0, sharey=True)
    positions = {name: i for i, name in enumerate(BUCKETS)}
    # one colour and marker per method across the panels (masked and causal models ask different ones)
    methods = list(dict.fromkeys(table["method"]))
    style = {m: (figures.COLORS[i % len(figures.COLORS)], "os^vDx"[i % 6]) for i, m in enumerate(methods)}
    drawn = {}
    for ax, model in zip(axes, models):
        rows = table[(table["model"] == model) & (table["facts"] > 0)]
        for method, part in rows.groupby("method", sort=False):
            color, marker = style[method]
            (drawn[method],) = ax.plot(
                part["tokens"].map(positions),
                part["micro_exact"],
                marker=marker,
                markersize=4,
                color=color,
                label=method,
            )
        ax.set_xticks(range(len(BUCKETS)), BUCKETS)
        ax.set_title(f"{model} ({rows['kind'].iat[0]})" if len(rows) else model)
        ax.set_xlabel("gold object's tokens")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel(f"accuracy (%, micro, {snakemake.params.prompt_set} Top-1)")
    figures.legend_beside(axes[-1], handles=[drawn[m] for m in methods if m in drawn])
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("figure of %d models", len(models))
