"""Rule lpaqa_multitoken_probe: one model asks the multi-token facts every way of its kind (a
closed candidate set, open decoding, generation), the train half with every template of the
prompt sets and the test half with each set's Top-1, every answer judged against the gold label
and its aliases."""

import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import multitoken_probe

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    model = snakemake.wildcards.model
    facts = contracts.read(snakemake.input.facts, contracts.MULTITOKEN_FACTS)
    tokens = contracts.read(snakemake.input.tokens, contracts.OBJECT_TOKENS)
    prompt_sets = {
        name: contracts.read(snakemake.input[f"prompts/{name}"], contracts.PROMPTS)
        for name in snakemake.params.prompt_sets
    }
    scorer = scoring.load(
        snakemake.input.model, snakemake.params.kind, scoring.ScoringSettings(**snakemake.params.scoring)
    )
    predictions, selection, left_out = multitoken_probe.probe(
        facts,
        tokens[tokens["model"] == model],
        prompt_sets,
        scorer,
        snakemake.params.methods,
        multitoken_probe.AskSettings(**snakemake.params.ask),
        snakemake.params.train_share,
        snakemake.params.seed,
        snakemake.params.sample,
    )
    for (split, method), rows in predictions.groupby(["split", "method"], sort=False):
        log.info(
            "%s, %s half: %d answers, exact match %.1f%%, substring %.1f%%",
            method,
            split,
            len(rows),
            100 * rows["correct_exact"].mean(),
            100 * rows["correct_substring"].mean(),
        )
    # what this model could not take (left out, counted by reason), for the log and the tables' note
    write_csv(left_out, snakemake.output.left_out)
    contracts.write(predictions, snakemake.output.predictions, contracts.MULTITOKEN_PREDICTIONS)
    contracts.write(selection, snakemake.output.selection, contracts.MULTITOKEN_SELECTION)
