"""Rule lpaqa_trex_train: T-REx-train facts, built from Wikidata claims or read from LPAQA's release."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import trex_train

with rule_logging(snakemake.log[0]) as log:
    test = contracts.read(snakemake.input.test, contracts.FACTS)
    # T-REx's relations, and those Google-RE's relations are ranked on (P19, P20, P569)
    extra = set(snakemake.params.google_re_relations) - set(test["relation"])
    relations = sorted(set(test["relation"]) | extra, key=lambda r: int(r[1:]))
    if snakemake.params.source == "wikidata":
        candidates = [set(contracts.read(path, contracts.CANDIDATES)["word"]) for path in snakemake.input.candidates]
        claims, entities = trex_train.wikidata_datasets(snakemake.input.claims, snakemake.input.entities)
        facts, dropped = trex_train.build_from(
            claims,
            entities,
            test,
            relations,
            candidates,
            snakemake.params.per_relation,
            snakemake.params.seed,
        )
    elif snakemake.params.source == "lpaqa":
        facts, dropped = trex_train.without_test_pairs(
            trex_train.read_lpaqa(snakemake.input.lpaqa, relations, optional=extra), test
        )
        # the release's at most 1,000 a relation, drawn down to per_relation as the dump's are
        facts, not_sampled = trex_train.sampled(facts, snakemake.params.per_relation, snakemake.params.seed)
        if len(not_sampled):
            log.info(
                "trex_train.per_relation %d: %d released facts left out",
                snakemake.params.per_relation,
                not_sampled["n"].sum(),
            )
            dropped = pd.concat([dropped, not_sampled], ignore_index=True)
    else:  # none: no training facts; the probes' train/dev split is empty, no selection runs
        facts, dropped = trex_train.without_test_pairs(test.iloc[0:0], test)
    log.info(
        "T-REx-train (%s): %d facts in %d relations", snakemake.params.source, len(facts), facts["relation"].nunique()
    )
    write_csv(dropped, snakemake.output.dropped)
    if snakemake.params.source != "none":
        trex_train.check_not_empty(facts, dropped, relations)
    contracts.write(facts, snakemake.output.facts, contracts.FACTS)
