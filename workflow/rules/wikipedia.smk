# Wikipedia dump -> sentences with links, in chunks of whole bzip2 streams; redirects gathered.

WIKIPEDIA_DUMP, WIKIPEDIA_INDEX = wikipedia_files()
WIKIPEDIA_CHUNKS = range(config["wikipedia"]["chunks"])


rule download_wikipedia:
    output:
        dump="resources/wikipedia/enwiki-{date}-pages-articles-multistream.xml.bz2",
        index="resources/wikipedia/enwiki-{date}-pages-articles-multistream-index.txt.bz2",
    log:
        "logs/download/wikipedia-{date}.log",
    retries: 3
    conda:
        "../../envs/lama.yaml"
    params:
        urls=lambda wildcards, output: [wikipedia_url(Path(path).name) for path in output],
        checksums=lambda wildcards: (
            None
            if config["wikipedia"]["checksum"] == "none"
            else wikipedia_url(f"enwiki-{wildcards.date}-{config['wikipedia']['checksum']}sums.txt")
        ),
        algorithm=config["wikipedia"]["checksum"],
    script:
        "../scripts/download_dump.py"


rule wikipedia_streams:
    input:
        dump=WIKIPEDIA_DUMP,
        index=[] if WIKIPEDIA_INDEX is None else WIKIPEDIA_INDEX,
        code=code("wikipedia"),
    output:
        "results/wikipedia/streams.json",
    log:
        "logs/wikipedia/streams.log",
    conda:
        "../../envs/mining.yaml"
    params:
        chunks=config["wikipedia"]["chunks"],
    script:
        "../scripts/wikipedia_streams.py"


rule wikipedia_extract:
    input:
        dump=WIKIPEDIA_DUMP,
        streams="results/wikipedia/streams.json",
        code=code("wikipedia"),
    output:
        sentences="results/wikipedia/parts/sentences-{chunk}.parquet",
        redirects="results/wikipedia/parts/redirects-{chunk}.parquet",
        counts="results/wikipedia/parts/counts-{chunk}.csv",
    log:
        "logs/wikipedia/extract-{chunk}.log",
    conda:
        "../../envs/mining.yaml"
    script:
        "../scripts/wikipedia_extract.py"


rule wikipedia_redirects:
    input:
        redirects=expand("results/wikipedia/parts/redirects-{chunk}.parquet", chunk=WIKIPEDIA_CHUNKS),
        counts=expand("results/wikipedia/parts/counts-{chunk}.csv", chunk=WIKIPEDIA_CHUNKS),
        code=code("wikipedia"),
    output:
        redirects="results/wikipedia/redirects.parquet",
        counts="results/mining/extract_counts.csv",
    log:
        "logs/wikipedia/redirects.log",
    conda:
        "../../envs/mining.yaml"
    script:
        "../scripts/wikipedia_redirects.py"
