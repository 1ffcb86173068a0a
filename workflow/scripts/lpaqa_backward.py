"""Rule lpaqa_backward: LPAQA's backward features (Table 15) for one model and prompt set, on every
dataset split: log P(subject | object, prompt) of each fact's B most probable objects, the subject
scored by pseudo-log-likelihood with the object filled in."""

import numpy as np
import pandas as pd
import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging
from knowprobe.lpaqa import backward, metrics, probe, selection

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    words, token_ids = candidates["word"].to_numpy(), candidates["token_id"].to_numpy()
    b = snakemake.params.top
    for dataset, split in snakemake.params.parts:
        name = f"{dataset}_{split}"
        table = contracts.read(snakemake.input[name], contracts.PROBE)
        hidden = probe.read_hidden(snakemake.input[f"{name}_hidden"], len(table))
        frames, texts, spans = [], [], []
        for relation in sorted(set(table["relation"])):
            grid, prompts, facts = metrics.relation_grid(table, relation)
            logprobs = scorer.candidate_logprobs_from_hidden(hidden[torch.from_numpy(grid.ravel())], token_ids)
            columns = selection.top_b_columns(logprobs.reshape(*grid.shape, -1), b)
            frame, relation_texts, relation_spans = backward.pairs(relation, prompts, facts, columns, words, token_ids)
            frames.append(frame)
            texts += relation_texts
            spans += relation_spans
        columns = ["relation", "fact_id", "prompt_id", "position", "token_id"]
        rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
        log.info("%s, %s: %d (fact, prompt, object) triples, B = %d", dataset, split, len(rows), b)
        scores = scorer.span_logprob(texts, spans) if texts else np.zeros(0)
        contracts.write(rows.assign(backward_logprob=scores), snakemake.output[name], contracts.BACKWARD)
