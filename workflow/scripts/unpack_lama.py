"""Rule unpack_lama: LAMA's data.zip -> resources/lama/data (relations.jsonl, TREx/, Google_RE/)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # the knowprobe package beside this script

from knowprobe.download import unpack_lama
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unpack_lama(snakemake.input.archive, snakemake.output[0])
    log.info("unpacked %s into %s", snakemake.input.archive, snakemake.output[0])
