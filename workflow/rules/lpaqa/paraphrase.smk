# Back-translation paraphrasing (LPAQA section 3.2): seeds -> German (B beams) -> English
# (B beams each) -> the top T distinct candidates with intact placeholders, as prompt sets
# man_para (seeds: the manual prompts) and mine_para (seeds: each relation's best mined
# prompt on T-REx-train, which needs the mined prompts probed on the train split).


rule lpaqa_download_translator:
    output:
        directory("resources/translators/{direction}"),
    log:
        "logs/lpaqa/download/translator_{direction}.log",
    wildcard_constraints:
        direction="forward|backward",
    retries: 2
    conda:
        "../../../envs/paraphrase.yaml"
    params:
        hub_id=lambda wildcards: LPAQA["paraphrase"][wildcards.direction]["hub_id"],
        revision=lambda wildcards: LPAQA["paraphrase"][wildcards.direction]["revision"],
    script:
        "../../scripts/shared/download_model.py"


rule lpaqa_train_demo_translator:
    input:
        corpus_templates=lambda wildcards: LPAQA["paraphrase"][wildcards.direction]["train"]["corpus_templates"],
        prompts=rules.lpaqa_manual_prompts.output[0],
        code=code("lpaqa/lpaqa_train_demo_translator"),
    output:
        directory("results/translators/{direction}"),
    log:
        "logs/lpaqa/train_demo_translator/{direction}.log",
    wildcard_constraints:
        direction="forward|backward",
    conda:
        "../../../envs/paraphrase.yaml"
    threads: LPAQA["paraphrase"]["threads"]
    params:
        settings=lambda wildcards: settings(LPAQA["paraphrase"][wildcards.direction]["train"]),
        stand_ins=[LPAQA["paraphrase"]["subject_stand_in"], LPAQA["paraphrase"]["object_stand_in"]],
    script:
        "../../scripts/lpaqa/lpaqa_train_demo_translator.py"


rule lpaqa_select_paraphrase_seeds:
    input:
        mined=rules.lpaqa_mine_prompts.output.mine,
        train_metrics=lambda wildcards: expand(
            rules.lpaqa_evaluate.output[0],
            model=paraphrase_seed_model(),
            prompt_set="mine",
            dataset="trex",
            split="train_dev",
        )[0],
        code=code("lpaqa/lpaqa_select_paraphrase_seeds"),
    output:
        "results/lpaqa/paraphrase/seeds/mine.parquet",
    log:
        "logs/lpaqa/paraphrase/seeds_mine.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_select_paraphrase_seeds.py"


rule lpaqa_paraphrase:
    input:
        unpack(paraphrase_input),
    output:
        candidates="results/lpaqa/paraphrase/{prompt_set}/candidates.parquet",
        paraphrases="results/lpaqa/paraphrase/{prompt_set}/paraphrases.parquet",
        stats="results/lpaqa/paraphrase/{prompt_set}/stats.csv",
        prompts="results/lpaqa/prompts/{prompt_set}.parquet",
    log:
        "logs/lpaqa/paraphrase/{prompt_set}.log",
    wildcard_constraints:
        prompt_set="man_para|mine_para",
    conda:
        "../../../envs/fairseq.yaml" if LPAQA["paraphrase"]["backend"] == "fairseq" else "../../../envs/paraphrase.yaml"
    threads: LPAQA["paraphrase"]["threads"]
    resources:
        gpu=1,
    params:
        seed_set=lambda wildcards: PARAPHRASE_SEEDS[wildcards.prompt_set],
        backend=LPAQA["paraphrase"]["backend"],
        fairseq_models=[LPAQA["paraphrase"]["fairseq_forward"], LPAQA["paraphrase"]["fairseq_backward"]],
        settings=paraphrase_settings(),
    script:
        "../../scripts/lpaqa/lpaqa_paraphrase.py"


rule lpaqa_paraphrase_stats:
    input:
        stats=expand(rules.lpaqa_paraphrase.output.stats, prompt_set=PARAPHRASE_SETS),
        code=code("lpaqa/lpaqa_paraphrase_stats"),
    output:
        report_table(
            "results/lpaqa/tables/paraphrase_stats.csv",
            caption="lpaqa/paraphrase_stats.rst",
            category="LPAQA",
            subcategory="Prompts",
            label="paraphrase statistics",
        ),
    log:
        "logs/lpaqa/paraphrase/stats.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_paraphrase_stats.py"


localrules:
    lpaqa_download_translator,
    lpaqa_select_paraphrase_seeds,
    lpaqa_paraphrase_stats,
