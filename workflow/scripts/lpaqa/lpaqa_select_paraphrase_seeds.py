"""Rule lpaqa_select_paraphrase_seeds: each relation's mined prompt with the best T-REx-train P@1
(Mine+Para's seeds)."""

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import paraphrase

with rule_logging(snakemake.log[0]) as log:
    seeds, fallbacks = paraphrase.select_mined_seeds(
        contracts.read(snakemake.input.mined, contracts.PROMPTS),
        contracts.read(snakemake.input.train_metrics, contracts.PROMPT_METRICS),
    )
    log.info("%d seeds, one per relation, by T-REx-train P@1 (%s)", len(seeds), snakemake.input.train_metrics)
    if fallbacks:
        log.warning(
            "%d relations have no T-REx-train facts for this model; their seed is the most frequent mined prompt",
            fallbacks,
        )
    for row in seeds.itertuples(index=False):
        log.info("%s: %s (train P@1 %.3f)", row.relation, row.template, row.score)
    contracts.write(seeds, snakemake.output[0], contracts.PROMPTS)
