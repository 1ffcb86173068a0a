"""Rule lpaqa_unpack_lama: LAMA's data.zip -> resources/lama/data (relations.jsonl, TREx/, Google_RE/)."""

from knowprobe.download import unpack_lama
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unpack_lama(snakemake.input.archive, snakemake.output[0])
    log.info("unpacked %s into %s", snakemake.input.archive, snakemake.output[0])
