"""Rule wikidata_gather: concatenate the chunk parts into entities, claims and one rejects table
(entities listed twice kept once, counted)."""

import pandas as pd

from knowprobe import wikidata
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    entities, claims, dropped = wikidata.gather(
        list(snakemake.input.entities),
        list(snakemake.input.claims),
        snakemake.output.entities,
        snakemake.output.claims,
    )
    rejects = pd.concat([pd.read_csv(path) for path in snakemake.input.rejects], ignore_index=True)
    extra = [
        {"chunk": "all", "kind": kind, "description": wikidata.REJECT_KINDS[kind], "count": n, "example": ""}
        for kind, n in dropped.items()
        if n
    ]
    rejects = pd.concat([rejects, pd.DataFrame(extra, columns=rejects.columns)], ignore_index=True)
    totals = rejects.groupby("kind")["count"].sum()
    log.info(
        "%d entities, %d claims from %d chunks; not kept: %s",
        entities,
        claims,
        len(snakemake.input.entities),
        ", ".join(f"{kind} {n}" for kind, n in totals.items()) or "nothing",
    )
    write_csv(rejects, snakemake.output.rejects)
