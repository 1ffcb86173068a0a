"""Rule stest_demo_corpus: S-TEST's part of the demo models' corpus: the Wikidata claims of its
paths' properties written out with corpus templates (phrasings other than the probing prompts;
one edge each, so a model must chain them to know a coarse object), and the words its probes
will meet (labels, templates and which-clauses), each to be one token."""

import pandas as pd

from knowprobe import contracts, demo_model
from knowprobe.io import rule_logging, write_text
from knowprobe.prompts import OBJECT, SUBJECT

with rule_logging(snakemake.log[0]) as log:
    relations = snakemake.params.relations
    templates = demo_model.read_corpus_templates(snakemake.input.templates)
    properties = {p for r in relations.values() for p in (r["start"], r["step"])}
    facts = demo_model.claim_facts(
        contracts.read(snakemake.input.claims, contracts.CLAIMS),
        contracts.read(snakemake.input.entities, contracts.ENTITIES),
        properties,
        set(),
    )
    facts = facts.assign(
        fact_id=[f"{r}-{s}-{o}" for r, s, o in zip(facts["relation"], facts["sub_label"], facts["obj_label"])]
    )
    sentences, _ = demo_model.corpus(facts, templates, holdout=0.0, seed=0)
    log.info("%d sentences from %d Wikidata claims of %s", len(sentences), len(facts), ", ".join(sorted(properties)))
    words = list(facts["sub_label"]) + list(facts["obj_label"])
    for spec in relations.values():
        for text in (spec["template"], spec["cascade"]):
            words.append(text.replace(SUBJECT, " ").replace(OBJECT, " "))
    contracts.write(
        pd.DataFrame(sentences, columns=contracts.DEMO_CORPUS.columns),
        snakemake.output.sentences,
        contracts.DEMO_CORPUS,
    )
    write_text("\n".join(words) + "\n", snakemake.output.words)
