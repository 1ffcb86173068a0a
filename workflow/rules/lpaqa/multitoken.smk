# Facts whose answers may be several words and tokens (issue 41): LAMA's T-REx relations' facts
# from the Wikidata claims without T-REx-train's one-word and single-token filters (or X-FACTR's
# English facts, downloaded at a pinned commit), and each object's token count per probed model,
# one job a model: adding or dropping a model leaves the facts and the other models' probes as they
# are. Planned only with lpaqa.multitoken.enabled.


rule lpaqa_download_xfactr:
    output:
        "resources/lpaqa/xfactr.tar.gz",
    log:
        "logs/lpaqa/download/xfactr.log",
    retries: 3
    conda:
        "../../../envs/lama.yaml"
    params:
        url=MULTITOKEN["xfactr"]["release"],
    script:
        "../../scripts/shared/download.py"


rule lpaqa_unpack_xfactr:
    input:
        archive=rules.lpaqa_download_xfactr.output[0],
        checksums=MULTITOKEN["xfactr"]["checksums"] or [],
        code=code("lpaqa/lpaqa_unpack_xfactr"),
    output:
        directory("resources/lpaqa/xfactr"),
    log:
        "logs/lpaqa/download/unpack_xfactr.log",
    conda:
        "../../../envs/lama.yaml"
    script:
        "../../scripts/lpaqa/lpaqa_unpack_xfactr.py"


rule lpaqa_multitoken_facts:
    input:
        unpack(multitoken_sources),
        test=expand(rules.lpaqa_import_facts.output[0], dataset="trex")[0],
        code=code("lpaqa/lpaqa_multitoken_facts"),
    output:
        facts="results/lpaqa/multitoken/facts.parquet",
        dropped="results/lpaqa/multitoken/dropped.csv",
    log:
        "logs/lpaqa/multitoken/facts.log",
    # the tokenizers' environment (transformers), which has the streaming build's pyarrow too
    conda:
        "../../../envs/probe.yaml"
    resources:
        **scaled("lpaqa_multitoken_facts", "claims", "entities"),
    params:
        source=MULTITOKEN["source"],
        per_relation=LPAQA["multitoken"]["per_relation"],
        seed=LPAQA["multitoken"]["seed"],
    script:
        "../../scripts/lpaqa/lpaqa_multitoken_facts.py"


rule lpaqa_multitoken_object_tokens:
    input:
        facts=rules.lpaqa_multitoken_facts.output.facts,
        model=lambda wildcards: model_dir(wildcards.model),
        code=code("lpaqa/lpaqa_multitoken_object_tokens"),
    output:
        "results/lpaqa/multitoken/object_tokens/{model}.parquet",
    log:
        "logs/lpaqa/multitoken/object_tokens/{model}.log",
    wildcard_constraints:
        model="|".join(map(re.escape, MULTITOKEN_MODELS)),
    conda:
        "../../../envs/probe.yaml"
    params:
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
    script:
        "../../scripts/lpaqa/lpaqa_multitoken_object_tokens.py"


# Each probed model asks them every way of its kind (closed candidate set, open decoding,
# generation; docs/lpaqa.md, Multi-token answers): the train half with every template of the
# prompt sets, the test half with each set's Top-1 (a GPU rule, as lpaqa_probe).
rule lpaqa_multitoken_probe:
    input:
        unpack(multitoken_prompt_inputs),
        facts=rules.lpaqa_multitoken_facts.output.facts,
        tokens=rules.lpaqa_multitoken_object_tokens.output[0],
        model=lambda wildcards: model_dir(wildcards.model),
        code=code("lpaqa/lpaqa_multitoken_probe"),
    output:
        predictions="results/lpaqa/multitoken/predictions/{model}.parquet",
        selection="results/lpaqa/multitoken/selection/{model}.parquet",
        left_out="results/lpaqa/multitoken/left_out/{model}.csv",
    log:
        "logs/lpaqa/multitoken/probe/{model}.log",
    wildcard_constraints:
        model="|".join(map(re.escape, MULTITOKEN_MODELS)),
    conda:
        "../../../envs/probe.yaml"
    threads: config["scoring"]["threads"]
    resources:
        gpu=1,
    params:
        scoring=lambda wildcards: scoring_settings(wildcards.model),
        kind=lambda wildcards: config["models"][wildcards.model]["kind"],
        methods=lambda wildcards: MULTITOKEN["methods"][config["models"][wildcards.model]["kind"]],
        prompt_sets=MULTITOKEN_SETS,
        ask=multitoken_ask_settings(),
        train_share=MULTITOKEN["train_share"],
        seed=MULTITOKEN["seed"],
        sample=lambda wildcards: lpaqa_sample(wildcards.model),
    script:
        "../../scripts/lpaqa/lpaqa_multitoken_probe.py"


rule lpaqa_multitoken_tables:
    input:
        predictions=expand(rules.lpaqa_multitoken_probe.output.predictions, model=MULTITOKEN_MODELS),
        selection=expand(rules.lpaqa_multitoken_probe.output.selection, model=MULTITOKEN_MODELS),
        left_out=expand(rules.lpaqa_multitoken_probe.output.left_out, model=MULTITOKEN_MODELS),
        facts=rules.lpaqa_multitoken_facts.output.facts,
        tokens=expand(rules.lpaqa_multitoken_object_tokens.output[0], model=MULTITOKEN_MODELS),
        code=code("lpaqa/lpaqa_multitoken_tables"),
    output:
        markdown="results/lpaqa/tables/multitoken.md",
        csv=report_table(
            "results/lpaqa/tables/multitoken.csv",
            caption="lpaqa/multitoken.rst",
            category="LPAQA",
            subcategory="Multi-token answers",
            label="accuracy per model, method and prompt set by the gold object's token count",
            layout="results/lpaqa/tables/multitoken.md",
        ),
        latex="results/lpaqa/tables/multitoken.tex",
        sizes=report_table(
            "results/lpaqa/tables/multitoken_facts.csv",
            caption="lpaqa/multitoken_facts.rst",
            category="LPAQA",
            subcategory="Multi-token answers",
            label="the multi-token facts per model and relation by the object's token count",
        ),
        comparisons_md="results/lpaqa/tables/multitoken_comparisons.md",
        comparisons_csv=report_table(
            "results/lpaqa/tables/multitoken_comparisons.csv",
            caption="lpaqa/multitoken_comparisons.rst",
            category="LPAQA",
            subcategory="Multi-token answers",
            label="paired comparisons of methods and models on the multi-token facts",
            layout="results/lpaqa/tables/multitoken_comparisons.md",
        ),
        comparisons_tex="results/lpaqa/tables/multitoken_comparisons.tex",
        mcnemar="results/lpaqa/tables/multitoken_mcnemar.csv",
    log:
        "logs/lpaqa/multitoken/tables.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        uncertainty=uncertainty_settings(),
        models=MULTITOKEN_MODELS,
        kinds=[config["models"][name]["kind"] for name in MULTITOKEN_MODELS],
        train_share=MULTITOKEN["train_share"],
        seed=MULTITOKEN["seed"],
    script:
        "../../scripts/lpaqa/lpaqa_multitoken_tables.py"


rule lpaqa_multitoken_figure:
    input:
        accuracy=rules.lpaqa_multitoken_tables.output.csv,
        code=code("lpaqa/lpaqa_multitoken_figure"),
    output:
        **figure(
            "results/lpaqa/figures/multitoken",
            "../../report/lpaqa/multitoken_figure.rst",
            "LPAQA",
            "Multi-token answers",
        ),
    log:
        "logs/lpaqa/multitoken/figure.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        prompt_set=MULTITOKEN_SETS[0] if MULTITOKEN_SETS else None,
    script:
        "../../scripts/lpaqa/lpaqa_multitoken_figure.py"


localrules:
    lpaqa_multitoken_object_tokens,
    lpaqa_multitoken_tables,
    lpaqa_multitoken_figure,
