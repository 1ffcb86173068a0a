"""Rule download_wikidata: the dated dump (resumable), verified against Wikimedia's checksum list."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # the knowprobe package beside this script

from knowprobe.download import download, fetch_text, verify_checksum
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    download(snakemake.params.url, snakemake.output[0])
    if snakemake.params.checksums is None:
        log.warning("wikidata.checksum is none: the download is not verified")
    else:
        verify_checksum(snakemake.output[0], fetch_text(snakemake.params.checksums), snakemake.params.algorithm,
                        snakemake.params.checksums)
