"""Rule comps_probe: one model's log p(property phrase | prefix) of both prefixes of every pair,
and what the tables need to know of the model (family, kind, parameters)."""

import json

import torch

from knowprobe import contracts, scoring
from knowprobe.comps import probe
from knowprobe.io import atomic_path, rule_logging

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    stimuli = contracts.read(snakemake.input.stimuli, contracts.COMPS_STIMULI)
    scorer = scoring.load(
        snakemake.input.model,
        snakemake.params.kind,
        probe.scoring_settings(snakemake.params.scoring, snakemake.params.dtype),
        start_token=snakemake.params.start_token,
    )
    log.info("%s: %d pairs (%s)", snakemake.wildcards.model, len(stimuli), stimuli["subset"].value_counts().to_dict())
    scores = probe.score(scorer, snakemake.wildcards.model, stimuli, snakemake.params.within_word_l2r)
    contracts.write(scores, snakemake.output.scores, contracts.COMPS_SCORES)
    info = {
        "model": snakemake.wildcards.model,
        "kind": snakemake.params.kind,
        "family": scorer.model.config.model_type,
        "parameters": int(sum(p.numel() for p in scorer.model.parameters())),
    }
    with atomic_path(snakemake.output.model) as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
