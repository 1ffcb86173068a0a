# LPAQA's released prompts (prompt/mine, prompt/paraphrase, prompt/manual_paraphrase of
# github.com/jzbjyb/LPAQA at a pinned commit, or a local copy) as the prompt sets lpaqa_mine,
# lpaqa_paraphrase and lpaqa_manual_paraphrase.


rule lpaqa_download_release:
    output:
        "resources/lpaqa/release.tar.gz",
    log:
        "logs/lpaqa/download/release.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=LPAQA["release"],
    script:
        "../../scripts/shared/download.py"


rule lpaqa_unpack_release:
    input:
        archive=rules.lpaqa_download_release.output[0],
        code=code("lpaqa/lpaqa_unpack_release"),
    output:
        directory("resources/lpaqa/prompt"),
    log:
        "logs/lpaqa/download/unpack_release.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_unpack_release.py"


rule lpaqa_release_prompts:
    input:
        release=lpaqa_release(),
        data=lama_data(),
        code=code("lpaqa/lpaqa_release_prompts"),
    output:
        prompts="results/lpaqa/prompts/{prompt_set}.parquet",
        dropped="results/lpaqa/release/{prompt_set}.dropped.csv",
    log:
        "logs/lpaqa/prompts/{prompt_set}.log",
    wildcard_constraints:
        prompt_set="lpaqa_mine|lpaqa_paraphrase|lpaqa_manual_paraphrase",
    conda:
        "../../../envs/lama.yaml"
    params:
        google_re_relations=settings(LPAQA["google_re_relations"]),
    script:
        "../../scripts/lpaqa/lpaqa_release_prompts.py"


localrules:
    lpaqa_download_release,
    lpaqa_unpack_release,
    lpaqa_release_prompts,
