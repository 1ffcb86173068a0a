# ParaRel's patterns (data/pattern_data/graphs_json of github.com/yanaiela/pararel at a pinned
# commit, or a local copy) as the prompt set pararel, probed, selected and measured for
# consistency like every other set when lpaqa.prompt_sets lists it.


rule lpaqa_download_pararel:
    output:
        "resources/lpaqa/pararel.tar.gz",
    log:
        "logs/lpaqa/download/pararel.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=LPAQA["pararel"]["release"],
    script:
        "../../scripts/shared/download.py"


rule lpaqa_unpack_pararel:
    input:
        archive=rules.lpaqa_download_pararel.output[0],
        checksums=pararel_checksums(),
        code=code("lpaqa/lpaqa_unpack_pararel"),
    output:
        directory("resources/lpaqa/pararel"),
    log:
        "logs/lpaqa/download/unpack_pararel.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_unpack_pararel.py"


rule lpaqa_pararel_prompts:
    input:
        patterns=pararel_patterns(),
        data=lama_data(),
        code=code("lpaqa/lpaqa_pararel_prompts"),
    output:
        prompts=LPAQA_PROMPTS.format(prompt_set="pararel"),
        dropped="results/lpaqa/release/pararel.dropped.csv",
    log:
        "logs/lpaqa/prompts/pararel.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        google_re_relations=settings(LPAQA["google_re_relations"]),
    script:
        "../../scripts/lpaqa/lpaqa_pararel_prompts.py"


localrules:
    lpaqa_download_pararel,
    lpaqa_unpack_pararel,
    lpaqa_pararel_prompts,
