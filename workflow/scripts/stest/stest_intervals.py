"""Rule stest_intervals: p_r averaged over relations of every model, measure, method and mode with
its 95% cluster bootstrap interval, and the paired comparisons of stest.comparisons."""

import pandas as pd

from knowprobe import contracts, uncertainty
from knowprobe.io import rule_logging, write_csv
from knowprobe.stest import intervals
from knowprobe.tables import write_table
from knowprobe.uncertainty import formatting

with rule_logging(snakemake.log[0]) as log:
    settings = uncertainty.Settings(**snakemake.params.uncertainty)
    scores = pd.concat([contracts.read(p, contracts.STEST_SCORES) for p in snakemake.input.scores], ignore_index=True)
    triples = intervals.items(scores)
    table = intervals.interval_table(triples, settings)
    how = (
        f" Cells: value [95% interval] of a two-stage cluster bootstrap (relations, then the triples counted in "
        f"each), B = {settings.bootstrap}, seed {settings.seed}; no interval with fewer than "
        f"{settings.min_clusters} relations."
    )
    write_table(
        snakemake.output,
        "intervals",
        table,
        intervals.layout(table),
        "p_r (%): the share of a relation's counted triples whose fine object scores higher, averaged over "
        "relations." + how,
    )
    pairs = intervals.default_comparisons(triples, snakemake.params.comparisons, snakemake.params.models)
    summary, tests = intervals.comparisons(triples, pairs, settings)
    write_table(
        snakemake.output,
        "comparisons",
        summary,
        formatting.comparison_layout(summary.rename(columns={"relations": "clusters"}), "relations"),
        "Paired comparisons (model, measure, method, mode): A - B of p_r (points) on the triples both count, "
        "with its paired bootstrap interval, and the relations where A or B is better by McNemar's exact test "
        f"at {settings.alpha:g} after Holm's correction." + how,
    )
    write_csv(tests, snakemake.output.mcnemar)
    for line in intervals.headlines(table):
        log.info("%s", line)
