# S-TEST's numbers with their uncertainty (knowprobe.uncertainty): p_r with cluster bootstrap
# intervals and paired comparisons. The only S-TEST rule that reads the bootstrap's B and seed.


rule stest_intervals:
    input:
        scores=expand(STEST_SCORES, model=STEST_MODELS),
        code=code("stest/stest_intervals"),
    output:
        **{
            f"{name}_{fmt}": (
                report_table(
                    f"results/stest/tables/{name}.{fmt}",
                    caption=f"stest/{name}.rst",
                    category="S-TEST",
                    subcategory="Uncertainty",
                    label=label,
                    layout=f"results/stest/tables/{name}.md",
                )
                if fmt == "csv"
                else f"results/stest/tables/{name}.{fmt}"
            )
            for name, label in [
                ("intervals", "p_r with 95% intervals"),
                ("comparisons", "paired comparisons: differences and relations where one is better"),
            ]
            for fmt in ("md", "csv", "tex")
        },
        mcnemar="results/stest/tables/mcnemar.csv",
    log:
        "logs/stest/intervals.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        uncertainty=settings({k: v for k, v in config["uncertainty"].items() if k != "bins"}),
        comparisons=settings(STEST["comparisons"]),
        models=STEST_MODELS,
    script:
        "../../scripts/stest/stest_intervals.py"


localrules:
    stest_intervals,


rule stest_intervals_figure:
    input:
        intervals=rules.stest_intervals.output.intervals_csv,
        code=code("stest/stest_intervals_figure"),
    output:
        **figure(
            "results/stest/figures/intervals",
            caption="../../report/stest/intervals_figure.rst",
            category="S-TEST",
            subcategory="Uncertainty",
            labels={"figure": "p_r with 95% intervals"},
        ),
    log:
        "logs/stest/intervals_figure.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/stest/stest_intervals_figure.py"


localrules:
    stest_intervals_figure,
