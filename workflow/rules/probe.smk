# The probing engine: the one GPU rule of the spine. On a cluster it goes to a GPU node
# (resources: gpu=1); locally `--resources gpu=N` caps how many run at once.


rule probe:
    input:
        facts="results/facts/{model}/{dataset}.parquet",
        prompts="results/prompts/{prompt_set}.parquet",
        candidates="results/vocab/{model}.parquet",
        model=model_input,
        code=code("probe", "models", "prompts"),
    output:
        "results/probe/{model}/{prompt_set}/{dataset}.parquet",
    log:
        "logs/probe/{model}/{prompt_set}/{dataset}.log",
    conda:
        "../../envs/probe.yaml"
    threads: config["probe"]["threads"]
    resources:
        gpu=1,
    params:
        settings=settings({key: value for key, value in config["probe"].items() if key != "threads"}),
    script:
        "../scripts/probe.py"
