"""Rule lpaqa_probe: log-probs of the candidates for every (fact, prompt) of one model, prompt set and dataset split."""

import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging
from knowprobe.lpaqa import probe

with rule_logging(snakemake.log[0]):
    torch.set_num_threads(snakemake.threads)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    table = probe.probe(
        contracts.read(snakemake.input.facts, contracts.MODEL_FACTS),
        contracts.read(snakemake.input.prompts, contracts.PROMPTS),
        scorer,
        contracts.read(snakemake.input.candidates, contracts.CANDIDATES),
        snakemake.params.top_k,
    )
    contracts.write(table, snakemake.output[0], contracts.PROBE)
