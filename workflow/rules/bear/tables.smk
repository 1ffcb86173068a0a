# BEAR's tables (the BEAR score of each model beside the leaderboard's, with the random baseline;
# accuracy per relation and per domain) and its figure (accuracy against parameter count).


rule bear_tables:
    input:
        scores=expand(BEAR_SCORES, model=BEAR_MODELS),
        models=expand("results/bear/scores/{model}.json", model=BEAR_MODELS),
        relations=rules.bear_import.output.relations,
        instances=rules.bear_import.output.instances,
        # the domains: read here alone, so that changing them reruns the tables, not the scores
        relation_info=bear_relation_info(),
        paper="resources/papers/bear.yaml",
        code=code("bear/bear_tables"),
    output:
        **{
            f"{name}_{fmt}": (
                report_table(
                    f"results/bear/tables/{name}.{fmt}",
                    caption=f"bear/{name}.rst",
                    category="BEAR",
                    subcategory="Results",
                    label=label,
                    layout=f"results/bear/tables/{name}.md",
                )
                if fmt == "csv"
                else f"results/bear/tables/{name}.{fmt}"
            )
            for name, label in [
                ("accuracy", "the BEAR score per model, beside the leaderboard's"),
                ("relations", "accuracy per relation"),
                ("domains", "accuracy per domain"),
            ]
            for fmt in ("md", "csv", "tex")
        },
    log:
        "logs/bear/tables.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        pll=BEAR["scoring"]["pll"],
        conditional=BEAR["scoring"]["conditional"],
        ties=BEAR["ties"],
        ddof=BEAR["sem_ddof"],
        divide_support=BEAR["divide_support"],
        per_relation=BEAR["per_relation"],
        seed=BEAR["seed"],
        # a download is held to the configured SHA-256; a local file is taken as it is
        relation_info_sha256=BEAR["relation_info"]["sha256"] if bear_relation_info_downloaded() else None,
    script:
        "../../scripts/bear/bear_tables.py"


rule bear_figures:
    input:
        accuracy=rules.bear_tables.output.accuracy_csv,
        paper="resources/papers/bear.yaml",
        code=code("bear/bear_figures"),
    output:
        **figure(
            "results/bear/figures/accuracy_parameters",
            caption="../../report/bear/parameters_figure.rst",
            category="BEAR",
            subcategory="Figures",
            labels={"figure": "accuracy against parameter count, per model family"},
        ),
    log:
        "logs/bear/figures.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/bear/bear_figures.py"


localrules:
    bear_tables,
    bear_figures,
