"""Rule lpaqa_intervals_figure: micro P@1 of the headline rows with their 95% intervals as error
bars, one panel per model and dataset."""

import pandas as pd

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.lpaqa.tables import DATASET_NAMES, dataset_order

with rule_logging(snakemake.log[0]) as log:
    table = pd.read_csv(snakemake.input.intervals, keep_default_na=False, na_values=[""])
    models = list(dict.fromkeys(table["model"]))
    datasets = sorted(table["dataset"].unique(), key=dataset_order)
    prompts = list(dict.fromkeys(table["prompts"]))
    fig, axes = figures.new(
        panels=len(models) * len(datasets), rows=len(models), width=max(6.4, 0.9 * len(prompts) * len(datasets) + 2)
    )
    panels = iter(axes)
    for model in models:
        for dataset in datasets:
            rows = table[(table["model"] == model) & (table["dataset"] == dataset)]
            methods = list(dict.fromkeys(rows["method"]))
            grid = {m: rows[rows["method"] == m].set_index("prompts").reindex(prompts) for m in methods}
            ax = next(panels)
            figures.grouped_bars(
                ax,
                prompts,
                {m: grid[m]["micro"].to_numpy() for m in methods},
                "micro P@1 (%)",
                errors={m: (grid[m]["micro_low"].to_numpy(), grid[m]["micro_high"].to_numpy()) for m in methods},
            )
            ax.get_legend().remove()
            ax.set_title(f"{model}: {DATASET_NAMES.get(dataset, dataset)}", fontsize=8)
            ax.set_ylim(0, 100)
    figures.legend_beside(axes[len(datasets) - 1])
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("%d models, %d datasets, %d prompt sets", len(models), len(datasets), len(prompts))
