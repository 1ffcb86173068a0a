"""Rule lpaqa_calibration: one model's calibration on every test set (the calibrated prompt set's
Top-1 prompt of each relation), before and after temperature scaling fitted on T-REx-train's train
split, with the reliability diagram's bins."""

import numpy as np
import pandas as pd
import torch

from knowprobe import contracts, scoring, uncertainty
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import calibration, selection, trex_train

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    candidate_ids = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)["token_id"].to_numpy()
    column_of = {int(token): column for column, token in enumerate(candidate_ids)}
    prompts = contracts.read(snakemake.input.prompts, contracts.PROMPT_SELECTION)
    facts = contracts.read(snakemake.input.trex_train, contracts.FACTS)
    train_ids = set(trex_train.split(facts, snakemake.params.train_share, snakemake.params.split_seed)[0]["fact_id"])

    def candidate_logprobs(hidden):
        return scorer.candidate_logprobs_from_hidden(hidden, candidate_ids)

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
    scores, gold = (np.concatenate(train_scores), np.concatenate(train_gold)) if train_scores else (None, None)
    temperature = uncertainty.fit_temperature(scores, gold) if scores is not None and len(gold) else 1.0
    log.info("temperature %.3f fitted on %d train facts", temperature, 0 if gold is None else len(gold))
    del train_scores, scores

    rows, bins = [], []
    for dataset in snakemake.params.datasets:
        before, after = calibration.Collected(), calibration.Collected()
        for _relation, data, top in relations(dataset, "test"):
            before.add(data.logprobs[top], data.gold)
            after.add(data.logprobs[top], data.gold, temperature)
        for label, collected, t in [("none", before, 1.0), ("fitted", after, temperature)]:
            summary, table = collected.summary(snakemake.params.bins)
            key = {"model": snakemake.wildcards.model, "dataset": dataset, "scaling": label, "temperature": t}
            rows.append({**key, **summary})
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
