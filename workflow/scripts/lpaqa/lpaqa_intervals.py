"""Rule lpaqa_intervals: the headline rows (Tables 2 and 3: Majority, Man, each other set's Top1,
Top3, Top5, Opti, Oracle) on every test set with their 95% cluster bootstrap intervals, and the
paired comparisons of lpaqa.comparisons (difference with its paired interval; per relation
McNemar's exact test, Holm's correction)."""

import json
from pathlib import Path

import pandas as pd

from knowprobe import contracts, uncertainty
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import intervals, metrics
from knowprobe.tables import write_table

with rule_logging(snakemake.log[0]) as log:
    settings = uncertainty.Settings(**snakemake.params.uncertainty)
    method_facts = pd.concat(
        [contracts.read(path, contracts.METHOD_FACTS) for path in snakemake.input.method_facts], ignore_index=True
    )
    keys = [(model, dataset) for model in snakemake.params.models for dataset in snakemake.params.datasets]
    majority = pd.concat(
        [
            metrics.majority_correct(
                contracts.read(path, contracts.MODEL_FACTS), json.loads(Path(objects).read_text(encoding="utf-8"))
            ).assign(model=model, dataset=dataset)
            for (model, dataset), path, objects in zip(keys, snakemake.input.majority, snakemake.input.majority_objects)
        ],
        ignore_index=True,
    )
    facts = intervals.headline_facts(method_facts, majority, snakemake.params.prompt_sets)
    log.info(
        "%d headline rows over %d facts; B = %d, seed %d",
        facts.groupby(intervals.KEYS).ngroups,
        len(facts),
        settings.bootstrap,
        settings.seed,
    )
    drawn = []
    table = intervals.interval_table(facts, settings, drawn)
    how = (
        f" Cells: value [95% interval] of a two-stage cluster bootstrap (relations, then facts; macro: "
        f"relations, then objects, then facts), B = {settings.bootstrap}, seed {settings.seed}; no interval "
        f"with fewer than {settings.min_clusters} relations."
    )
    write_table(
        snakemake.output, "intervals", table, intervals.layout(table), "Micro and macro P@1 (%) of each method." + how
    )
    pairs = intervals.default_comparisons(
        facts, snakemake.params.comparisons, snakemake.params.models, snakemake.params.scores
    )
    summary, tests = intervals.comparisons(facts, pairs, settings, drawn[0])
    write_table(
        snakemake.output,
        "comparisons",
        summary,
        intervals.comparison_layout(summary),
        "Paired comparisons: A - B of micro P@1 (points) with its paired bootstrap interval (the same "
        "resampled facts for both), and the relations where A or B is better by McNemar's exact test on "
        f"the discordant facts at {settings.alpha:g} after Holm's correction over the relations." + how,
    )
    write_csv(tests, snakemake.output.mcnemar)
    for line in intervals.headlines(table):
        log.info("%s", line)
