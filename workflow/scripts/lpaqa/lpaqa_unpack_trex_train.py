"""Rule lpaqa_unpack_trex_train: LPAQA's TREx_train.tar.gz -> a directory of P*.jsonl."""

from knowprobe.download import unpack_lpaqa_trex_train
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unpack_lpaqa_trex_train(snakemake.input.archive, snakemake.output[0])
    log.info("unpacked %s into %s", snakemake.input.archive, snakemake.output[0])
