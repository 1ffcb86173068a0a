# S-TEST's benchmark: the shared candidate vocabulary, the triples built from Wikidata's claims or
# read from the authors' released files, and S-TEST's part of the demo models' corpus.
# Download rules declare no code inputs on purpose: their output is the published file itself.


rule stest_download_common_vocab:
    output:
        "resources/stest/common_vocab_cased.txt",
    log:
        "logs/stest/download/common_vocab.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=STEST["common_vocab"],
    script:
        "../../scripts/shared/download.py"


rule stest_download_release:
    output:
        "resources/stest/release.tar.gz",
    log:
        "logs/stest/download/release.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=STEST["released"],
    script:
        "../../scripts/shared/download.py"


rule stest_unpack_release:
    input:
        archive=rules.stest_download_release.output[0],
        code=code("stest/stest_unpack_release"),
    output:
        directory("resources/stest/S-TEST"),
    log:
        "logs/stest/download/unpack_release.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/stest/stest_unpack_release.py"


rule stest_candidate_words:
    input:
        common=stest_common_vocab(),
        models=[model_dir(name) for name in STEST_MODELS],
        code=code("stest/stest_candidate_words"),
    output:
        "results/stest/vocab/words.txt",
    log:
        "logs/stest/vocab/words.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        models=STEST_MODELS,
        kinds=[config["models"][name]["kind"] for name in STEST_MODELS],
    script:
        "../../scripts/stest/stest_candidate_words.py"


rule stest_candidate_ids:
    input:
        words=rules.stest_candidate_words.output[0],
        model=model_input,
        code=code("stest/stest_candidate_ids"),
    output:
        "results/stest/vocab/{model}.parquet",
    log:
        "logs/stest/vocab/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
    script:
        "../../scripts/stest/stest_candidate_ids.py"


rule stest_build:
    input:
        claims=rules.wikidata_gather.output.claims,
        entities=rules.wikidata_gather.output.entities,
        words=rules.stest_candidate_words.output[0],
        code=code("stest/stest_build"),
    output:
        triples="results/stest/benchmark/wikidata.parquet",
        rejects="results/stest/benchmark/wikidata.rejects.csv",
    log:
        "logs/stest/build.log",
    conda:
        "../../../envs/probe.yaml"
    resources:
        **scaled("stest_build", "claims", "entities"),
    params:
        relations=settings(STEST["relations"]),
        build=settings(STEST["build"]),
        parsed_properties=sorted(config["wikidata"]["properties"]),
    script:
        "../../scripts/stest/stest_build.py"


rule stest_import_released:
    input:
        release=stest_release(),
        code=code("stest/stest_import_released"),
    output:
        triples="results/stest/benchmark/released.parquet",
        rejects="results/stest/benchmark/released.rejects.csv",
    log:
        "logs/stest/import_released.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        relations=STEST_RELATIONS,
        per_relation=STEST["released_per_relation"],
        seed=STEST["build"]["seed"],
    script:
        "../../scripts/stest/stest_import_released.py"


rule stest_demo_corpus:
    input:
        claims=rules.wikidata_gather.output.claims,
        entities=rules.wikidata_gather.output.entities,
        templates=STEST["demo_corpus"]["templates"] or [],
        code=code("stest/stest_demo_corpus"),
    output:
        sentences="results/stest/demo/corpus.parquet",
        words="results/stest/demo/words.txt",
    log:
        "logs/stest/demo_corpus.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        relations=settings(STEST["relations"]),
    script:
        "../../scripts/stest/stest_demo_corpus.py"


# light rules (seconds each) stay on the submitting host, which also has the network that
# downloads need; the builder walks paths over the whole dump's graph and goes to the cluster
localrules:
    stest_download_common_vocab,
    stest_download_release,
    stest_unpack_release,
    stest_candidate_words,
    stest_candidate_ids,
    stest_import_released,
    stest_demo_corpus,
