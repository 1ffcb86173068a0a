"""Rule lpaqa_multitoken_facts: facts of LAMA's T-REx relations whose answers may be several words
and tokens, built from the Wikidata claims (or X-FACTR's English facts); each model's token counts
of their objects are rule lpaqa_multitoken_object_tokens'."""

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import multitoken, trex_train

with rule_logging(snakemake.log[0]) as log:
    test = contracts.read(snakemake.input.test, contracts.FACTS)
    if snakemake.params.source == "xfactr":
        facts, dropped = multitoken.read_xfactr(
            snakemake.input.xfactr, test, snakemake.params.per_relation, snakemake.params.seed
        )
    else:
        claims, entities = trex_train.wikidata_datasets(snakemake.input.claims, snakemake.input.entities)
        facts, dropped = multitoken.build_from(
            claims,
            entities,
            test,
            snakemake.params.per_relation,
            snakemake.params.seed,
        )
    log.info(
        "multi-token facts: %d in %d relations; left out: %s",
        len(facts),
        facts["relation"].nunique(),
        ", ".join(f"{r} {n}" for r, n in dropped.groupby("reason")["n"].sum().items()) or "none",
    )
    # an empty relation is reported, not an error: the single-token sets still stand
    trex_train.warn_empty_relations(facts, dropped, multitoken.relations_of(test), "multi-token")
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(facts, snakemake.output.facts, contracts.MULTITOKEN_FACTS)
