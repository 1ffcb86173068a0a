"""Rule tables: the manual-prompt baseline (Markdown, CSV, LaTeX), per-relation results and drop counts."""

import itertools

import pandas as pd

from knowprobe import tables
from knowprobe.io import read_parquet, rule_logging, write_csv, write_text

with rule_logging(snakemake.log[0]) as log:
    manual = pd.concat([tables.single_prompt_results(read_parquet(p), "Man") for p in snakemake.input.manual])
    majority = pd.concat([read_parquet(p) for p in snakemake.input.majority])
    per_relation = pd.concat([majority, manual], ignore_index=True)[tables.PER_RELATION_COLUMNS]
    write_csv(per_relation, snakemake.output.per_relation)
    summary = tables.summary(per_relation)
    write_csv(summary, snakemake.output.csv)
    columns = ["model", "method", *tables.score_columns(summary)]
    markdown = tables.to_markdown(summary, columns)
    log.info(
        "P@1 (%%) over %d models and %d datasets:\n%s",
        len(snakemake.params.models),
        len(snakemake.params.datasets),
        markdown,
    )
    write_text(markdown, snakemake.output.markdown)
    write_text(
        tables.to_latex(summary, columns, caption="P@1 (%) of the manual prompts and the Majority baseline."),
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
