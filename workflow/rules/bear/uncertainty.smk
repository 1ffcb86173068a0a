# BEAR's numbers with their uncertainty (knowprobe.uncertainty, shared by the studies): the BEAR
# score and each template's accuracy with cluster bootstrap intervals (relations, then instances)
# and paired comparisons of models, and the calibration of each model's answers over the relations'
# answer spaces. The only BEAR rule that reads the bootstrap's B and seed.


rule bear_intervals:
    input:
        scores=expand(BEAR_SCORES, model=BEAR_MODELS),
        instances=rules.bear_import.output.instances,
        code=code("bear/bear_intervals"),
    output:
        **{
            f"{name}_{fmt}": (
                report_table(
                    f"results/bear/tables/{name}.{fmt}",
                    caption=f"bear/{name}.rst",
                    category="BEAR",
                    subcategory="Uncertainty",
                    label=label,
                    layout=f"results/bear/tables/{name}.md",
                )
                if fmt == "csv"
                else f"results/bear/tables/{name}.{fmt}"
            )
            for name, label in [
                ("intervals", "the BEAR score with 95% intervals"),
                ("comparisons", "paired comparisons: differences and relations where one is better"),
                ("calibration", "calibration over the answer spaces: ECE, Brier, answer-space prior"),
            ]
            for fmt in ("md", "csv", "tex")
        },
        mcnemar="results/bear/tables/mcnemar.csv",
    log:
        "logs/bear/intervals.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        uncertainty=settings({k: v for k, v in config["uncertainty"].items() if k != "bins"}),
        comparisons=settings(BEAR["comparisons"]),
        models=BEAR_MODELS,
        ties=BEAR["ties"],
        ddof=BEAR["sem_ddof"],
        bins=config["uncertainty"]["bins"],
    script:
        "../../scripts/bear/bear_intervals.py"


rule bear_intervals_figure:
    input:
        intervals=rules.bear_intervals.output.intervals_csv,
        accuracy=rules.bear_tables.output.accuracy_csv,
        code=code("bear/bear_intervals_figure"),
    output:
        **figure(
            "results/bear/figures/intervals",
            caption="../../report/bear/intervals_figure.rst",
            category="BEAR",
            subcategory="Uncertainty",
            labels={"figure": "the BEAR score with 95% intervals"},
        ),
    log:
        "logs/bear/intervals_figure.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/bear/bear_intervals_figure.py"


localrules:
    bear_intervals,
    bear_intervals_figure,
