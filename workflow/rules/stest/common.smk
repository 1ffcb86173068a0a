# S-TEST's helpers: its section of the config, the models it probes, where its inputs are and
# which outputs the study gives.

STEST = config["stest"]
STEST_MODELS = models_of_kind(["masked", "causal"], "stest.models", STEST["models"], study="S-TEST")
STEST_RELATIONS = list(STEST["relations"])
# the Wikidata properties the builder's paths run along
STEST_PROPERTIES = sorted({p for r in STEST["relations"].values() for p in (r["start"], r["step"])})
if "stest" in config["studies"] and STEST["source"] == "wikidata":
    missing = [p for p in STEST_PROPERTIES if p not in config["wikidata"]["properties"]]
    if missing:
        raise WorkflowError(
            f"config wikidata.properties: S-TEST's paths need {', '.join(missing)} (add them, or set stest.source: released)"
        )
if "stest" in config["studies"] and STEST["source"] == "released" and STEST["released"] is None:
    raise WorkflowError(
        "config stest.source: released needs stest.released (the URL or directory of the released files)"
    )
if STEST["released"] is not None:
    check_local("stest.released", STEST["released"], "directory")
check_local("stest.common_vocab", STEST["common_vocab"], "file")
# the scores of one model (one job per model)
STEST_SCORES = "results/stest/scores/{model}.parquet"


def stest_common_vocab():
    location = STEST["common_vocab"]
    return "resources/stest/common_vocab_cased.txt" if is_url(location) else location


def stest_release():
    """The released files' folder: unpacked from the pinned archive, or the local directory."""
    location = STEST["released"]
    if location is None:
        return []  # none configured: stest_import_released is never asked for
    return "resources/stest/S-TEST" if is_url(location) else location


def stest_triples():
    """The benchmark the probes read: built from Wikidata, or the released files."""
    if STEST["source"] == "wikidata":
        return rules.stest_build.output.triples
    return rules.stest_import_released.output.triples


def stest_model_info():
    """What the tables need to know of each model: its kind, hub id and (causal) start token setting."""
    return {
        name: {
            "kind": config["models"][name]["kind"],
            "hub_id": config["models"][name].get("hub_id"),
            "start_token": scoring_settings(name)["start_token"],
        }
        for name in STEST_MODELS
    }


def stest_outputs():
    outputs = [*rules.stest_tables.output, *rules.stest_figures.output]
    outputs += [*rules.stest_intervals.output, *rules.stest_intervals_figure.output]
    outputs += expand(STEST_SCORES, model=STEST_MODELS)
    if STEST["source"] == "wikidata":
        outputs.append(rules.wikidata_gather.output.rejects)
    return outputs


def few_shot_settings():
    """stest.few_shot with its draw resolved: auto is the authors' draw for their released
    triples (Table 5's FP column as the release's), numpy's for triples built here."""
    few_shot = dict(STEST["few_shot"])
    if few_shot["draw"] == "auto":
        few_shot["draw"] = "authors" if STEST["source"] == "released" else "numpy"
    return few_shot
