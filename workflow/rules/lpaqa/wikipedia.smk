# The English Wikipedia dump -> sentences with links, in chunks of whole bzip2 streams, and the
# redirects of all chunks gathered.


rule lpaqa_download_wikipedia:
    output:
        dump="resources/wikipedia/enwiki-{date}-pages-articles-multistream.xml.bz2",
        index="resources/wikipedia/enwiki-{date}-pages-articles-multistream-index.txt.bz2",
    log:
        "logs/lpaqa/download/wikipedia-{date}.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        urls=lambda wildcards, output: [wikipedia_url(Path(path).name) for path in output],
        checksums=lambda wildcards: (
            None
            if LPAQA["wikipedia"]["checksum"] == "none"
            else wikipedia_url(f"enwiki-{wildcards.date}-{LPAQA['wikipedia']['checksum']}sums.txt")
        ),
        algorithm=LPAQA["wikipedia"]["checksum"],
    script:
        "../../scripts/shared/download_dump.py"


rule lpaqa_wikipedia_streams:
    input:
        dump=wikipedia_files()[0],
        index=wikipedia_files()[1] or [],
        code=code("lpaqa/lpaqa_wikipedia_streams"),
    output:
        "results/lpaqa/wikipedia/streams.json",
    log:
        "logs/lpaqa/wikipedia/streams.log",
    conda:
        "../../../envs/mining.yaml"
    params:
        chunks=LPAQA["wikipedia"]["chunks"],
    script:
        "../../scripts/lpaqa/lpaqa_wikipedia_streams.py"


rule lpaqa_wikipedia_extract:
    input:
        dump=wikipedia_files()[0],
        streams=rules.lpaqa_wikipedia_streams.output[0],
        code=code("lpaqa/lpaqa_wikipedia_extract"),
    output:
        sentences="results/lpaqa/wikipedia/parts/sentences-{chunk}.parquet",
        redirects="results/lpaqa/wikipedia/parts/redirects-{chunk}.parquet",
        counts="results/lpaqa/wikipedia/parts/counts-{chunk}.csv",
        rejects="results/lpaqa/wikipedia/parts/rejects-{chunk}.csv",
    log:
        "logs/lpaqa/wikipedia/extract-{chunk}.log",
    conda:
        "../../../envs/mining.yaml"
    resources:
        **scaled("lpaqa_wikipedia_extract", "dump", share=1 / LPAQA["wikipedia"]["chunks"]),
    script:
        "../../scripts/lpaqa/lpaqa_wikipedia_extract.py"


rule lpaqa_wikipedia_redirects:
    input:
        redirects=expand(rules.lpaqa_wikipedia_extract.output.redirects, chunk=wikipedia_chunks()),
        counts=expand(rules.lpaqa_wikipedia_extract.output.counts, chunk=wikipedia_chunks()),
        rejects=expand(rules.lpaqa_wikipedia_extract.output.rejects, chunk=wikipedia_chunks()),
        code=code("lpaqa/lpaqa_wikipedia_redirects"),
    output:
        redirects="results/lpaqa/wikipedia/redirects.parquet",
        counts="results/lpaqa/mining/extract_counts.csv",
        rejects="results/lpaqa/mining/wikipedia_rejects.csv",
    log:
        "logs/lpaqa/wikipedia/redirects.log",
    conda:
        "../../../envs/mining.yaml"
    resources:
        **scaled("lpaqa_wikipedia_redirects", "redirects"),
    script:
        "../../scripts/lpaqa/lpaqa_wikipedia_redirects.py"


localrules:
    lpaqa_download_wikipedia,
    lpaqa_wikipedia_streams,
