"""Rules download_wikidata, download_wikipedia: dated dump files (resumable), verified against
the checksum list Wikimedia publishes beside them."""

from knowprobe.download import download, fetch_text, verify_checksum
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    checksums = None if snakemake.params.checksums is None else fetch_text(snakemake.params.checksums)
    for url, path in zip(snakemake.params.urls, snakemake.output):
        download(url, path)
        if checksums is None:
            log.warning("checksum is none: %s is not verified", path)
        else:
            verify_checksum(path, checksums, snakemake.params.algorithm, snakemake.params.checksums)
