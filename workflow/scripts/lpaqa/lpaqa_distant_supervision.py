"""Rule lpaqa_distant_supervision: sentences of one chunk that mention a T-REx-train subject and its object."""

import pyarrow.parquet as pq

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import distant

with rule_logging(snakemake.log[0]) as log:
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    entities, redirects = distant.knowledge_of(facts, snakemake.input.entities, snakemake.input.redirects)
    log.info("%d entities of %d facts, %d redirects to their articles", len(entities), len(facts), len(redirects))
    # read in batches: a chunk's sentences are never all in memory at once
    contracts.check(snakemake.input.sentences, contracts.SENTENCES)  # contract and digest, before the batches
    sentences = pq.ParquetFile(snakemake.input.sentences)
    matches = distant.match_sentences(sentences, facts, entities, redirects)
    log.info(
        "%d sentences, %d matches of %d facts; subjects found by %s; objects by %s",
        sentences.metadata.num_rows,
        len(matches),
        matches.groupby(["relation", "sub_uri", "obj_uri"]).ngroups,
        ", ".join(f"{how} {n}" for how, n in matches["sub_how"].value_counts().items()) or "none",
        ", ".join(f"{how} {n}" for how, n in matches["obj_how"].value_counts().items()) or "none",
    )
    contracts.write(matches, snakemake.output[0], contracts.MATCHES)
