# Back-translation paraphrasing (LPAQA section 3.2): seeds -> German (B beams) -> English
# (B beams each) -> the top T distinct candidates with intact placeholders, as prompt sets
# man_para (seeds: the manual prompts) and mine_para (seeds: each relation's best mined
# prompt on T-REx-train, which needs the mined prompts probed on the train split).

# the config keys that knowprobe.paraphrase.ParaphraseSettings takes
PARAPHRASE_SETTINGS = [
    "beams",
    "top",
    "length_normalize",
    "subject_stand_in",
    "object_stand_in",
    "batch_size",
    "max_new_tokens",
    "device",
    "dtype",
    "seed",
]


rule download_translator:
    output:
        directory("resources/translators/{direction}"),
    log:
        "logs/download/translator_{direction}.log",
    wildcard_constraints:
        direction="forward|backward",
    retries: 2
    conda:
        "../../envs/paraphrase.yaml"
    params:
        hub_id=lambda wildcards: config["paraphrase"][wildcards.direction]["hub_id"],
        revision=lambda wildcards: config["paraphrase"][wildcards.direction]["revision"],
    script:
        "../scripts/download_model.py"


rule train_demo_translator:
    input:
        corpus_templates=lambda wildcards: config["paraphrase"][wildcards.direction]["train"]["corpus_templates"],
        prompts="results/prompts/manual.parquet",
        code=code("demo_translator", "demo_model", "paraphrase", "prompts"),
    output:
        directory("results/translators/{direction}"),
    log:
        "logs/train_demo_translator/{direction}.log",
    wildcard_constraints:
        direction="forward|backward",
    conda:
        "../../envs/paraphrase.yaml"
    threads: 2
    params:
        settings=lambda wildcards: settings(config["paraphrase"][wildcards.direction]["train"]),
        stand_ins=[config["paraphrase"]["subject_stand_in"], config["paraphrase"]["object_stand_in"]],
    script:
        "../scripts/train_demo_translator.py"


rule select_paraphrase_seeds:
    input:
        mined="results/prompts/{seed_set}.parquet",
        train_metrics=lambda wildcards: f"results/metrics/{PARAPHRASE_SEED_MODEL}/{wildcards.seed_set}/trex_train.parquet",
        code=code("paraphrase", "prompts"),
    output:
        "results/paraphrase/seeds/{seed_set}.parquet",
    log:
        "logs/paraphrase/seeds_{seed_set}.log",
    wildcard_constraints:
        seed_set="mine",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/select_paraphrase_seeds.py"


rule paraphrase:
    input:
        unpack(paraphrase_input),
    output:
        candidates="results/paraphrase/{prompt_set}/candidates.parquet",
        paraphrases="results/paraphrase/{prompt_set}/paraphrases.parquet",
        stats="results/paraphrase/{prompt_set}/stats.csv",
        prompts="results/prompts/{prompt_set}.parquet",
    log:
        "logs/paraphrase/{prompt_set}.log",
    wildcard_constraints:
        prompt_set="man_para|mine_para",
    conda:
        "../../envs/fairseq.yaml" if config["paraphrase"]["backend"] == "fairseq" else "../../envs/paraphrase.yaml"
    threads: config["paraphrase"]["threads"]
    resources:
        gpu=1,
    params:
        seed_set=lambda wildcards: PARAPHRASE_SEEDS[wildcards.prompt_set],
        backend=config["paraphrase"]["backend"],
        fairseq_models=[config["paraphrase"]["fairseq_forward"], config["paraphrase"]["fairseq_backward"]],
        settings=settings({key: config["paraphrase"][key] for key in PARAPHRASE_SETTINGS}),
    script:
        "../scripts/paraphrase.py"


rule paraphrase_stats:
    input:
        expand("results/paraphrase/{prompt_set}/stats.csv", prompt_set=PARAPHRASE_SETS),
    output:
        report(
            "results/tables/paraphrase_stats.csv",
            caption="../report/paraphrase_stats.rst",
            category="LPAQA",
            subcategory="Paraphrases",
        ),
    log:
        "logs/paraphrase/stats.log",
    conda:
        "../../envs/lama.yaml"
    script:
        "../scripts/paraphrase_stats.py"
