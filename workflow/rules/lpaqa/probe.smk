# The probe (a GPU rule: on a cluster it goes to a GPU node; locally `--resources gpu=N` caps
# how many run at once), P@1 of every prompt, and the Majority baseline.
# One probe job per model scores every prompt set on every dataset split, each distinct input (a
# template filled with a subject) once whichever sets and splits ask for it; a second job per
# model probes the sets whose prompts the first job's results chose (Mine+Para), reading its
# hidden states where their inputs recur.


rule lpaqa_probe:
    input:
        unpack(probe_input(FIRST_SETS)),
    output:
        **probe_outputs(FIRST_SETS),
    log:
        "logs/lpaqa/probe/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=lambda wildcards: scoring_settings(lpaqa_model(wildcards.model)),
        top_k=LPAQA["probe"]["top_k"],
        kind=lambda wildcards: lpaqa_kind(wildcards.model),
        score=lambda wildcards: lpaqa_score(wildcards.model),
        pll=LPAQA["probe"]["statement"]["pll"],
        answer_space=LPAQA["probe"]["statement"]["answer_space"],
        google_re_relations=settings(LPAQA["google_re_relations"]),
        prompt_sets=FIRST_SETS,
        parts=[(dataset, split) for dataset in LPAQA_DATASETS for split in LPAQA_SPLITS],
    script:
        "../../scripts/lpaqa/lpaqa_probe.py"


rule lpaqa_probe_seeded:
    input:
        unpack(probe_input(SEEDED_SETS, reused=FIRST_SETS)),
    output:
        **probe_outputs(SEEDED_SETS),
    log:
        "logs/lpaqa/probe/{model}.seeded.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=lambda wildcards: scoring_settings(lpaqa_model(wildcards.model)),
        top_k=LPAQA["probe"]["top_k"],
        kind=lambda wildcards: lpaqa_kind(wildcards.model),
        score=lambda wildcards: lpaqa_score(wildcards.model),
        pll=LPAQA["probe"]["statement"]["pll"],
        answer_space=LPAQA["probe"]["statement"]["answer_space"],
        google_re_relations=settings(LPAQA["google_re_relations"]),
        prompt_sets=SEEDED_SETS,
        parts=[(dataset, split) for dataset in LPAQA_DATASETS for split in LPAQA_SPLITS],
    script:
        "../../scripts/lpaqa/lpaqa_probe.py"


rule lpaqa_evaluate:
    input:
        probe=LPAQA_PROBE,
        code=code("lpaqa/lpaqa_evaluate"),
    output:
        "results/lpaqa/metrics/{model}/{prompt_set}/{dataset}/{split}.parquet",
    log:
        "logs/lpaqa/evaluate/{model}/{prompt_set}/{dataset}/{split}.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_evaluate.py"


rule lpaqa_majority:
    input:
        facts=rules.lpaqa_filter_facts.output.facts,
        objects=rules.lpaqa_filter_facts.output.majority,
        code=code("lpaqa/lpaqa_majority"),
    output:
        "results/lpaqa/majority/{model}/{dataset}/{split}.parquet",
    log:
        "logs/lpaqa/majority/{model}/{dataset}/{split}.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_majority.py"


localrules:
    lpaqa_evaluate,
    lpaqa_majority,
