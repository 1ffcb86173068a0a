"""Rule lpaqa_mine_prompts: middle-word and dependency-path prompts, filtered, ranked, T per relation."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import KnowprobeError, rule_logging, write_csv, write_text
from knowprobe.lpaqa import distant, mining
from knowprobe.tables import to_markdown

with rule_logging(snakemake.log[0]) as log:
    matches = pd.concat(
        [contracts.read(path, contracts.MATCHES) for path in snakemake.input.matches], ignore_index=True
    )
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    covered = distant.coverage(facts, matches)
    write_csv(covered, snakemake.output.coverage)
    for row in covered[covered["facts_with_sentence"] == 0].itertuples():
        log.warning("%s: no sentence mentions both ends of any of its %d T-REx-train facts", row.relation, row.facts)
    if matches.empty:
        raise KnowprobeError(
            f"no Wikipedia sentence mentions both the subject and the object of any of the {len(facts)} "
            "T-REx-train facts: is the Wikipedia dump the right one, and are the entities' labels English?"
        )
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
    for relation in sorted(set(matches["relation"]) - set(mine["relation"])):
        reasons = dropped[dropped["relation"] == relation]
        log.warning(
            "%s: no mined prompt from its %d matched sentences (dropped: %s)",
            relation,
            int((matches["relation"] == relation).sum()),
            ", ".join(f"{k}:{r} {n}" for k, r, n in zip(reasons["kind"], reasons["reason"], reasons["n"])),
        )
    if mine.empty:
        raise KnowprobeError(
            f"no prompt mined from {len(matches)} matched sentences (dropped: {mining.drop_totals(dropped)}); "
            "see mining.max_words and the sentences in results/lpaqa/mining/matches.parquet"
        )
    contracts.write(matches, snakemake.output.matches, contracts.MATCHES)
    contracts.write(ranked, snakemake.output.ranked, contracts.MINED)
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(mining.as_prompt_set(mine), snakemake.output.mine, contracts.PROMPTS)
    contracts.write(mining.as_prompt_set(mid), snakemake.output.mine_mid, contracts.PROMPTS)
    kinds = "middle-word and dependency-path" if nlp is not None else "middle-word only (mining.dependency: false)"
    write_text(f"Mined prompts, {kinds}; T={snakemake.params.top}.\n\n" + to_markdown(mine), snakemake.output.table)
