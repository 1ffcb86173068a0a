"""Rule wikidata_chunk: parse one chunk of the dump into entities, claims and a rejects table."""

import json
from pathlib import Path

from knowprobe import wikidata
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]):
    info = json.loads(Path(snakemake.input.info).read_text())
    index = snakemake.input.index if info["compression"] != "none" else None
    rejects = wikidata.parse_chunk(
        snakemake.input.dump,
        index,
        info["uncompressed_bytes"],
        int(snakemake.wildcards.chunk),
        snakemake.params.chunks,
        snakemake.params.properties,
        snakemake.output.entities,
        snakemake.output.claims,
    )
    write_csv(rejects, snakemake.output.rejects)
