"""Rule lpaqa_release_prompts: one folder of LPAQA's released prompts as a prompt set, every line
left out counted (a relation LAMA lacks included)."""

from pathlib import Path

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import lama, release

with rule_logging(snakemake.log[0]) as log:
    relations = lama.read_relations(Path(snakemake.input.data) / "relations.jsonl")["relation"]
    known = set(relations) | set(dict(snakemake.params.google_re_relations).values())
    prompts, dropped = release.read_folder(snakemake.input.release, snakemake.wildcards.prompt_set, known)
    if len(dropped):
        log.warning("%d released lines left out: %s", len(dropped), dropped["reason"].value_counts().to_dict())
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(prompts, snakemake.output.prompts, contracts.PROMPTS)
