"""Rule lpaqa_multitoken_tables: accuracy on the multi-token facts' test half per model, method and
prompt set (Top-1), macro over relations and micro, by the gold object's token count, each with its
95% cluster bootstrap interval; paired comparisons of the methods (closed candidate set and open
answers) and of the models on the same facts, McNemar per relation and Holm; and the fact set's
size per model, relation and token count."""

import pandas as pd

from knowprobe import contracts, uncertainty
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa import multitoken_tables
from knowprobe.lpaqa.trex_train import split
from knowprobe.tables import left_out_note, to_latex, to_markdown, write_table

with rule_logging(snakemake.log[0]) as log:
    settings = uncertainty.Settings(**snakemake.params.uncertainty)
    tables, rows = [], []
    for model, kind, predictions, selection in zip(
        snakemake.params.models, snakemake.params.kinds, snakemake.input.predictions, snakemake.input.selection
    ):
        predictions = contracts.read(predictions, contracts.MULTITOKEN_PREDICTIONS)
        selection = contracts.read(selection, contracts.MULTITOKEN_SELECTION)
        tables.append(multitoken_tables.accuracy(predictions, selection, model, kind))
        rows.append(multitoken_tables.selected_rows(predictions, selection).assign(model=model))
    rows = pd.concat(rows, ignore_index=True)
    table, shared = multitoken_tables.with_intervals(pd.concat(tables, ignore_index=True), rows, settings)
    write_csv(table, snakemake.output.csv)
    layout = multitoken_tables.accuracy_layout(table)
    how = (
        f"95% intervals of the macro accuracy: two-stage cluster bootstrap (relations, then facts), "
        f"B = {settings.bootstrap}, seed {settings.seed}; none with fewer than {settings.min_clusters} relations"
    )
    markdown = to_markdown(layout)
    log.info("accuracy (%%, exact match, macro [95%% interval] / micro (test facts)) by tokens:\n%s", markdown)
    write_text(markdown, snakemake.output.markdown)
    # what each model could not take (its probe left it out, counted by reason)
    left_out = {model: pd.read_csv(path) for model, path in zip(snakemake.params.models, snakemake.input.left_out)}
    note = left_out_note(left_out)
    if note:
        log.warning("%s", note.removeprefix(". "))
    caption = (
        "Accuracy (\\%, exact match against the label and aliases, macro over relations [95\\% interval] / micro, "
        "test facts) on the multi-token facts by the gold object's token count, each prompt set's Top-1 prompt "
        "per relation. " + how.replace("%", "\\%") + f"{note}."
    )
    write_text(to_latex(layout, caption=caption), snakemake.output.latex)
    pairs = multitoken_tables.method_pairs(table)
    summary, tests = multitoken_tables.comparisons(rows, pairs, settings, shared)
    write_table(
        snakemake.output,
        "comparisons",
        summary,
        multitoken_tables.comparison_layout(summary),
        "Paired comparisons on the multi-token facts (test half, every token count): A - B of the macro "
        "exact-match accuracy (points, the mean over relations) with its paired bootstrap interval (the same "
        "resampled facts for both), and the relations where A or B is better by McNemar's exact test on the "
        f"discordant facts at {settings.alpha:g} after Holm's correction over the relations; methods of one "
        "model and prompt set (closed candidate set: statement, mlama; open: independent, order, confidence, "
        f"generate), and each model against the next on one method. {how}.",
    )
    write_csv(tests, snakemake.output.mcnemar)
    log.info("comparisons:\n%s", to_markdown(multitoken_tables.comparison_layout(summary)))
    facts = contracts.read(snakemake.input.facts, contracts.MULTITOKEN_FACTS)
    tokens = pd.concat(
        [contracts.read(path, contracts.OBJECT_TOKENS) for path in snakemake.input.tokens], ignore_index=True
    )
    _, test = split(facts, snakemake.params.train_share, snakemake.params.seed)
    sizes = multitoken_tables.fact_sizes(facts, tokens, set(test["fact_id"]))
    log.info("the facts per model and relation by the object's tokens:\n%s", to_markdown(sizes))
    write_csv(sizes, snakemake.output.sizes)
