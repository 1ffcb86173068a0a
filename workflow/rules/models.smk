# Models: hub models are fetched once into resources/models/NAME (on the submitting host,
# which has network); the demo's tiny masked LM is trained from the benchmark facts.


rule download_model:
    output:
        directory("resources/models/{model}"),
    log:
        "logs/download/model_{model}.log",
    retries: 2
    conda:
        "../../envs/probe.yaml"
    params:
        hub_id=lambda wildcards: config["models"][wildcards.model]["hub_id"],
        revision=lambda wildcards: config["models"][wildcards.model]["revision"],
    script:
        "../scripts/download_model.py"


rule train_demo_model:
    input:
        facts=expand("results/facts/{dataset}.parquet", dataset=DATASETS),
        prompts="results/prompts/manual.parquet",
        vocab=common_vocab(),
        corpus_templates=lambda wildcards: config["models"][wildcards.model]["train"]["corpus_templates"],
        code=code("demo_model", "prompts"),
    output:
        directory("results/models/{model}"),
    log:
        "logs/train_demo_model/{model}.log",
    conda:
        "../../envs/probe.yaml"
    threads: 2
    params:
        settings=lambda wildcards: settings(config["models"][wildcards.model]["train"]),
    script:
        "../scripts/train_demo_model.py"
