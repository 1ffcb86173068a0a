"""Rule lpaqa_filter_facts: LAMA's filter for one run (a model under a score) and dataset split,
then the run's own draw where it has one (lpaqa.probe.sample); kept facts and drop counts, and from
the facts before the draw each relation's objects (C_r) and most frequent object (Majority)."""

import json

from knowprobe import contracts, vocab
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa import lama
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]):
    tokenizer = load_tokenizer(snakemake.input.model, snakemake.params.kind)
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    # a statement score ranks whole statements: objects of several tokens stay
    single_token = snakemake.params.score != "statement"
    kept, dropped = vocab.filter_facts(facts, tokenizer, candidates["token_id"], single_token)
    # before the run's draw: C_r of its statement score, and the objects its Majority baseline predicts
    objects = lama.objects_by_relation(kept)
    write_text(json.dumps(objects, indent=1, ensure_ascii=False) + "\n", snakemake.output.objects)
    majority = lama.majority_objects(kept)
    write_text(json.dumps(majority, indent=1, ensure_ascii=False) + "\n", snakemake.output.majority)
    kept, dropped = lama.sample_run(kept, dropped, **snakemake.params.sample)
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(kept, snakemake.output.facts, contracts.MODEL_FACTS)
