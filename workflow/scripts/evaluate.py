"""Rule evaluate: P@1 (micro, macro) of every prompt of a prompt set, per relation."""

from knowprobe import metrics
from knowprobe.io import read_parquet, rule_logging, write_parquet

with rule_logging(snakemake.log[0]) as log:
    per_prompt = metrics.per_prompt_p_at_1(read_parquet(snakemake.input.probe))
    per_prompt.insert(0, "dataset", snakemake.wildcards.dataset)
    per_prompt.insert(0, "prompt_set", snakemake.wildcards.prompt_set)
    per_prompt.insert(0, "model", snakemake.wildcards.model)
    log.info("%d (relation, prompt) results", len(per_prompt))
    write_parquet(per_prompt, snakemake.output[0])
