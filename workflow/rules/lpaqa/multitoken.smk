# Facts whose answers may be several words and tokens (issue 41): LAMA's T-REx relations' facts
# from the Wikidata claims without T-REx-train's one-word and single-token filters, and each
# object's token count per probed model. Planned only with lpaqa.multitoken.enabled.


rule lpaqa_multitoken_facts:
    input:
        test=expand(rules.lpaqa_import_facts.output[0], dataset="trex")[0],
        entities=rules.wikidata_gather.output.entities,
        claims=rules.wikidata_gather.output.claims,
        models=[model_dir(name) for name in LPAQA_PROBED],
        code=code("lpaqa_multitoken_facts"),
    output:
        facts="results/lpaqa/multitoken/facts.parquet",
        tokens="results/lpaqa/multitoken/object_tokens.parquet",
        dropped="results/lpaqa/multitoken/dropped.csv",
    log:
        "logs/lpaqa/multitoken/facts.log",
    # the tokenizers' environment (transformers), which has the streaming build's pyarrow too
    conda:
        "../../../envs/probe.yaml"
    resources:
        **scaled("lpaqa_multitoken_facts", "claims", "entities"),
    params:
        per_relation=LPAQA["multitoken"]["per_relation"],
        seed=LPAQA["multitoken"]["seed"],
        models=LPAQA_PROBED,
        kinds=[config["models"][name]["kind"] for name in LPAQA_PROBED],
    script:
        "../../scripts/lpaqa_multitoken_facts.py"
