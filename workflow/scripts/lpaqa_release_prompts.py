"""Rule lpaqa_release_prompts: one folder of LPAQA's released prompts as a prompt set."""

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import release

with rule_logging(snakemake.log[0]):
    prompts, dropped = release.read_folder(snakemake.input.release, snakemake.wildcards.prompt_set)
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(prompts, snakemake.output.prompts, contracts.PROMPTS)
