"""Rule mine_prompts: middle-word and dependency-path prompts, filtered, ranked, T per relation."""

import pandas as pd

from knowprobe import mining
from knowprobe.io import read_parquet, rule_logging, write_csv, write_parquet, write_text
from knowprobe.tables import to_markdown

with rule_logging(snakemake.log[0]) as log:
    matches = pd.concat([read_parquet(path) for path in snakemake.input.matches], ignore_index=True)
    nlp = None
    if snakemake.params.dependency:
        if snakemake.params.gpu:
            import spacy

            spacy.require_gpu()
        nlp = mining.load_spacy(snakemake.params.spacy_model)
        log.info("parsing %d matched sentences with %s", len(matches), snakemake.params.spacy_model)
    else:
        log.warning("mining.dependency is false: middle-word prompts only, no dependency-path prompts")
    candidates, dropped = mining.mine(matches, snakemake.params.top, nlp, snakemake.params.batch_size)
    ranked = mining.rank(candidates, snakemake.params.top)
    mine = mining.merge(ranked, snakemake.params.top)
    mid = ranked[ranked["source"] == "mid"]
    log.info(
        "%d matches -> %d candidate prompts -> %d kept (T=%d); dropped: %s",
        len(matches),
        len(candidates),
        len(mine),
        snakemake.params.top,
        dict(dropped) or "none",
    )
    write_parquet(matches, snakemake.output.matches)
    write_parquet(ranked, snakemake.output.ranked)
    write_csv(
        pd.DataFrame(
            [{"kind": k.split(":")[0], "reason": k.split(":")[1], "n": n} for k, n in sorted(dropped.items())],
            columns=["kind", "reason", "n"],
        ),
        snakemake.output.dropped,
    )
    write_parquet(mining.as_prompt_set(mine), snakemake.output.mine)
    write_parquet(mining.as_prompt_set(mid), snakemake.output.mine_mid)
    kinds = "middle-word and dependency-path" if nlp is not None else "middle-word only (mining.dependency: false)"
    write_text(f"Mined prompts, {kinds}; T={snakemake.params.top}.\n\n" + to_markdown(mine), snakemake.output.table)
