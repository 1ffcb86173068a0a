"""Rules download_wikidata, download_wikipedia: dated dump files (resumable), verified against
the checksum list Wikimedia publishes beside them, and recorded in the lock file."""

from knowprobe.download import Checks, download, fetch_text, record_file, verify_checksum
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    checks = Checks.from_config(snakemake.config)
    checksums = None if snakemake.params.checksums is None else fetch_text(snakemake.params.checksums)
    for url, path in zip(snakemake.params.urls, snakemake.output):
        download(url, path)
        if checksums is None:
            log.warning("checksum is none: %s is not verified", path)
            record_file(checks, url, path, {}, "not verified (its checksum setting is none)")
        else:
            algorithm = snakemake.params.algorithm
            digest = verify_checksum(path, checksums, algorithm, snakemake.params.checksums)
            record_file(checks, url, path, {algorithm: digest}, f"Wikimedia's {snakemake.params.checksums}")
