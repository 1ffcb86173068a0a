"""Rule lpaqa_majority: the Majority baseline per relation: each relation's most frequent object
among the facts the run could be asked (before its own draw), scored on the facts it was asked."""

import json
from pathlib import Path

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import metrics

with rule_logging(snakemake.log[0]) as log:
    objects = json.loads(Path(snakemake.input.objects).read_text(encoding="utf-8"))
    result = metrics.majority(contracts.read(snakemake.input.facts, contracts.MODEL_FACTS), objects)
    result = result.assign(
        method="Majority",
        prompt_set="-",
        fitted_on="-",
        **{k: snakemake.wildcards[k] for k in ("model", "dataset", "split")},
    )
    log.info(
        "Majority P@1 averaged over %d relations: micro %.3f, macro %.3f",
        len(result),
        result["micro"].mean(),
        result["macro"].mean(),
    )
    contracts.write(result, snakemake.output[0], contracts.RESULTS)
