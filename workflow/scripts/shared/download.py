"""Rules that fetch one file (LAMA's data and vocabulary, the studies' releases, the norms,
WordNet, GloVe, LPAQA's T-REx-train): a URL (resumable, verified against its known SHA-256 or the
lock file, knowprobe.download) or a local file copied."""

from knowprobe.download import Checks, fetch
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]):
    fetch(snakemake.params.url, snakemake.output[0], Checks.from_config(snakemake.config))
