"""Rule lpaqa_wikipedia_extract: sentences with link spans, and redirects, of one chunk of the dump."""

import json
from pathlib import Path

from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import wikipedia

with rule_logging(snakemake.log[0]):
    streams = json.loads(Path(snakemake.input.streams).read_text())
    ranges = streams["ranges"][int(snakemake.wildcards.chunk)]
    counts = wikipedia.extract_chunk(
        snakemake.input.dump,
        None if ranges is None else [tuple(r) for r in ranges],
        snakemake.output.sentences,
        snakemake.output.redirects,
        rejects_out=snakemake.output.rejects,
    )
    write_csv(counts.assign(chunk=int(snakemake.wildcards.chunk)), snakemake.output.counts)
