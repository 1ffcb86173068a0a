# LPAQA's tables and figures.


rule lpaqa_tables:
    input:
        manual=expand(
            rules.lpaqa_evaluate.output[0],
            model=LPAQA_RUNS,
            prompt_set="manual",
            dataset=LPAQA_DATASETS,
            split="test",
        ),
        majority=expand(rules.lpaqa_majority.output[0], model=LPAQA_RUNS, dataset=LPAQA_DATASETS, split="test"),
        dropped=expand(rules.lpaqa_filter_facts.output.dropped, model=LPAQA_RUNS, dataset=LPAQA_DATASETS, split="test"),
        vocab=expand(rules.lpaqa_candidate_ids.output[0], model=LPAQA_RUNS),
        code=code("lpaqa/lpaqa_tables"),
    output:
        markdown="results/lpaqa/tables/baseline.md",
        csv=report_table(
            "results/lpaqa/tables/baseline.csv",
            caption="lpaqa/baseline.rst",
            category="LPAQA",
            subcategory="Results",
            label="manual-prompt baseline (Tables 2 and 3: Majority, Man)",
            layout="results/lpaqa/tables/baseline.md",
        ),
        latex="results/lpaqa/tables/baseline.tex",
        per_relation=report_table(
            "results/lpaqa/tables/per_relation.csv",
            caption="lpaqa/per_relation.rst",
            category="LPAQA",
            subcategory="Results",
            label="P@1 per relation",
        ),
        dropped=report_table(
            "results/lpaqa/tables/dropped_facts.csv",
            caption="lpaqa/dropped_facts.rst",
            category="LPAQA",
            subcategory="Data",
            label="facts dropped by LAMA's filter",
        ),
    log:
        "logs/lpaqa/tables.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        models=LPAQA_RUNS,
        datasets=LPAQA_DATASETS,
        runs=[(run, list(pair)) for run, pair in LPAQA_RUN_OF.items()],
        answer_space=LPAQA["probe"]["statement"]["answer_space"],
    script:
        "../../scripts/lpaqa/lpaqa_tables.py"


rule lpaqa_baseline_figure:
    input:
        per_relation=rules.lpaqa_tables.output.per_relation,
        code=code("lpaqa/lpaqa_baseline_figure"),
    output:
        **figure(
            "results/lpaqa/figures/baseline_per_relation",
            caption="../../report/lpaqa/baseline_figure.rst",
            category="LPAQA",
            subcategory="Results",
            labels={"figure": "micro P@1 per relation: Man and Majority"},
        ),
    log:
        "logs/lpaqa/baseline_figure.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_baseline_figure.py"


rule lpaqa_paper_tables:
    input:
        unpack(paper_tables_input),
    output:
        **paper_table_outputs(),
    log:
        "logs/lpaqa/paper_tables.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        hub_ids={name: config["models"][name]["hub_id"] for name in LPAQA_MODELS},
        models=LPAQA_MODELS,
        refined_from=LPAQA["refine"]["prompt_set"],
        stand_ins=lpaqa_release_stand_ins(),
    script:
        "../../scripts/lpaqa/lpaqa_paper_tables.py"


localrules:
    lpaqa_tables,
    lpaqa_baseline_figure,
    lpaqa_paper_tables,


# every run (a model under a score) side by side: Majority and the ensembles per prompt set
rule lpaqa_score_tables:
    input:
        selection=expand(LPAQA_SELECTION, model=LPAQA_RUNS, prompt_set=LPAQA_PROMPT_SETS),
        majority=expand(rules.lpaqa_majority.output[0], model=LPAQA_RUNS, dataset=LPAQA_DATASETS, split="test"),
        prompts=expand(LPAQA_PROMPTS, prompt_set=LPAQA_PROMPT_SETS),
        vocab=expand(rules.lpaqa_candidate_ids.output[0], model=LPAQA_RUNS),
        # the causal runs' tokenizers: each row names the start token its probe read first
        models=[model_dir(lpaqa_model(run)) for run in LPAQA_RUNS if lpaqa_kind(run) == "causal"],
        code=code("lpaqa/lpaqa_score_tables"),
    output:
        markdown="results/lpaqa/tables/scores.md",
        csv=report_table(
            "results/lpaqa/tables/scores.csv",
            caption="lpaqa/scores.rst",
            category="LPAQA",
            subcategory="Results",
            label="every model under every score (mask, next_token, statement): Majority and ensembles",
            layout="results/lpaqa/tables/scores.md",
        ),
        latex="results/lpaqa/tables/scores.tex",
        right_context=report_table(
            "results/lpaqa/tables/right_context.csv",
            caption="lpaqa/right_context.rst",
            category="LPAQA",
            subcategory="Data",
            label="prompts whose [Y] is not at the end (next_token drops their right context)",
        ),
    log:
        "logs/lpaqa/score_tables.log",
    conda:
        "../../../envs/probe.yaml"  # the causal runs' tokenizers (their start token)
    params:
        runs=[(run, list(pair)) for run, pair in LPAQA_RUN_OF.items()],
        start_tokens=[
            (run, scoring_settings(lpaqa_model(run))["start_token"])
            for run in LPAQA_RUNS
            if lpaqa_kind(run) == "causal"
        ],
        prompt_sets=LPAQA_PROMPT_SETS,
        answer_space=LPAQA["probe"]["statement"]["answer_space"],
    script:
        "../../scripts/lpaqa/lpaqa_score_tables.py"


localrules:
    lpaqa_score_tables,
