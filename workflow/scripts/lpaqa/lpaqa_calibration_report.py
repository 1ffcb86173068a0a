"""Rule lpaqa_calibration_report: every run's calibration in one table (with 95% intervals), and a
reliability diagram per run (accuracy against confidence per bin, before and after temperature scaling)."""

import pandas as pd

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.lpaqa import calibration
from knowprobe.lpaqa.tables import DATASET_NAMES
from knowprobe.tables import write_table
from knowprobe.uncertainty import formatting

with rule_logging(snakemake.log[0]) as log:
    table = pd.concat([pd.read_csv(path) for path in snakemake.input.tables], ignore_index=True)
    bins = pd.concat([pd.read_csv(path) for path in snakemake.input.bins], ignore_index=True)
    layout = table.assign(dataset=table["dataset"].map(lambda d: DATASET_NAMES.get(d, d)))
    formats = {"accuracy": 1, "confidence": 1, "ece": 1, "brier": 3, "prior_kl": 3}
    cells = {
        measure: [
            formatting.cell(row[measure], row[f"{measure}_low"], row[f"{measure}_high"], digits)
            for row in table.to_dict("records")
        ]
        for measure, digits in formats.items()
    }
    layout = layout.assign(temperature=layout["temperature"].map("{:.2f}".format), **cells)[
        ["model", "score", "dataset", "scaling", "temperature", *formats, "relations", "facts"]
    ]
    definitions = "; ".join(
        f"{score}: {calibration.SCORE_DISTRIBUTIONS[score]}" for score in dict.fromkeys(table["score"])
    )
    write_table(
        snakemake.output,
        "calibration",
        table,
        layout,
        "Calibration of each relation's Top-1 prompt, every run: p(c) per score (" + definitions + "), "
        "confidence max p(c); accuracy and mean confidence (%), ECE (%, equal-width bins ((m-1)/M, m/M]), the "
        "multi-class Brier score, and KL(gold objects || answer-space prior) per relation averaged over relations "
        "(the prior: mean p(c) over the relation's facts); scaling: none, or the temperature fitted on "
        "T-REx-train's train split. Cells: value [95% interval] of a two-stage cluster bootstrap (relations, then "
        "facts; the KL: relations); no interval with fewer than the configured relations.",
    )
    models = list(dict.fromkeys(bins["model"]))
    datasets = list(dict.fromkeys(bins["dataset"]))
    fig, axes = figures.new(panels=len(models) * len(datasets), rows=len(models), width=3.2 * len(datasets) + 1.5)
    panels = iter(axes)
    for model in models:
        for dataset in datasets:
            ax = next(panels)
            ax.plot([0, 1], [0, 1], color="black", linewidth=0.8, linestyle="--", label="perfect calibration")
            for i, scaling in enumerate(["none", "fitted"]):
                rows = bins[(bins["model"] == model) & (bins["dataset"] == dataset) & (bins["scaling"] == scaling)]
                rows = rows[rows["n"] > 0]
                t = rows["temperature"].iloc[0] if len(rows) else 1.0
                label = "no scaling" if scaling == "none" else f"temperature {t:.2f}"
                ax.plot(rows["confidence"], rows["accuracy"], marker="o", color=figures.COLORS[i], label=label)
            # a little room around [0, 1]: the two axes' "0.0" labels would meet at the corner
            ax.set_xlim(-0.04, 1.04)
            ax.set_ylim(-0.04, 1.04)
            ax.set_xlabel("confidence")
            ax.set_ylabel("accuracy")
            ax.set_title(f"{model}: {DATASET_NAMES.get(dataset, dataset)}", fontsize=8)
    figures.legend_beside(axes[len(datasets) - 1])
    figures.save(fig, snakemake.output.png, snakemake.output.svg)
    log.info("%d models, %d datasets", len(models), len(datasets))
