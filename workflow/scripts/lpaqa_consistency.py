"""Rule lpaqa_consistency: ParaRel's paraphrase consistency, consistent accuracy and agreement of
every model on each prompt set with several prompts per relation, per test set."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import consistency
from knowprobe.lpaqa.paper import SET_NAMES
from knowprobe.lpaqa.tables import DATASET_NAMES
from knowprobe.tables import write_table

with rule_logging(snakemake.log[0]) as log:
    rows, per_relation = [], []
    for path in snakemake.input.probes:
        model, prompt_set, dataset = path.split("/")[-4:-1]
        table = contracts.read(path, contracts.PROBE)
        total, per = consistency.prompt_set_consistency(table, snakemake.params.article_rule)
        key = {"model": model, "prompt_set": prompt_set, "dataset": dataset}
        rows.append(
            {
                **key,
                "consistency": 100 * total.consistency,
                "consistent_accuracy": 100 * total.consistent_accuracy,
                "all_agree": 100 * total.all_agree,
                "relations": total.clusters,
                "subjects": total.subjects,
                "skipped": total.skipped,
            }
        )
        if len(per):
            per_relation.append(per.assign(**key))
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
    layout = long.assign(
        prompts=long["prompt_set"].map(lambda s: SET_NAMES.get(s, s)),
        dataset=long["dataset"].map(lambda d: DATASET_NAMES.get(d, d)),
    )[
        [
            "model",
            "prompts",
            "dataset",
            "consistency",
            "consistent_accuracy",
            "all_agree",
            "relations",
            "subjects",
            "skipped",
        ]
    ]
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
        "Paraphrase consistency (ParaRel): per subject, the share (%) of ordered pairs of its prompts whose "
        "answers agree, right or wrong, averaged per relation, then over relations; consistent accuracy: "
        "subjects all of whose prompts are right; all agree: subjects all of whose prompts give one answer. "
        "Relations with one prompt and subjects left with fewer than two do not enter." + rule,
    )
    columns = [
        "model",
        "prompt_set",
        "dataset",
        "relation",
        "subjects",
        "consistency",
        "consistent_accuracy",
        "all_agree",
    ]
    write_csv(
        pd.concat(per_relation, ignore_index=True)[columns] if per_relation else pd.DataFrame(columns=columns),
        snakemake.output.per_relation,
    )
