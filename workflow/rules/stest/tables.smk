# S-TEST's tables (the paper's Tables 1, 2, 3, 5 and 6, each beside the paper's numbers) and figures.


rule stest_tables:
    input:
        scores=expand(STEST_SCORES, model=STEST_MODELS),
        triples=stest_triples(),
        built=rules.stest_build.output.triples if STEST["source"] == "wikidata" else [],
        released=rules.stest_import_released.output.triples if STEST["released"] is not None else [],
        paper="resources/papers/stest.yaml",
        # the causal models' tokenizers: the tables name the start token each probe read first
        models=[model_dir(name) for name in STEST_MODELS if config["models"][name]["kind"] == "causal"],
        code=code("stest/stest_tables"),
    output:
        **{
            f"{name}_{fmt}": (
                report_table(
                    f"results/stest/tables/{name}.{fmt}",
                    caption=f"stest/{name}.rst",
                    category="S-TEST",
                    subcategory="Results" if name != "table1" else "Benchmark",
                    label=label,
                    layout=f"results/stest/tables/{name}.md",
                )
                if fmt == "csv"
                else f"results/stest/tables/{name}.{fmt}"
            )
            for name, label in [
                ("table1", "Table 1: the benchmark's statistics"),
                ("table2", "Table 2: specificity (vanilla prompts)"),
                ("table3", "Table 3: naturalness and relatedness"),
                ("table5", "Table 5: vanilla, few-shot and cascade prompts"),
                ("table6", "Table 6: naturalness and specificity by prompt"),
                ("compat", "p_r counted as the release's eval.py counts"),
            ]
            for fmt in ("md", "csv", "tex")
        },
        pr=report_table(
            "results/stest/tables/p_r.csv",
            caption="stest/p_r.rst",
            category="S-TEST",
            subcategory="Results",
            label="p_r of every model, measure, method, mode and relation",
        ),
    log:
        "logs/stest/tables.log",
    conda:
        "../../../envs/probe.yaml"  # the causal models' tokenizers (their start token)
    params:
        models=stest_model_info(),
        relations=STEST_RELATIONS,
        compat=STEST["compat"],
    script:
        "../../scripts/stest/stest_tables.py"


rule stest_figures:
    input:
        pr=rules.stest_tables.output.pr,
        paper="resources/papers/stest.yaml",
        code=code("stest/stest_figures"),
    output:
        **figure(
            "results/stest/figures/specificity",
            caption="../../report/stest/specificity_figure.rst",
            category="S-TEST",
            subcategory="Figures",
            labels={"figure": "p_r per relation and prompting method, per model"},
        ),
        **{
            f"naturalness_{key}": value
            for key, value in figure(
                "results/stest/figures/naturalness_specificity",
                caption="../../report/stest/naturalness_figure.rst",
                category="S-TEST",
                subcategory="Figures",
                labels={"figure": "naturalness against specificity"},
            ).items()
        },
    log:
        "logs/stest/figures.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        models=STEST_MODELS,
    script:
        "../../scripts/stest/stest_figures.py"


localrules:
    stest_tables,
    stest_figures,
