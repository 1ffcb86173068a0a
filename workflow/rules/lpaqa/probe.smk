# The probe (a GPU rule: on a cluster it goes to a GPU node; locally `--resources gpu=N` caps
# how many run at once) and P@1 of every prompt, and the Majority baseline.


rule lpaqa_probe:
    input:
        facts=rules.lpaqa_filter_facts.output.facts,
        prompts=LPAQA_PROMPTS,
        candidates=rules.lpaqa_candidate_ids.output[0],
        model=model_input,
        code=code("lpaqa_probe"),
    output:
        "results/lpaqa/probe/{model}/{prompt_set}/{dataset}/{split}.parquet",
    log:
        "logs/lpaqa/probe/{model}/{prompt_set}/{dataset}/{split}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=scoring_settings(),
        top_k=LPAQA["probe"]["top_k"],
    script:
        "../../scripts/lpaqa_probe.py"


rule lpaqa_evaluate:
    input:
        probe=rules.lpaqa_probe.output[0],
        code=code("lpaqa_evaluate"),
    output:
        "results/lpaqa/metrics/{model}/{prompt_set}/{dataset}/{split}.parquet",
    log:
        "logs/lpaqa/evaluate/{model}/{prompt_set}/{dataset}/{split}.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa_evaluate.py"


rule lpaqa_majority:
    input:
        facts=rules.lpaqa_filter_facts.output.facts,
        code=code("lpaqa_majority"),
    output:
        "results/lpaqa/majority/{model}/{dataset}/{split}.parquet",
    log:
        "logs/lpaqa/majority/{model}/{dataset}/{split}.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa_majority.py"


localrules:
    lpaqa_evaluate,
    lpaqa_majority,
