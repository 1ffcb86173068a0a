"""Rule lpaqa_mine_prompts: middle-word and dependency-path prompts, filtered, ranked, T per relation."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa import distant, mining
from knowprobe.tables import to_markdown

with rule_logging(snakemake.log[0]) as log:
    matches = pd.concat(
        [contracts.read(path, contracts.MATCHES) for path in snakemake.input.matches], ignore_index=True
    )
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    covered = distant.coverage(facts, matches)
    write_csv(covered, snakemake.output.coverage)
    mining.check_matches(covered, len(facts))
    nlp = None
    if snakemake.params.dependency:
        if snakemake.params.gpu:
            import spacy

            spacy.require_gpu()
        nlp = mining.load_spacy(snakemake.params.spacy_model)
        log.info("parsing %d matched sentences with %s", len(matches), snakemake.params.spacy_model)
    else:
        log.warning("mining.dependency is false: middle-word prompts only, no dependency-path prompts")
    candidates, dropped = mining.mine(
        matches, snakemake.params.top, nlp, snakemake.params.batch_size, snakemake.params.max_words
    )
    counted = mining.count(candidates)
    ranked = counted.groupby(["relation", "source"], sort=False).head(snakemake.params.top).reset_index(drop=True)
    mine = mining.merge(counted, snakemake.params.top)
    mid = ranked[ranked["source"] == "mid"]
    log.info(
        "%d matches -> %d candidate prompts -> %d kept (T=%d); dropped: %s",
        len(matches),
        len(candidates),
        len(mine),
        snakemake.params.top,
        mining.drop_totals(dropped) or "none",
    )
    mining.check_mined(mine, matches, dropped)
    contracts.write(matches, snakemake.output.matches, contracts.MATCHES)
    contracts.write(ranked, snakemake.output.ranked, contracts.MINED)
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(mining.as_prompt_set(mine), snakemake.output.mine, contracts.PROMPTS)
    contracts.write(mining.as_prompt_set(mid), snakemake.output.mine_mid, contracts.PROMPTS)
    kinds = "middle-word and dependency-path" if nlp is not None else "middle-word only (mining.dependency: false)"
    write_text(f"Mined prompts, {kinds}; T={snakemake.params.top}.\n\n" + to_markdown(mine), snakemake.output.table)
