"""Cluster submission for real: the demo through profiles/slurm on a one-node SLURM cluster
(tests/slurm/one_node_cluster.sh; Debian's slurm-wlm and munge), checked from the scheduler's own
record of each job (`scontrol show job -d`) and against the local demo's tables.

Skipped, with the reason, where the cluster cannot be brought up (not root, the packages absent,
a SLURM already configured on the machine)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import DEMO, ROOT, copy_demo, copy_project

pytestmark = pytest.mark.workflow

CLUSTER = ROOT / "tests/slurm/one_node_cluster.sh"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The one-node cluster, up for this module's tests and down after them, whatever happened."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    missing = [tool for tool in ("munged", "slurmctld", "slurmd", "sbatch", "squeue") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"no SLURM here ({', '.join(missing)} missing): apt-get install -y slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("the one-node SLURM cluster runs its daemons as root")
    state = tmp_path_factory.mktemp("slurm")
    up = subprocess.run(["bash", str(CLUSTER), "up", str(state)], capture_output=True, text=True, timeout=120)
    if up.returncode == 3:
        pytest.skip(up.stderr.strip())
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield state
    finally:
        subprocess.run(["bash", str(CLUSTER), "down", str(state)], capture_output=True, timeout=120)


def scheduled_jobs() -> list[dict[str, str]]:
    """Every job the scheduler holds (finished ones for an hour): its fields, and the rule that
    Snakemake's plugin names in the job's comment ("rule_NAME_wildcards_...")."""
    shown = subprocess.run(["scontrol", "show", "job", "-d"], capture_output=True, text=True)
    assert shown.returncode == 0, f"scontrol show job: {shown.returncode} {shown.stdout[-2000:]} {shown.stderr[-2000:]}"
    text = shown.stdout
    jobs = []
    for block in text.strip().split("\n\n"):
        fields = dict(re.findall(r"(\w+)=(\S*)", block))
        if fields:
            fields["rule"] = re.sub(r"_wildcards_.*$", "", fields.get("Comment", "")).removeprefix("rule_")
            jobs.append(fields)
    return jobs


def local_rules() -> set[str]:
    names = set()
    for path in [ROOT / "Snakefile", *(ROOT / "workflow/rules").rglob("*.smk")]:
        for block in re.findall(r"^localrules:\n((?:    \w+,?\n)+)", path.read_text(), re.MULTILINE):
            names |= set(re.findall(r"\w+", block))
    return names


def on_cluster(project: Path, profile: dict, *args: str) -> subprocess.Popen:
    """Snakemake in ``project`` through the profile (the test's overlay of profiles/slurm), started."""
    (project / "profiles/slurm-test").mkdir(parents=True, exist_ok=True)
    (project / "profiles/slurm-test/config.yaml").write_text(yaml.safe_dump(profile))
    command = [sys.executable, "-m", "snakemake", *args, *DEMO, "--profile", "profiles/slurm-test"]
    # no slurmdbd here: jobs are followed with squeue; checked every second, not every 40
    command += ["--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "1"]
    log = (project / "cluster-run.log").open("w")
    # sbatch hands the environment on to the jobs: OMP_WAIT_POLICY=PASSIVE among it (conftest)
    return subprocess.Popen(
        command, cwd=project, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )


WIKIDATA = ["results/wikidata/entities.parquet", "results/wikidata/claims.parquet"]
WIKIPEDIA = ["results/lpaqa/wikipedia/parts/sentences-0.parquet", "results/lpaqa/wikipedia/parts/sentences-1.parquet"]
PROBES = ["lpaqa_probe", "stest_probe", "comps_probe"]


@pytest.fixture(scope="module")
def cluster_runs(cluster, request, tmp_path_factory):
    """Three runs side by side on the cluster, to keep the suite short: (shared) the shared stages
    from scratch (Wikidata's index, chunks and gather; Wikipedia's extraction chunks), started at
    once, beside the shared demo run if that is still going, since it needs none of it; (probes)
    on a copy of the finished demo, the probes again (--forcerun: LPAQA's baseline, every S-TEST
    and COMPS probe) with the tables after them; (failing) one S-TEST probe with scoring.device:
    cuda, which a node whose GPU is only counted cannot give; (memory) one S-TEST probe with a
    memory limit of 100 MB, then, as soon as it has failed, again with the profile's own (rerun).
    The demo models' training is the local demo's. Returns each run's project, exit code, output
    and scheduled jobs, and the profile."""
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    profile["default-resources"]["slurm_account"] = "knowprobe-test"  # the overlay: the account only
    base = tmp_path_factory.mktemp("cluster")
    shared = copy_project(base / "shared")
    before = {job["JobId"] for job in scheduled_jobs()}
    started = time.time()
    runs = {"shared": on_cluster(shared, profile, *WIKIDATA, *WIKIPEDIA)}
    demo = request.getfixturevalue("demo")
    probes, failing, memory = base / "probes", base / "failing", base / "memory"
    for project in (probes, failing, memory):
        copy_demo(demo, project)
    starved = yaml.safe_load(yaml.safe_dump(profile))
    starved["set-resources"]["stest_probe"]["mem_mb"] = 100
    memory_target = ["results/stest/scores/tiny-demo-bert-small.parquet", "--forcerun", "stest_probe"]
    runs |= {
        "probes": on_cluster(
            probes, profile, "results/lpaqa/tables/baseline.csv", "stest", "comps", "--forcerun", *PROBES
        ),
        "failing": on_cluster(
            failing,
            profile,
            "results/stest/scores/tiny-demo-bert.parquet",
            "--forcerun",
            "stest_probe",
            "--config",
            "scoring={device: cuda}",
        ),
        "memory": on_cluster(memory, starved, *memory_target),
    }
    codes = {"memory": runs.pop("memory").wait(timeout=1200)}
    said = {"memory": (memory / "cluster-run.log").read_text()}
    ran_before = {job["JobId"] for job in scheduled_jobs()}
    # the limit raised back to the profile's: the same command goes on
    rerun = on_cluster(memory, profile, memory_target[0])
    codes |= {name: run.wait(timeout=1200) for name, run in runs.items()}
    codes["rerun"] = rerun.wait(timeout=600)
    minutes = (time.time() - started) / 60
    jobs = [job for job in scheduled_jobs() if job["JobId"] not in before]
    listing = "\n".join(
        f"{j['JobId']:>4} {j['rule']:<24} {j['Partition']:<4} {j.get('JOB_GRES', '-'):<6} "
        f"cpus={j['NumCPUs']:<2} {j['JobState']:<10} {Path(j['WorkDir']).name}"
        for j in sorted(jobs, key=lambda job: int(job["JobId"]))
    )
    print(f"\nthree runs on the cluster: {minutes:.1f} min, {len(jobs)} jobs\n{listing}")
    projects = {"shared": shared, "probes": probes, "failing": failing, "memory": memory, "rerun": memory}
    out = {
        name: {
            "project": project,
            "code": codes[name],
            "said": said.get(name) or (project / "cluster-run.log").read_text(),
            "jobs": [job for job in jobs if Path(job["WorkDir"]) == project],
        }
        for name, project in projects.items()
    }
    out["memory"]["jobs"] = [job for job in out["memory"]["jobs"] if job["JobId"] in ran_before]
    out["rerun"]["jobs"] = [job for job in out["rerun"]["jobs"] if job["JobId"] not in ran_before]
    return out | {"profile": profile}


def test_the_demo_runs_on_a_slurm_cluster_as_the_profile_says(cluster_runs, demo):
    """Issue 29: GPU rules on the gpu partition with one GPU each and the CPUs of their threads,
    the Wikidata and Wikipedia chunks as separate jobs on the cpu partition, localrules never
    submitted, and the same outputs as the local demo, byte for byte."""
    profile = cluster_runs["profile"]
    shared, probes = cluster_runs["shared"], cluster_runs["probes"]
    for run in (shared, probes):
        assert run["code"] == 0, run["said"][-5000:]
    jobs = shared["jobs"] + probes["jobs"]
    assert jobs and all(job["JobState"] == "COMPLETED" for job in jobs), jobs
    gpu_rules = {rule for rule, settings in profile["set-resources"].items() if settings.get("gpu") == 1}
    for job in jobs:
        on_gpu = job["Partition"] == "gpu" and job.get("JOB_GRES") == "gpu:1"
        assert on_gpu == (job["rule"] in gpu_rules), job
        # a job's CPUs are its rule's threads, which the job then uses (set-threads)
        assert int(job["NumCPUs"]) == profile["set-threads"].get(job["rule"], 1), job
    ran = [job["rule"] for job in jobs]
    config = yaml.safe_load((ROOT / "resources/demo/config.yaml").read_text())
    kinds = [model["kind"] for model in config["models"].values()]
    # LPAQA's baseline: the manual prompts of each model under each score of its kind
    # (lpaqa.probe.scores); S-TEST and COMPS: every model
    scores = config["lpaqa"]["probe"]["scores"]
    assert ran.count("lpaqa_probe") == sum(len(scores[kind]) for kind in kinds), ran
    assert ran.count("stest_probe") == ran.count("comps_probe") == len(config["models"]), ran
    for rule, count in [("wikidata_chunk", config["wikidata"]["chunks"]), ("lpaqa_wikipedia_extract", len(WIKIPEDIA))]:
        chunks = [job for job in jobs if job["rule"] == rule]
        assert len(chunks) == count and {job["Partition"] for job in chunks} == {"cpu"}, (rule, chunks)
    assert not set(ran) & local_rules(), set(ran) & local_rules()
    # the heavy CPU rules ask for the memory and time their inputs call for, as knowprobe.resources
    # computes them from the rehearsal's measurements (issue 30), not the profile's defaults
    from knowprobe.resources import MEASURED

    share = (ROOT / config["wikidata"]["path"]).stat().st_size / 1e9 / config["wikidata"]["chunks"]
    chunks = [job for job in jobs if job["rule"] == "wikidata_chunk"]
    memory, minutes = MEASURED["wikidata_chunk"].mem_mb(share), MEASURED["wikidata_chunk"].runtime(share)
    limit = f"{minutes // 60:02d}:{minutes % 60:02d}:00"
    assert {(job["MinMemoryNode"], job["TimeLimit"]) for job in chunks} == {(f"{memory}M", limit)}
    assert memory != profile["default-resources"]["mem_mb"]
    # the same outputs as the local demo's
    for path in WIKIDATA + WIKIPEDIA:
        assert (shared["project"] / path).read_bytes() == (demo / path).read_bytes(), path
    for study in ("lpaqa", "stest", "comps"):
        tables = sorted((demo / "results" / study / "tables").iterdir())
        assert tables
        for table in tables:
            relative = table.relative_to(demo)
            assert (probes["project"] / relative).read_bytes() == table.read_bytes(), relative


def test_a_job_that_fails_on_a_node_says_why_with_its_job_id_and_is_retried_once(cluster_runs):
    """Issue 29: a job that fails on a node (scoring.device cuda where the GPU is only counted) is
    reported with the SLURM job id and its log's lines, the knowprobe error among them; the
    profile's one retry resubmits it once, not forever."""
    failing = cluster_runs["failing"]
    assert failing["code"] != 0
    jobs, said = failing["jobs"], failing["said"]
    assert [job["rule"] for job in jobs] == ["stest_probe", "stest_probe"], jobs  # tried, retried once
    assert all(job["JobState"] == "FAILED" for job in jobs)
    for job in jobs:
        assert f"SLURM-job '{job['JobId']}' failed" in said, said[-3000:]
    assert "Error in rule stest_probe" in said
    assert "config scoring.device: cuda, but this machine" in said, said[-3000:]


def test_a_job_over_its_memory_limit_is_one_line_and_the_rerun_goes_on(cluster_runs, demo):
    """Issue 29: a job the scheduler kills for its limit says so in one line naming the rule and
    the limit (SLURM itself says only FAILED without slurmdbd); with the limit raised, the same
    command runs that job and nothing before it."""
    memory, rerun = cluster_runs["memory"], cluster_runs["rerun"]
    assert memory["code"] != 0
    killed = [job for job in memory["jobs"] if job["rule"] == "stest_probe"]
    assert len(killed) == 2 and all(job["JobState"] == "FAILED" for job in killed), memory["jobs"]  # retried once
    for job in killed:
        line = f"knowprobe: rule stest_probe (SLURM job {job['JobId']}) went over its memory limit (mem_mb=100, used"
        assert line in memory["said"], memory["said"][-3000:]
    assert "raise mem_mb for stest_probe in the profile's set-resources and run the same command" in memory["said"]
    assert rerun["code"] == 0, rerun["said"][-3000:]
    assert [job["rule"] for job in rerun["jobs"]] == ["stest_probe"], rerun["jobs"]
    scores = "results/stest/scores/tiny-demo-bert-small.parquet"
    # the demo's scores; the cluster job runs with the profile's 4 threads, the demo's with 1, and
    # since batches close at scoring.max_padding (smaller batches) float32 rounding differs with the
    # thread count (1.9e-6 seen); the tables built from them are the demo's byte for byte (above)
    pd.testing.assert_frame_equal(
        pd.read_parquet(rerun["project"] / scores), pd.read_parquet(demo / scores), check_exact=False, rtol=0, atol=1e-5
    )
