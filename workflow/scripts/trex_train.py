"""Rule trex_train: T-REx-train facts, built from Wikidata claims or read from LPAQA's release."""

import pandas as pd

from knowprobe import trex_train
from knowprobe.io import read_parquet, rule_logging, write_csv, write_parquet

with rule_logging(snakemake.log[0]) as log:
    test = read_parquet(snakemake.input.test)
    relations = sorted(test["relation"].unique(), key=lambda r: int(r[1:]))
    if snakemake.params.source == "wikidata":
        candidates = [set(read_parquet(path)["word"]) for path in snakemake.input.candidates]
        facts, dropped = trex_train.build(
            read_parquet(snakemake.input.claims),
            read_parquet(snakemake.input.entities),
            test,
            relations,
            candidates,
            snakemake.params.per_relation,
            snakemake.params.seed,
        )
    else:
        facts = trex_train.read_lpaqa(snakemake.input.lpaqa, relations)
        dropped = pd.DataFrame(columns=["relation", "reason", "description", "n"])
    log.info(
        "T-REx-train (%s): %d facts in %d relations", snakemake.params.source, len(facts), facts["relation"].nunique()
    )
    write_csv(dropped, snakemake.output.dropped)
    write_parquet(facts, snakemake.output.facts)
