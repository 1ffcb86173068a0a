"""Rule lpaqa_demo_corpus: LPAQA's part of the demo models' corpus: the benchmark facts written out
with corpus templates (phrasings other than the probing prompts), less a held-out share, and the
other Wikidata facts of their relations (those T-REx-train is drawn from), and the words its probes
will meet (labels, candidates, prompt words), each to be one token."""

import json

import pandas as pd

from knowprobe import contracts, demo_model
from knowprobe.io import rule_logging, write_text
from knowprobe.prompts import OBJECT, SUBJECT
from knowprobe.vocab import read_words

with rule_logging(snakemake.log[0]) as log:
    facts = pd.concat([contracts.read(path, contracts.FACTS) for path in snakemake.input.facts], ignore_index=True)
    templates = demo_model.read_corpus_templates(snakemake.input.templates)
    known = None
    if snakemake.input.claims:
        # Wikidata's other facts of these relations (T-REx-train's among them), as a pre-trained
        # model would have read them; none that shares its labels with a benchmark fact
        known = demo_model.claim_facts(
            contracts.read(snakemake.input.claims, contracts.CLAIMS),
            contracts.read(snakemake.input.entities, contracts.ENTITIES),
            set(templates["relation"]),
            set(zip(facts["sub_label"], facts["obj_label"])),
        )
    sentences, held_out = demo_model.corpus(facts, templates, snakemake.params.holdout, snakemake.params.seed, known)
    log.info(
        "%d sentences from %d benchmark facts (%d held out) and %d other Wikidata facts",
        len(sentences),
        facts["fact_id"].nunique() - len(held_out),
        len(held_out),
        0 if known is None else len(known),
    )
    prompts = contracts.read(snakemake.input.prompts, contracts.PROMPTS)
    if known is not None:
        facts = pd.concat([facts, known], ignore_index=True)
    words = (
        list(facts["sub_label"])
        + list(facts["obj_label"])
        + read_words(snakemake.input.vocab)
        + [t.replace(SUBJECT, " ").replace(OBJECT, " ") for t in prompts["template"]]
    )
    frame = pd.DataFrame(sentences, columns=contracts.DEMO_CORPUS.columns)
    contracts.write(frame, snakemake.output.sentences, contracts.DEMO_CORPUS)
    write_text("\n".join(words) + "\n", snakemake.output.words)
    write_text(json.dumps({"held_out_fact_ids": sorted(held_out)}, indent=2) + "\n", snakemake.output.held_out)
