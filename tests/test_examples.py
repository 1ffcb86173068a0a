"""The worked examples of docs/workflow.md#worked-examples (issue 39), each a config file under
resources/examples/, run offline on the demo's tiny models: the trained demo models saved as the
examples' checkpoints, the demo's local LAMA, release and Wikidata files standing in for the
downloads where an example is a layer on config.yaml."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import DEMO, ROOT, copy_demo, copy_project, executed_rules, snakemake

pytestmark = pytest.mark.workflow

EXAMPLES = "resources/examples"


def with_checkpoints(project: Path, demo: Path) -> Path:
    """The examples' checkpoints: the demo's trained masked and causal models, as saved."""
    for name, model in [("my-masked-lm", "tiny-demo-bert"), ("my-causal-lm", "tiny-demo-gpt")]:
        shutil.copytree(demo / "results/models" / model, project / "checkpoints" / name)
    return project


def test_own_checkpoints_on_lama_with_the_papers_prompts(demo, tmp_path):
    project = with_checkpoints(copy_project(tmp_path), demo)
    result = snakemake(project, *DEMO, f"{EXAMPLES}/own_model.yaml")
    ran = executed_rules(result)
    # the checkpoints are probed as they are: nothing trained, nothing downloaded
    assert not {r for r in ran if r.startswith("train_demo") or "download" in r}, ran
    baseline = pd.read_csv(project / "results/lpaqa/tables/baseline.csv")
    assert set(baseline["model"]) == {"my-masked-lm"}
    evaluated = {path.name for path in (project / "results/lpaqa/metrics/my-masked-lm").iterdir()}
    assert evaluated == {"manual", "lpaqa_mine", "lpaqa_paraphrase", "lpaqa_manual_paraphrase"}, evaluated
    scored = set(pd.read_csv(project / "results/stest/tables/p_r.csv")["model"])
    assert scored == {"my-masked-lm", "my-causal-lm"}, scored


def test_own_relations_and_facts(demo, tmp_path):
    project = with_checkpoints(copy_project(tmp_path), demo)
    result = snakemake(project, "--configfile", f"{EXAMPLES}/own_facts.yaml")
    ran = executed_rules(result)
    assert not {r for r in ran if r.startswith(("wikidata", "train_demo")) or "download" in r}, ran
    per_relation = pd.read_csv(project / "results/lpaqa/tables/per_relation.csv")
    assert set(per_relation["relation"]) == {"P1376"} and set(per_relation["model"]) == {"my-masked-lm"}
    manual = per_relation[per_relation["method"] == "Man"]
    facts = (project / EXAMPLES / "own_facts/TREx/P1376.jsonl").read_text().splitlines()
    dropped = pd.read_csv(project / "results/lpaqa/tables/dropped_facts.csv")
    # every fact is probed or counted as dropped, with its reason: none is lost silently
    assert len(manual) == 1 and int(manual["n_facts"].iloc[0]) + int(dropped["n"].sum()) == len(facts)


def test_a_small_override_layered_on_config_yaml(demo, tmp_path):
    project = copy_project(tmp_path / "plan")
    planned = snakemake(
        project, "lpaqa", "-n", "--quiet", "rules", "--configfile", "config.yaml", f"{EXAMPLES}/override.yaml"
    )
    output = planned.stdout + planned.stderr
    counts = dict(line.split() for line in output.splitlines() if len(line.split()) == 2 and line.split()[1].isdigit())
    # the two BERTs and gpt2 (config.yaml's lpaqa.models); the one released set, lpaqa_mine
    assert counts["download_model"] == "3" and counts["lpaqa_release_prompts"] == "1"
    assert "lpaqa_download_wikipedia" not in counts and "lpaqa_download_translator" not in counts
    assert counts["lpaqa_import_facts"] == "2"  # config.yaml's T-REx and Google-RE
    assert "lpaqa: downloads" in output and "stest:" not in output and "comps:" not in output
    # layered on a finished demo: LPAQA's probes and what follows rerun, the models are kept
    run = tmp_path / "demo"
    copy_demo(demo, run)  # results and provenance records included
    shutil.copytree(ROOT / EXAMPLES, run / EXAMPLES, dirs_exist_ok=True)
    result = snakemake(run, "lpaqa", *DEMO, f"{EXAMPLES}/override.yaml")
    ran = executed_rules(result)
    assert "lpaqa_probe" in ran and not {r for r in ran if r.startswith(("train_demo", "comps", "stest"))}, ran
    table = pd.read_csv(run / "results/lpaqa/tables/baseline.csv")
    assert not table.empty
