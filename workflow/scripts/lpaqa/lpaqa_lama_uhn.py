"""Rule lpaqa_lama_uhn: T-REx-UHN, LAMA's T-REx without the facts guessable from the subject's name."""

import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import uhn

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    kept, dropped = uhn.filter_uhn(
        facts, scorer, dict(snakemake.params.place_nouns), snakemake.params.top_k, snakemake.params.lowercase
    )
    log.info(
        "T-REx-UHN: %d of %d facts (the person-name filter read %s)", len(kept), len(facts), snakemake.params.model
    )
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(kept, snakemake.output.facts, contracts.FACTS)
