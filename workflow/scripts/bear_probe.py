"""Rule bear_probe: one model's statement score of every candidate answer of every BEAR instance
under every template, and what the tables need to know of the model (family, kind, parameters)."""

import json
import time

import torch

from knowprobe import contracts, scoring
from knowprobe.bear import probe
from knowprobe.io import atomic_path, rule_logging

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    relations = contracts.read(snakemake.input.relations, contracts.BEAR_RELATIONS)
    instances = contracts.read(snakemake.input.instances, contracts.BEAR_INSTANCES)
    model, kind, options = snakemake.wildcards.model, snakemake.params.kind, snakemake.params.bear_scoring
    # causal LMs: BOS before every statement, whether or not the tokenizer adds it (lm-pub-quiz's
    # ensure_bos_token_added=True)
    scorer = scoring.load(
        snakemake.input.model, kind, scoring.ScoringSettings(**snakemake.params.scoring), start_token=True
    )
    statements = probe.statements(relations, instances, options["capitalize"])
    log.info(
        "%s (%s): %d statements (%d relations, %d instances, their templates and answers)",
        model,
        kind,
        len(statements),
        len(relations),
        len(instances),
    )
    started = time.perf_counter()
    scores = probe.score(scorer, model, statements, options["pll"], options["conditional"])
    log.info("scored in %.1f s", time.perf_counter() - started)
    contracts.write(scores, snakemake.output.scores, contracts.BEAR_SCORES)
    info = {
        "model": model,
        "kind": kind,
        "hub_id": snakemake.params.hub_id,
        "family": scorer.model.config.model_type,
        "parameters": int(sum(p.numel() for p in scorer.model.parameters())),
    }
    with atomic_path(snakemake.output.model) as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
