# Candidate vocabularies (LAMA's common vocabulary as single tokens of each model) and LAMA's
# per-model fact filter, for every dataset split.


rule lpaqa_candidate_words:
    input:
        common=common_vocab(),
        models=[model_dir(name) for name in lpaqa_vocab_models()] if LPAQA["vocab"]["mode"] == "intersection" else [],
        code=code("lpaqa/lpaqa_candidate_words"),
    output:
        "results/lpaqa/vocab/words.txt",
    log:
        "logs/lpaqa/vocab/words.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        mode=LPAQA["vocab"]["mode"],
        models=lpaqa_vocab_models(),
        kinds=[config["models"][name]["kind"] for name in lpaqa_vocab_models()],
    script:
        "../../scripts/lpaqa/lpaqa_candidate_words.py"


rule lpaqa_candidate_ids:
    input:
        words=[] if LPAQA["vocab"]["mode"] == "model" else rules.lpaqa_candidate_words.output[0],
        model=lpaqa_model_input,
        code=code("lpaqa/lpaqa_candidate_ids"),
    output:
        "results/lpaqa/vocab/{model}.parquet",
    log:
        "logs/lpaqa/vocab/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        mode=LPAQA["vocab"]["mode"],
        kind=lambda wildcards: lpaqa_kind(wildcards.model),
    script:
        "../../scripts/lpaqa/lpaqa_candidate_ids.py"


rule lpaqa_filter_facts:
    input:
        facts=LPAQA_FACTS,
        candidates=rules.lpaqa_candidate_ids.output[0],
        model=lpaqa_model_input,
        code=code("lpaqa/lpaqa_filter_facts"),
    output:
        facts="results/lpaqa/filtered/{model}/{dataset}/{split}.parquet",
        dropped="results/lpaqa/filtered/{model}/{dataset}/{split}.dropped.csv",
        # each relation's objects before the run's own draw: C_r of its statement score
        objects="results/lpaqa/filtered/{model}/{dataset}/{split}.objects.json",
        # and its most frequent object then: what the run's Majority baseline predicts
        majority="results/lpaqa/filtered/{model}/{dataset}/{split}.majority.json",
    log:
        "logs/lpaqa/filter_facts/{model}/{dataset}/{split}.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        kind=lambda wildcards: lpaqa_kind(wildcards.model),
        score=lambda wildcards: lpaqa_score(wildcards.model),
        sample=lambda wildcards: lpaqa_sample(wildcards.model),
    script:
        "../../scripts/lpaqa/lpaqa_filter_facts.py"


localrules:
    lpaqa_candidate_words,
    lpaqa_candidate_ids,
    lpaqa_filter_facts,
