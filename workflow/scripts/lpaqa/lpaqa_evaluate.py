"""Rule lpaqa_evaluate: P@1 (micro, macro) of every prompt of a prompt set, per relation."""

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import metrics

with rule_logging(snakemake.log[0]) as log:
    per_prompt = metrics.per_prompt_p_at_1(contracts.read(snakemake.input.probe, contracts.PROBE))
    keys = {name: snakemake.wildcards[name] for name in ("model", "prompt_set", "dataset", "split")}
    log.info("%d (relation, prompt) results", len(per_prompt))
    contracts.write(per_prompt.assign(**keys), snakemake.output[0], contracts.PROMPT_METRICS)
