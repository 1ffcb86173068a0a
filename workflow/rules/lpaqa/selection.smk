# Prompt selection and ensembles (LPAQA section 4) from the probe's stored hidden states: the
# selection stage, one job per model for all its prompt sets (each takes seconds to minutes);
# backward features (Table 15) for the sets of lpaqa.backward, which score new inputs with the
# model; one model's ranking and weights applied to another (Tables 12 and 13). The selection and
# cross-model stages run only the LM head, so changing a method's settings never reruns a probe.


rule lpaqa_backward:
    input:
        unpack(backward_input),
    output:
        **backward_outputs(),
    log:
        "logs/lpaqa/backward/{model}/{prompt_set}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=scoring_settings(),
        top=LPAQA["backward"]["top"],
        parts=[(dataset, split) for dataset in LPAQA_DATASETS for split in LPAQA_SPLITS],
    script:
        "../../scripts/lpaqa/lpaqa_backward.py"


rule lpaqa_selection:
    input:
        unpack(selection_input),
    output:
        **selection_outputs(),
    log:
        "logs/lpaqa/selection/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=lambda wildcards: scoring_settings(lpaqa_model(wildcards.model)),
        max_k=LPAQA["selection"]["max_k"],
        opti=settings(LPAQA["selection"]["opti"]),
        train_share=LPAQA["trex_train"]["train_share"],
        split_seed=LPAQA["trex_train"]["split_seed"],
        datasets=LPAQA_DATASETS,
        prompt_sets=LPAQA_PROMPT_SETS,
        backward_sets=lambda wildcards: BACKWARD_SETS if wildcards.model in LPAQA_MODELS else [],
        kind=lambda wildcards: lpaqa_kind(wildcards.model),
        score=lambda wildcards: lpaqa_score(wildcards.model),
        backward_top=LPAQA["backward"]["top"],
    script:
        "../../scripts/lpaqa/lpaqa_selection.py"


rule lpaqa_cross_model:
    input:
        unpack(cross_model_input),
    output:
        "results/lpaqa/cross_model/{model}/{fitted_on}.parquet",
    log:
        "logs/lpaqa/cross_model/{model}/{fitted_on}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=scoring_settings(),
        prompt_sets=CROSS_MODEL_SETS,
        datasets=LPAQA_DATASETS,
    script:
        "../../scripts/lpaqa/lpaqa_cross_model.py"
