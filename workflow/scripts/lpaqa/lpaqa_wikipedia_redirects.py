"""Rule lpaqa_wikipedia_redirects: all redirects in one table, each with the title its chain ends
at, and the extraction counts and the malformed pages (page_id, title, reason) of all chunks."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import wikipedia

with rule_logging(snakemake.log[0]) as log:
    for part in snakemake.input.redirects:
        contracts.check(part, contracts.REDIRECTS)
    redirects = wikipedia.resolved_redirects(list(snakemake.input.redirects))
    contracts.write(redirects, snakemake.output.redirects, contracts.RESOLVED_REDIRECTS)
    rows = redirects.num_rows
    counts = pd.concat([pd.read_csv(path) for path in snakemake.input.counts], ignore_index=True)
    totals = counts.groupby("what")["count"].sum()
    log.info("%d redirects; %s", rows, ", ".join(f"{k} {v:,}" for k, v in totals.items()))
    write_csv(counts, snakemake.output.counts)
    rejects = pd.concat(
        [pd.read_csv(path).assign(chunk=chunk) for chunk, path in enumerate(snakemake.input.rejects)], ignore_index=True
    )
    if len(rejects):
        log.warning("%d malformed pages skipped: %s", len(rejects), rejects["reason"].value_counts().to_dict())
    write_csv(rejects, snakemake.output.rejects)
