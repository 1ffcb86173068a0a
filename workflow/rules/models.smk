# Models, shared by the studies: hub models are fetched once into resources/models/NAME (on the
# submitting host, which has network), and GGUF files likewise (a local one linked there); the
# demo's tiny models are trained offline on the demo corpora that the studies write (each
# registers its own in DEMO_CORPORA).


rule download_model:
    input:
        # a local GGUF file, linked into the folder (a change to it reruns the rule, which holds it to the lock file)
        gguf=lambda wildcards: gguf_local_file(wildcards.model),
    output:
        directory("resources/models/{model}"),
    log:
        "logs/download/model_{model}.log",
    # no rule retries: download_hub_model tries a lost connection again itself, and a model the
    # hub does not have (or no network) is one message, printed once
    conda:
        "../../envs/probe.yaml"
    params:
        hub_id=lambda wildcards: config["models"][wildcards.model]["hub_id"],
        revision=lambda wildcards: model_revision(wildcards.model),
    script:
        "../scripts/shared/download_model.py"


rule train_demo_model:
    input:
        sentences=lambda wildcards: demo_corpora("sentences"),
        words=lambda wildcards: demo_corpora("words"),
        code=code("shared/train_demo_model"),
    output:
        directory("results/models/{model}"),
    log:
        "logs/train_demo_model/{model}.log",
    conda:
        "../../envs/probe.yaml"
    # one thread, always: the weights, and every demo table, must not depend on --cores (demo_model.train)
    threads: 1
    params:
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
        settings=lambda wildcards: settings(config["models"][wildcards.model]["train"]),
    script:
        "../scripts/shared/train_demo_model.py"
