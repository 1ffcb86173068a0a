# knowprobe: what do pre-trained language models know, and how much depends on how they are asked?
#
#   snakemake --cores all                                         every study listed in `studies`
#   snakemake lpaqa --cores all                                   one study (lpaqa, stest, comps, bear)
#   snakemake --cores 2 --configfile resources/demo/config.yaml   the offline demo
#   snakemake --profile profiles/slurm                            the same on a SLURM cluster
#
# workflow/rules/common.smk validates the config and holds what every rule file uses; the stages
# the studies share (models, Wikidata) come next, then one slice per study: its rule files, its
# scripts in workflow/scripts/<study>/, its package under workflow/scripts/knowprobe/, its schema
# file, report category, docs page and tests.
# Rule files refer to each other's outputs (rules.X.output.name), so each is included after the
# files whose rules it names: shared stages first, then the studies, which never name each other.

from snakemake.utils import min_version

min_version("9.0")


# config.yaml is the full reproduction. A --configfile given on the command line replaces it
# rather than being merged into it (merging would keep config.yaml's models in the demo);
# keys a config file leaves out take the schema's defaults.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/wikidata.smk"


# A study is read only when `studies` lists it: its helpers pick its models and check its inputs,
# which a run without it must not depend on (a config of causal models only has no model for
# LPAQA's helpers). An unlisted study's target rule says how to run it (common.smk).
if "lpaqa" in config["studies"]:

    include: "workflow/rules/lpaqa.smk"


if "stest" in config["studies"]:

    include: "workflow/rules/stest.smk"


if "comps" in config["studies"]:

    include: "workflow/rules/comps.smk"


if "bear" in config["studies"]:

    include: "workflow/rules/bear.smk"


include: "workflow/rules/report.smk"


for study in sorted(set(STUDY_NAMES) - set(config["studies"])):

    rule:
        name:
            study
        input:
            unlisted_study(study),
        localrule: True


# Rules not listed as localrules in their files (model training and probing, dump parsing,
# extraction and matching, mining, paraphrasing) go to the cluster under a cluster executor; the
# others take seconds, less than a queue wait, and downloads need the submitting host's network.
localrules:
    all,
    download_model,
    download_wikidata,


rule all:
    default_target: True
    input:
        with_pages([output for study in config["studies"] for output in STUDY_OUTPUTS[study]()]),


# before any job: the hub models the run downloads are held to the hub's reach (or its cache
# with HF_HUB_OFFLINE); the resolved config of the run whose results are in results/
# (results/STUDY/config.yaml for each study with jobs in the run, common.smk), which a report is
# held to, is written (never by a dry run); then the downloads the run will make are held to the
# free space, before any of them starts
onstart:
    check_hub_models()
    check_url_downloads()
    record_run_config(workflow.dag.jobs)
    check_download_space()
    check_model_kinds(
        {job.wildcards.model for job in workflow.dag.needrun_jobs() if job.rule.name == "download_model"},
        local_only=False,
    )


# where to look, once a run has finished (not after a dry run)
onsuccess:
    configfiles = [f"--configfile {path}" for path in workflow.overwrite_configfiles]
    print(
        "knowprobe: done. Tables and figures: "
        + ", ".join(f"results/{study}/tables, results/{study}/figures" for study in config["studies"])
        + "; a log per job under logs/; the HTML report: snakemake --report report.html "
        + " ".join(configfiles)
    )


# A dry run says what the run it plans will cost: downloads, disk and time per study and in total
# (resources/full_run_cost.yaml), only what this run has to do: nothing for the offline demo
if is_plain_dry_run():
    print_cost_once_planned()


# a job the scheduler killed for its memory or time limit: one line naming the rule and the limit;
# a run stopped by Ctrl-C exits with status 130, as Unix tools do (knowprobe.interrupt)
onerror:
    print_limit_kills(log)
    exit_as_interrupted(log)
