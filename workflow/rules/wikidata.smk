# Wikidata dump -> entities and claims, shared by the studies. One pass builds a seek index of the
# compressed dump; wikidata.chunks jobs then parse their share of the uncompressed bytes in
# parallel (cores or nodes), and a gather job concatenates the parts.


rule download_wikidata:
    output:
        "resources/wikidata/wikidata-{date}-all.json.{format}",
    log:
        "logs/download/wikidata-{date}-{format}.log",
    retries: 3
    conda:
        "../../envs/lama.yaml"
    params:
        urls=lambda wildcards, output: [wikidata_url(Path(output[0]).name)],
        checksums=lambda wildcards: (
            None
            if config["wikidata"]["checksum"] == "none"
            else wikidata_url(f"wikidata-{wildcards.date}-{config['wikidata']['checksum']}sums.txt")
        ),
        algorithm=config["wikidata"]["checksum"],
    script:
        "../scripts/shared/download_dump.py"


rule wikidata_index:
    input:
        dump=wikidata_dump(),
        code=code("shared/wikidata_index"),
    output:
        index="results/wikidata/dump.index",
        info="results/wikidata/dump.json",
    log:
        "logs/wikidata/index.log",
    conda:
        "../../envs/wikidata.yaml"
    threads: config["wikidata"]["index_threads"]
    resources:
        **scaled("wikidata_index", "dump"),
    script:
        "../scripts/shared/wikidata_index.py"


rule wikidata_chunk:
    input:
        dump=wikidata_dump(),
        index=rules.wikidata_index.output.index,
        info=rules.wikidata_index.output.info,
        code=code("shared/wikidata_chunk"),
    output:
        entities="results/wikidata/parts/entities-{chunk}.parquet",
        claims="results/wikidata/parts/claims-{chunk}.parquet",
        rejects="results/wikidata/parts/rejects-{chunk}.csv",
    log:
        "logs/wikidata/chunk-{chunk}.log",
    conda:
        "../../envs/wikidata.yaml"
    resources:
        **scaled("wikidata_chunk", "dump", share=1 / config["wikidata"]["chunks"]),
    params:
        chunks=config["wikidata"]["chunks"],
        properties=sorted(config["wikidata"]["properties"]),
    script:
        "../scripts/shared/wikidata_chunk.py"


rule wikidata_gather:
    input:
        entities=expand(rules.wikidata_chunk.output.entities, chunk=range(config["wikidata"]["chunks"])),
        claims=expand(rules.wikidata_chunk.output.claims, chunk=range(config["wikidata"]["chunks"])),
        rejects=expand(rules.wikidata_chunk.output.rejects, chunk=range(config["wikidata"]["chunks"])),
        code=code("shared/wikidata_gather"),
    output:
        entities="results/wikidata/entities.parquet",
        claims="results/wikidata/claims.parquet",
        rejects=report_table(
            "results/wikidata/rejects.csv",
            caption="wikidata_rejects.rst",
            category="Shared data",
            subcategory="Wikidata",
            label="what the Wikidata parse did not keep",
        ),
    log:
        "logs/wikidata/gather.log",
    conda:
        "../../envs/wikidata.yaml"
    resources:
        **scaled("wikidata_gather", "entities", "claims"),
    script:
        "../scripts/shared/wikidata_gather.py"
