"""Rule lpaqa_tables: the manual-prompt baseline (Markdown, CSV, LaTeX), per-relation results and drop counts."""

import itertools

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa.tables import (
    PER_RELATION_COLUMNS,
    candidate_set_sizes,
    declared_answer_spaces,
    score_columns,
    shown_columns,
    single_prompt_results,
    summary,
)
from knowprobe.tables import to_latex, to_markdown

with rule_logging(snakemake.log[0]) as log:
    manual = pd.concat(
        [single_prompt_results(contracts.read(p, contracts.PROMPT_METRICS), "Man") for p in snakemake.input.manual]
    )
    majority = pd.concat([contracts.read(p, contracts.RESULTS) for p in snakemake.input.majority])
    # every row is of a test split (LAMA's T-REx and Google-RE)
    per_relation = pd.concat([majority, manual], ignore_index=True)[PER_RELATION_COLUMNS]
    # the size of the candidate set each row's facts were ranked in (the run's vocabulary, or C_r)
    runs = {run: tuple(pair) for run, pair in snakemake.params.runs}
    vocab_sizes = {run: len(pd.read_parquet(path)) for run, path in zip(snakemake.params.models, snakemake.input.vocab)}
    spaces = declared_answer_spaces(snakemake.params.answer_space)
    per_relation["candidates"] = candidate_set_sizes(per_relation, runs, vocab_sizes, spaces).round().astype("Int64")
    write_csv(per_relation, snakemake.output.per_relation)
    table = summary(per_relation)
    write_csv(table, snakemake.output.csv)
    columns = ["model", "method", *shown_columns(table)]
    markdown = to_markdown(table, columns)
    log.info(
        "P@1 (%%) over %d models and %d datasets:\n%s",
        len(snakemake.params.models),
        len(snakemake.params.datasets),
        markdown,
    )
    write_text(markdown, snakemake.output.markdown)
    write_text(
        to_latex(
            table,
            ["model", "method", *score_columns(table)],
            caption="P@1 (%) of the manual prompts and the Majority baseline.",
        ),
        snakemake.output.latex,
    )
    # expand() orders the inputs model-major, as product() does
    keys = itertools.product(snakemake.params.models, snakemake.params.datasets)
    dropped = pd.concat(
        [
            pd.read_csv(path).assign(model=model, dataset=dataset)
            for (model, dataset), path in zip(keys, snakemake.input.dropped)
        ],
        ignore_index=True,
    )
    log.info(
        "facts dropped by LAMA's filter: %s",
        ", ".join(f"{reason} {n}" for reason, n in dropped.groupby("reason")["n"].sum().items()) or "none",
    )
    write_csv(dropped[["model", "dataset", "relation", "reason", "description", "n"]], snakemake.output.dropped)
