# COMPS's tables (the stimuli's statistics beside the paper's; accuracy per model and subset, by
# negative type, by family and size) and figures.


rule comps_tables:
    input:
        scores=expand(COMPS_SCORES, model=COMPS_MODELS),
        models=expand("results/comps/scores/{model}.json", model=COMPS_MODELS),
        stimuli=comps_stimuli(),
        built=rules.comps_build.output.stimuli if COMPS["source"] == "build" else [],
        released=rules.comps_import_released.output.stimuli if COMPS["released"] is not None else [],
        paper="resources/papers/comps.yaml",
        code=code("comps/comps_tables"),
    output:
        **{
            f"{name}_{fmt}": (
                report_table(
                    f"results/comps/tables/{name}.{fmt}",
                    caption=f"comps/{name}.rst",
                    category="COMPS",
                    subcategory="Stimuli" if name == "statistics" else "Results",
                    label=label,
                    layout=f"results/comps/tables/{name}.md",
                )
                if fmt == "csv"
                else f"results/comps/tables/{name}.{fmt}"
            )
            for name, label in [
                ("statistics", "the stimuli per subset, beside the paper's counts"),
                ("accuracy", "accuracy per model and subset"),
                ("negative_types", "accuracy by negative-sample type"),
                ("families", "accuracy by model family and size"),
            ]
            for fmt in ("md", "csv", "tex")
        },
    log:
        "logs/comps/tables.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/comps/comps_tables.py"


rule comps_figures:
    input:
        accuracy=rules.comps_tables.output.accuracy_csv,
        negative_types=rules.comps_tables.output.negative_types_csv,
        families=rules.comps_tables.output.families_csv,
        code=code("comps/comps_figures"),
    output:
        **figure(
            "results/comps/figures/accuracy_parameters",
            caption="../../report/comps/parameters_figure.rst",
            category="COMPS",
            subcategory="Figures",
            labels={"figure": "accuracy against parameter count, per subset"},
        ),
        **{
            f"types_{key}": value
            for key, value in figure(
                "results/comps/figures/negative_types",
                caption="../../report/comps/negative_types_figure.rst",
                category="COMPS",
                subcategory="Figures",
                labels={"figure": "accuracy by negative-sample type, per model"},
            ).items()
        },
    log:
        "logs/comps/figures.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/comps/comps_figures.py"


localrules:
    comps_tables,
    comps_figures,
