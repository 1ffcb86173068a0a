"""Rule lpaqa_consistency: ParaRel's paraphrase consistency, consistent accuracy and agreement of
every model on each prompt set with several prompts per relation, per test set, with their 95%
cluster bootstrap intervals (relations, then subjects)."""

import pandas as pd

from knowprobe import contracts, uncertainty
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import consistency
from knowprobe.lpaqa.paper import SET_NAMES
from knowprobe.lpaqa.tables import DATASET_NAMES
from knowprobe.tables import write_table
from knowprobe.uncertainty import formatting

CAPTIONS = {
    "pararel": "Paraphrase consistency (%) as ParaRel's code computes it (reading pararel): per relation, the "
    "agreeing ordered pairs of its subjects' kept prompts over all such pairs (right or wrong), then the mean "
    "over relations; consistent accuracy: the relation's subjects all of whose prompts are right (every prompt, "
    "the article rule not applied); all agree: subjects with a kept prompt whose kept prompts give one answer.",
    "per_subject": "Paraphrase consistency (%), reading per_subject: per subject, the share of ordered pairs of "
    "its kept prompts whose answers agree, right or wrong, averaged over the relation's subjects with two kept "
    "prompts, then over relations; consistent accuracy: those subjects all of whose kept prompts are right; "
    "all agree: all of whose kept prompts give one answer.",
}

with rule_logging(snakemake.log[0]) as log:
    settings = uncertainty.Settings(**snakemake.params.uncertainty)
    reading, article_rule = snakemake.params.reading, snakemake.params.article_rule
    measures = ["consistency", "consistent_accuracy", "all_agree"]
    rows, per_relation = [], []
    for path in snakemake.input.probes:
        model, prompt_set, dataset = path.split("/")[-4:-1]
        table = contracts.read(path, contracts.PROBE)
        total, per = consistency.prompt_set_consistency(table, article_rule, reading)
        found = consistency.consistency_intervals(table, settings, article_rule, reading)
        key = {"model": model, "prompt_set": prompt_set, "dataset": dataset}
        row = {**key, "reading": reading}
        for measure in measures:
            interval = found.get(measure)
            row[measure] = 100 * getattr(total, measure)
            row[f"{measure}_low"] = 100 * interval.low if interval else float("nan")
            row[f"{measure}_high"] = 100 * interval.high if interval else float("nan")
        rows.append({**row, "relations": total.clusters, "subjects": total.subjects, "skipped": total.skipped})
        if len(per):
            per_relation.append(per.assign(**key, reading=reading))
        log.info(
            "%s %s %s: consistency %.3f over %d relations (%d answers skipped by the article rule)",
            model,
            prompt_set,
            dataset,
            total.consistency,
            total.clusters,
            total.skipped,
        )
    long = pd.DataFrame(rows)
    cells = {
        measure: [
            formatting.cell(r[measure], r[f"{measure}_low"], r[f"{measure}_high"]) for r in long.to_dict("records")
        ]
        for measure in measures
    }
    layout = long.assign(
        prompts=long["prompt_set"].map(lambda s: SET_NAMES.get(s, s)),
        dataset=long["dataset"].map(lambda d: DATASET_NAMES.get(d, d)),
        **cells,
    )[["model", "prompts", "dataset", "reading", *measures, "relations", "subjects", "skipped"]]
    rule = (
        " A prompt whose 'a'/'an' before [Y] disagrees with the gold object is skipped for that fact (skipped)."
        if snakemake.params.article_rule
        else ""
    )
    write_table(
        snakemake.output,
        "consistency",
        long,
        layout,
        CAPTIONS[reading]
        + " Relations with one prompt do not enter; a relation without a pair of kept prompts has no consistency."
        + rule
        + f" Cells: value [95% interval] of a two-stage cluster bootstrap (relations, then subjects), "
        f"B = {settings.bootstrap}, seed {settings.seed}; no interval with fewer than {settings.min_clusters} "
        "relations.",
    )
    columns = [
        "model",
        "prompt_set",
        "dataset",
        "relation",
        "reading",
        "subjects",
        "pairs",
        "consistency",
        "consistent_accuracy",
        "all_agree",
    ]
    write_csv(
        pd.concat(per_relation, ignore_index=True)[columns] if per_relation else pd.DataFrame(columns=columns),
        snakemake.output.per_relation,
    )
