"""Rule lpaqa_wikipedia_streams: the byte ranges of whole bzip2 streams that make up each extraction chunk."""

import json
from pathlib import Path

from knowprobe.io import rule_logging, write_text
from knowprobe.lpaqa import wikipedia

with rule_logging(snakemake.log[0]) as log:
    size = Path(snakemake.input.dump).stat().st_size
    chunks = snakemake.params.chunks
    if snakemake.input.index:
        ranges = wikipedia.stream_ranges(snakemake.input.index, snakemake.input.dump, chunks)
        log.info("%d streams in %d chunks", sum(map(len, ranges)), chunks)
    else:
        ranges = [None]  # no index: the whole dump is one chunk (wikipedia.chunks is 1, checked before the run)
        log.info("no multistream index: one chunk")
    write_text(json.dumps({"dump": snakemake.input.dump, "size": size, "ranges": ranges}) + "\n", snakemake.output[0])
