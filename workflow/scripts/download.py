"""Rule download_lama / download_common_vocab: fetch a URL (resumable) or copy a local file."""

from knowprobe.download import fetch
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]):
    fetch(snakemake.params.url, snakemake.output[0])
