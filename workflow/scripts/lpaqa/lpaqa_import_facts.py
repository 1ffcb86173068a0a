"""Rule lpaqa_import_facts: LAMA's T-REx or Google-RE files -> the test split of that dataset."""

from pathlib import Path

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import lama

with rule_logging(snakemake.log[0]):
    data = Path(snakemake.input.data)
    if snakemake.wildcards.dataset == "trex":
        relations = lama.read_relations(data / "relations.jsonl")
        selected = None if snakemake.params.relations == "all" else list(snakemake.params.relations)
        facts = lama.read_trex(data, relations, selected)
    else:
        facts = lama.read_google_re(data)
    facts = lama.sample_per_relation(facts, snakemake.params.per_relation, snakemake.params.seed)
    contracts.write(facts, snakemake.output[0], contracts.FACTS)
