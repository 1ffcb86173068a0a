# BEAR's scores: every statement (each template filled with each instance's subject and each
# candidate answer) scored by the shared statement scores, one job per model on a GPU (or the CPU
# where none is visible).


rule bear_probe:
    input:
        relations=rules.bear_import.output.relations,
        instances=rules.bear_import.output.instances,
        model=model_input,
        code=code("bear/bear_probe"),
    output:
        scores=BEAR_SCORES,
        model="results/bear/scores/{model}.json",
    log:
        "logs/bear/probe/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
        hub_id=lambda wildcards: config["models"][wildcards.model].get("hub_id"),
        bear_scoring=settings(BEAR["scoring"]),
        scoring=lambda wildcards: scoring_settings(wildcards.model),
    script:
        "../../scripts/bear/bear_probe.py"
