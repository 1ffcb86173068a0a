# S-TEST's probe: every query (VP, FP, CP; specificity and naturalness) and relatedness, one job
# per model on a GPU (or the CPU where none is visible).


rule stest_probe:
    input:
        triples=stest_triples(),
        candidates=rules.stest_candidate_ids.output[0],
        model=model_input,
        code=code("stest/stest_probe"),
    output:
        STEST_SCORES,
    log:
        "logs/stest/probe/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
        relations=settings(STEST["relations"]),
        few_shot=settings(few_shot_settings()),
        subject_spacing=STEST["subject_spacing"],
        subject=STEST["subject_token"],
        scoring=lambda wildcards: scoring_settings(wildcards.model),
    script:
        "../../scripts/stest/stest_probe.py"
