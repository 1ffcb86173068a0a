# Metrics (P@1 micro and macro, Majority) and the result tables.


rule evaluate:
    input:
        probe="results/probe/{model}/{prompt_set}/{dataset}.parquet",
        code=code("metrics"),
    output:
        "results/metrics/{model}/{prompt_set}/{dataset}.parquet",
    log:
        "logs/evaluate/{model}/{prompt_set}/{dataset}.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/evaluate.py"


rule majority:
    input:
        facts="results/facts/{model}/{dataset}.parquet",
        code=code("metrics"),
    output:
        "results/majority/{model}/{dataset}.parquet",
    log:
        "logs/majority/{model}/{dataset}.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/majority.py"


rule tables:
    input:
        manual=expand("results/metrics/{model}/manual/{dataset}.parquet", model=MODELS, dataset=DATASETS),
        majority=expand("results/majority/{model}/{dataset}.parquet", model=MODELS, dataset=DATASETS),
        dropped=expand("results/facts/{model}/{dataset}.dropped.csv", model=MODELS, dataset=DATASETS),
        code=code("tables", "metrics"),
    output:
        markdown="results/tables/baseline.md",
        csv=report(
            "results/tables/baseline.csv",
            caption="../report/baseline.rst",
            category="LPAQA",
            subcategory="Manual-prompt baseline",
        ),
        latex="results/tables/baseline.tex",
        per_relation=report(
            "results/tables/per_relation.csv",
            caption="../report/per_relation.rst",
            category="LPAQA",
            subcategory="Per relation",
        ),
        dropped=report(
            "results/tables/dropped_facts.csv",
            caption="../report/dropped_facts.rst",
            category="Data",
            subcategory="LAMA filter",
        ),
    log:
        "logs/tables.log",
    conda:
        "../../envs/lama.yaml"
    params:
        models=MODELS,
        datasets=DATASETS,
    script:
        "../scripts/tables.py"
