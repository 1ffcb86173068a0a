# COMPS's numbers with their uncertainty (knowprobe.uncertainty): accuracy with cluster bootstrap
# intervals (properties, then pairs) and paired comparisons. The only COMPS rule that reads the
# bootstrap's B and seed.


rule comps_intervals:
    input:
        scores=expand(COMPS_SCORES, model=COMPS_MODELS),
        stimuli=comps_stimuli(),
        code=code("comps/comps_intervals"),
    output:
        **{
            f"{name}_{fmt}": (
                report_table(
                    f"results/comps/tables/{name}.{fmt}",
                    caption=f"comps/{name}.rst",
                    category="COMPS",
                    subcategory="Uncertainty",
                    label=label,
                    layout=f"results/comps/tables/{name}.md",
                )
                if fmt == "csv"
                else f"results/comps/tables/{name}.{fmt}"
            )
            for name, label in [
                ("intervals", "accuracy with 95% intervals"),
                ("comparisons", "paired comparisons: differences and properties where one is better"),
            ]
            for fmt in ("md", "csv", "tex")
        },
        mcnemar="results/comps/tables/mcnemar.csv",
    log:
        "logs/comps/intervals.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        uncertainty=settings({k: v for k, v in config["uncertainty"].items() if k != "bins"}),
        comparisons=settings(COMPS["comparisons"]),
        models=COMPS_MODELS,
    script:
        "../../scripts/comps/comps_intervals.py"


localrules:
    comps_intervals,


rule comps_intervals_figure:
    input:
        intervals=rules.comps_intervals.output.intervals_csv,
        code=code("comps/comps_intervals_figure"),
    output:
        **figure(
            "results/comps/figures/intervals",
            caption="../../report/comps/intervals_figure.rst",
            category="COMPS",
            subcategory="Uncertainty",
            labels={"figure": "accuracy with 95% intervals"},
        ),
    log:
        "logs/comps/intervals_figure.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/comps/comps_intervals_figure.py"


localrules:
    comps_intervals_figure,
