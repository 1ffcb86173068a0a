"""Rule lpaqa_multitoken_tables: accuracy on the multi-token facts' test half per model, method and
prompt set (Top-1), macro over relations and micro, by the gold object's token count; and the fact
set's size per model, relation and token count."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa import multitoken_tables
from knowprobe.lpaqa.trex_train import split
from knowprobe.tables import left_out_note, to_latex, to_markdown

with rule_logging(snakemake.log[0]) as log:
    tables = []
    for model, kind, predictions, selection in zip(
        snakemake.params.models, snakemake.params.kinds, snakemake.input.predictions, snakemake.input.selection
    ):
        tables.append(
            multitoken_tables.accuracy(
                contracts.read(predictions, contracts.MULTITOKEN_PREDICTIONS),
                contracts.read(selection, contracts.MULTITOKEN_SELECTION),
                model,
                kind,
            )
        )
    table = pd.concat(tables, ignore_index=True)
    write_csv(table, snakemake.output.csv)
    layout = multitoken_tables.accuracy_layout(table)
    markdown = to_markdown(layout)
    log.info("accuracy (%%, exact match, macro / micro (test facts)) by the gold object's tokens:\n%s", markdown)
    write_text(markdown, snakemake.output.markdown)
    # what each model could not take (its probe left it out, counted by reason)
    left_out = {model: pd.read_csv(path) for model, path in zip(snakemake.params.models, snakemake.input.left_out)}
    note = left_out_note(left_out)
    if note:
        log.warning("%s", note.removeprefix(". "))
    caption = (
        "Accuracy (\\%, exact match against the label and aliases, macro over relations / micro, test facts) "
        "on the multi-token facts by the gold object's token count, each prompt set's Top-1 prompt per relation"
        f"{note}."
    )
    write_text(to_latex(layout, caption=caption), snakemake.output.latex)
    facts = contracts.read(snakemake.input.facts, contracts.MULTITOKEN_FACTS)
    tokens = contracts.read(snakemake.input.tokens, contracts.OBJECT_TOKENS)
    _, test = split(facts, snakemake.params.train_share, snakemake.params.seed)
    sizes = multitoken_tables.fact_sizes(facts, tokens, set(test["fact_id"]))
    log.info("the facts per model and relation by the object's tokens:\n%s", to_markdown(sizes))
    write_csv(sizes, snakemake.output.sizes)
