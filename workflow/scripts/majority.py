"""Rule majority: the Majority baseline (each relation's most frequent object), per relation."""

from knowprobe import metrics
from knowprobe.io import read_parquet, rule_logging, write_parquet

with rule_logging(snakemake.log[0]) as log:
    result = metrics.majority(read_parquet(snakemake.input.facts))
    result.insert(0, "dataset", snakemake.wildcards.dataset)
    result.insert(0, "method", "Majority")
    result.insert(0, "prompt_set", "-")
    result.insert(0, "model", snakemake.wildcards.model)
    log.info(
        "Majority P@1 averaged over %d relations: micro %.3f, macro %.3f",
        len(result),
        result["micro"].mean(),
        result["macro"].mean(),
    )
    write_parquet(result, snakemake.output[0])
