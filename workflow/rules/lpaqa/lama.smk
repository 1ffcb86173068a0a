# LAMA: download (when lpaqa.lama.data / common_vocab are URLs), the test facts of T-REx and
# Google-RE, the manual prompts, and LPAQA's part of the demo models' corpus.
# Download rules declare no code inputs on purpose: their output is the published file itself,
# and a change to the download helper must not fetch it again.


rule lpaqa_download_lama:
    output:
        "resources/lama/data.zip",
    log:
        "logs/lpaqa/download/lama_data.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=LPAQA["lama"]["data"],
    script:
        "../../scripts/shared/download.py"


rule lpaqa_download_common_vocab:
    output:
        "resources/lama/common_vocab_cased.txt",
    log:
        "logs/lpaqa/download/common_vocab.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=LPAQA["lama"]["common_vocab"],
    script:
        "../../scripts/shared/download.py"


rule lpaqa_unpack_lama:
    input:
        archive=rules.lpaqa_download_lama.output[0],
        code=code("lpaqa/lpaqa_unpack_lama"),
    output:
        directory("resources/lama/data"),
    log:
        "logs/lpaqa/download/unpack_lama.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_unpack_lama.py"


rule lpaqa_import_facts:
    input:
        data=lama_data(),
        code=code("lpaqa/lpaqa_import_facts"),
    output:
        "results/lpaqa/facts/{dataset}/test.parquet",
    log:
        "logs/lpaqa/import_facts/{dataset}.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        relations=LPAQA["lama"]["relations"],
        per_relation=LPAQA["lama"]["per_relation"],
        seed=LPAQA["lama"]["seed"],
    script:
        "../../scripts/lpaqa/lpaqa_import_facts.py"


rule lpaqa_manual_prompts:
    input:
        data=lama_data(),
        code=code("lpaqa/lpaqa_manual_prompts"),
    output:
        "results/lpaqa/prompts/manual.parquet",
    log:
        "logs/lpaqa/prompts/manual.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        google_re_templates=settings(LPAQA["lama"]["google_re_templates"]),
    script:
        "../../scripts/lpaqa/lpaqa_manual_prompts.py"


rule lpaqa_lama_uhn:
    input:
        facts=expand(rules.lpaqa_import_facts.output[0], dataset="trex")[0],
        model=model_dir(uhn_model()) if uhn_model() else left_out_stop("LAMA-UHN"),
        code=code("lpaqa/lpaqa_lama_uhn"),
    output:
        facts="results/lpaqa/facts/trex_uhn/test.parquet",
        dropped="results/lpaqa/trex_uhn/dropped.csv",
    log:
        "logs/lpaqa/lama_uhn.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        model=uhn_model(),
        scoring=scoring_settings(),
        top_k=LPAQA["uhn"]["top_k"],
        lowercase=LPAQA["uhn"]["lowercase"],
        place_nouns=settings(LPAQA["uhn"]["place_nouns"]),
    script:
        "../../scripts/lpaqa/lpaqa_lama_uhn.py"


rule lpaqa_demo_corpus:
    input:
        facts=expand(rules.lpaqa_import_facts.output[0], dataset=LPAQA_DATASETS),
        prompts=rules.lpaqa_manual_prompts.output[0],
        vocab=common_vocab(),
        templates=LPAQA["demo_corpus"]["templates"],
        claims=rules.wikidata_gather.output.claims if LPAQA["trex_train"]["source"] == "wikidata" else [],
        entities=rules.wikidata_gather.output.entities if LPAQA["trex_train"]["source"] == "wikidata" else [],
        code=code("lpaqa/lpaqa_demo_corpus"),
    output:
        sentences="results/lpaqa/demo/corpus.parquet",
        words="results/lpaqa/demo/words.txt",
        held_out="results/lpaqa/demo/held_out.json",
    log:
        "logs/lpaqa/demo_corpus.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        holdout=LPAQA["demo_corpus"]["holdout"],
        seed=LPAQA["demo_corpus"]["seed"],
    script:
        "../../scripts/lpaqa/lpaqa_demo_corpus.py"


# light rules (seconds each, less than a queue wait) stay on the submitting host, which also has
# the network that downloads need
localrules:
    lpaqa_download_lama,
    lpaqa_download_common_vocab,
    lpaqa_unpack_lama,
    lpaqa_import_facts,
    lpaqa_manual_prompts,
    lpaqa_demo_corpus,
