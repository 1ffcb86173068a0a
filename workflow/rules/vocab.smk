# Candidate vocabularies and LAMA's per-model fact filter.


rule candidate_words:
    input:
        unpack(candidate_words_input),
    output:
        "results/vocab/words.txt",
    log:
        "logs/vocab/words.log",
    conda:
        "../../envs/probe.yaml"
    params:
        mode=config["vocab"]["mode"],
        models=MODELS,
    script:
        "../scripts/candidate_words.py"


rule candidate_ids:
    input:
        words=[] if config["vocab"]["mode"] == "model" else "results/vocab/words.txt",
        model=model_input,
        code=code("vocab", "models"),
    output:
        "results/vocab/{model}.parquet",
    log:
        "logs/vocab/{model}.log",
    conda:
        "../../envs/probe.yaml"
    params:
        mode=config["vocab"]["mode"],
    script:
        "../scripts/candidate_ids.py"


rule filter_facts:
    input:
        facts="results/facts/{dataset}.parquet",
        candidates="results/vocab/{model}.parquet",
        model=model_input,
        code=code("vocab", "models"),
    output:
        facts="results/facts/{model}/{dataset}.parquet",
        dropped="results/facts/{model}/{dataset}.dropped.csv",
    log:
        "logs/filter_facts/{model}/{dataset}.log",
    conda:
        "../../envs/probe.yaml"
    script:
        "../scripts/filter_facts.py"
