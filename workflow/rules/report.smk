# The report's table pages: each registered result table (REPORT_TABLES, in common.smk) rendered
# as HTML, so that the report shows it in place with its caption, category and label. Included
# after the studies, whose rules register their tables.


rule table_html:
    input:
        table=lambda wildcards: REPORT_TABLES[wildcards.stem]["source"],
        code=code("shared/table_html"),
    output:
        report(
            "{stem}.html",
            caption="../report/table.rst",
            category=lambda wildcards: REPORT_TABLES[wildcards.stem]["category"],
            subcategory=lambda wildcards: REPORT_TABLES[wildcards.stem]["subcategory"],
            labels=lambda wildcards: {"table": sortable_label(REPORT_TABLES[wildcards.stem]["label"])},
        ),
    log:
        "logs/report/{stem}.log",
    wildcard_constraints:
        stem="|".join(re.escape(stem) for stem in REPORT_TABLES) or "(?!)",
    conda:
        "../../envs/lama.yaml"
    params:
        label=lambda wildcards: REPORT_TABLES[wildcards.stem]["label"],
    script:
        "../scripts/shared/table_html.py"


localrules:
    table_html,


# The report's landing page (workflow/report/workflow.rst) is rendered with the config as its only
# data, and a table page's caption (report/table.rst) with its job's and the config: the headline
# numbers and each table's caption travel in it, added only when a report is made (after
# validation, and after the run's recorded config was compared). A caption is no job parameter,
# so editing one reruns nothing.
if any(arg.split("=")[0] == "--report" for arg in sys.argv[1:]):
    from knowprobe import landing
    from knowprobe.download import lock_report

    try:  # a lock file of the wrong shape is one line naming it and its entry, not a page without it
        downloads = lock_report(config["downloads"]["lock"])
    except KnowprobeError as error:
        raise WorkflowError(str(error)) from None
    # the models each listed study ran (name -> kind), which the landing page describes
    study_models = {
        study: {name: config["models"][name]["kind"] for name in STUDY_MODEL_NAMES.get(study, [])}
        for study in config["studies"]
    }
    config["_report"] = {
        "headlines": report_headlines(),
        # the studies that parse Wikidata (the report's "Shared data"): S-TEST's builder, LPAQA's T-REx-train
        "shared": ("stest" in config["studies"] and config["stest"]["source"] == "wikidata")
        or ("lpaqa" in config["studies"] and config["lpaqa"]["trex_train"]["source"] == "wikidata"),
        "study_names": ", ".join(STUDY_NAMES.get(study, study) for study in config["studies"]),
        "models": landing.models_line({n: k for models in study_models.values() for n, k in models.items()}),
        "kinds": {study: landing.by_kind(models) for study, models in study_models.items()},
        "lpaqa_probed": (
            landing.lpaqa_probed(study_models["lpaqa"], config["lpaqa"]["probe"]["scores"])
            if "lpaqa" in study_models
            else ""
        ),
        # what this config leaves out of LPAQA and why (lpaqa/common.smk; None: nothing)
        "lpaqa_left_out": lpaqa_left_out_line() if "lpaqa" in config["studies"] else None,
        # every download and hub model the lock file records, and what it was verified against
        "downloads": downloads,
        "table_captions": {
            stem: (Path(workflow.basedir) / "workflow" / "report" / entry["caption"]).read_text()
            for stem, entry in REPORT_TABLES.items()
        },
    }
