"""Rule bear_unpack: the archive of BEAR's repository -> its folder holding MEMBER/ (BEAR and
BEAR-big), every file the manifest lists checked against its SHA-256."""

from knowprobe.bear.dataset import METADATA_FILE
from knowprobe.download import unpack, verify_manifest
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    member = snakemake.params.member
    unpack(snakemake.input.archive, snakemake.output[0], f"{member}/{METADATA_FILE}", "an archive of BEAR's repository")
    if snakemake.input.checksums:
        verify_manifest(snakemake.output[0], snakemake.input.checksums)
    else:
        log.warning("no bear.checksums: the unpacked files are not checked")
    log.info("unpacked %s into %s", snakemake.input.archive, snakemake.output[0])
