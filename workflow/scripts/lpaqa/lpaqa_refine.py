"""Rule lpaqa_refine: LPAQA's LM-aware prompt refinement (Table 14): every prompt of a prompt set
refined by mask-predict hill climbing on its relation's T-REx-train facts, as the prompt set refined."""

import pandas as pd
import torch

from knowprobe import contracts, scoring
from knowprobe.io import progress, rule_logging, write_csv
from knowprobe.lpaqa import refine
from knowprobe.prompts import prompt_table

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    scorer = scoring.load(snakemake.input.model, "masked", scoring.ScoringSettings(**snakemake.params.scoring))
    prompts = contracts.read(snakemake.input.prompts, contracts.PROMPTS)
    facts = contracts.read(snakemake.input.facts, contracts.MODEL_FACTS)
    allowed = refine.word_tokens(scorer.tokenizer)
    rows, refined = [], []
    for prompt in progress(list(prompts.itertuples(index=False)), desc="refine", unit="prompt"):
        relation_facts = facts[facts["relation"] == prompt.relation].head(snakemake.params.max_facts)
        result = refine.refine_prompt(scorer, prompt.template, relation_facts, allowed, snakemake.params.max_rounds)
        rows.append({"relation": prompt.relation, **vars(result)})
        refined.append(
            {
                "relation": prompt.relation,
                "template": result.refined,
                "source": f"refined-{prompt.source}",
                "rank": prompt.rank,
                "score": float(result.changed_tokens),
            }
        )
    details = pd.DataFrame(rows)
    table = prompt_table(refined).drop_duplicates(["relation", "template"], keep="first").reset_index(drop=True)
    unchanged = int((details["template"] == details["refined"]).sum()) if len(details) else 0
    log.info(
        "%d prompts refined on up to %d facts each: %d changed, %d unchanged, %d duplicates of another "
        "refined prompt of their relation dropped; %d facts left out whose filled prompt tokenized the "
        "template differently",
        len(details),
        snakemake.params.max_facts,
        len(details) - unchanged,
        unchanged,
        len(refined) - len(table),
        int(details["skipped_facts"].sum()) if len(details) else 0,
    )
    write_csv(details, snakemake.output.details)
    contracts.write(table, snakemake.output.prompts, contracts.PROMPTS)
