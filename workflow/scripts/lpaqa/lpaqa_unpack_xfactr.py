"""Rule lpaqa_unpack_xfactr: X-FACTR's repository archive -> its folder (data/mTRExf/sub/P*.jsonl and
data/alias/mTRExf/en.txt), the files read checked against lpaqa.multitoken.xfactr.checksums."""

from knowprobe.download import unpack, verify_manifest
from knowprobe.io import rule_logging
from knowprobe.lpaqa.multitoken import XFACTR_FACTS

with rule_logging(snakemake.log[0]) as log:
    folder = unpack(
        snakemake.input.archive, snakemake.output[0], f"{XFACTR_FACTS}/P*.jsonl", "an archive of X-FACTR's repository"
    )
    if snakemake.input.checksums:
        verify_manifest(folder, snakemake.input.checksums, unlisted=f"{XFACTR_FACTS}/P*.jsonl")
    else:
        log.warning("lpaqa.multitoken.xfactr.checksums is null: the unpacked facts are not checked")
    log.info("unpacked X-FACTR's facts of %s into %s", snakemake.input.archive, folder)
