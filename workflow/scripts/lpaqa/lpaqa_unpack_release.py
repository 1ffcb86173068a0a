"""Rule lpaqa_unpack_release: LPAQA's repository archive -> its prompt/ folder."""

from knowprobe.download import unpack_lpaqa_prompts
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unpack_lpaqa_prompts(snakemake.input.archive, snakemake.output[0])
    log.info("unpacked the prompt folder of %s into %s", snakemake.input.archive, snakemake.output[0])
