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
        "../../scripts/shared/download.py"


rule lpaqa_unpack_trex_train:
    input:
        archive=rules.lpaqa_download_trex_train.output[0],
        code=code("lpaqa/lpaqa_unpack_trex_train"),
    output:
        directory("resources/lpaqa/TREx_train"),
    log:
        "logs/lpaqa/download/unpack_trex_train.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_unpack_trex_train.py"


rule lpaqa_trex_train:
    input:
        unpack(trex_train_input),
    output:
        facts="results/lpaqa/facts/trex/train_dev.parquet",
        dropped="results/lpaqa/trex_train/dropped.csv",
    log:
        "logs/lpaqa/trex_train/build.log",
    conda:
        "../../../envs/lama.yaml"
    resources:
        **scaled("lpaqa_trex_train", "claims", "entities"),
    params:
        source=LPAQA["trex_train"]["source"],
        per_relation=LPAQA["trex_train"]["per_relation"],
        seed=LPAQA["trex_train"]["seed"],
        google_re_relations=sorted(set(LPAQA["google_re_relations"].values())) if "google_re" in LPAQA_DATASETS else [],
    script:
        "../../scripts/lpaqa/lpaqa_trex_train.py"


rule lpaqa_google_re_train:
    input:
        facts=rules.lpaqa_trex_train.output.facts,
        test=expand(rules.lpaqa_import_facts.output[0], dataset="google_re")[0],
        code=code("lpaqa/lpaqa_google_re_train"),
    output:
        "results/lpaqa/facts/google_re/train_dev.parquet",
    log:
        "logs/lpaqa/trex_train/google_re.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        relations=settings(LPAQA["google_re_relations"]),
    script:
        "../../scripts/lpaqa/lpaqa_google_re_train.py"


localrules:
    lpaqa_google_re_train,
    lpaqa_download_trex_train,
    lpaqa_unpack_trex_train,
