"""Rule bear_download_relation_info: fetch a URL (resumable) or copy a local file, and check its
SHA-256 where the config gives one (a mismatch deletes the file)."""

from knowprobe.download import fetch, file_digest
from knowprobe.io import KnowprobeError, rule_logging

with rule_logging(snakemake.log[0]) as log:
    path = fetch(snakemake.params.url, snakemake.output[0])
    expected = snakemake.params.sha256
    if expected:
        actual = file_digest(path, "sha256")
        if actual != expected:
            path.unlink()
            raise KnowprobeError(
                f"{snakemake.params.url}: sha256 {actual} does not match the config's {expected}; the file was deleted"
            )
        log.info("%s: sha256 verified", path)
