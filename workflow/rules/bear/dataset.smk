# BEAR's dataset: the authors' repository at the commit lm-pub-quiz 0.3.3 loads, downloaded
# (resumable) and its files checked against a SHA-256 manifest, or a local BEAR-format directory;
# imported into two tables, every bad record counted. relation_info.json (the domains) is read by
# bear_tables alone, so that a change of domains reruns only the tables.
# Download rules declare no code inputs on purpose: their output is the published file itself.


rule bear_download:
    output:
        "resources/bear/repository.zip",
    log:
        "logs/bear/download/repository.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=BEAR["url"],
    script:
        "../../scripts/shared/download.py"


rule bear_unpack:
    input:
        archive=rules.bear_download.output[0],
        checksums=BEAR["checksums"] or [],
        code=code("bear/bear_unpack"),
    output:
        directory("resources/bear/repository"),
    log:
        "logs/bear/download/unpack.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        member=BEAR["member"],
    script:
        "../../scripts/bear/bear_unpack.py"


rule bear_download_relation_info:
    output:
        "resources/bear/relation_info.json",
    log:
        "logs/bear/download/relation_info.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=BEAR["relation_info"]["path"],
    script:
        "../../scripts/shared/download.py"


rule bear_import:
    input:
        dataset=bear_dataset(),
        code=code("bear/bear_import"),
    output:
        relations="results/bear/dataset/relations.parquet",
        instances="results/bear/dataset/instances.parquet",
        rejects="results/bear/dataset/rejects.csv",
    log:
        "logs/bear/import.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        member=bear_member(),
        per_relation=BEAR["per_relation"],
        seed=BEAR["seed"],
    script:
        "../../scripts/bear/bear_import.py"


rule bear_demo_corpus:
    input:
        relations=rules.bear_import.output.relations,
        instances=rules.bear_import.output.instances,
        templates=BEAR["demo_corpus"]["templates"] or [],
        code=code("bear/bear_demo_corpus"),
    output:
        sentences="results/bear/demo/corpus.parquet",
        words="results/bear/demo/words.txt",
    log:
        "logs/bear/demo_corpus.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        holdout=BEAR["demo_corpus"]["holdout"],
        seed=BEAR["demo_corpus"]["seed"],
    script:
        "../../scripts/bear/bear_demo_corpus.py"


# downloads need the submitting host's network; the rest takes seconds (BEAR's 7,731 instances)
localrules:
    bear_download,
    bear_unpack,
    bear_download_relation_info,
    bear_import,
    bear_demo_corpus,
