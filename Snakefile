# knowprobe: what do pre-trained language models know, and how much depends on how they are asked?
#
#   snakemake --cores all                                    full reproduction (config.yaml)
#   snakemake --cores 2 --configfile resources/demo/config.yaml   offline demo
#   snakemake --profile profiles/slurm                       the same on a SLURM cluster
#
# Each stage has its own rule file under workflow/rules and its own module under
# workflow/scripts/knowprobe; rules declare their modules as inputs, so editing a stage's code or
# its config section reruns that stage and what depends on it, nothing upstream.

from snakemake.utils import min_version

min_version("9.0")


# config.yaml is the full reproduction. A --configfile given on the command line replaces it
# rather than being merged into it (merging would keep config.yaml's models in the demo);
# keys a config file leaves out take the schema's defaults.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


# Names only from the config, so that e.g. results/facts/{dataset}.parquet never matches
# results/facts/{model}/{dataset}.parquet.
wildcard_constraints:
    model="|".join(re.escape(m) for m in MODELS),
    # trex_train: T-REx-train probed with the mined prompts to choose Mine+Para's seeds
    dataset="|".join(DATASETS + ["trex_train"]),
    prompt_set="|".join(PROMPT_SETS),
    chunk=r"\d+",


include: "workflow/rules/lama.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/vocab.smk"
include: "workflow/rules/probe.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/wikidata.smk"
include: "workflow/rules/trex_train.smk"
include: "workflow/rules/wikipedia.smk"
include: "workflow/rules/mining.smk"
include: "workflow/rules/paraphrase.smk"


# Light rules stay on the submitting host when a cluster executor is used: they take seconds,
# less than a queue wait, and the downloads need the network that compute nodes often lack.
# Submitted to the cluster: probe (GPU), train_demo_model, and the Wikidata index, chunk
# parses (one job each, across nodes), gather and T-REx-train, the Wikipedia extraction and
# matching chunks, mining (spaCy), paraphrasing (GPU) and the demo translators.
localrules:
    all,
    download_lama,
    download_common_vocab,
    download_model,
    unpack_lama,
    import_facts,
    manual_prompts,
    candidate_words,
    candidate_ids,
    filter_facts,
    evaluate,
    majority,
    tables,
    download_wikidata,
    download_lpaqa_trex_train,
    unpack_lpaqa_trex_train,
    trex_train_stats,
    download_wikipedia,
    wikipedia_streams,
    mine_man_prompts,
    download_translator,
    select_paraphrase_seeds,
    paraphrase_stats,


rule all:
    default_target: True
    input:
        final_outputs(),
