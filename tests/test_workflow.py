"""The workflow as a whole, on the embedded demo: contracts of every output, reruns, interruption,
the report, lint, the full dry run, config errors, cluster submission and downloads.

One demo run (the ``demo`` fixture) is shared by the tests that only read it; a test that changes
anything works on a copy of the project in a temporary directory, so the checkout stays clean.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from knowprobe import contracts

from conftest import DEMO, ROOT, copy_project, executed_rules, snakemake

pytestmark = pytest.mark.workflow


def read_tables(project: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((project / "results/lpaqa/tables").iterdir())}


def test_every_parquet_output_keeps_its_contract_and_its_place(demo):
    seen = set()
    for path in sorted((demo / "results").rglob("*.parquet")):
        relative = str(path.relative_to(demo))
        schema = pq.read_schema(path)
        name = (schema.metadata or {}).get(b"knowprobe.contract", b"").decode()
        assert name in contracts.CONTRACTS, f"{relative} carries no known contract"
        contract = contracts.CONTRACTS[name]
        contracts.check(path, contract)
        assert [f.type for f in schema] == [f.type for f in contract.schema], relative
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in contract.paths), f"{relative} is no {name} path"
        seen.add(name)
    assert seen == set(contracts.CONTRACTS), f"contracts no demo output has: {set(contracts.CONTRACTS) - seen}"


def test_interrupted_run_resumes_and_gives_identical_tables(demo, tmp_path):
    """Ctrl-C during training, then the same command: it completes, with the tables of an uninterrupted run."""
    project = copy_project(tmp_path)
    output = tmp_path / "interrupted.log"
    # a shell starts background commands with SIGINT ignored, and that is inherited: restore the
    # default, as in the terminal of a user who presses Ctrl-C
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "2", *DEMO],
        cwd=project,
        stdout=output.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    train_log = project / "logs/train_demo_model/tiny-demo-bert.log"
    deadline = time.time() + 240
    while time.time() < deadline and not (train_log.exists() and "step 500" in train_log.read_text()):
        assert process.poll() is None, "the run ended before training got going"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
    assert process.wait(timeout=120) != 0, output.read_text()[-3000:]
    assert not (project / "results/models/tiny-demo-bert/config.json").exists(), "a half-trained model was left"
    assert not (project / "results/lpaqa/tables").exists()
    snakemake(project, *DEMO)
    assert read_tables(project) == read_tables(demo)  # also: two runs from scratch agree exactly


def planned_wildcards(result: subprocess.CompletedProcess, rule: str) -> list[str]:
    """The wildcards of each job of ``rule`` in a run's or dry run's output."""
    jobs = re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout + result.stderr)
    return [re.search(r"wildcards: (.*)", job).group(1) for job in jobs if re.match(rf"(?:local)?rule {rule}:", job)]


def edit(project: Path, module: str) -> None:
    with open(project / "workflow/scripts/knowprobe" / module, "a") as handle:
        handle.write(f"\n# an edit of {module}\n")


def test_changed_stage_reruns_only_itself_and_what_depends_on_it(demo, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(demo, project, symlinks=True)  # results and provenance records included
    manual_probe = project / "results/lpaqa/probe/tiny-demo-bert/manual/trex/test.parquet"
    before = manual_probe.stat().st_mtime_ns
    assert executed_rules(snakemake(project, *DEMO)) == set(), "a finished run should have nothing to do"

    # Mine+Para's seeds are chosen by T-REx-train P@1, so that set is paraphrased and probed again;
    # no other probe runs
    seeds_and_after = {"lpaqa_select_paraphrase_seeds", "lpaqa_paraphrase", "lpaqa_paraphrase_stats"}
    edit(project, "lpaqa/metrics.py")
    ran = executed_rules(snakemake(project, *DEMO))
    assert ran == {"lpaqa_evaluate", "lpaqa_majority", "lpaqa_tables", "lpaqa_baseline_figure", "lpaqa_probe"} | (
        seeds_and_after
    )
    assert manual_probe.stat().st_mtime_ns == before

    # the shared masked-LM scorer: every probe and what follows; not the vocabularies, the fact
    # filter, the demo model or the translations, which do not run it
    edit(project, "scoring/masked.py")
    ran = executed_rules(snakemake(project, *DEMO))
    assert ran == {"lpaqa_probe", "lpaqa_evaluate", "lpaqa_tables", "lpaqa_baseline_figure"} | seeds_and_after
    assert manual_probe.stat().st_mtime_ns != before
    assert read_tables(project) == read_tables(demo)

    # the shared table renderer, which the hand-kept module lists of two rules once missed
    edit(project, "tables.py")
    planned = executed_rules(snakemake(project, "-n", *DEMO))
    assert {"lpaqa_tables", "lpaqa_mine_prompts", "lpaqa_trex_train_stats"} <= planned
    assert not planned & {"train_demo_model", "lpaqa_filter_facts", "lpaqa_majority", "wikidata_chunk"}
    snakemake(project, *DEMO)

    # the Wikidata stage (shared): the parse, T-REx-train and what was mined with it; not the demo
    # model, the test sets' filter, nor the Wikipedia extraction
    downstream = {
        "lpaqa_trex_train",
        "lpaqa_trex_train_stats",
        "lpaqa_filter_facts",
        "lpaqa_distant_supervision",
        "lpaqa_mine_prompts",
        "lpaqa_mine_man_prompts",
        "lpaqa_probe",
        "lpaqa_evaluate",
    } | seeds_and_after
    edit(project, "wikidata.py")
    result = snakemake(project, "-n", *DEMO)
    assert executed_rules(result) == {"wikidata_index", "wikidata_chunk", "wikidata_gather"} | downstream
    assert planned_wildcards(result, "lpaqa_filter_facts") == ["model=tiny-demo-bert, dataset=trex, split=train"]
    edit(project, "lpaqa/mining.py")
    ran = executed_rules(snakemake(project, *DEMO))
    assert ran == {"wikidata_index", "wikidata_chunk", "wikidata_gather"} | downstream
    assert manual_probe.stat().st_mtime_ns != before and executed_rules(snakemake(project, "-n", *DEMO)) == set()

    # parameters: the scoring layer's and LPAQA's probe settings rerun the probes, nothing upstream
    for section, key, value in [("scoring", "batch_size", 16), ("lpaqa", "probe", {"top_k": 10})]:
        config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
        config[section][key] = value
        (project / "changed.yaml").write_text(yaml.safe_dump(config))
        planned = executed_rules(snakemake(project, "-n", "--configfile", "changed.yaml"))
        assert planned == {"lpaqa_probe", "lpaqa_evaluate", "lpaqa_tables", "lpaqa_baseline_figure"} | seeds_and_after

    # the paraphrase stage (and the demo translators, which share its stand-in code): both
    # paraphrase sets and their probes, nothing of mining or the manual baseline
    module = project / "workflow/scripts/knowprobe/lpaqa/paraphrase.py"
    original, stamp = module.read_text(), module.stat()
    edit(project, "lpaqa/paraphrase.py")
    paraphrase_jobs = {"lpaqa_train_demo_translator", "lpaqa_probe", "lpaqa_evaluate"} | seeds_and_after
    result = snakemake(project, "-n", *DEMO)
    assert executed_rules(result) == paraphrase_jobs
    probed = set(re.findall(r"prompt_set=(\w+), dataset=(\w+), split=(\w+)", result.stdout + result.stderr))
    assert probed == {("man_para", "trex", "test"), ("man_para", "google_re", "test"), ("mine_para", "trex", "test")}
    module.write_text(original)  # undone, with its old time stamp: nothing to do again
    os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert executed_rules(snakemake(project, "-n", *DEMO)) == set()
    # a parameter of the stage: the paraphrase jobs and their probes, not the translators
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["lpaqa"]["paraphrase"]["top"] = 5
    (project / "fewer.yaml").write_text(yaml.safe_dump(config))
    planned = executed_rules(snakemake(project, "-n", "--configfile", "fewer.yaml"))
    assert planned == paraphrase_jobs - {"lpaqa_train_demo_translator", "lpaqa_select_paraphrase_seeds"}


def test_report_groups_results_by_study_and_shows_the_figures(demo):
    snakemake(demo, *DEMO, "--report", "report.html")
    html = (demo / "report.html").read_text(errors="replace")
    for name in ["baseline.csv", "per_relation.csv", "baseline_per_relation.png", "rejects.csv"]:
        assert name in html, name
    assert "LPAQA" in html and "Shared data" in html


def test_lint_is_clean():
    for config in ([], DEMO):
        result = snakemake(ROOT, "--lint", *config)
        assert "Lints for" not in result.stdout + result.stderr


def dry_run_counts(project: Path, *args: str) -> dict[str, str]:
    """Jobs per rule of a dry run; targets go first in ``args`` (--quiet and --configfile take several values)."""
    result = snakemake(project, *args, "-n", "--quiet", "rules")
    return dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout + result.stderr, re.MULTILINE))


def test_default_config_dry_run_builds_the_whole_dag_without_downloading(tmp_path):
    project = copy_project(tmp_path)
    counts = dry_run_counts(project)
    assert counts["lpaqa_download_lama"] == "1" and counts["download_model"] == "2"
    assert counts["lpaqa_tables"] == "1" and counts["lpaqa_baseline_figure"] == "1"
    assert counts["download_wikidata"] == "1" and counts["wikidata_chunk"] == "16"
    assert counts["lpaqa_trex_train"] == "1"
    assert counts["lpaqa_download_wikipedia"] == "1" and counts["lpaqa_wikipedia_extract"] == "32"
    assert counts["lpaqa_distant_supervision"] == "32" and counts["lpaqa_mine_prompts"] == "1"
    # 2 models x (manual, man_para x 2 datasets + mine, mine_man, mine_para x T-REx), and the seed
    # model's mined prompts on T-REx-train (Mine+Para's seeds)
    assert counts["lpaqa_probe"] == "15"
    assert counts["lpaqa_download_translator"] == "2" and counts["lpaqa_paraphrase"] == "2"
    assert "train_demo_model" not in counts and "lpaqa_demo_corpus" not in counts  # no model is trained
    for downloaded in ["resources/lama", "resources/models", "resources/wikidata", "resources/wikipedia"]:
        assert not (project / downloaded).exists()


def test_a_study_runs_alone_from_its_target(tmp_path):
    """`snakemake lpaqa` plans LPAQA's jobs and nothing of another study; studies: picks rule all's."""
    project = copy_project(tmp_path)
    alone = dry_run_counts(project, "lpaqa", *DEMO)
    assert alone.pop("lpaqa") == "1" and "all" not in alone
    everything = dry_run_counts(project, *DEMO)
    assert everything.pop("all") == "1" and everything == alone


@pytest.mark.parametrize(
    "edit_config, message",
    [
        (lambda c: c["scoring"].update(batch_sise=3), "config scoring.batch_sise: unknown key"),
        (lambda c: c.update(modles={}), "config modles: unknown key"),
        (lambda c: c["models"]["tiny-demo-bert"].pop("kind"), "config models.tiny-demo-bert: 'kind' is a required"),
        (
            lambda c: c["models"]["tiny-demo-bert"].update(hub_id="bert-base-cased"),
            "config models.tiny-demo-bert: give exactly one of hub_id, path or train",
        ),
        (lambda c: c["lpaqa"]["lama"].update(data="resources/nowhere"), "config lpaqa.lama.data: directory"),
        (lambda c: c["wikidata"].update(path="resources/nowhere.json.gz"), "config wikidata.path: file"),
        (lambda c: c["wikidata"].update(chunks=0), "config wikidata.chunks: 0 is less than the minimum of 1"),
        (
            lambda c: c["lpaqa"]["paraphrase"]["forward"].update(hub_id="facebook/wmt19-en-de"),
            "config lpaqa.paraphrase.forward: give exactly one",
        ),
        (
            lambda c: c["lpaqa"]["paraphrase"].update(seed_model="bert-base-cased"),
            "config lpaqa.paraphrase.seed_model: 'bert-base-cased' is not a model LPAQA probes",
        ),
        (lambda c: c["lpaqa"]["paraphrase"].update(beams=0), "config lpaqa.paraphrase.beams"),
        (
            lambda c: c["models"]["tiny-demo-bert"].update(kind="causal"),
            "config models: LPAQA probes masked language models and none is configured",
        ),
        (lambda c: c["lpaqa"].update(models=["gpt2"]), "config lpaqa.models: 'gpt2' is not a key of models"),
    ],
)
def test_config_mistakes_fail_before_anything_runs(tmp_path, edit_config, message):
    project = copy_project(tmp_path)
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    edit_config(config)
    (project / "bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(project, "--configfile", "bad.yaml", check=False)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (project / "results").exists()


def test_slurm_profile_sends_gpu_rules_to_gpu_nodes(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    project = copy_project(tmp_path)
    result = snakemake(project, "--profile", "profiles/slurm", "-n", *DEMO)
    output = result.stdout + result.stderr
    jobs = re.split(r"\n(?=(?:local)?rule \w+:)", output)
    gpu_jobs = [job for job in jobs if re.match(r"rule (lpaqa_probe|lpaqa_paraphrase):", job)]
    assert len(gpu_jobs) == 8 + 2 and all("gpu=1" in job and "slurm_partition=gpu" in job for job in gpu_jobs)
    others = [
        job for job in jobs if re.match(r"rule (?!lpaqa_probe:|lpaqa_paraphrase:)\w+:", job) and "resources:" in job
    ]
    assert others and not any("gpu=1" in job for job in others)


def test_wikidata_download_rule_verifies_the_checksum(tmp_path, mirror):
    url, dated = mirror
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["wikidata"].update(path=None, date="20261116", mirror=url)
    (project / "mirror.yaml").write_text(yaml.safe_dump(config))
    target = "resources/wikidata/wikidata-20261116-all.json.gz"
    snakemake(project, target, "--configfile", "mirror.yaml")
    assert (project / target).read_bytes() == (dated / "wikidata-20261116-all.json.gz").read_bytes()
    assert "md5 checksum verified" in (project / "logs/download/wikidata-20261116-gz.log").read_text()

    (dated / "wikidata-20261116-all.json.gz").write_bytes(b"corrupted in transit")
    (project / target).unlink()
    result = snakemake(project, target, "--configfile", "mirror.yaml", check=False)
    assert result.returncode != 0
    assert "does not match" in result.stderr and not (project / target).exists()
