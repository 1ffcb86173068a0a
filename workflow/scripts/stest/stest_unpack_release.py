"""Rule stest_unpack_release: S-TEST's repository archive -> its data/S-TEST/ folder."""

from knowprobe.download import unpack
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unpack(snakemake.input.archive, snakemake.output[0], "P19.jsonl", "an archive of S-TEST's repository")
    log.info("unpacked the data/S-TEST folder of %s into %s", snakemake.input.archive, snakemake.output[0])
