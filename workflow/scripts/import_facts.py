"""Rule import_facts: LAMA T-REx or Google-RE files -> results/facts/DATASET.parquet."""

from pathlib import Path

from knowprobe import lama
from knowprobe.io import rule_logging, write_parquet

with rule_logging(snakemake.log[0]):
    data = Path(snakemake.input.data)
    if snakemake.wildcards.dataset == "trex":
        relations = lama.read_relations(data / "relations.jsonl")
        selected = None if snakemake.params.relations == "all" else list(snakemake.params.relations)
        facts = lama.read_trex(data, relations, selected)
    else:
        facts = lama.read_google_re(data)
    write_parquet(facts, snakemake.output[0])
