"""Rule lpaqa_baseline_figure: micro P@1 per relation of the manual prompts and the Majority
baseline, one panel per dataset, for each model."""

import pandas as pd

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.lpaqa.tables import DATASET_NAMES, dataset_order

with rule_logging(snakemake.log[0]) as log:
    per_relation = pd.read_csv(snakemake.input.per_relation)
    datasets = sorted(per_relation["dataset"].unique(), key=dataset_order)
    models = list(dict.fromkeys(per_relation["model"]))
    # a row of panels per model, a panel per dataset as wide as its relations
    relations = [per_relation.loc[per_relation["dataset"] == d, "relation"].nunique() for d in datasets]
    spacing = 0.6 if max(relations) <= 8 else 0.3  # inches per relation; beyond 8 the labels turn upright
    fig, axes = figures.new(
        panels=len(datasets) * len(models),
        rows=len(models),
        width=max(6.4, spacing * sum(relations) + 1.2 * len(datasets) + 1.4),
        height=3.0,
        gridspec_kw={"width_ratios": relations},
    )
    panels = iter(axes)
    for model in models:
        for dataset in datasets:
            rows = per_relation[(per_relation["model"] == model) & (per_relation["dataset"] == dataset)]
            wide = rows.pivot(index="relation", columns="method", values="micro") * 100
            ax = next(panels)
            figures.grouped_bars(ax, list(wide.index), {m: wide[m].to_numpy() for m in wide.columns}, "micro P@1 (%)")
            ax.get_legend().remove()
            ax.set_title(f"{model}: {DATASET_NAMES.get(dataset, dataset)}", fontsize=8)
            ax.set_ylim(0, 100)
    figures.legend_beside(axes[len(datasets) - 1])  # the methods are the same in every panel
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("%d models, %d datasets", len(models), len(datasets))
