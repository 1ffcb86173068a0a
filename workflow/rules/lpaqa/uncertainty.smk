# LPAQA's numbers with their uncertainty (knowprobe.uncertainty, shared by the studies): the
# headline rows with cluster bootstrap intervals and paired comparisons (the only rules that read
# the bootstrap's B and seed, so that changing them reruns nothing else), paraphrase consistency
# over each prompt set's prompts (ParaRel), calibration of the probe's answers: every run (each
# model under each score: the mask and next-token scores over the candidate vocabulary, the
# statement score over the relation's candidate set C_r), none assumed masked.


rule lpaqa_intervals:
    input:
        unpack(intervals_input),
    output:
        **lpaqa_table_outputs(
            [
                ("intervals", "P@1 with 95% intervals (Tables 2 and 3's rows)"),
                ("comparisons", "paired comparisons: differences and relations where one is better"),
            ]
        ),
        mcnemar="results/lpaqa/tables/mcnemar.csv",
    log:
        "logs/lpaqa/intervals.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        uncertainty=uncertainty_settings(),
        comparisons=settings(LPAQA["comparisons"]),
        models=LPAQA_RUNS,
        scores={run: score for run, (_, score) in LPAQA_RUN_OF.items()},
        prompt_sets=LPAQA_PROMPT_SETS,
        datasets=LPAQA_DATASETS,
    script:
        "../../scripts/lpaqa/lpaqa_intervals.py"


rule lpaqa_intervals_figure:
    input:
        intervals=rules.lpaqa_intervals.output.intervals_csv,
        code=code("lpaqa/lpaqa_intervals_figure"),
    output:
        **figure(
            "results/lpaqa/figures/intervals",
            caption="../../report/lpaqa/intervals_figure.rst",
            category="LPAQA",
            subcategory="Uncertainty",
            labels={"figure": "micro P@1 with 95% intervals"},
        ),
    log:
        "logs/lpaqa/intervals_figure.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_intervals_figure.py"


rule lpaqa_consistency:
    input:
        probes=[
            LPAQA_PROBE.format(model=model, prompt_set=prompt_set, dataset=dataset, split="test")
            for model in LPAQA_RUNS
            for prompt_set in consistency_sets()
            for dataset in LPAQA_DATASETS
        ],
        code=code("lpaqa/lpaqa_consistency"),
    output:
        **lpaqa_table_outputs([("consistency", "paraphrase consistency (ParaRel) of each prompt set")]),
        per_relation="results/lpaqa/tables/consistency_per_relation.csv",
    log:
        "logs/lpaqa/consistency.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        article_rule=LPAQA["consistency"]["article_rule"],
        reading=LPAQA["consistency"]["reading"],
        uncertainty=uncertainty_settings(),
    script:
        "../../scripts/lpaqa/lpaqa_consistency.py"


rule lpaqa_calibration:
    input:
        unpack(calibration_input),
    output:
        table="results/lpaqa/calibration/{model}.csv",
        bins="results/lpaqa/calibration/{model}.bins.csv",
    log:
        "logs/lpaqa/calibration/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=lambda wildcards: scoring_settings(lpaqa_model(wildcards.model)),
        kind=lambda wildcards: lpaqa_kind(wildcards.model),
        score=lambda wildcards: lpaqa_score(wildcards.model),
        uncertainty=uncertainty_settings(),
        bins=config["uncertainty"]["bins"],
        datasets=LPAQA_DATASETS,
        train_share=LPAQA["trex_train"]["train_share"],
        split_seed=LPAQA["trex_train"]["split_seed"],
    script:
        "../../scripts/lpaqa/lpaqa_calibration.py"


rule lpaqa_calibration_report:
    input:
        tables=expand(rules.lpaqa_calibration.output.table, model=LPAQA_RUNS),
        bins=expand(rules.lpaqa_calibration.output.bins, model=LPAQA_RUNS),
        code=code("lpaqa/lpaqa_calibration_report"),
    output:
        **lpaqa_table_outputs([("calibration", "calibration: ECE, Brier, answer-space prior, temperature")]),
        **figure(
            "results/lpaqa/figures/reliability",
            caption="../../report/lpaqa/reliability_figure.rst",
            category="LPAQA",
            subcategory="Uncertainty",
            labels={"figure": "reliability diagrams, per model"},
        ),
    log:
        "logs/lpaqa/calibration_report.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_calibration_report.py"


localrules:
    lpaqa_intervals,
    lpaqa_intervals_figure,
    lpaqa_consistency,
    lpaqa_calibration_report,
