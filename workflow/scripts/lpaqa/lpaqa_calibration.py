"""Rule lpaqa_calibration: one run's calibration (a model under one score: mask, next_token or
statement) on every test set (the calibrated prompt set's Top-1 prompt of each relation), before and
after temperature scaling fitted on T-REx-train's train split, each measure with its 95% interval,
and the reliability diagram's bins."""

import numpy as np
import pandas as pd
import torch

from knowprobe import contracts, uncertainty
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import calibration, probe, selection, trex_train
from knowprobe.uncertainty.calibration import fit_temperature

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    score = snakemake.params.score
    settings = uncertainty.Settings(**snakemake.params.uncertainty)
    # the statement score: the probe kept scores over C_r; else only the LM head runs, on the kept hidden states
    candidate_logprobs, column_of = probe.stored_candidate_logprobs(
        snakemake.params.score,
        snakemake.input.model,
        snakemake.params.kind,
        snakemake.params.scoring,
        snakemake.input.candidates,
    )

    prompts = contracts.read(snakemake.input.prompts, contracts.PROMPT_SELECTION)
    facts = contracts.read(snakemake.input.trex_train, contracts.FACTS)
    train_ids = set(trex_train.split(facts, snakemake.params.train_share, snakemake.params.split_seed)[0]["fact_id"])

    def relations(dataset, split):
        probe = selection.ProbeSplit.read(
            snakemake.input[f"{dataset}_{split}"], snakemake.input[f"{dataset}_{split}_hidden"]
        )
        for relation in sorted(probe.relations()):
            data, _ = probe.relation_data(relation, candidate_logprobs, column_of)
            yield relation, data, calibration.top1_prompt(prompts, dataset, relation)

    # the temperature: fitted on the train split of T-REx-train (every dataset's relations that have one)
    train_scores, train_gold = [], []
    for dataset in snakemake.params.datasets:
        for relation, data, top in relations(dataset, "train_dev"):
            keep = np.flatnonzero(data.facts["fact_id"].isin(train_ids).to_numpy())
            keep = keep[calibration.train_sample(len(keep), relation)]
            train_scores.append(data.logprobs[top, keep])
            train_gold.append(data.gold[keep])
    # the statement score's C_r differ in size between relations: pad with -inf (p(c) = 0 there)
    width = max((part.shape[1] for part in train_scores), default=0)
    train_scores = [
        np.pad(part, ((0, 0), (0, width - part.shape[1])), constant_values=-np.inf) for part in train_scores
    ]
    scores, gold = (np.concatenate(train_scores), np.concatenate(train_gold)) if train_scores else (None, None)
    temperature = fit_temperature(scores, gold) if scores is not None and len(gold) else 1.0
    log.info("temperature %.3f fitted on %d train facts", temperature, 0 if gold is None else len(gold))
    del train_scores, scores

    rows, bins = [], []
    for dataset in snakemake.params.datasets:
        before, after = calibration.Collected(), calibration.Collected()
        for relation, data, top in relations(dataset, "test"):
            before.add(data.logprobs[top], data.gold, relation=relation)
            after.add(data.logprobs[top], data.gold, temperature, relation)
        for label, collected, t in [("none", before, 1.0), ("fitted", after, temperature)]:
            model = snakemake.wildcards.model
            summary, table = collected.summary(snakemake.params.bins, settings, (model, dataset, label))
            key = {"model": model, "dataset": dataset, "scaling": label, "temperature": t}
            rows.append({**key, "score": score, "distribution": calibration.SCORE_DISTRIBUTIONS[score], **summary})
            bins.append(pd.DataFrame(table).assign(**key))
            log.info(
                "%s %s: ECE %.1f, Brier %.3f, prior KL %.3f",
                dataset,
                label,
                summary["ece"],
                summary["brier"],
                summary["prior_kl"],
            )
    write_csv(pd.DataFrame(rows), snakemake.output.table)
    write_csv(pd.concat(bins, ignore_index=True), snakemake.output.bins)
