# BEAR's helpers: its section of the config, the models it scores, where its inputs are and which
# outputs the study gives.

BEAR = config["bear"]
BEAR_MODELS = models_of_kind(["masked", "causal"], "bear.models", BEAR["models"], study="BEAR")
if BEAR["path"] is not None:
    check_local("bear.path", BEAR["path"], "directory")
if BEAR["relation_info"]["path"] is not None:
    check_local("bear.relation_info.path", BEAR["relation_info"]["path"], "file")
if BEAR["demo_corpus"]["enabled"] and BEAR["demo_corpus"]["templates"] is None:
    raise WorkflowError("config bear.demo_corpus.enabled: needs bear.demo_corpus.templates (JSON lines)")
# what gives a local copy instead of each download, for the start's check (check_url_downloads):
# both keys, since an offline run needs both
DOWNLOAD_LOCAL_COPY["bear_download"] = DOWNLOAD_LOCAL_COPY["bear_download_relation_info"] = (
    "bear.path: a BEAR-format directory, and bear.relation_info.path: a local relation_info.json "
    "or null for no domains"
)
# the scores of one model (one job per model)
BEAR_SCORES = "results/bear/scores/{model}.parquet"


def bear_dataset():
    """The BEAR-format directory's folder: the local path, or the unpacked archive (whose member
    folder, BEAR or BEAR-big, is read)."""
    if BEAR["path"] is not None:
        return BEAR["path"]
    return rules.bear_unpack.output[0]


def bear_member():
    return None if BEAR["path"] is not None else BEAR["member"]


def bear_relation_info_downloaded():
    return BEAR["relation_info"]["path"] is not None and is_url(BEAR["relation_info"]["path"])


def bear_relation_info():
    location = BEAR["relation_info"]["path"]
    if location is None:
        return []
    return rules.bear_download_relation_info.output[0] if is_url(location) else location


def bear_outputs():
    return [
        *rules.bear_tables.output,
        *rules.bear_figures.output,
        *rules.bear_intervals.output,
        *rules.bear_intervals_figure.output,
        rules.bear_import.output.rejects,
        *expand(BEAR_SCORES, model=BEAR_MODELS),
    ]
