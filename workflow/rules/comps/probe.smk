# COMPS's scores: log p(property phrase | prefix) of both prefixes of every pair, one job per
# model on a GPU (or the CPU where none is visible).


rule comps_probe:
    input:
        stimuli=comps_stimuli(),
        model=model_input,
        code=code("comps/comps_probe"),
    output:
        scores=COMPS_SCORES,
        model="results/comps/scores/{model}.json",
    log:
        "logs/comps/probe/{model}.log",
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
        within_word_l2r=COMPS["scoring"]["within_word_l2r"],
        start_token=COMPS["scoring"]["start_token"],
        scoring=lambda wildcards: scoring_settings(wildcards.model),
        dtype=COMPS["scoring"]["dtype"],
        recheck=COMPS["scoring"]["recheck"],
    script:
        "../../scripts/comps/comps_probe.py"
