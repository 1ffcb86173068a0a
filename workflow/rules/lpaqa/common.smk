# LPAQA's helpers: its section of the config, the models it probes, the checks of its inputs,
# the paths of inputs that may be local or downloaded, and the functions its rules take inputs from.

import dataclasses

from knowprobe.lpaqa.paraphrase import ParaphraseSettings

LPAQA = config["lpaqa"]
LPAQA_MODELS = models_of_kind(["masked"], "lpaqa.models", LPAQA["models"])
LPAQA_DATASETS = LPAQA["datasets"]
LPAQA_PROMPT_SETS = LPAQA["prompt_sets"]
if "lpaqa" in config["studies"] and not LPAQA_MODELS:
    raise WorkflowError("config models: LPAQA probes masked language models and none is configured")

# Tables that several rules write, which consumers refer to by pattern: facts of a dataset split
# (LAMA's test sets by lpaqa_import_facts, T-REx-train by lpaqa_trex_train) and prompt sets
# (manual, mined, Mine+Man, paraphrased).
LPAQA_FACTS = "results/lpaqa/facts/{dataset}/{split}.parquet"
LPAQA_PROMPTS = "results/lpaqa/prompts/{prompt_set}.parquet"

# prompt sets built from Wikipedia mining (mine_para's seeds are mined prompts), and the
# paraphrase sets with the prompt set their seeds come from
MINED_SETS = [name for name in LPAQA_PROMPT_SETS if name in ("mine", "mine_mid", "mine_man", "mine_para")]
PARAPHRASE_SEEDS = {"man_para": "manual", "mine_para": "mine"}
PARAPHRASE_SETS = [name for name in LPAQA_PROMPT_SETS if name in PARAPHRASE_SEEDS]


def lama_data():
    """LAMA's unpacked data.zip (lpaqa_unpack_lama), or the local directory the config names."""
    location = LPAQA["lama"]["data"]
    return "resources/lama/data" if is_url(location) else location


def common_vocab():
    location = LPAQA["lama"]["common_vocab"]
    return "resources/lama/common_vocab_cased.txt" if is_url(location) else location


def lpaqa_release_trex_train():
    location = LPAQA["trex_train"]["lpaqa"]
    return "resources/lpaqa/TREx_train" if is_url(location) else location


def wikipedia_files():
    """The dump and its multistream index (None for a local dump without one)."""
    if LPAQA["wikipedia"]["path"] is not None:
        return LPAQA["wikipedia"]["path"], LPAQA["wikipedia"]["index"]
    stem = f"resources/wikipedia/enwiki-{LPAQA['wikipedia']['date']}-pages-articles-multistream"
    return f"{stem}.xml.bz2", f"{stem}-index.txt.bz2"


def wikipedia_chunks():
    return range(LPAQA["wikipedia"]["chunks"])


def paraphrase_seed_model():
    """The model whose T-REx-train accuracy picks Mine+Para's seeds."""
    name = LPAQA["paraphrase"]["seed_model"]
    if name is None:
        return LPAQA_MODELS[0]
    if name not in LPAQA_MODELS:
        raise WorkflowError(
            f"config lpaqa.paraphrase.seed_model: {name!r} is not a model LPAQA probes ({', '.join(LPAQA_MODELS)})"
        )
    return name


def probed_splits(prompt_set):
    """(dataset, split) pairs whose P@1 a prompt set reports: mined prompts, and paraphrases of
    them, exist for T-REx relations only. (The mined prompts are also probed on T-REx-train, where
    lpaqa_select_paraphrase_seeds asks for them.)"""
    if prompt_set in MINED_SETS:
        return [("trex", "test")] if "trex" in LPAQA_DATASETS else []
    return [(dataset, "test") for dataset in LPAQA_DATASETS]


def paraphrase_settings():
    """The paraphrase section's keys that ParaphraseSettings takes."""
    return settings({field.name: LPAQA["paraphrase"][field.name] for field in dataclasses.fields(ParaphraseSettings)})


check_local("lpaqa.lama.data", LPAQA["lama"]["data"], "directory")
check_local("lpaqa.lama.common_vocab", LPAQA["lama"]["common_vocab"], "file")
check_local("lpaqa.trex_train.lpaqa", LPAQA["trex_train"]["lpaqa"], "directory")
for key in ("path", "index"):
    if LPAQA["wikipedia"][key] is not None:
        check_local(f"lpaqa.wikipedia.{key}", LPAQA["wikipedia"][key], "file")
if LPAQA["wikipedia"]["path"] is not None and LPAQA["wikipedia"]["index"] is None and LPAQA["wikipedia"]["chunks"] > 1:
    raise WorkflowError(
        "config lpaqa.wikipedia.chunks: a dump without a multistream index (lpaqa.wikipedia.index) has no chunk "
        "boundaries; set lpaqa.wikipedia.chunks: 1 or give the index"
    )
if MINED_SETS and LPAQA["trex_train"]["source"] == "none":
    raise WorkflowError(
        f"config lpaqa.prompt_sets: {', '.join(MINED_SETS)} need T-REx-train (lpaqa.trex_train.source is none)"
    )
if PARAPHRASE_SETS:
    for direction in ("forward", "backward"):
        check_source(f"lpaqa.paraphrase.{direction}", LPAQA["paraphrase"][direction])
    paraphrase_seed_model()


def trex_train_input(wildcards):
    inputs = {
        "test": expand(rules.lpaqa_import_facts.output[0], dataset="trex")[0],
        "candidates": expand(rules.lpaqa_candidate_ids.output[0], model=LPAQA_MODELS),
        "code": code("lpaqa_trex_train"),
    }
    if LPAQA["trex_train"]["source"] == "wikidata":
        inputs["entities"] = rules.wikidata_gather.output.entities
        inputs["claims"] = rules.wikidata_gather.output.claims
    else:
        inputs["lpaqa"] = lpaqa_release_trex_train()
    return inputs


def wikipedia_url(name):
    return posixpath.join(LPAQA["wikipedia"]["mirror"], LPAQA["wikipedia"]["date"], name)


def translator_dir(direction):
    return source_dir(LPAQA["paraphrase"][direction], f"translators/{direction}")


def paraphrase_input(wildcards):
    seeds = {"manual": rules.lpaqa_manual_prompts.output[0], "mine": rules.lpaqa_select_paraphrase_seeds.output[0]}
    inputs = {"seeds": seeds[PARAPHRASE_SEEDS[wildcards.prompt_set]], "code": code("lpaqa_paraphrase")}
    if LPAQA["paraphrase"]["backend"] == "transformers":
        inputs["forward"] = translator_dir("forward")
        inputs["backward"] = translator_dir("backward")
    return inputs


def lpaqa_outputs():
    outputs = [
        *rules.lpaqa_tables.output,
        *rules.lpaqa_baseline_figure.output,
    ]
    if LPAQA["trex_train"]["source"] != "none":
        outputs += [*rules.lpaqa_trex_train_stats.output]
    if LPAQA["trex_train"]["source"] == "wikidata":
        outputs.append(rules.wikidata_gather.output.rejects)
    # the manual set's metrics feed the baseline tables; every other set is probed for its own
    for prompt_set in LPAQA_PROMPT_SETS:
        for dataset, split in probed_splits(prompt_set):
            outputs += expand(
                rules.lpaqa_evaluate.output[0], model=LPAQA_MODELS, prompt_set=prompt_set, dataset=dataset, split=split
            )
    if MINED_SETS:
        outputs += [rules.lpaqa_mine_prompts.output.table, rules.lpaqa_wikipedia_redirects.output.counts]
    if PARAPHRASE_SETS:
        outputs.append(rules.lpaqa_paraphrase_stats.output[0])
    return outputs
