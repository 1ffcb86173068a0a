"""Rule wikidata_chunk: parse one chunk of the dump into entities, claims and a rejects table."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # the knowprobe package beside this script

import json

from knowprobe import wikidata
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]):
    info = json.loads(Path(snakemake.input.info).read_text())
    index = snakemake.input.index if info["compression"] != "none" else None
    rejects = wikidata.parse_chunk(snakemake.input.dump, index, info["uncompressed_bytes"],
                                   int(snakemake.wildcards.chunk), snakemake.params.chunks, snakemake.params.properties,
                                   snakemake.output.entities, snakemake.output.claims)
    write_csv(rejects, snakemake.output.rejects)
