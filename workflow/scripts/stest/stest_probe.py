"""Rule stest_probe: one model's scores of every S-TEST query and its relatedness."""

import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging
from knowprobe.stest import probe

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    triples = contracts.read(snakemake.input.triples, contracts.STEST_TRIPLES)
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    few_shot, spacing, subject = snakemake.params.few_shot, snakemake.params.subject_spacing, snakemake.params.subject
    scorer = scoring.load(
        snakemake.input.model, snakemake.params.kind, scoring.ScoringSettings(**snakemake.params.scoring)
    )
    if snakemake.params.kind == "causal":
        token = probe.subject_token(scorer, subject)
        log.info(
            "a masked subject read as %s (stest.subject_token %s), %s spacing (stest.subject_spacing)",
            token,
            subject,
            spacing,
        )
    # the triples this model cannot be asked about are left out, and out of every few-shot prompt
    queries, unusable = probe.model_queries(scorer, triples, snakemake.params.relations, few_shot, spacing, subject)
    log.info("few-shot demonstrations: k=%d, seed=%d, %s draw", few_shot["k"], few_shot["seed"], few_shot["draw"])
    log.info("%s: %d triples, %d queries", snakemake.wildcards.model, len(triples), len(queries))
    scores = probe.score(scorer, snakemake.wildcards.model, triples, queries, candidates, spacing, unusable, subject)
    left_out = int((~(scores["fine_in_vocab"] & scores["coarse_in_vocab"])).sum())
    if left_out:
        log.warning("%d score rows have an object that is not a candidate of this model", left_out)
    contracts.write(scores, snakemake.output[0], contracts.STEST_SCORES)
