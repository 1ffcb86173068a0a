# LAMA import: download (when lama.data / lama.common_vocab are URLs), facts, manual prompts.
# Download rules declare no code inputs on purpose: their output is the published file itself,
# and a change to the download helper must not fetch a dump again.


rule download_lama:
    output:
        "resources/lama/data.zip",
    log:
        "logs/download/lama_data.log",
    retries: 3
    conda:
        "../../envs/lama.yaml"
    params:
        url=config["lama"]["data"],
    script:
        "../scripts/download.py"


rule download_common_vocab:
    output:
        "resources/lama/common_vocab_cased.txt",
    log:
        "logs/download/common_vocab.log",
    retries: 3
    conda:
        "../../envs/lama.yaml"
    params:
        url=config["lama"]["common_vocab"],
    script:
        "../scripts/download.py"


rule unpack_lama:
    input:
        archive="resources/lama/data.zip",
        code=code("download"),
    output:
        directory("resources/lama/data"),
    log:
        "logs/download/unpack_lama.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/unpack_lama.py"


rule import_facts:
    input:
        data=lama_data(),
        code=code("lama", "prompts"),
    output:
        "results/facts/{dataset}.parquet",
    log:
        "logs/import_facts/{dataset}.log",
    conda:
        "../../envs/lama.yaml"
    params:
        relations=config["lama"]["relations"],
    script:
        "../scripts/import_facts.py"


rule manual_prompts:
    input:
        data=lama_data(),
        code=code("lama", "prompts"),
    output:
        "results/prompts/manual.parquet",
    log:
        "logs/prompts/manual.log",
    conda:
        "../../envs/lama.yaml"
    params:
        google_re_templates=settings(config["lama"]["google_re_templates"]),
    script:
        "../scripts/manual_prompts.py"
