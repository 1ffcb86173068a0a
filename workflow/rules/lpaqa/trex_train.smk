# T-REx-train, LPAQA's training facts (the train split of T-REx): built from the Wikidata claims,
# or taken from LPAQA's release.


rule lpaqa_download_trex_train:
    output:
        "resources/lpaqa/TREx_train.tar.gz",
    log:
        "logs/lpaqa/download/trex_train.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=LPAQA["trex_train"]["lpaqa"],
    script:
        "../../scripts/download.py"


rule lpaqa_unpack_trex_train:
    input:
        archive=rules.lpaqa_download_trex_train.output[0],
        code=code("lpaqa_unpack_trex_train"),
    output:
        directory("resources/lpaqa/TREx_train"),
    log:
        "logs/lpaqa/download/unpack_trex_train.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa_unpack_trex_train.py"


rule lpaqa_trex_train:
    input:
        unpack(trex_train_input),
    output:
        facts="results/lpaqa/facts/trex/train.parquet",
        dropped="results/lpaqa/trex_train/dropped.csv",
    log:
        "logs/lpaqa/trex_train/build.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        source=LPAQA["trex_train"]["source"],
        per_relation=LPAQA["trex_train"]["per_relation"],
        seed=LPAQA["trex_train"]["seed"],
    script:
        "../../scripts/lpaqa_trex_train.py"


rule lpaqa_trex_train_stats:
    input:
        facts=rules.lpaqa_trex_train.output.facts,
        code=code("lpaqa_trex_train_stats"),
    output:
        markdown="results/lpaqa/tables/trex_train_stats.md",
        csv=report(
            "results/lpaqa/tables/trex_train_stats.csv",
            caption="../../report/lpaqa/trex_train_stats.rst",
            category="LPAQA",
            subcategory="Data",
            labels={"table": "T-REx-train statistics (Table 1)"},
        ),
        per_relation="results/lpaqa/tables/trex_train_per_relation.csv",
    log:
        "logs/lpaqa/trex_train/stats.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa_trex_train_stats.py"


localrules:
    lpaqa_download_trex_train,
    lpaqa_unpack_trex_train,
    lpaqa_trex_train_stats,
