"""Rule lpaqa_backward: LPAQA's backward features (Table 15) for one model and prompt set, on every
dataset split: log P(subject | object, prompt) of each fact's B most probable objects, the subject
scored by pseudo-log-likelihood with the object filled in."""

import numpy as np
import pandas as pd
import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging
from knowprobe.lpaqa import backward, selection

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    words, token_ids = candidates["word"].to_numpy(), candidates["token_id"].to_numpy()
    column_of = {int(token): column for column, token in enumerate(token_ids)}

    def candidate_logprobs(hidden):
        return scorer.candidate_logprobs_from_hidden(hidden, token_ids)

    b = snakemake.params.top
    for dataset, split in snakemake.params.parts:
        name = f"{dataset}_{split}"
        probed = selection.ProbeSplit.read(snakemake.input[name], snakemake.input[f"{name}_hidden"])
        frames, texts, spans = [], [], []
        for relation in sorted(probed.relations()):
            data, prompts = probed.relation_data(relation, candidate_logprobs, column_of)
            columns = selection.top_b_columns(data.logprobs, b)
            frame, relation_texts, relation_spans = backward.pairs(
                relation, prompts, data.facts, columns, words, token_ids
            )
            frames.append(frame)
            texts += relation_texts
            spans += relation_spans
        columns = ["relation", "fact_id", "prompt_id", "position", "token_id"]
        rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
        log.info("%s, %s: %d (fact, prompt, object) triples, B = %d", dataset, split, len(rows), b)
        scores = scorer.span_logprob(texts, spans) if texts else np.zeros(0)
        contracts.write(rows.assign(backward_logprob=scores), snakemake.output[name], contracts.BACKWARD)
