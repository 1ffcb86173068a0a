"""Rule lpaqa_manual_prompts: LAMA's templates (relations.jsonl) and Google-RE's -> the "manual" prompt set."""

from pathlib import Path

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import lama

with rule_logging(snakemake.log[0]) as log:
    relations = lama.read_relations(Path(snakemake.input.data) / "relations.jsonl")
    prompts = lama.manual_prompts(relations, dict(snakemake.params.google_re_templates))
    log.info("%d manual prompts", len(prompts))
    contracts.write(prompts, snakemake.output[0], contracts.PROMPTS)
