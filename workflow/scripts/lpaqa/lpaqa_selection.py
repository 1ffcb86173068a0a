"""Rule lpaqa_selection: Top-1, Top-K (log-linear, linear), Opti and Oracle (and for the sets of
lpaqa.backward, Opti over the top-B objects with and without backward features) for every prompt
set of one run (a model under a score), fitted on the train split of T-REx-train and evaluated on
its dev split, the test sets and T-REx-UHN, from the probe's stored hidden states (the model's
encoder does not run) or statement scores (no model runs)."""

import pandas as pd
import torch

from knowprobe import contracts
from knowprobe.io import KnowprobeError, rule_logging
from knowprobe.lpaqa import probe, selection, trex_train

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    settings = selection.SelectionSettings(
        max_k=snakemake.params.max_k, opti=selection.OptiSettings(**snakemake.params.opti)
    )
    # the statement score: the probe kept scores over C_r; else only the LM head runs, on the kept hidden states
    candidate_logprobs, column_of = probe.stored_candidate_logprobs(
        snakemake.params.score,
        snakemake.input.model,
        snakemake.params.kind,
        snakemake.params.scoring,
        snakemake.input.candidates,
    )

    facts = contracts.read(snakemake.input.trex_train, contracts.FACTS)
    train_ids = set(trex_train.split(facts, snakemake.params.train_share, snakemake.params.split_seed)[0]["fact_id"])
    uhn_ids = set(contracts.read(snakemake.input.uhn, contracts.FACTS)["fact_id"]) if snakemake.input.uhn else None

    model = snakemake.wildcards.model
    for prompt_set in snakemake.params.prompt_sets:
        with_backward = prompt_set in snakemake.params.backward_sets
        log.info(
            "%s%s:",
            prompt_set,
            f" (with backward features of the top {snakemake.params.backward_top})" if with_backward else "",
        )
        predicted, prompt_rows = [], []
        for dataset in snakemake.params.datasets:
            probes, backward = {}, {} if with_backward else None
            for split in ("test", "train_dev"):
                name = f"{prompt_set}/{dataset}_{split}"
                probes[split] = selection.ProbeSplit.read(snakemake.input[name], snakemake.input[f"{name}_hidden"])
                if with_backward:
                    path = snakemake.input[f"{prompt_set}/backward_{dataset}_{split}"]
                    backward[split] = contracts.read(path, contracts.BACKWARD)
            splits = selection.relation_splits(
                dataset,
                probes,
                train_ids,
                candidate_logprobs,
                column_of,
                uhn_ids if dataset == "trex" else None,
                backward,
                snakemake.params.backward_top,
            )
            for part in splits:
                table, stats = selection.select_relation(
                    part.relation,
                    part.train,
                    part.evaluated,
                    part.prompts["rank"].to_numpy(),
                    settings,
                    selection.relation_key(part.relation),
                    part.backward,
                )
                predicted.append(table.assign(relation=part.relation))
                prompt_rows.append(
                    part.prompts.rename(columns={"rank": "set_rank"}).assign(
                        dataset=dataset, relation=part.relation, **stats
                    )
                )
        if not predicted:
            raise KnowprobeError(f"prompt set {prompt_set} has no prompt for any relation of the datasets")
        predicted = pd.concat(predicted, ignore_index=True)
        results = selection.results_table(predicted)
        per_fact = predicted[predicted["split"] == "test"].drop(columns="split")
        per_fact = per_fact.assign(model=model, prompt_set=prompt_set)
        results = results.assign(model=model, fitted_on=model, prompt_set=prompt_set)
        prompt_table = pd.concat(prompt_rows, ignore_index=True).assign(model=model, prompt_set=prompt_set)
        summary = results[results["split"] == "test"].groupby(["dataset", "method"])["micro"].mean()
        main = [
            m
            for m in summary.index.get_level_values(1).unique()
            if not m.startswith("Top") or m in ("Top1", "Top3", "Top5")
        ]
        log.info("test micro P@1 averaged over relations:\n%s", summary.unstack(0).loc[main].round(3).to_string())
        contracts.write(results, snakemake.output[f"{prompt_set}/results"], contracts.RESULTS)
        contracts.write(prompt_table, snakemake.output[f"{prompt_set}/prompts"], contracts.PROMPT_SELECTION)
        contracts.write(per_fact, snakemake.output[f"{prompt_set}/facts"], contracts.METHOD_FACTS)
