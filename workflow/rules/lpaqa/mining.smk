# Distant supervision (per Wikipedia chunk) and prompt mining (middle-word and dependency paths).


rule lpaqa_distant_supervision:
    input:
        sentences=rules.lpaqa_wikipedia_extract.output.sentences,
        redirects=rules.lpaqa_wikipedia_redirects.output.redirects,
        entities=rules.wikidata_gather.output.entities,
        facts=rules.lpaqa_trex_train.output.facts,
        code=code("lpaqa/lpaqa_distant_supervision"),
    output:
        "results/lpaqa/mining/parts/matches-{chunk}.parquet",
    log:
        "logs/lpaqa/mining/distant-{chunk}.log",
    conda:
        "../../../envs/mining.yaml"
    resources:
        **scaled("lpaqa_distant_supervision", "sentences"),
    script:
        "../../scripts/lpaqa/lpaqa_distant_supervision.py"


rule lpaqa_mine_prompts:
    input:
        matches=expand(rules.lpaqa_distant_supervision.output[0], chunk=wikipedia_chunks()),
        facts=rules.lpaqa_trex_train.output.facts,
        code=code("lpaqa/lpaqa_mine_prompts"),
    output:
        matches="results/lpaqa/mining/matches.parquet",
        coverage=report_table(
            "results/lpaqa/mining/coverage.csv",
            caption="lpaqa/coverage.rst",
            category="LPAQA",
            subcategory="Data",
            label="T-REx-train facts found in Wikipedia, per relation",
        ),
        ranked="results/lpaqa/mining/ranked.parquet",
        dropped="results/lpaqa/mining/dropped.csv",
        mine="results/lpaqa/prompts/mine.parquet",
        mine_mid="results/lpaqa/prompts/mine_mid.parquet",
        table=report_table(
            "results/lpaqa/tables/mined_prompts.md",
            caption="lpaqa/mined_prompts.rst",
            category="LPAQA",
            subcategory="Prompts",
            label="mined prompts",
        ),
    log:
        "logs/lpaqa/mining/mine.log",
    conda:
        "../../../envs/mining.yaml"
    resources:
        **scaled("lpaqa_mine_prompts", "matches"),
        gpu=1 if LPAQA["mining"]["gpu"] else 0,
    params:
        top=LPAQA["mining"]["top"],
        dependency=LPAQA["mining"]["dependency"],
        spacy_model=LPAQA["mining"]["spacy_model"],
        max_words=LPAQA["mining"]["max_words"],
        gpu=LPAQA["mining"]["gpu"],
        batch_size=LPAQA["mining"]["batch_size"],
    script:
        "../../scripts/lpaqa/lpaqa_mine_prompts.py"


rule lpaqa_mine_man_prompts:
    input:
        mine=rules.lpaqa_mine_prompts.output.mine,
        manual=rules.lpaqa_manual_prompts.output[0],
        code=code("lpaqa/lpaqa_mine_man_prompts"),
    output:
        "results/lpaqa/prompts/mine_man.parquet",
    log:
        "logs/lpaqa/prompts/mine_man.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_mine_man_prompts.py"


localrules:
    lpaqa_mine_man_prompts,
