"""Rule comps_tables: the stimuli's statistics beside the paper's counts, and accuracy per model
and subset, by negative-sample type and by model family and size (Markdown, CSV, LaTeX); the
pairs a model could not score are counted in the footnote of each accuracy table."""

import json

import pandas as pd

from knowprobe import contracts
from knowprobe.comps import tables
from knowprobe.io import rule_logging
from knowprobe.tables import load_paper, write_table

with rule_logging(snakemake.log[0]) as log:
    paper = load_paper(snakemake.input.paper)
    stimuli = contracts.read(snakemake.input.stimuli, contracts.COMPS_STIMULI)
    scores = pd.concat([contracts.read(p, contracts.COMPS_SCORES) for p in snakemake.input.scores], ignore_index=True)
    models = pd.DataFrame([json.loads(open(p, encoding="utf-8").read()) for p in snakemake.input.models])
    pairs = tables.scored(scores, stimuli)

    def save(name, long, layout, caption):
        write_table(snakemake.output, name, long, layout, caption)

    sources = {"knowprobe (built)": snakemake.input.built, "released": snakemake.input.released}
    found = {name: contracts.read(path, contracts.COMPS_STIMULI) for name, path in sources.items() if path}
    statistics = tables.statistics(found, paper)
    save(
        "statistics",
        statistics,
        tables.statistics_layout(statistics),
        paper["statistics"]["caption"] + " Cells: ours (the paper's, difference) where the paper gives a count.",
    )
    chance = " Chance is 50%; a tie counts as wrong. The paper's accuracies are not in our copy of it."
    left_out = tables.left_out_note(scores)
    if left_out:
        log.warning("%s", left_out.strip())
    chance += left_out + tables.start_token_note(models)
    accuracy = tables.by_subset(pairs)
    save("accuracy", accuracy, tables.wide(accuracy, ["model"]), "Accuracy (%) per model and subset." + chance)
    types = tables.by_negative_type(pairs)
    save(
        "negative_types",
        types,
        tables.wide(types, ["model", "negative_sample_type"]).rename(columns=tables.COLUMN_LABELS),
        "Accuracy (%) by negative-sample type." + chance,
    )
    families = tables.by_family(accuracy, models)
    save(
        "families",
        families,
        families.rename(columns=tables.COLUMN_LABELS),
        "Accuracy (%) by model family (architecture) and size (millions of parameters)." + chance,
    )
    for row in tables.wide(accuracy, ["model"]).itertuples(index=False):
        log.info("%s", " | ".join(str(v) if isinstance(v, str) else f"{v:.1f}" for v in row))
