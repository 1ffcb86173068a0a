# Distant supervision (per chunk) and prompt mining (middle-word and dependency paths).


rule distant_supervision:
    input:
        sentences="results/wikipedia/parts/sentences-{chunk}.parquet",
        redirects="results/wikipedia/redirects.parquet",
        entities="results/wikidata/entities.parquet",
        facts="results/facts/trex_train.parquet",
        code=code("distant", "wikipedia"),
    output:
        "results/mining/parts/matches-{chunk}.parquet",
    log:
        "logs/mining/distant-{chunk}.log",
    conda:
        "../../envs/mining.yaml"
    script:
        "../scripts/distant_supervision.py"


rule mine_prompts:
    input:
        matches=expand("results/mining/parts/matches-{chunk}.parquet", chunk=WIKIPEDIA_CHUNKS),
        code=code("mining", "prompts"),
    output:
        matches="results/mining/matches.parquet",
        ranked="results/mining/ranked.parquet",
        dropped="results/mining/dropped.csv",
        mine="results/prompts/mine.parquet",
        mine_mid="results/prompts/mine_mid.parquet",
        table=report(
            "results/tables/mined_prompts.md",
            caption="../report/mined_prompts.rst",
            category="LPAQA",
            subcategory="Mined prompts",
        ),
    log:
        "logs/mining/mine.log",
    conda:
        "../../envs/mining.yaml"
    resources:
        gpu=1 if config["mining"]["gpu"] else 0,
    params:
        top=config["mining"]["top"],
        dependency=config["mining"]["dependency"],
        spacy_model=config["mining"]["spacy_model"],
        gpu=config["mining"]["gpu"],
        batch_size=config["mining"]["batch_size"],
    script:
        "../scripts/mine_prompts.py"


rule mine_man_prompts:
    input:
        mine="results/prompts/mine.parquet",
        manual="results/prompts/manual.parquet",
        code=code("prompts"),
    output:
        "results/prompts/mine_man.parquet",
    log:
        "logs/prompts/mine_man.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/mine_man_prompts.py"
