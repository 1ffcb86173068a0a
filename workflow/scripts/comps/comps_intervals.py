"""Rule comps_intervals: accuracy per model and subset with its 95% cluster bootstrap interval
(properties, then pairs), and the paired comparisons of comps.comparisons."""

import pandas as pd

from knowprobe import contracts, uncertainty
from knowprobe.comps import intervals, tables
from knowprobe.io import rule_logging, write_csv
from knowprobe.tables import write_table
from knowprobe.uncertainty import formatting

with rule_logging(snakemake.log[0]) as log:
    settings = uncertainty.Settings(**snakemake.params.uncertainty)
    stimuli = contracts.read(snakemake.input.stimuli, contracts.COMPS_STIMULI)
    scores = pd.concat([contracts.read(p, contracts.COMPS_SCORES) for p in snakemake.input.scores], ignore_index=True)
    pairs = intervals.items(tables.scored(scores, stimuli))
    table = intervals.interval_table(pairs, settings)
    how = (
        f" Cells: value [95% interval] of a two-stage cluster bootstrap (properties, then their pairs), "
        f"B = {settings.bootstrap}, seed {settings.seed}; no interval with fewer than {settings.min_clusters} "
        "properties."
    )
    write_table(
        snakemake.output,
        "intervals",
        table,
        intervals.layout(table),
        "Accuracy (%) per model and subset: the share of right pairs (chance 50)." + how,
    )
    chosen = intervals.default_comparisons(pairs, snakemake.params.comparisons, snakemake.params.models)
    summary, tests = intervals.comparisons(pairs, chosen, settings)
    write_table(
        snakemake.output,
        "comparisons",
        summary,
        formatting.comparison_layout(
            summary.rename(columns={"properties": "clusters", "subset": "dataset"}), "properties"
        ).rename(columns={"dataset": "subset"}),
        "Paired comparisons of models on each subset: A - B of accuracy (points) on the same pairs, with its "
        "paired bootstrap interval, and the properties where A or B is better by McNemar's exact test at "
        f"{settings.alpha:g} after Holm's correction." + how,
    )
    write_csv(tests, snakemake.output.mcnemar)
    for line in intervals.headlines(table):
        log.info("%s", line)
