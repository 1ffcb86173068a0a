# T-REx-train: LPAQA's training facts, built from Wikidata or taken from LPAQA's release.


rule download_lpaqa_trex_train:
    output:
        "resources/lpaqa/TREx_train.tar.gz",
    log:
        "logs/download/lpaqa_trex_train.log",
    retries: 3
    conda:
        "../../envs/lama.yaml"
    params:
        url=config["trex_train"]["lpaqa"],
    script:
        "../scripts/download.py"


rule unpack_lpaqa_trex_train:
    input:
        archive="resources/lpaqa/TREx_train.tar.gz",
        code=code("download"),
    output:
        directory("resources/lpaqa/TREx_train"),
    log:
        "logs/download/unpack_lpaqa_trex_train.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/unpack_lpaqa_trex_train.py"


rule trex_train:
    input:
        unpack(trex_train_input),
    output:
        facts="results/facts/trex_train.parquet",
        dropped="results/trex_train/dropped.csv",
    log:
        "logs/trex_train/build.log",
    conda:
        "../../envs/lama.yaml"
    params:
        source=config["trex_train"]["source"],
        per_relation=config["trex_train"]["per_relation"],
        seed=config["trex_train"]["seed"],
    script:
        "../scripts/trex_train.py"


rule trex_train_stats:
    input:
        facts="results/facts/trex_train.parquet",
        code=code("trex_train"),
    output:
        markdown="results/tables/trex_train_stats.md",
        csv=report(
            "results/tables/trex_train_stats.csv",
            caption="../report/trex_train_stats.rst",
            category="Data",
            subcategory="T-REx-train",
        ),
        per_relation="results/tables/trex_train_per_relation.csv",
    log:
        "logs/trex_train/stats.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/trex_train_stats.py"
