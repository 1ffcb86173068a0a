"""Rule stest_build: S-TEST's triples from Wikidata's claims (paths over transitive relations).

Only the claims of the paths' properties are read, and labels are looked up in the entities
table for the candidate objects (labels that are candidate words) and, batch by batch, for the
subjects the builder examines: a full dump's hundred million entities are never all in memory.
"""

import pandas as pd
import pyarrow.compute as pc
import pyarrow.dataset as ds

from knowprobe import contracts
from knowprobe.io import KnowprobeError, rule_logging, write_csv
from knowprobe.stest import builder
from knowprobe.vocab import read_words

with rule_logging(snakemake.log[0]) as log:
    relations = snakemake.params.relations
    settings = snakemake.params.build
    properties = sorted({p for r in relations.values() for p in (r["start"], r["step"])})
    contracts.check(snakemake.input.claims, contracts.CLAIMS)
    contracts.check(snakemake.input.entities, contracts.ENTITIES)
    claims = ds.dataset(snakemake.input.claims).to_batches(
        columns=["subject", "property", "object"], filter=pc.field("property").isin(properties)
    )
    edges = builder.edges_of(
        (batch.to_pandas() for batch in claims), set(properties), snakemake.params.parsed_properties
    )
    log.info("edges: %s", ", ".join(f"{p} {len(e):,}" for p, e in edges.items()))
    entities = ds.dataset(snakemake.input.entities)
    entity_count = entities.count_rows()
    builder.check_labelled(snakemake.input.entities, entity_count)
    words = read_words(snakemake.input.words)
    objects = entities.to_table(columns=["qid", "label"], filter=pc.field("label").isin(words)).to_pandas()
    object_labels = dict(zip(builder.qid_numbers(objects["qid"]).tolist(), objects["label"]))
    log.info("%d entities are labelled with one of the %d candidate words", len(object_labels), len(words))
    builder.check_labelled(snakemake.input.entities, entity_count, len(object_labels), len(words))

    def subject_labels(subjects: list[int]) -> dict[int, str]:
        if not subjects:
            return {}
        wanted = [f"Q{s}" for s in subjects]
        found = entities.to_table(columns=["qid", "label"], filter=pc.field("qid").isin(wanted)).to_pandas()
        return dict(zip(builder.qid_numbers(found["qid"]).tolist(), found["label"]))

    frames, rejects = [], []
    for relation, spec in relations.items():
        chain = builder.Chain(relation, spec["start"], spec["step"])
        triples, counts = builder.build_relation(
            chain,
            edges,
            object_labels,
            subject_labels,
            per_relation=settings["per_relation"],
            seed=settings["seed"],
            max_hops=settings["max_hops"],
            max_paths=settings["max_paths"],
            min_gap=settings["min_gap"],
            distance=settings["distance"],
        )
        if triples.empty:
            log.warning("%s: no triple (subjects left out: %s)", relation, dict(counts) or "no subject has a claim")
        frames.append(triples)
        rejects += [
            {"relation": relation, "reason": r, "description": builder.REJECT_REASONS[r], "n": n}
            for r, n in sorted(counts.items())
        ]
    triples = pd.concat(frames, ignore_index=True)
    if triples.empty:
        raise KnowprobeError(
            "S-TEST: no triple for any relation (see the counts in the log): are the paths' properties in the "
            "dump, and the objects' labels candidate words?"
        )
    contracts.write(triples, snakemake.output.triples, contracts.STEST_TRIPLES)
    write_csv(pd.DataFrame(rejects, columns=["relation", "reason", "description", "n"]), snakemake.output.rejects)
