"""Rule lpaqa_score_tables: every run's (a model under a score: mask, next_token, statement) test
P@1 of Majority, Top-1, Top-3, Top-5, Opti and Oracle per prompt set, and the prompts whose [Y] is
not at the end (the next-token score drops their right context)."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa.tables import (
    candidate_set_sizes,
    declared_answer_spaces,
    right_context_counts,
    score_columns,
    score_summary,
    shown_columns,
)
from knowprobe.scoring.start_token import start_token_of
from knowprobe.tables import to_latex, to_markdown

with rule_logging(snakemake.log[0]) as log:
    runs = {run: tuple(pair) for run, pair in snakemake.params.runs}
    results = pd.concat(
        [contracts.read(path, contracts.RESULTS) for path in [*snakemake.input.majority, *snakemake.input.selection]],
        ignore_index=True,
    )
    # the size of the candidate set each row's facts were ranked in (the run's vocabulary, or C_r)
    vocab_sizes = {run: len(pd.read_parquet(path)) for run, path in zip(runs, snakemake.input.vocab)}
    spaces = declared_answer_spaces(snakemake.params.answer_space)
    results["candidates"] = candidate_set_sizes(results, runs, vocab_sizes, spaces)
    table = score_summary(results, runs)
    # the token each causal run's probe read before every prompt (docs/scoring.md, "The start token")
    starts = {
        run: start_token_of(path, setting)
        for (run, setting), path in zip(snakemake.params.start_tokens, snakemake.input.models)
    }
    if not table.empty:
        table.insert(int(table.columns.get_loc("score")) + 1, "start token", table["run"].map(starts).fillna("-"))
    write_csv(table, snakemake.output.csv)
    columns = ["run", "score", "start token", "prompt_set", "method", *shown_columns(table)]
    markdown = to_markdown(table, columns)
    log.info("test P@1 (%%) of every run:\n%s", markdown)
    write_text(markdown, snakemake.output.markdown)
    caption = (
        "Test P@1 (%) of every LPAQA run, a model under one score (mask, next_token, statement), "
        "per prompt set and method."
    )
    write_text(
        to_latex(table, ["run", "score", "prompt_set", "method", *score_columns(table)], caption=caption),
        snakemake.output.latex,
    )
    counts = []
    for name, path in zip(snakemake.params.prompt_sets, snakemake.input.prompts):
        prompts = contracts.read(path, contracts.PROMPTS)
        counts.append(right_context_counts(prompts).assign(prompt_set=name))
    right = pd.concat(counts, ignore_index=True)[["prompt_set", "relation", "prompts", "not_at_end"]]
    totals = right.groupby("prompt_set", sort=False)[["prompts", "not_at_end"]].sum()
    log.info("prompts whose [Y] is not at the end (the next-token score drops what follows):\n%s", totals)
    write_csv(right, snakemake.output.right_context)
