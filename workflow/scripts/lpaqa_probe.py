"""Rule lpaqa_probe: log-probs of the candidates for every (fact, prompt) of one model and prompt
set, on every dataset split, and each pair's final hidden state at the mask (the model is loaded
once for all splits)."""

import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging
from knowprobe.lpaqa import probe

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    prompts = contracts.read(snakemake.input.prompts, contracts.PROMPTS)
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    for dataset, split in snakemake.params.parts:
        name = f"{dataset}_{split}"
        used = (
            probe.prompts_for(prompts, dict(snakemake.params.google_re_relations))
            if dataset == "google_re"
            else prompts
        )
        log.info("%s, %s:", dataset, split)
        facts = contracts.read(snakemake.input[name], contracts.MODEL_FACTS)
        table, hidden = probe.probe(facts, used, scorer, candidates, snakemake.params.top_k)
        log.info("%d (fact, prompt) pairs; hidden states %s, %s", table.num_rows, tuple(hidden.shape), hidden.dtype)
        contracts.write(table, snakemake.output[name], contracts.PROBE)
        probe.write_hidden(hidden, snakemake.output[f"{name}_hidden"], table.num_rows)
