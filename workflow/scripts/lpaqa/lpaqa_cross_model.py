"""Rule lpaqa_cross_model: LPAQA's Tables 12 and 13, the prompt ranking and Opti weights learned on
one model (fitted_on) applied to another model's probe outputs, for every generated prompt set."""

import numpy as np
import pandas as pd
import torch

from knowprobe import contracts, scoring
from knowprobe.io import KnowprobeError, rule_logging
from knowprobe.lpaqa import selection

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    model, fitted_on = snakemake.wildcards.model, snakemake.wildcards.fitted_on
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    candidate_ids = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)["token_id"].to_numpy()
    column_of = {int(token): column for column, token in enumerate(candidate_ids)}

    def candidate_logprobs(hidden):
        return scorer.candidate_logprobs_from_hidden(hidden, candidate_ids)

    # the dev split is not evaluated here: only the test sets are
    results = []
    for prompt_set in snakemake.params.prompt_sets:
        fitted = contracts.read(snakemake.input[f"fitted_{prompt_set}"], contracts.PROMPT_SELECTION)
        for dataset in snakemake.params.datasets:
            name = f"{prompt_set}_{dataset}_test"
            split = selection.ProbeSplit.read(snakemake.input[name], snakemake.input[f"{name}_hidden"])
            predicted = []
            for relation in sorted(split.relations()):
                data, prompts = split.relation_data(relation, candidate_logprobs, column_of)
                theirs = fitted[(fitted["dataset"] == dataset) & (fitted["relation"] == relation)]
                if not np.array_equal(theirs["template"].to_numpy(), prompts["template"].to_numpy()):
                    raise KnowprobeError(
                        f"{prompt_set} {dataset} {relation}: {fitted_on}'s selection ranked other prompts than "
                        f"{model} was probed with"
                    )
                order = selection.order_of(theirs["train_rank"].to_numpy())
                methods = selection.predictions(data, order, theirs["weight"].to_numpy(), ks=[1, 3, 5])
                methods = {k: v for k, v in methods.items() if not k.endswith("-linear") and k != "Oracle"}
                predicted.append(
                    selection.long_table({(dataset, "test"): data.facts}, {(dataset, "test"): methods}).assign(
                        relation=relation
                    )
                )
            if predicted:
                frame = selection.results_table(pd.concat(predicted, ignore_index=True))
                results.append(frame.assign(model=model, fitted_on=fitted_on, prompt_set=prompt_set))
                opti = frame[frame["method"] == "Opti"]["micro"].mean()
                log.info("%s on %s, weights of %s: Opti micro P@1 %.3f", prompt_set, dataset, fitted_on, opti)
    if not results:
        raise KnowprobeError(f"no prompt set has test facts to apply {fitted_on}'s weights to")
    contracts.write(pd.concat(results, ignore_index=True), snakemake.output[0], contracts.RESULTS)
