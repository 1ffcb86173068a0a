# COMPS's stimuli: the XCSLB norms, WordNet 3.0 and GloVe downloaded (or local), the three
# similarities between concepts, the builder's minimal pairs, and the authors' released files.
# Download rules declare no code inputs on purpose: their output is the published file itself.


rule comps_download_norms:
    output:
        "resources/comps/world.tar.gz",
    log:
        "logs/comps/download/norms.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=COMPS["norms"],
    script:
        "../../scripts/shared/download.py"


rule comps_unpack_norms:
    input:
        archive=rules.comps_download_norms.output[0],
        code=code("comps/comps_unpack"),
    output:
        directory("resources/comps/norms"),
    log:
        "logs/comps/download/unpack_norms.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        marker="xcslb_compressed.csv",
        expected="an archive of the world repository (the XCSLB norms)",
    script:
        "../../scripts/comps/comps_unpack.py"


rule comps_download_wordnet:
    output:
        "resources/comps/WordNet-3.0.tar.gz",
    log:
        "logs/comps/download/wordnet.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=COMPS["wordnet"],
    script:
        "../../scripts/shared/download.py"


rule comps_unpack_wordnet:
    input:
        archive=rules.comps_download_wordnet.output[0],
        code=code("comps/comps_unpack"),
    output:
        directory("resources/comps/wordnet"),
    log:
        "logs/comps/download/unpack_wordnet.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        marker="index.sense",
        expected="WordNet 3.0's archive",
    script:
        "../../scripts/comps/comps_unpack.py"


rule comps_download_glove:
    output:
        "resources/comps/glove.zip",
    log:
        "logs/comps/download/glove.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=COMPS["glove"]["path"],
    script:
        "../../scripts/shared/download.py"


rule comps_download_release:
    output:
        "resources/comps/release.tar.gz",
    log:
        "logs/comps/download/release.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=COMPS["released"],
    script:
        "../../scripts/shared/download.py"


rule comps_unpack_release:
    input:
        archive=rules.comps_download_release.output[0],
        code=code("comps/comps_unpack"),
    output:
        directory("resources/comps/release"),
    log:
        "logs/comps/download/unpack_release.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        marker="comps_base.jsonl",
        expected="an archive of COMPS's repository",
    script:
        "../../scripts/comps/comps_unpack.py"


rule comps_similarity:
    input:
        norms=comps_local_or("norms", rules.comps_unpack_norms.output[0]),
        wordnet=comps_local_or("wordnet", rules.comps_unpack_wordnet.output[0]),
        glove=comps_glove(),
        code=code("comps/comps_similarity"),
    output:
        concepts="results/comps/norms/concepts.parquet",
        similarity="results/comps/norms/similarity.parquet",
        rejects="results/comps/norms/rejects.csv",
    log:
        "logs/comps/similarity.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        member=COMPS["glove"]["member"],
        animal_sense=COMPS["build"]["animal_sense"],
        taxonomic_measure=COMPS["build"]["taxonomic_similarity"],
    script:
        "../../scripts/comps/comps_similarity.py"


rule comps_build:
    input:
        norms=comps_local_or("norms", rules.comps_unpack_norms.output[0]),
        concepts=rules.comps_similarity.output.concepts,
        similarity=rules.comps_similarity.output.similarity,
        code=code("comps/comps_build"),
    output:
        stimuli="results/comps/stimuli/built.parquet",
        rejects="results/comps/stimuli/built.rejects.csv",
    log:
        "logs/comps/build.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        build=settings(COMPS["build"]),
    script:
        "../../scripts/comps/comps_build.py"


rule comps_import_released:
    input:
        release=comps_release(),
        code=code("comps/comps_import_released"),
    output:
        stimuli="results/comps/stimuli/released.parquet",
        rejects="results/comps/stimuli/released.rejects.csv",
    log:
        "logs/comps/import_released.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/comps/comps_import_released.py"


rule comps_demo_corpus:
    input:
        norms=comps_local_or("norms", rules.comps_unpack_norms.output[0]),
        code=code("comps/comps_demo_corpus"),
    output:
        sentences="results/comps/demo/corpus.parquet",
        words="results/comps/demo/words.txt",
    log:
        "logs/comps/demo_corpus.log",
    conda:
        "../../../envs/probe.yaml"
    params:
        nonce_words=COMPS["build"]["nonce_words"],
    script:
        "../../scripts/comps/comps_demo_corpus.py"


# downloads need the submitting host's network; the rest takes seconds (the similarities of
# COMPS's 521 concepts, the builder's 12,320 positives)
localrules:
    comps_download_norms,
    comps_unpack_norms,
    comps_download_wordnet,
    comps_unpack_wordnet,
    comps_download_glove,
    comps_download_release,
    comps_unpack_release,
    comps_similarity,
    comps_build,
    comps_import_released,
    comps_demo_corpus,
