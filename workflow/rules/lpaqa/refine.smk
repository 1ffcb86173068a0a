# LM-aware prompt refinement (LPAQA section 6.1, Table 14): the prompts of lpaqa.refine.prompt_set
# refined by mask-predict on T-REx-train with one model, as the prompt set refined, which every
# model then probes like the others.


rule lpaqa_refine:
    input:
        prompts=LPAQA_PROMPTS.format(prompt_set=LPAQA["refine"]["prompt_set"]),
        facts=(
            expand(rules.lpaqa_filter_facts.output.facts, model=refine_model(), dataset="trex", split="train_dev")[0]
            if refine_model()
            else left_out_stop("LM-aware refinement")
        ),
        model=model_dir(refine_model()) if refine_model() else left_out_stop("LM-aware refinement"),
        code=code("lpaqa/lpaqa_refine"),
    output:
        prompts="results/lpaqa/prompts/refined.parquet",
        details=report_table(
            "results/lpaqa/refine/refinements.csv",
            caption="lpaqa/refinements.rst",
            category="LPAQA",
            subcategory="Prompts",
            label="LM-aware refinement of each prompt",
        ),
    log:
        "logs/lpaqa/refine.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=scoring_settings(),
        max_rounds=LPAQA["refine"]["max_rounds"],
        max_facts=LPAQA["refine"]["max_facts"],
    script:
        "../../scripts/lpaqa/lpaqa_refine.py"
