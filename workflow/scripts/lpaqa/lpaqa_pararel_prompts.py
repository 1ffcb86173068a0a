"""Rule lpaqa_pararel_prompts: ParaRel's patterns as the prompt set pararel, every line left out
counted (a relation LAMA lacks included)."""

from pathlib import Path

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import lama, pararel

with rule_logging(snakemake.log[0]) as log:
    relations = lama.read_relations(Path(snakemake.input.data) / "relations.jsonl")["relation"]
    known = set(relations) | set(dict(snakemake.params.google_re_relations).values())
    prompts, dropped = pararel.read_patterns(snakemake.input.patterns, known)
    if len(dropped):
        log.warning("%d lines of ParaRel left out: %s", len(dropped), dropped["reason"].value_counts().to_dict())
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(prompts, snakemake.output.prompts, contracts.PROMPTS)
