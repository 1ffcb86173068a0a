# COMPS's helpers: its section of the config, the models it scores, where its inputs are and which
# outputs the study gives.

COMPS = config["comps"]
COMPS_MODELS = models_of_kind(["masked", "causal"], "comps.models", COMPS["models"], study="COMPS")
COMPS_SUBSETS = ["base", "wugs", "wugs_dist_before", "wugs_dist_in_between"]
if "comps" in config["studies"] and COMPS["source"] == "released" and COMPS["released"] is None:
    raise WorkflowError(
        "config comps.source: released needs comps.released (the URL or directory of the released files)"
    )
for key in ("released", "norms", "wordnet"):
    if COMPS[key] is not None:
        check_local(f"comps.{key}", COMPS[key], "directory")
check_local("comps.glove.path", COMPS["glove"]["path"], "file")
# the scores of one model (one job per model)
COMPS_SCORES = "results/comps/scores/{model}.parquet"


def comps_local_or(key, downloaded):
    """A source's folder: unpacked from the configured URL, or the local directory itself."""
    return downloaded if is_url(COMPS[key]) else COMPS[key]


def comps_glove():
    path = COMPS["glove"]["path"]
    return "resources/comps/glove.zip" if is_url(path) else path


def comps_release():
    if COMPS["released"] is None:
        return []  # none configured: comps_import_released is never asked for
    return comps_local_or("released", "resources/comps/release")


def comps_stimuli():
    """The stimuli the models score: built from the norms, or the released files."""
    if COMPS["source"] == "build":
        return rules.comps_build.output.stimuli
    return rules.comps_import_released.output.stimuli


def comps_outputs():
    outputs = [*rules.comps_tables.output, *rules.comps_figures.output]
    outputs += [*rules.comps_intervals.output, *rules.comps_intervals_figure.output]
    outputs += expand(COMPS_SCORES, model=COMPS_MODELS)
    if COMPS["source"] == "build":
        outputs += [rules.comps_build.output.rejects, rules.comps_similarity.output.rejects]
    return outputs
