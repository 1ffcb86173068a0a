# Shared helpers: config validation, paths of inputs that may be local or downloaded,
# and the code files each rule declares as inputs.

import os
import posixpath
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

validate(config, schema="../schemas/config.schema.yaml")

PACKAGE = Path(workflow.basedir) / "workflow" / "scripts" / "knowprobe"
MODELS = list(config["models"])
DATASETS = config["datasets"]
PROMPT_SETS = config["prompt_sets"]


def is_url(location):
    return re.match(r"^(https?|ftp)://", location) is not None


def code(*modules):
    """Modules that a job imports, declared as its inputs (Snakemake does not track imports)."""
    # relative paths: a project directory that is moved or copied keeps its provenance records
    return [os.path.relpath(PACKAGE / f"{module}.py") for module in ("io", *modules)]


def settings(section):
    """A config section as a params value, keys sorted: the params rerun trigger compares the
    recorded value, so reordering keys in a config file must not count as a change."""
    if isinstance(section, dict):
        return {key: settings(section[key]) for key in sorted(section)}
    return section


def check_source(key, entry):
    """A model or translator entry: exactly one of hub_id, path or train, and its local files."""
    sources = [name for name in ("hub_id", "path", "train") if entry.get(name) is not None]
    if len(sources) != 1:
        raise WorkflowError(
            f"config {key}: give exactly one of hub_id, path or train (found {', '.join(sources) or 'none'})"
        )
    if entry.get("path") is not None and not Path(entry["path"]).is_dir():
        raise WorkflowError(f"config {key}.path: directory {entry['path']} not found")
    train = entry.get("train")
    if train is not None and not Path(train["corpus_templates"]).is_file():
        raise WorkflowError(f"config {key}.train.corpus_templates: file {train['corpus_templates']} not found")


def check_models():
    for name, entry in config["models"].items():
        check_source(f"models.{name}", entry)


def check_local(key, location, kind):
    if not is_url(location):
        exists = Path(location).is_dir() if kind == "directory" else Path(location).is_file()
        if not exists:
            raise WorkflowError(f"config {key}: {kind} {location} not found (give a URL or an existing {kind})")


check_models()
check_local("lama.data", config["lama"]["data"], "directory")
check_local("lama.common_vocab", config["lama"]["common_vocab"], "file")
if config["wikidata"]["path"] is not None:
    check_local("wikidata.path", config["wikidata"]["path"], "file")
check_local("trex_train.lpaqa", config["trex_train"]["lpaqa"], "directory")
for key in ("path", "index"):
    if config["wikipedia"][key] is not None:
        check_local(f"wikipedia.{key}", config["wikipedia"][key], "file")
if (
    config["wikipedia"]["path"] is not None
    and config["wikipedia"]["index"] is None
    and config["wikipedia"]["chunks"] > 1
):
    raise WorkflowError(
        "config wikipedia.chunks: a dump without a multistream index (wikipedia.index) has no chunk "
        "boundaries; set wikipedia.chunks: 1 or give the index"
    )
# prompt sets built from Wikipedia mining (mine_para's seeds are mined prompts), and the
# paraphrase sets with the prompt set their seeds come from
MINED_SETS = [name for name in PROMPT_SETS if name in ("mine", "mine_mid", "mine_man", "mine_para")]
PARAPHRASE_SEEDS = {"man_para": "manual", "mine_para": "mine"}
PARAPHRASE_SETS = [name for name in PROMPT_SETS if name in PARAPHRASE_SEEDS]
if MINED_SETS and config["trex_train"]["source"] == "none":
    raise WorkflowError(f"config prompt_sets: {', '.join(MINED_SETS)} need T-REx-train (trex_train.source is none)")


def check_translators():
    for direction in ("forward", "backward"):
        check_source(f"paraphrase.{direction}", config["paraphrase"][direction])


def paraphrase_seed_model():
    name = config["paraphrase"]["seed_model"]
    if name is None:
        return MODELS[0]
    if name not in config["models"]:
        raise WorkflowError(f"config paraphrase.seed_model: {name!r} is not a key of models ({', '.join(MODELS)})")
    return name


if PARAPHRASE_SETS:
    check_translators()
    PARAPHRASE_SEED_MODEL = paraphrase_seed_model()


def lama_data():
    location = config["lama"]["data"]
    return "resources/lama/data" if is_url(location) else location


def common_vocab():
    location = config["lama"]["common_vocab"]
    return "resources/lama/common_vocab_cased.txt" if is_url(location) else location


def wikidata_dump():
    """The dump file: a local path from the config, or the dated download."""
    if config["wikidata"]["path"] is not None:
        return config["wikidata"]["path"]
    date, fmt = config["wikidata"]["date"], config["wikidata"]["format"]
    return f"resources/wikidata/wikidata-{date}-all.json.{fmt}"


def wikidata_url(name):
    return posixpath.join(config["wikidata"]["mirror"], config["wikidata"]["date"], name)


def lpaqa_trex_train():
    location = config["trex_train"]["lpaqa"]
    return "resources/lpaqa/TREx_train" if is_url(location) else location


def wikipedia_files():
    """The dump and its multistream index (None for a local dump without one)."""
    if config["wikipedia"]["path"] is not None:
        return config["wikipedia"]["path"], config["wikipedia"]["index"]
    date = config["wikipedia"]["date"]
    stem = f"resources/wikipedia/enwiki-{date}-pages-articles-multistream"
    return f"{stem}.xml.bz2", f"{stem}-index.txt.bz2"


def wikipedia_url(name):
    return posixpath.join(config["wikipedia"]["mirror"], config["wikipedia"]["date"], name)


def probed_datasets(prompt_set):
    """Mined prompts, and paraphrases of them, exist for T-REx relations only."""
    return [d for d in DATASETS if d == "trex"] if prompt_set in MINED_SETS else DATASETS


def source_dir(entry, stem):
    """Where a model or translator entry's files are: downloaded under resources/STEM, the
    local path, or trained under results/STEM."""
    if entry.get("hub_id") is not None:
        return f"resources/{stem}"
    if entry.get("path") is not None:
        return entry["path"]
    return f"results/{stem}"


def translator_dir(direction):
    return source_dir(config["paraphrase"][direction], f"translators/{direction}")


def paraphrase_input(wildcards):
    seed_set = PARAPHRASE_SEEDS[wildcards.prompt_set]
    inputs = {
        "seeds": (
            "results/prompts/manual.parquet" if seed_set == "manual" else f"results/paraphrase/seeds/{seed_set}.parquet"
        ),
        "code": code("paraphrase", "prompts", "probe"),
    }
    if config["paraphrase"]["backend"] == "transformers":
        inputs["forward"] = translator_dir("forward")
        inputs["backward"] = translator_dir("backward")
    return inputs


def model_dir(name):
    return source_dir(config["models"][name], f"models/{name}")


def model_input(wildcards):
    return model_dir(wildcards.model)


def candidate_words_input(wildcards):
    inputs = {"common": common_vocab(), "code": code("vocab", "models")}
    if config["vocab"]["mode"] == "intersection":
        inputs["models"] = [model_dir(name) for name in MODELS]
    return inputs


def trex_train_input(wildcards):
    inputs = {
        "test": "results/facts/trex.parquet",
        "candidates": expand("results/vocab/{model}.parquet", model=MODELS),
        "code": code("trex_train", "lama"),
    }
    if config["trex_train"]["source"] == "wikidata":
        inputs["entities"] = "results/wikidata/entities.parquet"
        inputs["claims"] = "results/wikidata/claims.parquet"
    else:
        inputs["lpaqa"] = lpaqa_trex_train()
    return inputs


def final_outputs():
    outputs = [
        "results/tables/baseline.md",
        "results/tables/baseline.csv",
        "results/tables/baseline.tex",
        "results/tables/per_relation.csv",
        "results/tables/dropped_facts.csv",
    ]
    if config["trex_train"]["source"] != "none":
        outputs += ["results/tables/trex_train_stats.md", "results/tables/trex_train_stats.csv"]
    if config["trex_train"]["source"] == "wikidata":
        outputs.append("results/wikidata/rejects.csv")
    # the manual set's metrics feed the baseline tables; every other set is probed for its own
    for prompt_set in [name for name in PROMPT_SETS if name != "manual"]:
        outputs += expand(
            "results/metrics/{model}/{prompt_set}/{dataset}.parquet",
            model=MODELS,
            prompt_set=prompt_set,
            dataset=probed_datasets(prompt_set),
        )
    if MINED_SETS:
        outputs += ["results/tables/mined_prompts.md", "results/mining/extract_counts.csv"]
    if PARAPHRASE_SETS:
        outputs.append("results/tables/paraphrase_stats.csv")
    return outputs
