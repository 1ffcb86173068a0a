# LPAQA's helpers: its section of the config, the models it probes, the checks of its inputs,
# the paths of inputs that may be local or downloaded, and the functions its rules take inputs from.

import dataclasses
import json

from knowprobe.lpaqa.paraphrase import ParaphraseSettings

LPAQA = config["lpaqa"]
# the models LPAQA probes (masked and causal), and its runs: each model under each score of its
# kind (lpaqa.probe.scores). A run is named after its model for a masked model's mask score (the
# paper's probe) and MODEL@SCORE for any other; the run name is the {model} of LPAQA's paths.
LPAQA_PROBED = models_of_kind(["masked", "causal"], "lpaqa.models", LPAQA["models"], study="LPAQA")


# models with scores of their own (lpaqa.probe.scores.models), each a key of models
LPAQA_OWN_SCORES = LPAQA["probe"]["scores"].get("models", {})
for listed in LPAQA_OWN_SCORES:
    if listed not in config["models"]:
        raise WorkflowError(f"config lpaqa.probe.scores.models: {listed!r} is not a key of models")


def lpaqa_scores(name):
    """The scores LPAQA probes model ``name`` under: its own (lpaqa.probe.scores.models.NAME), else
    its kind's; a score its kind cannot give is one line."""
    kind = config["models"][name]["kind"]
    scores = LPAQA_OWN_SCORES.get(name) or LPAQA["probe"]["scores"][kind]
    cannot = {"causal": "mask", "masked": "next_token"}[kind]
    if cannot in scores:
        raise WorkflowError(
            f"config lpaqa.probe.scores.models.{name}: {name} is a {kind} model, which has no {cannot} score"
        )
    return scores


LPAQA_RUN_OF = {
    (name if score == "mask" else f"{name}@{score}"): (name, score)
    for name in LPAQA_PROBED
    for score in lpaqa_scores(name)
}
LPAQA_RUNS = list(LPAQA_RUN_OF)
# the mask-score runs (the paper's probe of masked LMs): what refinement, the backward features,
# the cross-model tables, the paper's tables and figures and calibration read (LAMA-UHN's filter
# needs only a masked model: uhn_model). A config without one (causal models only, or masked ones
# under the statement score only) leaves those parts out (lpaqa_left_out) and gives every other
# number of every run.
LPAQA_MODELS = [run for run, (_, score) in LPAQA_RUN_OF.items() if score == "mask"]
# the runs that stand for the study where a part reads "the models'" predictions without needing
# a mask: the candidate vocabulary's intersection, T-REx-train's candidate filter and Mine+Para's
# seeds. The mask runs where there are any (a causal model added beside BERT changes none of the
# paper's inputs), else every run.
LPAQA_LEAD_RUNS = LPAQA_MODELS or LPAQA_RUNS
LPAQA_DATASETS = LPAQA["datasets"]
# LM-aware refinement is mask-predict: without a mask run the prompt set refined is left out
LPAQA_PROMPT_SETS = [name for name in LPAQA["prompt_sets"] if name != "refined" or LPAQA_MODELS]


# models and runs asked a draw of the facts (lpaqa.probe.sample.per_relation), each key a model
# LPAQA probes or one of its runs
LPAQA_SAMPLE = LPAQA["probe"]["sample"]
for key in LPAQA_SAMPLE["per_relation"]:
    if key not in LPAQA_PROBED and key not in LPAQA_RUN_OF:
        raise WorkflowError(
            f"config lpaqa.probe.sample.per_relation: {key!r} is neither a model LPAQA probes nor one of "
            f"its runs ({', '.join(LPAQA_PROBED + [run for run in LPAQA_RUNS if run not in LPAQA_PROBED])})"
        )


def lpaqa_sample(run_or_model):
    """The per-relation draw of a run (its own key, else its model's) or of a model (the
    multi-token probe's): {per_relation, seed}, per_relation None where it takes every fact."""
    keys = [run_or_model]
    if run_or_model in LPAQA_RUN_OF:
        keys.append(LPAQA_RUN_OF[run_or_model][0])
    sizes = LPAQA_SAMPLE["per_relation"]
    per_relation = next((sizes[key] for key in keys if key in sizes), None)
    return {"per_relation": per_relation, "seed": LPAQA_SAMPLE["seed"]}


def lpaqa_model(run):
    """The model of an LPAQA run (``run`` as ``{model}`` of LPAQA's paths)."""
    if run not in LPAQA_RUN_OF:
        raise WorkflowError(f"{run!r} is not an LPAQA run ({', '.join(LPAQA_RUNS)})")
    return LPAQA_RUN_OF[run][0]


def lpaqa_score(run):
    return LPAQA_RUN_OF[run][1]


def lpaqa_kind(run):
    return config["models"][lpaqa_model(run)]["kind"]


def lpaqa_vocab_models():
    """The models whose single tokens the candidate vocabulary's intersection (lpaqa.vocab.mode:
    intersection) keeps: those of the lead runs (the mask runs, else every run), each once."""
    return list(dict.fromkeys(lpaqa_model(run) for run in LPAQA_LEAD_RUNS))


def lpaqa_lead_candidates():
    """The candidate tables T-REx-train's objects must be in: one per lead model (its first lead
    run's; a model's runs share its candidates, so a score added to it changes nothing upstream)."""
    first = {}
    for run in LPAQA_LEAD_RUNS:
        first.setdefault(lpaqa_model(run), run)
    return expand(rules.lpaqa_candidate_ids.output[0], model=list(first.values()))


def lpaqa_model_input(wildcards):
    return model_dir(lpaqa_model(wildcards.model))


# Tables that several rules write, which consumers refer to by pattern: facts of a dataset split
# (LAMA's test sets by lpaqa_import_facts, T-REx-train by lpaqa_trex_train) and prompt sets
# (manual, mined, Mine+Man, paraphrased).
LPAQA_FACTS = "results/lpaqa/facts/{dataset}/{split}.parquet"
LPAQA_PROMPTS = "results/lpaqa/prompts/{prompt_set}.parquet"
# the probe's table of a dataset split (one of lpaqa_probe's outputs, which cover every split)
LPAQA_PROBE = "results/lpaqa/probe/{model}/{prompt_set}/{dataset}/{split}.parquet"
# the selection stage's results and prompt ranks of a prompt set (lpaqa_selection's outputs, which
# cover every set of a model)
LPAQA_SELECTION = "results/lpaqa/selection/{model}/{prompt_set}/results.parquet"
LPAQA_SELECTED_PROMPTS = "results/lpaqa/selection/{model}/{prompt_set}/prompts.parquet"
LPAQA_METHOD_FACTS = "results/lpaqa/selection/{model}/{prompt_set}/facts.parquet"
# LAMA's test sets, and T-REx-train (train and dev, split in the selection stage) with the
# Google-RE view of it
LPAQA_SPLITS = ["test", "train_dev"]

# prompt sets built from Wikipedia mining (mine_para's seeds are mined prompts), and the
# paraphrase sets with the prompt set their seeds come from
MINED_SETS = [name for name in LPAQA_PROMPT_SETS if name in ("mine", "mine_mid", "mine_man", "mine_para")]
PARAPHRASE_SEEDS = {"man_para": "manual", "mine_para": "mine"}
PARAPHRASE_SETS = [name for name in LPAQA_PROMPT_SETS if name in PARAPHRASE_SEEDS]
# the prompt sets whose Opti is also fitted with backward features (Table 15)
BACKWARD_SETS = [name for name in LPAQA["backward"]["prompt_sets"] if name in LPAQA_PROMPT_SETS]


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


def lpaqa_release():
    """LPAQA's prompt/ folder: unpacked from the pinned archive, or the local directory the config names."""
    location = LPAQA["release"]
    return "resources/lpaqa/prompt" if is_url(location) else location


def pararel_patterns():
    """ParaRel's data/pattern_data folder: unpacked from the pinned archive, or the local directory the config names."""
    location = LPAQA["pararel"]["release"]
    return "resources/lpaqa/pararel" if is_url(location) else location


def pararel_checksums():
    """The listing the unpacked patterns are checked against ([] for none)."""
    return LPAQA["pararel"]["checksums"] or []


def lpaqa_release_stand_ins():
    """LPAQA's released prompt sets that this run reads from stand-in files: those of a local
    release folder that says so in a STAND-IN.md (the demo's, written in the release's layout
    without LPAQA's prompts). Their rows and lines are marked "(stand-in)"."""
    location = LPAQA["release"]
    if is_url(location) or not Path(location, "STAND-IN.md").is_file():
        return []
    return [name for name in LPAQA_PROMPT_SETS if name.startswith("lpaqa_")]


def wikipedia_files():
    """The dump and its multistream index (None for a local dump without one)."""
    if LPAQA["wikipedia"]["path"] is not None:
        return LPAQA["wikipedia"]["path"], LPAQA["wikipedia"]["index"]
    stem = f"resources/wikipedia/enwiki-{LPAQA['wikipedia']['date']}-pages-articles-multistream"
    return f"{stem}.xml.bz2", f"{stem}-index.txt.bz2"


def wikipedia_chunks():
    return range(LPAQA["wikipedia"]["chunks"])


def paraphrase_seed_model():
    """The run whose T-REx-train accuracy picks Mine+Para's seeds (each relation's best mined
    prompt: any run's predictions define it): lpaqa.paraphrase.seed_model, a run or a probed
    model (its first run), else the first mask run, else the first run of any score."""
    name = LPAQA["paraphrase"]["seed_model"]
    if name is None:
        return LPAQA_LEAD_RUNS[0]
    if name in LPAQA_RUN_OF:
        return name
    runs = [run for run, (model, _) in LPAQA_RUN_OF.items() if model == name]
    if not runs:
        raise WorkflowError(
            f"config lpaqa.paraphrase.seed_model: {name!r} is not a model LPAQA probes ({', '.join(LPAQA_PROBED)}) "
            f"nor one of its runs ({', '.join(LPAQA_RUNS)})"
        )
    return runs[0]


# what a part that reads a masked model's mask predictions says where no model can give them
NO_MASK_RUN = "no LPAQA run has a masked model under the mask score (lpaqa.models, lpaqa.probe.scores.masked)"


def refine_model():
    """The mask run whose mask predictions refine prompts (Table 14); None where there is none
    (refinement is left out)."""
    name = LPAQA["refine"]["model"]
    if name is None:
        return LPAQA_MODELS[0] if LPAQA_MODELS else None
    models_of_kind(["masked"], "lpaqa.refine.model", [name], study="LPAQA's refinement (mask-predict)")
    if name not in LPAQA_MODELS:
        raise WorkflowError(
            f"config lpaqa.refine.model: {name!r} is not a model LPAQA probes under the mask score "
            f"({', '.join(LPAQA_MODELS) or 'none'}; lpaqa.models, lpaqa.probe.scores.masked)"
        )
    return name


def uhn_model():
    """The masked model whose top predictions LAMA-UHN's person-name filter reads: lpaqa.uhn.model
    (any masked model of models), else the first masked model LPAQA probes (under any score: the
    filter runs the model itself); None where there is none (LAMA-UHN is left out)."""
    name = LPAQA["uhn"]["model"]
    if name is None:
        masked = [model for model in LPAQA_PROBED if config["models"][model]["kind"] == "masked"]
        return masked[0] if masked else None
    models_of_kind(["masked"], "lpaqa.uhn.model", [name], study="LAMA-UHN's person-name filter (LPAQA)")
    return name


def left_out_stop(part):
    """For an input function of a left-out part that a target asks for all the same: one line."""

    def stop(wildcards):
        raise WorkflowError(f"LPAQA leaves out {part}, as {NO_MASK_RUN}")

    return stop


def lpaqa_left_out():
    """The parts of LPAQA this config leaves out, each with why, as (part, reason) pairs: those
    whose definition needs a masked model's mask-score predictions, where no run has them. Printed
    as one line at the start of every invocation (lpaqa_left_out_line), on the report's landing
    page and in docs/lpaqa.md ("Which models")."""
    if LPAQA_MODELS:
        return []
    selecting = LPAQA["trex_train"]["source"] != "none"
    parts = []
    if uhn_model() is None and "trex" in LPAQA_DATASETS:
        parts.append(("LAMA-UHN, Table 9", "its person-name filter reads a masked model's top predictions"))
    if "refined" in LPAQA["prompt_sets"]:
        parts.append(("the prompt set refined, Table 14", "LM-aware refinement is mask-predict"))
    if BACKWARD_SETS and selecting:
        parts.append(("backward features, Table 15", "a masked model's pseudo-log-likelihood of the subject"))
    if selecting:
        parts.append(
            (
                "the paper's Tables 1-15 and Figures 2-5",
                "they set the mask runs beside the paper's BERT; every run's Top-1, Top-K, Opti and Oracle are in "
                "the scores and intervals tables",
            )
        )
    return parts


def lpaqa_left_out_line():
    """The one line that names what LPAQA leaves out and why; None where it leaves nothing out."""
    parts = lpaqa_left_out()
    if not parts:
        return None
    listed = "; ".join(f"{part} ({reason})" for part, reason in parts)
    return f"LPAQA leaves out, as {NO_MASK_RUN}: {listed}"


# Prompt sets whose prompts a probe's results choose (Mine+Para's seeds: the mined prompts with
# the best T-REx-train P@1): probed by a second job per model, which reads the first job's hidden
# states of the inputs they share (the seeds) instead of running the encoder on them again.
SEEDED_SETS = [name for name in LPAQA_PROMPT_SETS if name == "mine_para"]
FIRST_SETS = [name for name in LPAQA_PROMPT_SETS if name not in SEEDED_SETS]


def probe_files(prompt_set, model="{model}"):
    """The probe's table and hidden states of each dataset split of a prompt set (name -> path)."""
    files = {}
    for dataset in LPAQA_DATASETS:
        for split in LPAQA_SPLITS:
            table = LPAQA_PROBE.format(model=model, prompt_set=prompt_set, dataset=dataset, split=split)
            files[f"{dataset}_{split}"] = table
            files[f"{dataset}_{split}_hidden"] = table.replace(".parquet", ".hidden.safetensors")
    return files


def probe_outputs(prompt_sets):
    """The probe's tables and hidden states of the prompt sets of one job ("SET/DATASET_SPLIT")."""
    return {f"{name}/{key}": path for name in prompt_sets for key, path in probe_files(name).items()}


def probe_input(prompt_sets, reused=()):
    """A job's prompt sets, the model, its candidates, its filtered facts of every dataset split,
    and the probe files of the ``reused`` sets, whose hidden states it reads where inputs recur."""

    def inputs(wildcards):
        found = {
            "candidates": expand(rules.lpaqa_candidate_ids.output[0], model=wildcards.model)[0],
            "model": model_dir(lpaqa_model(wildcards.model)),
            "code": code("lpaqa/lpaqa_probe"),
        }
        found.update({f"prompts/{name}": LPAQA_PROMPTS.format(prompt_set=name) for name in prompt_sets})
        if lpaqa_score(wildcards.model) == "statement" and LPAQA["probe"]["statement"]["answer_space"]:
            found["answer_space"] = LPAQA["probe"]["statement"]["answer_space"]
        for dataset in LPAQA_DATASETS:
            for split in LPAQA_SPLITS:
                keys = dict(model=wildcards.model, dataset=dataset, split=split)
                found[f"{dataset}_{split}"] = expand(rules.lpaqa_filter_facts.output.facts, **keys)[0]
                if lpaqa_score(wildcards.model) == "statement" and lpaqa_sample(wildcards.model)["per_relation"]:
                    # a drawn run's C_r: the objects of every fact its filter kept, not of the draw
                    found[f"{dataset}_{split}_objects"] = expand(rules.lpaqa_filter_facts.output.objects, **keys)[0]
        for name in reused:
            found.update({f"reused/{name}/{key}": path for key, path in probe_files(name, wildcards.model).items()})
        return found

    return inputs


def selection_input(wildcards):
    """The probe tables and hidden states of a model's every prompt set on every dataset's test
    and train_dev splits (with the backward features of the sets of lpaqa.backward), T-REx-train
    (its train/dev split is drawn here), T-REx-UHN, the model (its LM head) and its candidates."""
    inputs = {
        "candidates": expand(rules.lpaqa_candidate_ids.output[0], model=wildcards.model)[0],
        "model": model_dir(lpaqa_model(wildcards.model)),
        "trex_train": rules.lpaqa_trex_train.output.facts,
        "uhn": rules.lpaqa_lama_uhn.output.facts if "trex" in LPAQA_DATASETS and uhn_model() else [],
        "code": code("lpaqa/lpaqa_selection"),
    }
    for prompt_set in LPAQA_PROMPT_SETS:
        keys = dict(model=wildcards.model, prompt_set=prompt_set)
        inputs.update({f"{prompt_set}/{name}": path for name, path in probe_files(prompt_set, wildcards.model).items()})
        if prompt_set in BACKWARD_SETS and wildcards.model in LPAQA_MODELS:
            backward = rules.lpaqa_backward.output.items()
            inputs.update({f"{prompt_set}/backward_{name}": expand(path, **keys)[0] for name, path in backward})
    return inputs


def selection_outputs():
    """Per prompt set: each method's results, each prompt's train rank and Opti weight, and each
    method's per-fact correctness on the test sets."""
    outputs = {}
    for prompt_set in LPAQA_PROMPT_SETS:
        outputs[f"{prompt_set}/results"] = LPAQA_SELECTION.replace("{prompt_set}", prompt_set)
        outputs[f"{prompt_set}/prompts"] = LPAQA_SELECTED_PROMPTS.replace("{prompt_set}", prompt_set)
        outputs[f"{prompt_set}/facts"] = LPAQA_METHOD_FACTS.replace("{prompt_set}", prompt_set)
    return outputs


# the sets of Tables 12 and 13
CROSS_MODEL_SETS = [name for name in ["mine", "mine_man", "mine_para", "man_para"] if name in LPAQA_PROMPT_SETS]


def cross_model_input(wildcards):
    """The probed model's test probes of every cross-model set, with the selection of the model
    the weights come from."""
    inputs = {
        "model": model_dir(wildcards.model),
        "candidates": expand(rules.lpaqa_candidate_ids.output[0], model=wildcards.model)[0],
        "code": code("lpaqa/lpaqa_cross_model"),
    }
    for prompt_set in CROSS_MODEL_SETS:
        inputs[f"fitted_{prompt_set}"] = expand(
            LPAQA_SELECTED_PROMPTS, model=wildcards.fitted_on, prompt_set=prompt_set
        )[0]
        for dataset in LPAQA_DATASETS:
            for suffix in ("", "_hidden"):
                inputs[f"{prompt_set}_{dataset}_test{suffix}"] = probe_files(prompt_set, wildcards.model)[
                    f"{dataset}_test{suffix}"
                ]
    return inputs


def backward_outputs():
    """The backward features of every dataset split."""
    return {
        f"{dataset}_{split}": f"results/lpaqa/backward/{{model}}/{{prompt_set}}/{dataset}/{split}.parquet"
        for dataset in LPAQA_DATASETS
        for split in LPAQA_SPLITS
    }


def backward_input(wildcards):
    """The probe's tables and hidden states of a model and prompt set, the model and its candidates."""
    keys = dict(model=wildcards.model, prompt_set=wildcards.prompt_set)
    inputs = dict(probe_files(wildcards.prompt_set, wildcards.model))
    inputs["model"] = model_dir(wildcards.model)
    inputs["candidates"] = expand(rules.lpaqa_candidate_ids.output[0], model=wildcards.model)[0]
    return inputs | {"code": code("lpaqa/lpaqa_backward")}


def paraphrase_settings():
    """The paraphrase section's keys that ParaphraseSettings takes."""
    return settings({field.name: LPAQA["paraphrase"][field.name] for field in dataclasses.fields(ParaphraseSettings)})


check_local("lpaqa.lama.data", LPAQA["lama"]["data"], "directory")
if LPAQA["probe"]["statement"]["answer_space"] is not None:
    check_local("lpaqa.probe.statement.answer_space", LPAQA["probe"]["statement"]["answer_space"], "file")
check_local("lpaqa.lama.common_vocab", LPAQA["lama"]["common_vocab"], "file")
check_local("lpaqa.trex_train.lpaqa", LPAQA["trex_train"]["lpaqa"], "directory")
if any(name.startswith("lpaqa_") for name in LPAQA_PROMPT_SETS):
    check_local("lpaqa.release", LPAQA["release"], "directory")
if "pararel" in LPAQA_PROMPT_SETS:
    check_local("lpaqa.pararel.release", LPAQA["pararel"]["release"], "directory")
    if is_url(LPAQA["pararel"]["release"]) and LPAQA["pararel"]["checksums"] is not None:
        check_local("lpaqa.pararel.checksums", LPAQA["pararel"]["checksums"], "file")
for key in ("path", "index"):
    if LPAQA["wikipedia"][key] is not None:
        check_local(f"lpaqa.wikipedia.{key}", LPAQA["wikipedia"][key], "file")
if LPAQA["wikipedia"]["path"] is not None and LPAQA["wikipedia"]["index"] is None and LPAQA["wikipedia"]["chunks"] > 1:
    raise WorkflowError(
        "config lpaqa.wikipedia.chunks: a dump without a multistream index (lpaqa.wikipedia.index) has no chunk "
        "boundaries; set lpaqa.wikipedia.chunks: 1 or give the index"
    )


def under_conda():
    """Whether rules run in their own conda envs (--sdm conda), where a package must be rather than here."""
    from snakemake.settings.types import DeploymentMethod

    return DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method


def spacy_pipeline_missing(name):
    """Whether the spaCy pipeline of mining.spacy_model can be loaded here (a package's import
    name, or a directory); under --sdm conda the mining env is where it must be, not here."""
    import importlib.util

    if under_conda() or Path(name).is_dir():
        return False
    return importlib.util.find_spec(name) is None


def stop_or_warn(message):
    """Stop a run that would fail later for want of what ``message`` names; a dry run warns."""
    if not dry_run():
        raise WorkflowError(message)
    logger.warning(f"warning: {message}")


# Dependency mining needs a trained pipeline that nothing installs: a run that would stop at
# mining after the downloads and the dump parsing stops before anything instead (a dry run warns)
if "lpaqa" in config["studies"] and MINED_SETS and LPAQA["mining"]["dependency"]:
    pipeline = LPAQA["mining"]["spacy_model"]
    if spacy_pipeline_missing(pipeline):
        message = (
            f"config lpaqa.mining.spacy_model: spaCy pipeline {pipeline!r} is not installed, and dependency mining "
            f"needs it: python -m spacy download {pipeline} (offline: pip install its wheel), "
            "or set lpaqa.mining.dependency: false"
        )
        stop_or_warn(message)
# the fairseq backend runs in its own env (Python 3.8; fairseq 0.12 builds on no later Python)
if "lpaqa" in config["studies"] and PARAPHRASE_SETS and LPAQA["paraphrase"]["backend"] == "fairseq":
    import importlib.util

    if not under_conda() and importlib.util.find_spec("fairseq") is None:
        stop_or_warn(
            "config lpaqa.paraphrase.backend: fairseq is not importable here; run with --sdm conda "
            "(envs/fairseq.yaml installs it) or set lpaqa.paraphrase.backend: transformers"
        )
if MINED_SETS and LPAQA["trex_train"]["source"] == "none":
    raise WorkflowError(
        f"config lpaqa.prompt_sets: {', '.join(MINED_SETS)} need T-REx-train (lpaqa.trex_train.source is none)"
    )
if "google_re" in LPAQA_DATASETS and LPAQA["trex_train"]["source"] == "wikidata":
    unparsed = sorted(set(LPAQA["google_re_relations"].values()) - set(config["wikidata"]["properties"]))
    if unparsed:
        raise WorkflowError(
            f"config wikidata.properties: lacks {', '.join(unparsed)}, which lpaqa.google_re_relations ranks "
            "Google-RE's prompts on; add them, or map those relations elsewhere"
        )
if "refined" in LPAQA["prompt_sets"]:
    refine_model()  # a refine.model LPAQA cannot refine with is an error even where refinement is left out
if "refined" in LPAQA_PROMPT_SETS:
    if LPAQA["refine"]["prompt_set"] not in LPAQA_PROMPT_SETS:
        raise WorkflowError(
            f"config lpaqa.refine.prompt_set: {LPAQA['refine']['prompt_set']} is refined into the prompt set refined "
            "and must be in lpaqa.prompt_sets too"
        )
if PARAPHRASE_SETS:
    for direction in ("forward", "backward"):
        check_source(f"lpaqa.paraphrase.{direction}", LPAQA["paraphrase"][direction])
    paraphrase_seed_model()


# what this config leaves out of LPAQA, and why: one line at the start of the invocation (not in
# the jobs a cluster runs, which read the Snakefile again)
if "lpaqa" in config["studies"] and workflow.is_main_process and lpaqa_left_out_line():
    print(f"knowprobe: {lpaqa_left_out_line()}", file=sys.stderr)


def trex_train_input(wildcards):
    inputs = {
        "test": expand(rules.lpaqa_import_facts.output[0], dataset="trex")[0],
        # the objects are single-token candidates of every lead run (the mask runs, else every run)
        "candidates": lpaqa_lead_candidates(),
        "code": code("lpaqa/lpaqa_trex_train"),
    }
    if LPAQA["trex_train"]["source"] == "wikidata":
        inputs["entities"] = rules.wikidata_gather.output.entities
        inputs["claims"] = rules.wikidata_gather.output.claims
    elif LPAQA["trex_train"]["source"] == "lpaqa":
        inputs["lpaqa"] = lpaqa_release_trex_train()
    return inputs  # none: no training facts (an empty table), nothing to read


def wikipedia_url(name):
    return posixpath.join(LPAQA["wikipedia"]["mirror"], LPAQA["wikipedia"]["date"], name)


def translator_dir(direction):
    return source_dir(LPAQA["paraphrase"][direction], f"translators/{direction}")


def paraphrase_input(wildcards):
    seeds = {"manual": rules.lpaqa_manual_prompts.output[0], "mine": rules.lpaqa_select_paraphrase_seeds.output[0]}
    inputs = {"seeds": seeds[PARAPHRASE_SEEDS[wildcards.prompt_set]], "code": code("lpaqa/lpaqa_paraphrase")}
    if LPAQA["paraphrase"]["backend"] == "transformers":
        inputs["forward"] = translator_dir("forward")
        inputs["backward"] = translator_dir("backward")
    return inputs


# the paper's tables LPAQA writes, with the labels the report shows them under
PAPER_TABLES = {
    "table1": "Table 1: dataset statistics",
    "table2": "Table 2: micro P@1 of each method",
    "table3": "Table 3: macro P@1 of each method",
    "table4": "Table 4: mined prompts against manual ones",
    "table5": "Table 5: Opti's weights of the top-3 prompts",
    "table6": "Table 6: one-word edits of paraphrases",
    "table7": "Table 7: middle-word vs middle-word + dependency prompts",
    "table8": "Table 8: every configured masked LM",
    "table9": "Table 9: LAMA-UHN",
    "table10": "Table 10: Google-RE",
    "table11": "Table 11: ReVerb's part-of-speech patterns",
    "table12": "Table 12: cross-model weights",
    "table13": "Table 13: cross-model weights, BERT and ERNIE",
    "table14": "Table 14: LM-aware prompt refinement",
    "table15": "Table 15: backward features",
}


# LPAQA's figures, with the labels the report shows them under
PAPER_FIGURES = {
    "figure2": "Figure 2: micro P@1 against K",
    "figure3": "Figure 3: prediction divergence against edit distance",
    "figure4": "Figure 4: rank of mined prompts by part-of-speech pattern",
    "figure5": "Figure 5: linear against log-linear combination",
}
# the prompt sets whose prompt pairs Figure 3 compares
DIVERGENCE_SETS = [name for name in ["mine", "mine_para", "man_para"] if name in LPAQA_PROMPT_SETS]


def paper_figure_outputs():
    """Each figure as PNG (in the report) and SVG, and the numbers it draws as CSV."""
    outputs = {}
    for name, label in PAPER_FIGURES.items():
        stem = f"results/lpaqa/figures/{name}"
        drawn = figure(stem, f"../../report/lpaqa/{name}.rst", "LPAQA", "The paper's figures", {"figure": label})
        outputs.update({f"{name}_png": drawn["png"], f"{name}_svg": drawn["svg"], f"{name}_csv": f"{stem}.csv"})
    return outputs


def paper_figures_input(wildcards):
    if not LPAQA_MODELS:
        left_out_stop("the paper's figures")(wildcards)
    first = LPAQA_MODELS[0]
    return {
        "selection": expand(LPAQA_SELECTION, model=LPAQA_MODELS, prompt_set=LPAQA_PROMPT_SETS),
        "mine_prompts": expand(LPAQA_SELECTED_PROMPTS, model=LPAQA_MODELS, prompt_set="mine"),
        "patterns": rules.lpaqa_prompt_patterns.output[0],
        "divergence": [probe_files(name, first)["trex_test"] for name in DIVERGENCE_SETS],
        "code": code("lpaqa/lpaqa_paper_figures"),
    }


def paper_table_outputs():
    """Each paper table as Markdown and LaTeX, and as CSV in the report."""
    outputs = {}
    for name, label in PAPER_TABLES.items():
        stem = f"results/lpaqa/tables/{name}"
        outputs[f"{name}_md"] = f"{stem}.md"
        outputs[f"{name}_tex"] = f"{stem}.tex"
        outputs[f"{name}_csv"] = report_table(
            f"{stem}.csv",
            caption="lpaqa/paper_table.rst",
            category="LPAQA",
            subcategory="The paper's tables",
            label=label,
            layout=f"{stem}.md",
        )
    return outputs


def paper_tables_input(wildcards):
    if not LPAQA_MODELS:
        left_out_stop("the paper's tables")(wildcards)
    keys = dict(model=LPAQA_MODELS, prompt_set=LPAQA_PROMPT_SETS)
    inputs = {
        "paper": "resources/papers/lpaqa.yaml",
        "selection": expand(LPAQA_SELECTION, **keys),
        "prompts": expand(LPAQA_SELECTED_PROMPTS, **keys),
        "majority": expand(rules.lpaqa_majority.output[0], model=LPAQA_MODELS, dataset="trex", split="test"),
        "metrics": expand(rules.lpaqa_evaluate.output[0], **keys, dataset=LPAQA_DATASETS, split="test"),
        "trex": expand(rules.lpaqa_import_facts.output[0], dataset="trex")[0],
        "uhn": rules.lpaqa_lama_uhn.output.facts,
        "trex_train": rules.lpaqa_trex_train.output.facts,
        "seeds_manual": rules.lpaqa_manual_prompts.output[0],
        # the models' candidate vocabularies, in hub_ids' order (LPAQA_MODELS)
        "vocab": expand(rules.lpaqa_candidate_ids.output[0], model=LPAQA_MODELS),
        "cross_model": [
            expand(rules.lpaqa_cross_model.output[0], model=model, fitted_on=other)[0]
            for model in LPAQA_MODELS
            for other in LPAQA_MODELS
            if other != model and CROSS_MODEL_SETS
        ],
        "patterns": rules.lpaqa_prompt_patterns.output[0] if "mine" in LPAQA_PROMPT_SETS else [],
        "code": code("lpaqa/lpaqa_paper_tables"),
    }
    if "mine_para" in LPAQA_PROMPT_SETS:
        inputs["seeds_mine"] = rules.lpaqa_select_paraphrase_seeds.output[0]
    return inputs


def lpaqa_outputs():
    outputs = [*rules.lpaqa_tables.output, *rules.lpaqa_baseline_figure.output]
    if LPAQA["trex_train"]["source"] != "none":
        outputs += expand(LPAQA_SELECTION, model=LPAQA_RUNS, prompt_set=LPAQA_PROMPT_SETS)
        outputs += [*rules.lpaqa_score_tables.output]
        if LPAQA_MODELS:  # the paper's tables and figures read the mask runs (lpaqa_left_out)
            outputs += [*rules.lpaqa_paper_tables.output]
        if LPAQA_MODELS and "mine" in LPAQA_PROMPT_SETS:
            outputs += [*rules.lpaqa_paper_figures.output]
        if "refined" in LPAQA_PROMPT_SETS:
            outputs.append(rules.lpaqa_refine.output.details)
        # the numbers' uncertainty: intervals, paired comparisons, consistency, calibration
        outputs += [*rules.lpaqa_intervals.output, *rules.lpaqa_intervals_figure.output]
        outputs += [*rules.lpaqa_calibration_report.output]  # every run (docs/uncertainty.md)
        if consistency_sets():
            outputs += [*rules.lpaqa_consistency.output]
    if LPAQA["trex_train"]["source"] == "wikidata":
        outputs.append(rules.wikidata_gather.output.rejects)
    # P@1 of every prompt of every set on the test sets
    outputs += expand(
        rules.lpaqa_evaluate.output[0],
        model=LPAQA_RUNS,
        prompt_set=LPAQA_PROMPT_SETS,
        dataset=LPAQA_DATASETS,
        split="test",
    )
    if MINED_SETS:
        outputs += [rules.lpaqa_mine_prompts.output.table, rules.lpaqa_mine_prompts.output.coverage]
        outputs.append(rules.lpaqa_wikipedia_redirects.output.counts)
    if PARAPHRASE_SETS:
        outputs.append(rules.lpaqa_paraphrase_stats.output[0])
    if LPAQA["multitoken"]["enabled"]:  # off by default: the DAG is then as it was
        outputs += [*rules.lpaqa_multitoken_facts.output]
        outputs += [*rules.lpaqa_multitoken_tables.output, *rules.lpaqa_multitoken_figure.output]
    return outputs


# the multi-token facts' probe (lpaqa/multitoken.smk): the prompt sets it asks and how it asks
MULTITOKEN = LPAQA["multitoken"]
# the sets a config names that lpaqa.prompt_sets lacks are left out (a config layered over another
# may shorten lpaqa.prompt_sets); none left is an error
MULTITOKEN_SETS = [name for name in MULTITOKEN["prompt_sets"] or LPAQA_PROMPT_SETS if name in LPAQA_PROMPT_SETS]
if MULTITOKEN["enabled"] and not MULTITOKEN_SETS:
    raise WorkflowError(
        "config lpaqa.multitoken.prompt_sets: none of "
        + ", ".join(MULTITOKEN["prompt_sets"])
        + " is in lpaqa.prompt_sets, so no prompt would ask the multi-token facts"
    )


# the models that ask them: lpaqa.multitoken.models, else every model LPAQA probes
MULTITOKEN_MODELS = (
    LPAQA_PROBED
    if MULTITOKEN["models"] is None
    else models_of_kind(["masked", "causal"], "lpaqa.multitoken.models", MULTITOKEN["models"], study="LPAQA")
)
for name in MULTITOKEN_MODELS:
    if name not in LPAQA_PROBED:
        raise WorkflowError(
            f"config lpaqa.multitoken.models: {name!r} is not a model LPAQA probes ({', '.join(LPAQA_PROBED)})"
        )


def multitoken_sources(wildcards):
    """The multi-token facts' sources: the Wikidata stage's tables, or X-FACTR's repository
    (unpacked from the pinned archive, or the local directory the config names)."""
    if MULTITOKEN["source"] == "wikidata":
        return {"entities": rules.wikidata_gather.output.entities, "claims": rules.wikidata_gather.output.claims}
    location = MULTITOKEN["xfactr"]["release"]
    return {"xfactr": rules.lpaqa_unpack_xfactr.output[0] if is_url(location) else location}


def multitoken_prompt_inputs(wildcards):
    return {f"prompts/{name}": LPAQA_PROMPTS.format(prompt_set=name) for name in MULTITOKEN_SETS}


def multitoken_ask_settings():
    """``knowprobe.lpaqa.multitoken_probe.AskSettings``'s fields from the config, as params."""
    keys = ("max_masks", "length_by", "max_new_tokens")
    return settings({**{key: MULTITOKEN[key] for key in keys}, "pll": LPAQA["probe"]["statement"]["pll"]})


# the rules that run a probe of an LPAQA run (the {model} wildcard: the run)
LPAQA_PROBE_RULES = ("lpaqa_probe", "lpaqa_probe_seeded")


def saved_tokenizer(model):
    """A model's tokenizer for a dry run's token counts, or None where no earlier run has saved the
    model yet (the counts then say so)."""
    from knowprobe.models import load_tokenizer

    directory = model_dir(model)
    if not Path(directory, "tokenizer_config.json").is_file():
        return None
    return load_tokenizer(directory, config["models"][model]["kind"])


def print_lpaqa_score_costs(dag):
    """For a dry run: what the score of each LPAQA run whose probes ``dag`` plans costs (pairs,
    inputs or statements, tokens, and for the causal statement score tokens after prefix sharing),
    from the facts the run is probed on and the prompt sets, where an earlier run made them (the
    tokens where the model is there). A run whose probes are done is not counted: counting a
    statement score tokenizes every statement, seconds a run, for nothing to do."""
    probing = {job.wildcards.model for job in dag.needrun_jobs() if job.rule.name in LPAQA_PROBE_RULES}
    if not probing:
        return
    # imported only when there is something to count (the probe module brings in torch)
    from knowprobe import contracts
    from knowprobe.lpaqa import cost, probe

    spaces = LPAQA["probe"]["statement"]["answer_space"]
    spaces = probe.read_answer_space(spaces) if spaces else None
    lines = []
    for run, (model, score) in LPAQA_RUN_OF.items():
        if run not in probing:
            continue
        kind = config["models"][model]["kind"]
        facts = {
            (dataset, split): f"results/lpaqa/filtered/{run}/{dataset}/{split}.parquet"
            for dataset in LPAQA_DATASETS
            for split in LPAQA_SPLITS
        }
        prompts = {name: LPAQA_PROMPTS.format(prompt_set=name) for name in LPAQA_PROMPT_SETS}
        missing = [path for path in [*facts.values(), *prompts.values()] if not Path(path).is_file()]
        if missing:
            lines.append(
                f"{run} ({score}): counted once its facts and prompt sets exist ({len(missing)} files not made yet, "
                f"e.g. {missing[0]}: snakemake --until lpaqa_filter_facts lpaqa_manual_prompts)"
            )
            continue
        google_re = dict(LPAQA["google_re_relations"])
        read_prompts = {name: contracts.read(path, contracts.PROMPTS) for name, path in prompts.items()}
        parts, objects = [], []
        drawn = score == "statement" and lpaqa_sample(run)["per_relation"]
        for (dataset, split), path in facts.items():
            split_facts = contracts.read(path, contracts.MODEL_FACTS)
            # a drawn run's C_r: the objects of every fact its filter kept (lpaqa.probe.sample)
            split_objects = json.loads(Path(path.replace(".parquet", ".objects.json")).read_text()) if drawn else None
            for name, table in read_prompts.items():
                parts.append((split_facts, probe.prompts_for(table, google_re) if dataset == "google_re" else table))
                objects.append(split_objects)
        tokenizer = saved_tokenizer(model)
        counted = cost.run_cost(parts, score, kind, tokenizer, spaces, objects)
        lines.append(f"{run} ({score}): {counted.line(score, kind)}")
    listed = "\n  ".join(lines)
    print(f"knowprobe: what each LPAQA score costs (docs/lpaqa.md, Scores):\n  {listed}", file=sys.stderr)


def print_multitoken_costs(dag):
    """For a dry run: what each way of asking the multi-token facts costs each model whose
    multi-token probe ``dag`` plans (pairs, sequences run, tokens), once the facts and the prompt
    sets exist (docs/lpaqa.md, Multi-token answers). The test half's Top-1 templates are not known
    before the train half is asked: each set's best-ranked template stands in, as many as there
    can be at most."""
    planned = {job.wildcards.model for job in dag.needrun_jobs() if job.rule.name == "lpaqa_multitoken_probe"}
    # in the config's order: the DAG's jobs come as a set, in another order each run
    probing = [model for model in config["models"] if model in planned]
    if not probing:
        return
    import pandas as pd

    from knowprobe import contracts
    from knowprobe.lpaqa import cost, multitoken_probe, trex_train

    facts_path = rules.lpaqa_multitoken_facts.output.facts
    prompts = {name: LPAQA_PROMPTS.format(prompt_set=name) for name in MULTITOKEN_SETS}
    missing = [path for path in [facts_path, *prompts.values()] if not Path(path).is_file()]
    if missing:
        print(
            f"knowprobe: the multi-token methods' costs are counted once the facts and prompt sets exist "
            f"({len(missing)} files not made yet, e.g. {missing[0]}: "
            "snakemake --until lpaqa_multitoken_facts lpaqa_manual_prompts)",
            file=sys.stderr,
        )
        return
    facts = contracts.read(facts_path, contracts.MULTITOKEN_FACTS)
    train, test = trex_train.split(facts, MULTITOKEN["train_share"], MULTITOKEN["seed"])
    sets = [multitoken_probe.set_templates(contracts.read(path, contracts.PROMPTS)) for path in prompts.values()]
    every = pd.concat(sets, ignore_index=True).drop_duplicates(["relation", "template"])
    first = pd.concat([table.drop_duplicates("relation") for table in sets]).drop_duplicates(["relation", "template"])
    lines = []
    for model in probing:
        kind = config["models"][model]["kind"]
        tokenizer = saved_tokenizer(model)
        methods = MULTITOKEN["methods"][kind]
        asked = (train, test)
        sample = lpaqa_sample(model)
        if sample["per_relation"]:  # the model's own draw of each half; C_r stays all facts'
            asked = multitoken_probe.draw_halves(train, test, sample["per_relation"], sample["seed"])[:2]
        # the train half decodes with every open method in one run, the test half method by method
        halves = [
            cost.multitoken_costs(
                part,
                templates,
                facts,
                methods,
                kind,
                tokenizer,
                MULTITOKEN["max_masks"],
                MULTITOKEN["max_new_tokens"],
                together=part is asked[0],
            )
            for part, templates in zip(asked, (every, first))
        ]

        def total(counted):
            return cost.MethodCost(
                sum(c.pairs for c in counted),
                sum(c.rows for c in counted),
                None if tokenizer is None else sum(c.tokens for c in counted),
            )

        for method in methods:
            lines.append(f"{model}: {total([half[method] for half in halves]).line(method)}")
        if cost.TOGETHER in halves[0]:
            together = total([halves[0][cost.TOGETHER], *(halves[1][m] for m in methods if m in cost.OPEN)])
            tokens = "" if together.tokens is None else f", {together.tokens:,} tokens"
            lines.append(
                f"{model}: {cost.TOGETHER}, as the probe runs them (the train half's first pass of each "
                f"(pair, m) once for all its methods): at most {together.rows:,} sequences run{tokens}"
            )
    listed = "\n  ".join(lines)
    print(
        f"knowprobe: what each way of asking the multi-token facts costs (docs/lpaqa.md):\n  {listed}", file=sys.stderr
    )


# the interval, consistency and calibration rules' inputs and settings (lpaqa/uncertainty.smk)
def uncertainty_settings():
    """The shared `uncertainty` section as a params value (without the calibration bins)."""
    return settings({key: value for key, value in config["uncertainty"].items() if key != "bins"})


def intervals_input(wildcards):
    """Every run's per-fact correctness of each method, and its filtered test facts with the
    objects its Majority baseline predicts."""
    keys = dict(model=LPAQA_RUNS, prompt_set=LPAQA_PROMPT_SETS)
    runs = [dict(model=model, dataset=dataset, split="test") for model in LPAQA_RUNS for dataset in LPAQA_DATASETS]
    return {
        "method_facts": expand(LPAQA_METHOD_FACTS, **keys),
        "majority": [expand(rules.lpaqa_filter_facts.output.facts, **run)[0] for run in runs],
        "majority_objects": [expand(rules.lpaqa_filter_facts.output.majority, **run)[0] for run in runs],
        "code": code("lpaqa/lpaqa_intervals"),
    }


def lpaqa_table_outputs(names):
    """``{name}_{md,csv,tex}`` of each (name, label) under results/lpaqa/tables/, for the report."""
    return {
        f"{name}_{fmt}": (
            report_table(
                f"results/lpaqa/tables/{name}.{fmt}",
                caption=f"lpaqa/{name}.rst",
                category="LPAQA",
                subcategory="Uncertainty",
                label=label,
                layout=f"results/lpaqa/tables/{name}.md",
            )
            if fmt == "csv"
            else f"results/lpaqa/tables/{name}.{fmt}"
        )
        for name, label in names
        for fmt in ("md", "csv", "tex")
    }


def consistency_sets():
    chosen = LPAQA["consistency"]["prompt_sets"]
    if chosen is None:
        return [name for name in LPAQA_PROMPT_SETS if name != "manual"]
    return [name for name in chosen if name in LPAQA_PROMPT_SETS or name != "refined"]  # refined may be left out


def calibration_input(wildcards):
    """One run's (any model, any score) calibrated set's probe tables and hidden states (statement
    scores) of every test set and of T-REx-train (whose train split fits the temperature), its
    selection (each relation's Top-1 prompt), the model (its LM head), its candidates and
    T-REx-train."""
    prompt_set = LPAQA["calibration"]["prompt_set"]
    files = probe_files(prompt_set, wildcards.model)
    inputs = {
        "model": model_dir(lpaqa_model(wildcards.model)),
        "candidates": expand(rules.lpaqa_candidate_ids.output[0], model=wildcards.model)[0],
        "trex_train": rules.lpaqa_trex_train.output.facts,
        "prompts": expand(LPAQA_SELECTED_PROMPTS, model=wildcards.model, prompt_set=prompt_set)[0],
        "code": code("lpaqa/lpaqa_calibration"),
    }
    for dataset in LPAQA_DATASETS:
        for suffix in ("", "_hidden"):
            inputs[f"{dataset}_test{suffix}"] = files[f"{dataset}_test{suffix}"]
            inputs[f"{dataset}_train_dev{suffix}"] = files[f"{dataset}_train_dev{suffix}"]
    return inputs
