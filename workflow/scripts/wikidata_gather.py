"""Rule wikidata_gather: concatenate the chunk parts into entities, claims and one rejects table."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    entities = contracts.concat(snakemake.input.entities, snakemake.output.entities, contracts.ENTITIES)
    claims = contracts.concat(snakemake.input.claims, snakemake.output.claims, contracts.CLAIMS)
    rejects = pd.concat([pd.read_csv(path) for path in snakemake.input.rejects], ignore_index=True)
    totals = rejects.groupby("kind")["count"].sum()
    log.info(
        "%d entities, %d claims from %d chunks; not kept: %s",
        entities,
        claims,
        len(snakemake.input.entities),
        ", ".join(f"{kind} {n}" for kind, n in totals.items()) or "nothing",
    )
    write_csv(rejects, snakemake.output.rejects)
