"""Rule wikidata_index: one pass over the dump: its uncompressed size and a seek index for the chunk jobs."""

import json

from knowprobe import wikidata
from knowprobe.io import rule_logging, write_text

with rule_logging(snakemake.log[0]) as log:
    info = wikidata.build_index(snakemake.input.dump, snakemake.output.index, threads=snakemake.threads)
    log.info(
        "%s: %s compressed, %s uncompressed bytes",
        info["dump"],
        f"{info['compressed_bytes']:,}",
        f"{info['uncompressed_bytes']:,}",
    )
    write_text(json.dumps(info, indent=2) + "\n", snakemake.output.info)
