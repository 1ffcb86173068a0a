"""Rules comps_unpack_*: an archive (the norms' repository, WordNet, COMPS's repository) -> the
folder in it that holds the marker file."""

from knowprobe.download import unpack
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unpack(snakemake.input.archive, snakemake.output[0], snakemake.params.marker, snakemake.params.expected)
    log.info(
        "unpacked the folder of %s holding %s into %s",
        snakemake.input.archive,
        snakemake.params.marker,
        snakemake.output[0],
    )
